package cliout

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestClosestFlag(t *testing.T) {
	root := &cobra.Command{Use: "x"}
	root.PersistentFlags().String("config", "", "")
	cmd := &cobra.Command{Use: "y", Run: func(*cobra.Command, []string) {}}
	cmd.Flags().Bool("json", false, "")
	cmd.Flags().Int("limit", 0, "")
	cmd.Flags().Bool("secret", false, "")
	_ = cmd.Flags().MarkHidden("secret")
	root.AddCommand(cmd)
	for typed, want := range map[string]string{"jsn": "json", "JSON": "json", "lim": "limit", "confg": "config", "secrt": "", "xyzzy": "", "": ""} {
		if got := ClosestFlag(cmd, typed); got != want {
			t.Errorf("ClosestFlag(%q) = %q, want %q", typed, got, want)
		}
	}
}

func TestWriteJSONAndReadInput(t *testing.T) {
	var b strings.Builder
	if err := WriteJSON(&b, map[string]int{"a": 1}); err != nil || b.String() != "{\n  \"a\": 1\n}\n" {
		t.Errorf("WriteJSON: %q %v", b.String(), err)
	}
	if got, err := ReadInput(strings.NewReader("from stdin"), "-"); err != nil || string(got) != "from stdin" {
		t.Errorf("ReadInput(-): %q %v", got, err)
	}
}
