package notify_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/notify"
	"github.com/hubgate/hubgate/bridge/rules"
)

// A run someone stopped (canceled, forced or not, a cancel while it
// asked) is not a failure: nothing is shown of it under any policy, while
// a failed run is.
func TestACanceledRunIsNoFailure(t *testing.T) {
	for _, policy := range []string{rules.NotifyAnswers, rules.NotifyFailures} {
		d := &recordingDesktop{}
		s := notify.New(notify.Options{Desktop: d, Default: policy, ProgressAfter: -1, Logger: slog.New(slog.DiscardHandler)})
		for _, e := range []bridge.Event{
			{Kind: bridge.EventFinished, CommandID: 1, Command: "work", Status: automate.StatusCanceled, StoppedBy: "hubgate cancel"},
			{Kind: bridge.EventFinished, CommandID: 2, Command: "work", Status: automate.StatusCanceled, StoppedBy: "hubgate cancel --force",
				ForcedBy: "hubgate cancel --force"},
			{Kind: bridge.EventFinished, CommandID: 3, Command: "pick", Status: automate.StatusCanceled, StoppedBy: "hubgate cancel",
				Error: "the run was cancelled while it waited for the person's answer"},
			{Kind: bridge.EventFinished, CommandID: 4, Command: "broken", Status: automate.StatusFailed},
		} {
			s.Handle(context.Background(), e)
		}
		if len(d.got) != 1 || d.got[0].Summary != "hubgate · broken: failed" {
			t.Errorf("policy %s: shown %+v, want the failed run's only", policy, d.got)
		}
	}
}
