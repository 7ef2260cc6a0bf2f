// Package cliout owns the small conventions every hubgate command line
// shares: the JSON of a --json answer, indented and bounded in depth and
// size (boundedjson.go), reading a file argument
// where "-" means standard input, the flag a mistyped one meant, and how
// a command's RunE hands its parsed options to its run function (Run).
package cliout

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ReadInput reads a file, or stdin for "-".
func ReadInput(stdin io.Reader, file string) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(file)
}

// UnknownCommand is the message for arg, which names no subcommand of c:
// `unknown command "sned" for "hubgate mock" (did you mean "send"?); see
// 'hubgate mock --help'`, with the nearest subcommand when one is near
// (cobra's SuggestionsFor at its default distance, 2, which cobra applies
// only when it finds the command itself, not for a command with Args of
// its own).
func UnknownCommand(c *cobra.Command, arg string) string {
	hint := ""
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	if s := c.SuggestionsFor(arg); len(s) > 0 {
		hint = fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return fmt.Sprintf("unknown command %q for %q%s; see '%s --help'", arg, c.CommandPath(), hint, c.CommandPath())
}

// ClosestFlag is the visible flag of c (its own and the inherited ones)
// nearest to name, ignoring case: one that starts with name, else one
// within an edit distance of 2; "" when none is.
func ClosestFlag(c *cobra.Command, name string) string {
	typed := strings.ToLower(name)
	if typed == "" {
		return ""
	}
	best, bestDist := "", 3
	visit := func(f *pflag.Flag) {
		if f.Hidden || f.Name == name {
			return
		}
		d := editDistance(typed, strings.ToLower(f.Name))
		if strings.HasPrefix(f.Name, typed) {
			d = min(d, 1) // a flag name cut short
		}
		if d < bestDist { // VisitAll goes in name order: the first of equals wins
			best, bestDist = f.Name, d
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes: flag
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Run is the end of every command's RunE, as gh's commands end: the
// command's options o, filled from its flags and arguments, go to runF
// when a test gave one (to see what was parsed), else to run, the
// command's behaviour. The context is the command's.
func Run[O any](cmd *cobra.Command, runF, run func(context.Context, *O) error, o *O) error {
	if runF != nil {
		return runF(cmd.Context(), o)
	}
	return run(cmd.Context(), o)
}
