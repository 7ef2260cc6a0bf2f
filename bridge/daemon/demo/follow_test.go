package demo

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/internal/testutil"
)

// TestFollowerNarratesEachStepAndSettlesTheFirstCommand: the stream in its
// text form, the hub's listening noticed once, the first command reported
// once it is settled (after other commands' steps), never again.
func TestFollowerNarratesEachStepAndSettlesTheFirstCommand(t *testing.T) {
	s := newSteps()
	f := newFollower(&run{o: Options{Narrate: s.narrate}.withDefaults()})
	final := "FINAL"
	ev := func(kind bridge.EventKind, id int64, cmd, rule string, set func(*bridge.Event)) bridge.Event {
		e := bridge.Event{Kind: kind, CommandID: id, Command: cmd, Rule: rule}
		if set != nil {
			set(&e)
		}
		return e
	}
	events := make(chan bridge.Event, 100)
	for _, e := range []bridge.Event{
		{Kind: bridge.EventHub, Hub: &bridge.HubStatus{Status: "connecting"}},
		{Kind: bridge.EventHub, Hub: &bridge.HubStatus{Status: "listening"}},
		ev(bridge.EventReceived, 1, "slow a", "slow", nil),
		ev(bridge.EventDecided, 1, "slow a", "slow", func(e *bridge.Event) { e.Decision = journal.DecisionQueued }),
		ev(bridge.EventReceived, 2, "notify x", "notify", nil),
		ev(bridge.EventDecided, 2, "notify x", "notify", func(e *bridge.Event) { e.Decision = journal.DecisionStarted }),
		ev(bridge.EventStarted, 2, "notify x", "notify", func(e *bridge.Event) { e.TaskID = "t-2" }),
		ev(bridge.EventParked, 2, "notify x", "notify", nil),
		ev(bridge.EventNotify, 2, "notify x", "notify", func(e *bridge.Event) { e.Message = "the kettle" }),
		ev(bridge.EventFinished, 2, "notify x", "notify", func(e *bridge.Event) {
			e.Status, e.Answer, e.FinalAnswer, e.DurationMs = automate.StatusCompleted, "a\nb", &final, 7
		}),
		ev(bridge.EventDecided, 1, "slow a", "slow", func(e *bridge.Event) { e.Decision = journal.DecisionStarted }),
		ev(bridge.EventStarted, 1, "slow a", "slow", nil),
		ev(bridge.EventReceived, 3, "hello", "hello", nil),
		ev(bridge.EventDecided, 3, "hello", "hello", func(e *bridge.Event) { e.Decision, e.Note = journal.DecisionDropped, "busy with command 1" }),
		ev(bridge.EventFinished, 1, "slow a", "slow", func(e *bridge.Event) {
			e.Status, e.ErrorCode = automate.StatusFailed, "EXECUTION_TIMEOUT"
		}),
		ev(bridge.EventReceived, 4, "x", "", nil),
		ev(bridge.EventDecided, 4, "x", "", func(e *bridge.Event) { e.Decision, e.Note = journal.DecisionIgnored, "no rule matches" }),
		{Kind: bridge.EventHub, Hub: &bridge.HubStatus{Status: "reconnecting", Reason: "EOF"}},
	} {
		events <- e
	}
	close(events)
	f.follow(events)
	testutil.InOrder(t, s.text(),
		"   hub: connecting\n",
		"   hub: listening\n",
		`[#1] received DeviceCommand "slow a"`,
		`[#1] rule "slow" matched: queued`,
		`[#2] received DeviceCommand "notify x"`,
		`[#2] rule "notify" matched: started`,
		"[#2] run started on the Automate server (task t-2)",
		"[#2] run parked",
		"[#2] notify: the kettle",
		"[#2] run finished: completed in 7 ms",
		"[#2] answer: a\n      b",
		"[#2] final answer: FINAL",
		`[#1] rule "slow" matched: started`,
		"[#1] run started on the Automate server\n",
		`[#3] rule "hello" matched: dropped: busy with command 1`,
		"[#1] run finished: failed (EXECUTION_TIMEOUT) in under 1 ms",
		`[#4] no rule matched: ignored: no rule matches`,
		"\nhub: reconnecting: EOF\n",
	)
	select {
	case <-f.listening:
	default:
		t.Error("the hub's listening was not noticed")
	}
	select {
	case o := <-f.first:
		if o.ID != 1 || o.Status != automate.StatusFailed || o.Decision != journal.DecisionStarted || o.ErrorCode != "EXECUTION_TIMEOUT" {
			t.Errorf("first %+v", o)
		}
	default:
		t.Fatal("the first command was not reported once settled")
	}
	select {
	case o := <-f.first:
		t.Errorf("reported again: %+v", o)
	default:
	}
	// Each line carries its event's fields, not the stream's bookkeeping.
	for _, st := range s.all() {
		if st.Name == "run-finished" && st.Fields["commandId"] == float64(2) {
			if st.Fields["status"] != "completed" || st.Fields["durationMs"] != float64(7) || st.Fields["seq"] != nil {
				t.Errorf("run-finished fields %v", st.Fields)
			}
		}
	}
}

// TestFollowerSettlesADroppedFirstCommand: a first command that is not run
// is settled by its decision, with the note as the reason.
func TestFollowerSettlesADroppedFirstCommand(t *testing.T) {
	f := newFollower(&run{o: Options{}.withDefaults()})
	f.observe(bridge.Event{Kind: bridge.EventReceived, CommandID: 7, Command: "x"})
	f.observe(bridge.Event{Kind: bridge.EventDecided, CommandID: 7, Decision: journal.DecisionIgnored, Note: "no rule matches"})
	select {
	case o := <-f.first:
		err := &RunError{CommandID: o.ID, Decision: o.Decision, Status: o.Status, Reason: o.Reason}
		if got, want := err.Error(), "demo: command #7: the command was ignored: no rule matches"; got != want {
			t.Errorf("%q, want %q", got, want)
		}
	default:
		t.Fatal("not settled")
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"hello":      "hello",
		"notify hi":  `"notify hi"`,
		"it's":       `"it's"`,
		`say "x"`:    `'say "x"'`,
		"a $HOME":    `'a $HOME'`,
		"a'b $c":     `'a'\''b $c'`,
		"":           `""`,
		"two\nlines": "'two\nlines'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestExamplesRouteToTheirRules: the hint's example commands and the
// macro examples reach the rules they are listed under.
func TestExamplesRouteToTheirRules(t *testing.T) {
	set, err := rules.Demo()
	if err != nil {
		t.Fatal(err)
	}
	for name, ex := range Examples() {
		if _, ok := set.Rule(name); !ok {
			t.Errorf("example for a rule the demo set does not have: %q", name)
			continue
		}
		r, matched, ok := set.Route(rules.Command{Text: ex, Macro: &deviceapi.Macro{ID: "m", Name: ex, Commands: []string{ex}}})
		if !ok || !matched || r.Name() != name {
			t.Errorf("%q routes to %v (matched %v), want rule %q", ex, r, matched, name)
		}
	}
	// Every rule has an example or an event example, and the event
	// examples reach their rules with the prompt the pattern promises.
	prompts := map[string]string{"typed-text": "hi there", "ask": "what is on my calendar"}
	for _, r := range set.Rules() {
		m := r.Spec().Match
		if _, ok := Examples()[r.Name()]; ok {
			continue
		}
		if m.EventType == "" && m.CustomAction == "" {
			t.Errorf("rule %q has no example in the hint", r.Name())
			continue
		}
		command, event := EventExample(m)
		var e deviceapi.MacroEvent
		if err := json.Unmarshal([]byte(event), &e); err != nil {
			t.Fatal(err)
		}
		cmd := rules.Command{Text: command, Macro: &deviceapi.Macro{ID: "1", Name: command, Commands: []string{command}, Events: []deviceapi.MacroEvent{e}}}
		got, matched, ok := set.Route(cmd)
		if !ok || !matched || got.Name() != r.Name() {
			t.Errorf("the event example of %q routes to %v", r.Name(), got)
			continue
		}
		req, err := got.Render(cmd, rules.Catalog{})
		if err != nil || !strings.HasPrefix(req.Prompt, prompts[r.Name()]+"\n") {
			t.Errorf("rule %q renders %q (%v)", r.Name(), req.Prompt, err)
		}
	}
}
