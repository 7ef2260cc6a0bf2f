package bridge

import (
	"strings"
	"testing"
	"time"
)

// The text status shows every count, the last reason of each count that
// has one (in a fixed order), and what the hub asked.
func TestStatusTextShowsCountsAndLastReasons(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 3, 0, time.Local)
	st := Status{Listening: false, ListeningPolicy: "obey", HubAsked: &ListenRequest{Listen: false, At: at},
		Hub:   HubStatus{Status: "listening"},
		Queue: []QueuedCommand{},
		Counters: Counters{Received: 4, Started: 2, Refused: 1, Duplicates: 1, Unrecorded: 1, Last: map[string]LastReason{
			"refused":    {At: at, CommandID: 9, Command: "lights", Reason: "the hub asked to stop listening; to resume, ..."},
			"duplicates": {At: at, CommandID: 8, Command: "fan", Reason: "hub invocation 7 delivered again"},
			"unrecorded": {At: at, Command: "door", Reason: "not run: the journal could not record it (disk full)"},
		}}}
	var b strings.Builder
	st.WriteText(&b)
	out := b.String()
	for _, want := range []string{
		"listening  no: commands are refused; the hub asked to stop listening at 12:00:03 (bridge.listening: obey)\n",
		"counts     received 4, started 2, completed 0, failed 0, queued 0, refused 1, duplicates 1, dropped 0, ignored 0, abandoned 0, canceled 0, unrecorded 1\n",
		"last       refused    12:00:03 #9 \"lights\": the hub asked to stop listening; to resume, ...\n" +
			"           duplicates 12:00:03 #8 \"fan\": hub invocation 7 delivered again\n" +
			"           unrecorded 12:00:03 \"door\": not run: the journal could not record it (disk full)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}
}
