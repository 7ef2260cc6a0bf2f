package bridge_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
)

// next reads the next event of ch, failing after a generous timeout.
func next(t *testing.T, ch <-chan bridge.Event) bridge.Event {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatal("the event stream closed")
		}
		return e
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30s")
	}
	return bridge.Event{}
}

// settles says whether e is the last event of its command: its run
// finished, or its final decision (dropped, ignored, failed, abandoned).
func settles(e bridge.Event) bool {
	return e.Kind == bridge.EventFinished ||
		e.Kind == bridge.EventDecided && e.Decision != journal.DecisionStarted && e.Decision != journal.DecisionQueued
}

// untilSettled collects the events of commandID until it settles.
func untilSettled(t *testing.T, ch <-chan bridge.Event, commandID int64) []bridge.Event {
	t.Helper()
	return collect(t, ch, commandID)[commandID]
}

// collect reads ch until every one of ids settled, and returns the events
// of each, in order.
func collect(t *testing.T, ch <-chan bridge.Event, ids ...int64) map[int64][]bridge.Event {
	t.Helper()
	got := map[int64][]bridge.Event{}
	open := len(ids)
	for open > 0 {
		e := next(t, ch)
		got[e.CommandID] = append(got[e.CommandID], e)
		for _, id := range ids {
			if e.CommandID == id && settles(e) {
				open--
			}
		}
	}
	return got
}

// withoutProgress is es without the progress events (steps, run
// status; progress_test.go checks those): the life of a command.
func withoutProgress(es []bridge.Event) []bridge.Event {
	var out []bridge.Event
	for _, e := range es {
		if e.Kind != bridge.EventStep && e.Kind != bridge.EventRunStatus {
			out = append(out, e)
		}
	}
	return out
}

// kinds is the kinds of the life of a command in es (withoutProgress).
func kinds(es []bridge.Event) string {
	var out []string
	for _, e := range withoutProgress(es) {
		k := string(e.Kind)
		if e.Kind == bridge.EventDecided {
			k += ":" + string(e.Decision)
		}
		out = append(out, k)
	}
	return strings.Join(out, " ")
}

func TestStreamDeliversTheLifeOfAQueuedCommandInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := e.bridge.Subscribe(ctx, bridge.SubscribeOptions{})
		e.hub.command("q 1", nil)
		e.hub.command("q 2", nil)

		lives := collect(t, ch, 1, 2)
		first, second := lives[1], lives[2]
		if got, want := kinds(first), "received decided:started started finished"; got != want {
			t.Errorf("command 1: %s, want %s", got, want)
		}
		if got, want := kinds(second), "received decided:queued decided:started started finished"; got != want {
			t.Fatalf("command 2: %s, want %s", got, want)
		}
		fin := second[len(second)-1]
		if fin.Status != automate.StatusCompleted || fin.Answer != "done q 2" || fin.Rule != "queued" || fin.Command != "q 2" ||
			fin.RequestID == "" || fin.TaskID != "hubgate-2" {
			t.Errorf("finished: %+v", fin)
		}
		// One stream, one order: sequence numbers grow, and command 2 started
		// only after command 1 finished.
		all := append(append([]bridge.Event{}, first...), second...)
		var firstDone, secondStart uint64
		for _, ev := range all {
			if ev.CommandID == 1 && ev.Kind == bridge.EventFinished {
				firstDone = ev.Seq
			}
			if ev.CommandID == 2 && ev.Kind == bridge.EventStarted {
				secondStart = ev.Seq
			}
		}
		if secondStart <= firstDone {
			t.Errorf("command 2 started at seq %d, before command 1 finished at %d", secondStart, firstDone)
		}
		for _, es := range [][]bridge.Event{first, second} {
			for i := 1; i < len(es); i++ {
				if es[i].Seq <= es[i-1].Seq {
					t.Errorf("out of order: %+v then %+v", es[i-1], es[i])
				}
			}
		}
		// The journal agrees with what the stream said.
		h := e.history()
		if len(h) != 2 || h[1].Answer != fin.Answer || h[1].Status != fin.Status {
			t.Errorf("journal:\n%s", describe(h))
		}

		// A late subscriber asks for history and gets the same events first.
		late := e.bridge.Subscribe(ctx, bridge.SubscribeOptions{History: 3})
		var replay []bridge.Event
		for range 3 {
			replay = append(replay, next(t, late))
		}
		if replay[2].Seq != fin.Seq || replay[2].Kind != bridge.EventFinished {
			t.Errorf("history replay ends with %+v, want seq %d", replay[2], fin.Seq)
		}
	})
}

func TestStreamReportsDropsNotifyAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := e.bridge.Subscribe(ctx, bridge.SubscribeOptions{})

		e.hub.command("notify", nil)
		life := withoutProgress(untilSettled(t, ch, 1))
		if got, want := kinds(life), "received decided:started started parked notify resumed finished"; got != want {
			t.Fatalf("notify run: %s, want %s", got, want)
		}
		if n := life[4]; n.Message != "the kettle is on" || n.Rule != "notify" {
			t.Errorf("notify event %+v", n)
		}

		e.hub.command("slow one", nil)
		untilStarted := func(id int64) {
			for {
				ev := next(t, ch)
				if ev.CommandID == id && ev.Kind == bridge.EventStarted {
					return
				}
			}
		}
		untilStarted(2)
		e.hub.command("slow two", nil)
		dropped := untilSettled(t, ch, 3)
		if d := dropped[len(dropped)-1]; d.Decision != journal.DecisionDropped || !strings.Contains(d.Note, "busy with command 2") {
			t.Errorf("dropped: %+v", d)
		}
		if _, err := e.bridge.Cancel(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		life = withoutProgress(untilSettled(t, ch, 2))
		if got := kinds(life); got != "cancel-requested finished" || life[1].Status != automate.StatusCanceled {
			t.Errorf("cancelled run: %s %+v", got, life)
		}
	})
}

func TestSlowSubscriberLosesEventsAndNeverBlocksTheBridge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules, opts: func(o *bridge.Options) { o.EventBuffer = 4 }})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stalled := e.bridge.Subscribe(ctx, bridge.SubscribeOptions{})
		read := e.bridge.Subscribe(ctx, bridge.SubscribeOptions{Buffer: 1000})
		const n = 20
		for i := range n {
			e.hub.command(fmt.Sprintf("unknown %d", i), nil) // received + decided:ignored each
		}
		// The bridge decides all of them although one subscriber reads nothing.
		e.waitFor("every command decided", finished(n))
		// A subscriber that keeps up sees all 2n events in order.
		var last uint64
		for range 2 * n {
			ev := next(t, read)
			if ev.Kind == bridge.EventLost || ev.Seq != last+1 {
				t.Fatalf("reader got %+v after seq %d", ev, last)
			}
			last = ev.Seq
		}
		// The stalled one got the first 4, then learns how many it lost.
		for i := range 4 {
			if ev := next(t, stalled); ev.Seq != uint64(i+1) {
				t.Fatalf("stalled event %d: %+v", i, ev)
			}
		}
		e.hub.command("unknown late", nil)
		ev := next(t, stalled)
		if ev.Kind != bridge.EventLost || ev.Lost != 2*n-4 {
			t.Fatalf("want a lost event for %d, got %+v", 2*n-4, ev)
		}
		if ev := next(t, stalled); ev.Kind != bridge.EventReceived || ev.Command != "unknown late" {
			t.Fatalf("after the loss: %+v", ev)
		}
	})
}

func TestStreamClosesWhenTheBridgeStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		ch := e.bridge.Subscribe(context.Background(), bridge.SubscribeOptions{})
		e.hub.command("hello", nil)
		untilSettled(t, ch, 1)
		e.stop()
		for range ch {
		}
	})
}

// TestCommandEventsCarryThePolicyOfTheirArrival: every event of a command
// carries the notify policy in force when it arrived (Event.Notify, for
// bridge/notify), so a reload changes the next commands only: the run in
// flight and the command queued before SetNotify keep the old policy to
// their end; a rule's own policy outranks bridge.notify.
func TestCommandEventsCarryThePolicyOfTheirArrival(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules + `
  - name: loud
    match: {command: loud}
    notify: answers
    speak: true
    run: {prompt: "#!answer heard"}
`, opts: func(o *bridge.Options) { o.Notify = rules.NotifyNone }})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := e.bridge.Subscribe(ctx, bridge.SubscribeOptions{})
		e.hub.command("q 1", nil)
		e.hub.command("q 2", nil)
		synctest.Wait() // q 1 runs, q 2 waits
		e.bridge.SetNotify(rules.NotifyFailures)
		e.hub.command("q 3", nil)
		lives := collect(t, ch, 1, 2, 3)
		e.hub.command("loud", nil)
		loud := collect(t, ch, 4)[4]
		for id, want := range map[int64]string{1: rules.NotifyNone, 2: rules.NotifyNone, 3: rules.NotifyFailures} {
			for _, ev := range lives[id] {
				if ev.Notify != want || ev.Speak {
					t.Errorf("command %d, event %s: notify %q speak %v, want %q", id, ev.Kind, ev.Notify, ev.Speak, want)
				}
			}
		}
		for _, ev := range loud {
			if ev.Notify != rules.NotifyAnswers || !ev.Speak {
				t.Errorf("the loud rule's %s event: notify %q speak %v, want its own answers, spoken", ev.Kind, ev.Notify, ev.Speak)
			}
		}
	})
}
