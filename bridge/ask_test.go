package bridge_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
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

// events subscribes to the bridge's events (with history) and returns a
// reader of those published so far.
func askEvents(t *testing.T, e *env) func() []bridge.Event {
	ch := e.bridge.Subscribe(t.Context(), bridge.SubscribeOptions{History: 100})
	var got []bridge.Event
	return func() []bridge.Event {
		for {
			select {
			case ev := <-ch:
				got = append(got, ev)
			default:
				return got
			}
		}
	}
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
		read := askEvents(t, e)
		e.hub.command("pick", nil)
		synctest.Wait()
		q := kindOf(read(), bridge.EventQuestion)
		for q == nil {
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
			q = kindOf(read(), bridge.EventQuestion)
		}
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
		a := kindOf(read(), bridge.EventAnswered)
		if a == nil || a.Reply != "Green" || a.Note != "hub command #3" || a.CommandID != 1 {
			t.Fatalf("answered event %+v", a)
		}
		st, _ := e.bridge.Status(context.Background())
		if st.Counters.Answers != 1 || st.Counters.Received != 3 || st.Counters.Started != 1 {
			t.Errorf("counters %+v", st.Counters)
		}
		// With no question pending, the same text is a command again.
		e.hub.command("pick", nil)
		synctest.Wait()
		res, err := e.bridge.Answer(context.Background(), "red", "status page")
		for err == nil && !res.Answered {
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
			res, err = e.bridge.Answer(context.Background(), "red", "status page")
		}
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
		read := askEvents(t, e)
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
		a := kindOf(read(), bridge.EventAnswered)
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
		read := askEvents(t, e)
		e.hub.command("mute", nil)
		h := e.waitFor("the run", finished(1))
		if h[0].Status != automate.StatusCompleted || h[0].Answer != "" || kindOf(read(), bridge.EventQuestion) != nil {
			t.Fatalf("journal:\n%s", describe(h))
		}
	})
}

// Cancelling the run withdraws its question at once.
func TestCancelWithdrawsTheQuestion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: askRules})
		read := askEvents(t, e)
		e.hub.command("pick", nil)
		for kindOf(read(), bridge.EventQuestion) == nil {
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
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
		if a := kindOf(read(), bridge.EventAnswered); a == nil || !strings.Contains(a.Note, "cancelled") {
			t.Errorf("answered event %+v", a)
		}
	})
}
