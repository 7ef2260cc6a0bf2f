package journal

import (
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
)

// The history table shows the run's status and error code, the final
// answer before the streamed one, else the error or the note, clipped.
func TestWriteHistoryText(t *testing.T) {
	final := "the plants are watered"
	at := time.Date(2026, 11, 26, 12, 0, 3, 0, time.Local)
	var b strings.Builder
	WriteHistoryText(&b, []Entry{
		{ID: 2, ReceivedAt: at, Command: "water   the plants", Rule: "garden", Decision: DecisionStarted, Status: automate.RunStatus("failed"),
			ErrorCode: "timeout", Answer: "streamed", FinalAnswer: &final},
		{ID: 1, ReceivedAt: at, Command: strings.Repeat("x", 40), Decision: DecisionIgnored, Note: "no rule matches"},
	})
	out := b.String()
	for _, want := range []string{"ID  RECEIVED", "2   2026-11-26 12:00:03  water the plants", "failed timeout", "the plants are watered",
		strings.Repeat("x", 29) + "…", "no rule matches"} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	WriteHistoryText(&b, nil)
	if b.String() != "no commands journaled yet\n" {
		t.Errorf("empty history: %q", b.String())
	}
}
