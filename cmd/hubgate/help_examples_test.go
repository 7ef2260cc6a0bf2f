package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every subcommand's help has an Examples section (cobra's Example), and
// the root's help sends a newcomer to `hubgate demo`. In process: the
// command tree is built as Run builds it.
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

// README tells a newcomer what surprised one: the first `go run` of the
// demo compiles for minutes before it prints; `mock play` must start
// before the client connects; a headless machine keeps its secrets in a
// file and runs with HUBGATE_DEVICE_ID and HUBGATE_DEVICE_TOKEN. The
// manual's status line (docs/guide.md, where it moved from README) says
// exit 13 happens only with bridge.listening: obey.
func TestReadmeNewcomerNotes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	demo := strings.Index(readme, "go run ./cmd/hubgate demo")
	if demo < 0 || !strings.Contains(readme[demo:min(len(readme), demo+400)], "compiles hubgate and its dependencies before anything\nprints") {
		t.Error("README does not say, beside the demo, that the first go run compiles for minutes in silence")
	}
	if !strings.Contains(readme, "`hubgate mock play ci.yaml` must be started before your client connects") {
		t.Error("README does not say that mock play must start before the client connects")
	}
	for _, s := range []string{"secrets.json", "HUBGATE_DEVICE_ID", "HUBGATE_DEVICE_TOKEN"} {
		if !strings.Contains(readme, s) {
			t.Errorf("README does not tell a headless machine about %s", s)
		}
	}
	if n := strings.Count(readme, "\n"); n >= 150 {
		t.Errorf("README is %d lines, want under 150: the rest belongs in docs/", n)
	}
	b, err = os.ReadFile(filepath.Join("..", "..", "docs", "guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	guide := string(b)
	i := strings.Index(guide, "hubgate status [--json]")
	line := guide[max(i, 0):min(len(guide), max(i, 0)+400)]
	if i < 0 || !strings.Contains(line, "13 commands refused (only with bridge.listening: obey") || strings.Contains(line, "13 not listening") {
		t.Errorf("docs/guide.md's short status line misstates exit 13:\n%s", line)
	}
}
