package bridge_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/internal/testutil"
)

const askRules = `
rules:
  - name: pick
    match: {command: pick}
    ask: true
    answers: "(?i)red|green"
    run:
      prompt: "p\n#!tool ask_person {\"question\":\"Which colour?\",\"choices\":[\"red\",\"green\"]}\n#!answer you chose ${result}"
  - name: hello
    match: {command: hello}
    run:
      prompt: "Say hello\n#!answer Hello"
  - name: mute
    match: {command: mute}
    run:
      prompt: "m\n#!tool ask_person {\"question\":\"?\"}\n#!answer ${result}"
`

// askEvents subscribes to the bridge's events (with history) and logs
// them for the test.
func askEvents(t *testing.T, e *env) *eventLog {
	l := &eventLog{}
	ch := e.bridge.Subscribe(t.Context(), bridge.SubscribeOptions{History: 100})
	go func() { // ends when the subscription does, with the test
		for ev := range ch {
			l.mu.Lock()
			l.got = append(l.got, ev)
			l.mu.Unlock()
			l.arrived.Notify()
		}
	}()
	return l
}

// eventLog is the bridge's event stream as a test reads it.
type eventLog struct {
	mu      sync.Mutex
	got     []bridge.Event
	arrived testutil.Signal // each event logged
}

// read returns the events so far; after synctest.Wait, every event the
// bridge has published.
func (l *eventLog) read() []bridge.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

// await waits for an event of kind k (of command cmd, unless 0), woken by
// each event while the bubble's fake clock runs, lets the bubble settle
// and returns it.
func (l *eventLog) await(t *testing.T, k bridge.EventKind, cmd int64) *bridge.Event {
	t.Helper()
	find := func() *bridge.Event {
		for _, ev := range l.read() {
			if ev.Kind == k && (cmd == 0 || ev.CommandID == cmd) {
				return &ev
			}
		}
		return nil
	}
	testutil.Until(t, fmt.Sprintf("a %s event (command %d)", k, cmd), l.arrived.C(), func() bool { return find() != nil })
	synctest.Wait()
	return find()
}

func kindOf(evs []bridge.Event, k bridge.EventKind) *bridge.Event {
	for i := range evs {
		if evs[i].Kind == k {
			return &evs[i]
		}
	}
	return nil
}

func TestAskPersonAnsweredByTheNextHubCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: askRules})
		events := askEvents(t, e)
		e.hub.command("pick", nil)
		q := events.await(t, bridge.EventQuestion, 0)
		if q.Question != "Which colour?" || strings.Join(q.Choices, ",") != "red,green" || q.CommandID != 1 || q.Deadline == nil ||
			q.Deadline.Sub(q.At) != bridge.DefaultAskTimeout {
			t.Fatalf("question event %+v", q)
		}
		if !strings.Contains(q.Describe(), "question: Which colour? (choices: red, green)") {
			t.Errorf("question line %q", q.Describe())
		}
		// A command the rule's answers: does not accept is routed as usual
		// (busy: dropped); the accepted one answers.
		e.hub.command("hello", nil)
		e.hub.command("Green", nil)
		h := e.waitFor("the run", func(h []journal.Entry) bool { return len(h) == 3 && !h[0].FinishedAt.IsZero() })
		if h[0].Status != automate.StatusCompleted || h[0].Answer != "you chose Green" {
			t.Fatalf("journal:\n%s", describe(h))
		}
		if h[1].Command != "hello" || h[1].Decision != journal.DecisionDropped {
			t.Errorf("hello: %s", describe(h))
		}
		if h[2].Command != "Green" || h[2].Decision != journal.DecisionAnswer || h[2].Run != journal.RunNone ||
			h[2].Note != "the answer to the question of command 1" || !h[2].Settled() {
			t.Errorf("answer row: %s", describe(h))
		}
		a := kindOf(events.read(), bridge.EventAnswered)
		if a == nil || a.Reply != "Green" || a.Note != "hub command #3" || a.CommandID != 1 {
			t.Fatalf("answered event %+v", a)
		}
		st, _ := e.bridge.Status(context.Background())
		if st.Counters.Answers != 1 || st.Counters.Received != 3 || st.Counters.Started != 1 {
			t.Errorf("counters %+v", st.Counters)
		}
		// With no question pending, the same text is a command again.
		e.hub.command("pick", nil)
		events.await(t, bridge.EventQuestion, 4)
		res, err := e.bridge.Answer(context.Background(), "red", "status page")
		if err != nil || res.CommandID != 4 {
			t.Fatalf("Answer: %+v %v", res, err)
		}
		h = e.waitFor("the second run", func(h []journal.Entry) bool { return len(h) == 4 && !h[3].FinishedAt.IsZero() })
		if h[3].Answer != "you chose red" {
			t.Errorf("journal:\n%s", describe(h))
		}
		if res, _ := e.bridge.Answer(context.Background(), "late", "status page"); res.Answered {
			t.Errorf("answered with no question pending: %+v", res)
		}
	})
}

// With no answer the bridge answers "no answer" before the server's
// two-minute round ends, and the run completes on its own terms.
func TestAskPersonWithoutAnswerEndsWithinTheRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: askRules, opts: func(o *bridge.Options) { o.Ask = true }})
		events := askEvents(t, e)
		start := time.Now()
		e.hub.command("mute", nil)
		h := e.waitFor("the run", finished(1))
		took := time.Since(start)
		want := "No answer: the person did not answer within 100 s."
		if h[0].Status != automate.StatusCompleted || h[0].Answer != want {
			t.Fatalf("journal:\n%s", describe(h))
		}
		if took < bridge.DefaultAskTimeout || took >= bridge.MaxAskTimeout {
			t.Errorf("the run took %s of fake time; want [%s, %s)", took, bridge.DefaultAskTimeout, bridge.MaxAskTimeout)
		}
		a := kindOf(events.read(), bridge.EventAnswered)
		if a == nil || a.Reply != "" || !strings.Contains(a.Describe(), "question not answered: the person did not answer within 100 s") {
			t.Fatalf("answered event %+v", a)
		}
	})
}

// A rule that does not offer ask_person (no ask:, default off) declares
// no such tool: the agent's call fails as an undeclared tool.
func TestAskPersonOffByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: askRules})
		events := askEvents(t, e)
		e.hub.command("mute", nil)
		h := e.waitFor("the run", finished(1))
		if h[0].Status != automate.StatusCompleted || h[0].Answer != "" || kindOf(events.read(), bridge.EventQuestion) != nil {
			t.Fatalf("journal:\n%s", describe(h))
		}
	})
}

// Cancelling the run withdraws its question at once.
func TestCancelWithdrawsTheQuestion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: askRules})
		events := askEvents(t, e)
		e.hub.command("pick", nil)
		events.await(t, bridge.EventQuestion, 0)
		start := time.Now()
		if _, err := e.bridge.Cancel(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		h := e.waitFor("the run", finished(1))
		if time.Since(start) >= bridge.DefaultAskTimeout {
			t.Errorf("the cancelled run waited %s for its question", time.Since(start))
		}
		if h[0].Run != journal.RunFinished || !strings.Contains(h[0].Error, "the run was cancelled while it waited for the person's answer") {
			t.Errorf("journal:\n%s", describe(h))
		}
		if a := kindOf(events.read(), bridge.EventAnswered); a == nil || !strings.Contains(a.Note, "cancelled") {
			t.Errorf("answered event %+v", a)
		}
	})
}
