package main

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge"
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
// decided answer, and started no run; `hubgate answer` answers too. Unanswered, the agent hears "no
// answer" after bridge.ask_timeout and the run completes on its own terms.
func TestAskPersonEndToEnd(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: askRules})
	startListening(t, s)
	lines, _ := startWatch(t, s, "--history", "50")
	// The history shows the hub listening: the stream is live.
	nextLine(t, lines, "the hub state", func(e bridge.Event) bool { return e.Kind == bridge.EventHub && e.Hub.Status == "listening" })
	send := func(command string) {
		t.Helper()
		r := runCmd(t, env(t), "", "mock", "send", "--url", h.url, "--device", h.id(), "--command", command)
		if r.code != 0 || !strings.Contains(r.stdout, "delivered to 1 connection") {
			t.Fatalf("mock send %q: %+v", command, r)
		}
	}

	send("pick")
	q := nextLine(t, lines, "the question", func(e bridge.Event) bool { return e.Kind == bridge.EventQuestion }).event
	if q.Question != "Which colour?" || strings.Join(q.Choices, ",") != "red,blue" || q.Rule != "pick" || q.Deadline == nil ||
		q.Deadline.Sub(q.At) > 8*time.Second || q.Deadline.Sub(q.At) < 7*time.Second {
		t.Fatalf("question event %+v", q)
	}
	asker := q.CommandID
	send("what time is it") // not an answer: no rule matches it, ignored
	nextLine(t, lines, "the other command ignored", func(e bridge.Event) bool {
		return e.Kind == bridge.EventDecided && e.Command == "what time is it" && e.Decision == journal.DecisionIgnored
	})
	send("Blue")
	a := nextLine(t, lines, "the answer", func(e bridge.Event) bool { return e.Kind == bridge.EventAnswered }).event
	if a.Reply != "Blue" || a.CommandID != asker || !strings.HasPrefix(a.Note, "hub command #") {
		t.Fatalf("answered event %+v", a)
	}
	fin := nextLine(t, lines, "the run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished }).event
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

	// `hubgate answer` feeds the same path (and says when nothing waits).
	if r := runCmd(t, s.environ(), "", "--config", s.configPath, "answer", "red"); r.code != ExitError || !strings.Contains(r.stderr, "no question is waiting") {
		t.Errorf("hubgate answer without a question: %+v", r)
	}
	send("pick")
	q = nextLine(t, lines, "the question again", func(e bridge.Event) bool { return e.Kind == bridge.EventQuestion }).event
	if r := runCmd(t, s.environ(), "", "--config", s.configPath, "status"); !strings.Contains(r.stdout, `question   "Which colour?": answer by `) {
		t.Errorf("hubgate status does not show the question: %+v", r)
	}
	if r := runCmd(t, s.environ(), "", "--config", s.configPath, "answer", "red"); r.code != 0 ||
		r.stdout != fmt.Sprintf("answered the question of command #%d\n", q.CommandID) {
		t.Errorf("hubgate answer: %+v", r)
	}
	fin = nextLine(t, lines, "the second run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished }).event
	if fin.CommandID != q.CommandID || fin.Answer != "you chose red" {
		t.Fatalf("finished event %+v", fin)
	}

	start := time.Now()
	send("lonely")
	q = nextLine(t, lines, "the second question", func(e bridge.Event) bool { return e.Kind == bridge.EventQuestion }).event
	fin = nextLine(t, lines, "the unanswered run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished }).event
	if fin.CommandID != q.CommandID || fin.Status != "completed" || fin.Answer != "No answer: the person did not answer within 8 s." {
		t.Fatalf("finished event %+v", fin)
	}
	if took := time.Since(start); took >= 2*time.Minute {
		t.Errorf("the unanswered run took %s: not within the server's round", took)
	}
}

// The co-hosted openai engine offers ask_person to its model as a caller
// tool: a fake OpenAI-compatible upstream calls it, the person answers
// with `hubgate mock send`, and the model's closing message (made from
// the tool message it was sent) carries the reply.
func TestAskPersonWithTheOpenAIEngine(t *testing.T) {
	fake := &ollamaFake{reply: func(req map[string]any, n int) (map[string]any, string) {
		msgs, _ := req["messages"].([]any)
		last, _ := msgs[len(msgs)-1].(map[string]any)
		if last["role"] == "tool" {
			return map[string]any{"role": "assistant", "content": fmt.Sprintf("you chose %v", last["content"])}, "stop"
		}
		return map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
			"id": "call_ask", "type": "function", "function": map[string]any{"name": "ask_person",
				"arguments": `{"question":"Which colour?","choices":["red","blue"]}`}}}}, "tool_calls"
	}}
	up := httptest.NewServer(fake.handler())
	defer up.Close()
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{
		Automate: fmt.Sprintf("engine: openai\nopenai:\n  upstream: %s/v1\n  model: qwen3:8b\n  stream: false\n  conversation_store: %s",
			up.URL, filepath.Join(t.TempDir(), "conv.json")),
		Bridge: `rules:
  - name: pick
    match: {command: pick}
    ask: true
    run:
      prompt: "Ask me which colour I want, then tell me."
`})
	startListening(t, s)
	lines, _ := startWatch(t, s, "--history", "50")
	// The history shows the hub listening: the stream is live.
	nextLine(t, lines, "the hub state", func(e bridge.Event) bool { return e.Kind == bridge.EventHub && e.Hub.Status == "listening" })
	h.push("pick", nil)
	q := nextLine(t, lines, "the question", func(e bridge.Event) bool { return e.Kind == bridge.EventQuestion }).event
	if q.Question != "Which colour?" || strings.Join(q.Choices, ",") != "red,blue" {
		t.Fatalf("question event %+v", q)
	}
	r := runCmd(t, env(t), "", "mock", "send", "--url", h.url, "--device", h.id(), "--command", "blue")
	if r.code != 0 {
		t.Fatalf("mock send: %+v", r)
	}
	fin := nextLine(t, lines, "the run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished }).event
	if fin.CommandID != q.CommandID || fin.Status != "completed" || !strings.Contains(fin.Answer, "you chose blue") {
		t.Fatalf("finished event %+v", fin)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	var offered []string
	tools, _ := fake.chats[0]["tools"].([]any)
	for _, tl := range tools {
		fn, _ := tl.(map[string]any)["function"].(map[string]any)
		offered = append(offered, fmt.Sprint(fn["name"]))
	}
	if !slices.Contains(offered, "ask_person") {
		t.Errorf("the model was offered %v, without ask_person", offered)
	}
}
