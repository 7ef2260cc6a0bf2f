package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/internal/testenv"
)

// elicitRules: the run of "hello" calls the tool "ask" of an MCP server
// of the official Go SDK over stdio (testdata/mcpasker), which elicits
// the person's name; the rule offers ask_person and takes names as
// answers.
func elicitRules(bin, prompt string) string {
	return fmt.Sprintf(`ask_timeout: 8s
rules:
  - name: hello
    match: {command: hello}
    ask: true
    answers: "(?i)^(ada|grace)$"
    run:
      prompt: %q
      mcp_servers:
        - name: asker
          description: asks the person
          transport: stdio
          command: %q
`, prompt, bin)
}

// pageState reads the status page's /api/state as the person's browser
// does (open --print's address, then the cookie it sets).
func pageState(t *testing.T, s *daemonSetup) string {
	t.Helper()
	r := runCmd(t, s.environ(), "", "--config", s.configPath, "open", "--print")
	u := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.Contains(u, "/?token=") {
		t.Fatalf("open --print: %+v", r)
	}
	jar, _ := cookiejar.New(nil)
	browse := &http.Client{Jar: jar, Timeout: e2eWait}
	resp, err := browse.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = browse.Get(strings.SplitN(u, "/?", 2)[0] + "/api/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("/api/state: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

const elicitQuestion = "The MCP server asker asks: What is your name?"

// An MCP server asks the person during a run started by a hub command:
// the question reaches `watch --json` and the status page as ask_person's
// do, `hubgate mock send` answers, and the tool's result carries the
// answer; unanswered, the elicitation is cancelled within the round. The
// scripted engine.
func TestMcpElicitationReachesThePerson(t *testing.T) {
	bin := testenv.GoBuild(t, "./automate/toolkit/testdata/mcpasker")
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: elicitRules(bin, "greet\n#!mcp asker ask\n#!answer ${result}")})
	startListening(t, s)
	lines, _ := startWatch(t, s, "--history", "50")
	nextLine(t, lines, "the hub state", func(e bridge.Event) bool { return e.Kind == bridge.EventHub && e.Hub.Status == "listening" })
	send := func(command string) {
		t.Helper()
		r := runCmd(t, env(t), "", "mock", "send", "--url", h.url, "--device", h.id(), "--command", command)
		if r.code != 0 || !strings.Contains(r.stdout, "delivered to 1 connection") {
			t.Fatalf("mock send %q: %+v", command, r)
		}
	}

	send("hello")
	q := nextLine(t, lines, "the MCP server's question", func(e bridge.Event) bool { return e.Kind == bridge.EventQuestion }).event
	if q.Question != elicitQuestion || q.Rule != "hello" || q.Deadline == nil {
		t.Fatalf("question event %+v", q)
	}
	if st := pageState(t, s); !strings.Contains(st, elicitQuestion) {
		t.Errorf("the status page does not show the question: %s", st)
	}
	send("Ada")
	a := nextLine(t, lines, "the answer", func(e bridge.Event) bool { return e.Kind == bridge.EventAnswered }).event
	if a.Reply != "Ada" || a.CommandID != q.CommandID {
		t.Fatalf("answered event %+v", a)
	}
	fin := nextLine(t, lines, "the run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished }).event
	if fin.CommandID != q.CommandID || fin.Status != "completed" || fin.Answer != "hello Ada" {
		t.Fatalf("finished event %+v", fin)
	}

	// Nobody answers: the elicitation is cancelled after ask_timeout, well
	// within the server's round.
	start := time.Now()
	send("hello")
	q = nextLine(t, lines, "the second question", func(e bridge.Event) bool { return e.Kind == bridge.EventQuestion }).event
	fin = nextLine(t, lines, "the unanswered run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished }).event
	if fin.CommandID != q.CommandID || fin.Status != "completed" || fin.Answer != "cancelled" {
		t.Fatalf("finished event %+v", fin)
	}
	if took := time.Since(start); took >= 2*time.Minute {
		t.Errorf("the unanswered elicitation took %s: not within the server's round", took)
	}
}

// The same with the co-hosted openai engine: a fake OpenAI-compatible
// upstream calls the MCP tool, the MCP server elicits, the person answers
// with `hubgate mock send`, and the tool message the model is sent
// carries the answer.
func TestMcpElicitationWithTheOpenAIEngine(t *testing.T) {
	bin := testenv.GoBuild(t, "./automate/toolkit/testdata/mcpasker")
	fake := &ollamaFake{reply: func(req map[string]any, n int) (map[string]any, string) {
		msgs, _ := req["messages"].([]any)
		last, _ := msgs[len(msgs)-1].(map[string]any)
		if last["role"] == "tool" {
			return map[string]any{"role": "assistant", "content": fmt.Sprintf("the tool said: %v", last["content"])}, "stop"
		}
		return map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
			"id": "call_mcp", "type": "function", "function": map[string]any{"name": "mcp__asker__ask", "arguments": `{}`}}}}, "tool_calls"
	}}
	up := httptest.NewServer(fake.handler())
	defer up.Close()
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{
		Automate: fmt.Sprintf("engine: openai\nopenai:\n  upstream: %s/v1\n  model: qwen3:8b\n  stream: false\n  conversation_store: %s",
			up.URL, filepath.Join(t.TempDir(), "conv.json")),
		Bridge: elicitRules(bin, "Ask the asker server for my name."),
	})
	startListening(t, s)
	lines, _ := startWatch(t, s, "--history", "50")
	nextLine(t, lines, "the hub state", func(e bridge.Event) bool { return e.Kind == bridge.EventHub && e.Hub.Status == "listening" })
	h.push("hello", nil)
	q := nextLine(t, lines, "the MCP server's question", func(e bridge.Event) bool { return e.Kind == bridge.EventQuestion }).event
	if q.Question != elicitQuestion {
		t.Fatalf("question event %+v", q)
	}
	if st := pageState(t, s); !strings.Contains(st, elicitQuestion) {
		t.Errorf("the status page does not show the question: %s", st)
	}
	if r := runCmd(t, env(t), "", "mock", "send", "--url", h.url, "--device", h.id(), "--command", "Grace"); r.code != 0 {
		t.Fatalf("mock send: %+v", r)
	}
	fin := nextLine(t, lines, "the run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished }).event
	if fin.CommandID != q.CommandID || fin.Status != "completed" || !strings.Contains(fin.Answer, "hello Grace") {
		t.Fatalf("finished event %+v", fin)
	}
}
