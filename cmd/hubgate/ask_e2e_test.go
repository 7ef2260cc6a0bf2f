package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
)

// askRules: the agent asks which colour (ask: true on the rule); only red,
// green or blue answer (answers:); the answer echoes the reply. The other
// rule's runs are offered ask_person by bridge.ask: true, and nobody
// answers them.
const askRules = `ask_timeout: 8s
rules:
  - name: pick
    match: {command: pick}
    ask: true
    answers: "(?i)red|green|blue"
    run:
      prompt: "pick a colour\n#!tool ask_person {\"question\":\"Which colour?\",\"choices\":[\"red\",\"blue\"]}\n#!answer you chose ${result}"
  - name: lonely
    match: {command: lonely}
    run:
      prompt: "l\n#!tool ask_person {\"question\":\"Anyone there?\"}\n#!answer ${result}"
ask: true
`

// ask_person end to end with the real binaries: the question reaches
// `watch --json`; a command that the rule's answers: does not accept is
// routed as usual; `hubgate mock send` answers; the run resumes and its
// answer carries the reply; the answering command has one journal row,
// decided answer, and started no run. Unanswered, the agent hears "no
// answer" after bridge.ask_timeout and the run completes on its own terms.
func TestAskPersonEndToEnd(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: askRules})
	startListening(t, s)
	lines, _ := startWatch(t, s)
	send := func(command string) {
		t.Helper()
		r := runCmd(t, env(t), "", "mock", "send", "--url", h.url, "--device", h.id(), "--command", command)
		if r.code != 0 || !strings.Contains(r.stdout, "delivered to 1 connection") {
			t.Fatalf("mock send %q: %+v", command, r)
		}
	}

	send("pick")
	q := nextLine(t, lines, "the question", func(e control.Event) bool { return e.Kind == control.EventQuestion }).event
	if q.Question != "Which colour?" || strings.Join(q.Choices, ",") != "red,blue" || q.Rule != "pick" || q.Deadline == nil ||
		q.Deadline.Sub(q.At) > 8*time.Second || q.Deadline.Sub(q.At) < 7*time.Second {
		t.Fatalf("question event %+v", q)
	}
	asker := q.CommandID
	send("what time is it") // not an answer: no rule matches it, ignored
	nextLine(t, lines, "the other command ignored", func(e control.Event) bool {
		return e.Kind == control.EventDecided && e.Command == "what time is it" && e.Decision == journal.DecisionIgnored
	})
	send("Blue")
	a := nextLine(t, lines, "the answer", func(e control.Event) bool { return e.Kind == control.EventAnswered }).event
	if a.Reply != "Blue" || a.CommandID != asker || !strings.HasPrefix(a.Note, "hub command #") {
		t.Fatalf("answered event %+v", a)
	}
	fin := nextLine(t, lines, "the run's end", func(e control.Event) bool { return e.Kind == control.EventFinished }).event
	if fin.CommandID != asker || fin.Status != "completed" || fin.Answer != "you chose Blue" {
		t.Fatalf("finished event %+v", fin)
	}
	es := journalEntries(t, s.journal)
	answer := e2eEntry(t, es, "Blue")
	if answer.Decision != journal.DecisionAnswer || answer.Run != journal.RunNone || answer.Rule != "pick" || !answer.Settled() {
		t.Errorf("the answering command's row: %+v\n%s", answer, e2eDump(es))
	}
	if got := journalEntry(t, s.journal, asker); got.Answer != "you chose Blue" {
		t.Errorf("the asking run's row: %+v", got)
	}

	start := time.Now()
	send("lonely")
	q = nextLine(t, lines, "the second question", func(e control.Event) bool { return e.Kind == control.EventQuestion }).event
	fin = nextLine(t, lines, "the unanswered run's end", func(e control.Event) bool { return e.Kind == control.EventFinished }).event
	if fin.CommandID != q.CommandID || fin.Status != "completed" || fin.Answer != "No answer: the person did not answer within 8 s." {
		t.Fatalf("finished event %+v", fin)
	}
	if took := time.Since(start); took >= 2*time.Minute {
		t.Errorf("the unanswered run took %s: not within the server's round", took)
	}
}
