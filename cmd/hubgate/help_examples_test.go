package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every subcommand's help has an Examples section (cobra's Example), and
// the root's help sends a newcomer to `hubgate demo`. In process: the
// command tree is built as Main builds it.
func TestEveryCommandHasExamples(t *testing.T) {
	root := newRootCommand(&app{stdio: Stdio{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, getenv: func(string) string { return "" }})
	var missing []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if strings.TrimSpace(sub.Example) == "" || !strings.Contains(sub.Example, sub.CommandPath()) {
				missing = append(missing, sub.CommandPath())
			}
			walk(sub)
		}
	}
	walk(root)
	if len(missing) > 0 {
		t.Errorf("commands without examples of themselves (cobra's Example): %s", strings.Join(missing, ", "))
	}
	var out strings.Builder
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "hubgate demo") {
		t.Errorf("the root's help does not point to 'hubgate demo':\n%s", out.String())
	}
}
