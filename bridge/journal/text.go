package journal

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/hubgate/hubgate/automate"
)

// WriteHistoryText writes entries as the table `hubgate history` shows,
// newest first as given; long commands and answers are clipped.
func WriteHistoryText(w io.Writer, entries []Entry) {
	if len(entries) == 0 {
		fmt.Fprintln(w, "no commands journaled yet")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tRECEIVED\tCOMMAND\tRULE\tDECISION\tRUN\tANSWER / NOTE")
	for _, e := range entries {
		run := string(e.Run)
		if e.Status != "" {
			run = string(e.Status)
			if e.ErrorCode != "" {
				run += " " + e.ErrorCode
			}
		}
		text := e.Answer
		if e.FinalAnswer != nil {
			text = *e.FinalAnswer
		}
		if text == "" && e.Status == automate.StatusCanceled {
			text = e.Note // who stopped it, and whether it was forced
		}
		if text == "" {
			text = e.Error
			if text == "" {
				text = e.Note
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.ReceivedAt.Local().Format("2006-01-02 15:04:05"),
			clip(e.Command, 30), e.Rule, e.Decision, run, clip(text, 60))
	}
	tw.Flush()
}

// clip shortens s, its spaces collapsed, to n runes.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
