package bridge_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/hub"
	"github.com/hubgate/hubgate/internal/testutil"
)

var errDiskFull = errors.New("injected: disk full")

// faultyJournal is the real journal whose first writes of a command fail
// while the switches say so (a full disk, a locked database).
type faultyJournal struct {
	bridge.Journal
	failStarted, failCommand atomic.Bool
}

func (f *faultyJournal) RecordStarted(ctx context.Context, c journal.Command, s journal.RunStart) (int64, string, bool, error) {
	if f.failStarted.Load() {
		return 0, "", false, errDiskFull
	}
	return f.Journal.RecordStarted(ctx, c, s)
}

func (f *faultyJournal) RecordCommand(ctx context.Context, c journal.Command) (int64, bool, error) {
	if f.failCommand.Load() {
		return 0, false, errDiskFull
	}
	return f.Journal.RecordCommand(ctx, c)
}

// countingAutomate counts the runs that reached the Automate server.
type countingAutomate struct {
	bridge.Automate
	runs atomic.Int32
}

func (c *countingAutomate) RunWithTools(ctx context.Context, req automate.RunRequest, loop automate.ToolLoop) (*automate.RunRecord, error) {
	c.runs.Add(1)
	return c.Automate.RunWithTools(ctx, req, loop)
}

// Not journaled, not acted on: a command whose journal write fails is never
// sent to the Automate server, neither at once (the start-at-once write)
// nor later (the write of a command that would queue), and the failure is
// reported in the log with the command's hub sequence number.
func TestNotJournaledNotActedOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fj := &faultyJournal{}
		var ca *countingAutomate
		var logs testutil.SyncBuffer
		e := newEnv(t, envOptions{rules: basicRules,
			wrapJournal: func(j bridge.Journal) bridge.Journal { fj.Journal = j; return fj },
			opts: func(o *bridge.Options) {
				ca = &countingAutomate{Automate: o.Automate}
				o.Automate = ca
				o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			}})

		// The slot is free: the command would start at once.
		fj.failStarted.Store(true)
		e.hub.command("hello", nil)
		synctest.Wait()
		if n := ca.runs.Load(); n != 0 {
			t.Fatalf("%d run(s) sent for a command the journal did not record", n)
		}
		if h := e.history(); len(h) != 0 {
			t.Fatalf("journal:\n%s", describe(h))
		}
		if !strings.Contains(logs.String(), `level=ERROR msg="journal: command not recorded; not running it" seq=1 err="injected: disk full"`) {
			t.Fatalf("the failure was not reported; log:\n%s", logs.String())
		}

		// A run holds the slot: the command would queue, and run after it.
		fj.failStarted.Store(false)
		e.hub.command("slow hold", nil)
		e.waitFor("the holding run", func(h []journal.Entry) bool { return len(h) == 1 && h[0].Run != journal.RunNone })
		fj.failCommand.Store(true)
		e.hub.command("q never", nil)
		h := e.waitFor("the holding run to end", finished(1))
		time.Sleep(time.Minute) // fake time: anything the queue would start has started
		synctest.Wait()
		if n := ca.runs.Load(); n != 1 || len(e.history()) != 1 || h[0].Command != "slow hold" {
			t.Fatalf("%d run(s) sent, want only the holding one; journal:\n%s", n, describe(e.history()))
		}
		if !strings.Contains(logs.String(), `msg="journal: command not recorded; not running it" seq=3 err="injected: disk full"`) {
			t.Fatalf("the failure was not reported; log:\n%s", logs.String())
		}
		st, _ := e.bridge.Status(context.Background())
		if st.Counters.Received != 1 || st.Counters.Started != 1 || st.Counters.Queued != 0 || len(st.Queue) != 0 ||
			st.Counters.Unrecorded != 2 || st.Counters.Last["unrecorded"].Command != "q never" ||
			!strings.Contains(st.Counters.Last["unrecorded"].Reason, "injected: disk full") {
			t.Fatalf("status %+v", st)
		}
		// The person is told: the stream carries each one for the notifier.
		var told []string
		past, stop := context.WithCancel(context.Background())
		defer stop()
		for evs := e.bridge.Subscribe(past, bridge.SubscribeOptions{History: bridge.DefaultEventHistory}); len(evs) > 0; {
			if ev := <-evs; ev.Kind == bridge.EventUnrecorded {
				told = append(told, ev.Command)
			}
		}
		if !slices.Equal(told, []string{"hello", "q never"}) {
			t.Fatalf("unrecorded events for %q, want hello and q never", told)
		}
	})
}

// A queued command older than its rule's max_age when the slot frees is
// abandoned, never started; a younger one behind it runs.
func TestQueuedCommandExpiresAfterItsMaxAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules + `
  - name: brief
    match: {command_glob: "brief *"}
    busy: queue
    max_age: 1s
    run:
      prompt: "{{.Command}}\n#!answer done {{.Command}}"
`})
		e.hub.command("slow hold", nil) // 1.5s
		e.waitFor("the holding run", func(h []journal.Entry) bool { return len(h) == 1 && h[0].Run != journal.RunNone })
		e.hub.command("brief stale", nil)
		e.hub.command("q fresh", nil)
		h := e.waitFor("all three", finished(3))
		if h[1].Decision != journal.DecisionAbandoned || h[1].Run != journal.RunNone ||
			h[1].Note != "expired after 2s in the queue (max age 1s)" {
			t.Errorf("the stale command:\n%s", describe(h))
		}
		if h[2].Status != automate.StatusCompleted || h[2].Answer != "done q fresh" {
			t.Errorf("the fresh command:\n%s", describe(h))
		}
		if d := h[2].RunStartedAt.Sub(h[0].FinishedAt); d < 0 || d > 100*time.Millisecond {
			t.Errorf("the fresh command started %s after the slot freed", d)
		}
	})
}

// With bridge.listening: obey, before the hub's first listening request
// the hub client's own state (auto-listen) decides; then the requests do,
// in event order. A refused command says how to resume.
func TestListeningFollowsTheHubClientUntilTheFirstRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules, notListening: true,
			opts: func(o *bridge.Options) { o.Listening = bridge.ListenObey }})
		e.hub.command("hello", nil)
		h := e.waitFor("the refused command", finished(1))
		if h[0].Decision != journal.DecisionRefused || !strings.Contains(h[0].Note, "the device is not listening") ||
			!strings.Contains(h[0].Note, "to resume") {
			t.Fatalf("journal:\n%s", describe(h))
		}
		if st, _ := e.bridge.Status(context.Background()); st.Listening || st.Hub.Status != string(hub.StatusConnected) {
			t.Fatalf("status before StartListening: listening %v, hub %+v", st.Listening, st.Hub)
		}
		e.hub.push(hub.Event{Kind: hub.KindStartListening})
		e.hub.command("hello", nil)
		h = e.waitFor("the run", finished(2))
		if h[1].Status != automate.StatusCompleted {
			t.Fatalf("journal:\n%s", describe(h))
		}
		if st, _ := e.bridge.Status(context.Background()); !st.Listening || st.Hub.Status != string(hub.StatusListening) {
			t.Fatalf("status after StartListening: listening %v, hub %+v", st.Listening, st.Hub)
		}
	})
}
