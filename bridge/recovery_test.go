package bridge_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
)

// A run parked on the server when the daemon stopped is cancelled at the
// restart only when the journal names it (its request id) and the server
// still runs it; a parked run the journal does not name is left alone.
func TestRestartCancelsOnlyItsOwnParkedRun(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ours       bool // the journal holds the parked run's request id
		wantCancel bool
	}{
		{"journal names the parked run", true, true},
		{"journal names another run", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// On fake time, as every bridge test (newEnv).
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				path := filepath.Join(t.TempDir(), "journal.db")
				e := newEnv(t, envOptions{rules: basicRules, journal: path})
				e.hub.command("hello", nil) // an earlier life that ran
				e.waitFor("the first run", finished(1))
				e.stop()

				// A run parked for a client tool holds the server's slot.
				parked, err := e.client.Run(ctx, automate.RunRequest{Prompt: "p\n#!tool get_time {}\n#!answer t",
					ClientTools: []automate.ClientTool{{Name: "get_time", Description: "Returns the current time."}}})
				if err != nil || parked.Status != automate.StatusAwaitingToolResults {
					t.Fatalf("parked run: %+v %v", parked, err)
				}
				requestID := parked.RequestID
				if !tc.ours {
					requestID = "automate-run-of-an-earlier-life"
				}
				j, err := journal.Open(path, journal.Options{})
				if err != nil {
					t.Fatal(err)
				}
				id, _, err := j.RecordCommand(ctx, journal.Command{Text: "park", Rule: "notify", Seq: 9, Session: 9})
				if err == nil {
					err = j.SetDecision(ctx, id, journal.DecisionStarted, "")
				}
				if err == nil {
					err = j.RunStarted(ctx, id, "t", time.Now())
				}
				if err == nil {
					err = j.RunParked(ctx, id, requestID, parked.ResumeToken)
				}
				if err != nil {
					t.Fatal(err)
				}
				j.Close()

				e2 := startBridge(t, e.client, envOptions{rules: basicRules, journal: path})
				h := e2.waitFor("recovery", func(h []journal.Entry) bool { return len(h) == 2 && h[1].Run == journal.RunInterrupted })
				cancelled := strings.Contains(h[1].Note, "was still on the server and was cancelled")
				if cancelled != tc.wantCancel {
					t.Fatalf("note %q, want a cancel: %v", h[1].Note, tc.wantCancel)
				}
				hl, err := e.client.Health(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if tc.wantCancel {
					// A soft cancel of a parked run lands at once; the slot
					// frees when the run has unwound.
					e2.waitFor("the parked run to free the slot", func([]journal.Entry) bool {
						if hl, err = e.client.Health(ctx); err != nil {
							t.Fatal(err)
						}
						return !hl.Busy
					})
					return
				}
				if !hl.Busy || hl.ActiveRequestID == nil || *hl.ActiveRequestID != parked.RequestID || !hl.AwaitingToolResults {
					t.Fatalf("the other run was touched: %+v", hl)
				}
			})
		})
	}
}
