package bridge

import (
	"strings"
	"testing"
	"time"
)

// The text status shows every count (answers included), the last reason
// of each count that has one (in a fixed order; never an empty reason),
// and what the hub asked.
func TestStatusTextShowsCountsAndLastReasons(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 3, 0, time.Local)
	st := Status{Listening: false, ListeningPolicy: "obey", HubAsked: &ListenRequest{Listen: false, At: at},
		Hub:   HubStatus{Status: "listening"},
		Queue: []QueuedCommand{},
		Counters: Counters{Received: 6, Started: 2, Refused: 1, Duplicates: 1, Unrecorded: 1, Answers: 1, Last: map[string]LastReason{
			"answer":     {At: at, CommandID: 10, Command: "blue", Reason: "answered the question of command 3"},
			"abandoned":  {At: at, CommandID: 11, Command: "old"},
			"refused":    {At: at, CommandID: 9, Command: "lights", Reason: "the hub asked to stop listening; to resume, ..."},
			"duplicates": {At: at, CommandID: 8, Command: "fan", Reason: "hub invocation 7 delivered again"},
			"unrecorded": {At: at, Command: "door", Reason: "not run: the journal could not record it (disk full)"},
		}}}
	var b strings.Builder
	st.WriteText(&b)
	out := b.String()
	for _, want := range []string{
		"listening  no: commands are refused; the hub asked to stop listening at 12:00:03 (bridge.listening: obey)\n",
		"counts     received 6, started 2, completed 0, failed 0, queued 0, answers 1, refused 1, duplicates 1, dropped 0, ignored 0, abandoned 0, canceled 0, unrecorded 1\n",
		"last       answer     12:00:03 #10 \"blue\": answered the question of command 3\n" +
			"           refused    12:00:03 #9 \"lights\": the hub asked to stop listening; to resume, ...\n" +
			"           duplicates 12:00:03 #8 \"fan\": hub invocation 7 delivered again\n" +
			"           abandoned  12:00:03 #11 \"old\": (no reason recorded)\n" +
			"           unrecorded 12:00:03 \"door\": not run: the journal could not record it (disk full)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}
}
