package llm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

func roles(req seenRequest) []string {
	var out []string
	for _, m := range req.Messages {
		r := m.Role
		if len(m.ToolCalls) > 0 {
			r += "+calls"
		}
		out = append(out, r)
	}
	return out
}

// TestContinuation: the warm worker continues the exact thread (tool
// calls included); after a force cancel, and in a new engine reading the
// same store, the thread is rebuilt from the stored turns; continuation
// false starts afresh.
func TestContinuation(t *testing.T) {
	store := filepath.Join(t.TempDir(), "conv.json")
	up := newFakeUpstream(t, "ollama", qwen)
	withStore := func(o *harnessOpts) { o.engine.ConversationStore = store }
	h := newHarness(t, up.url(), withStore)

	up.script(reply{calls: []fakeCall{call("k1", "list_dir", map[string]any{})}}, reply{content: "A1"})
	if st, rec := h.run(map[string]any{"prompt": "P1"}); st != 200 || rec.Answer != "A1" {
		t.Fatalf("%d %+v", st, rec)
	}
	up.script(reply{content: "A2"})
	h.run(map[string]any{"prompt": "P2", "continuation": true})
	warm := up.seen()[2]
	if got := roles(warm); !slices.Equal(got, []string{"system", "user", "assistant+calls", "tool", "assistant", "user"}) {
		t.Fatalf("warm thread %v", got)
	}
	if warm.Messages[1].Content != "P1" || warm.Messages[4].Content != "A1" || lastUser(warm) != "P2" {
		t.Errorf("warm thread contents %+v", warm.Messages)
	}

	// Force cancel while the upstream is answering: the request is
	// aborted, the worker is killed.
	block := make(chan bool)
	defer close(block)
	up.script(reply{content: "never", wait: block})
	ch := h.runAsync(map[string]any{"prompt": "P3", "continuation": true})
	up.waitRequests(4)
	h.do("POST", "/v1/automate/cancel", map[string]bool{"force": true})
	if st, rec := receive(t, ch); st != 500 || rec.Status != automate.StatusTerminated {
		t.Fatalf("%d %+v", st, rec)
	}
	waitAborted(t, up, 1) // the force cancel aborted the upstream request
	if hl := h.health(); hl.WorkerRunning {
		t.Errorf("worker still warm after a force cancel")
	}

	up.script(reply{content: "A4"})
	st, rec := h.run(map[string]any{"prompt": "P4", "continuation": true})
	if st != 200 || rec.Answer != "A4" {
		t.Fatalf("%d %+v", st, rec)
	}
	rebuilt := up.seen()[4]
	if got := roles(rebuilt); !slices.Equal(got, []string{"system", "user", "assistant", "user", "assistant", "user", "assistant", "user"}) {
		t.Fatalf("rebuilt thread %v", got)
	}
	var contents []string
	for _, m := range rebuilt.Messages[1:] {
		contents = append(contents, m.Content)
	}
	if !slices.Equal(contents[:5], []string{"P1", "A1", "P2", "A2", "P3"}) || !strings.Contains(contents[5], "before it finished") || contents[6] != "P4" {
		t.Errorf("rebuilt contents %q", contents)
	}

	// The store on disk: private, all four turns.
	fi, err := os.Stat(store)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("store %v %v", fi, err)
	}
	var file struct {
		Version int
		Turns   []struct{ Prompt, Answer, Status string }
	}
	b, _ := os.ReadFile(store)
	if json.Unmarshal(b, &file); file.Version != 1 || len(file.Turns) != 4 || file.Turns[3].Answer != "A4" || file.Turns[2].Status != "canceled" {
		t.Errorf("store %s", b)
	}

	// A new engine (a restart) continues from the store.
	up2 := newFakeUpstream(t, "ollama", qwen)
	h2 := newHarness(t, up2.url(), withStore)
	up2.script(reply{content: "A5"})
	h2.run(map[string]any{"prompt": "P5", "continuation": true})
	if got := up2.seen()[0]; len(got.Messages) != 10 || got.Messages[1].Content != "P1" || got.Messages[8].Content != "A4" {
		t.Fatalf("after a restart %v", roles(got))
	}
	// continuation false forgets it.
	up2.script(reply{content: "A6"})
	h2.run(map[string]any{"prompt": "P6"})
	if got := roles(up2.seen()[1]); !slices.Equal(got, []string{"system", "user"}) {
		t.Errorf("new conversation %v", got)
	}
	b, _ = os.ReadFile(store)
	if json.Unmarshal(b, &file); len(file.Turns) != 1 || file.Turns[0].Prompt != "P6" {
		t.Errorf("store after a new conversation %s", b)
	}
}

// TestSoftCancelLandsBetweenSteps: a soft cancel during a model call does
// not interrupt it; the tool calls it asked for never run.
func TestSoftCancelLandsBetweenSteps(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	release := make(chan bool)
	up.script(reply{calls: []fakeCall{call("w1", "write_file", map[string]any{"path": "never.txt", "content": "x"})}, wait: release})
	ch := h.runAsync(map[string]any{"prompt": "write"})
	up.waitRequests(1)
	var cr automate.CancelResponse
	json.Unmarshal(h.do("POST", "/v1/automate/cancel", map[string]bool{"force": false}).body, &cr)
	if !cr.Stopped || cr.Mode != "cancel" {
		t.Fatalf("cancel %+v", cr)
	}
	close(release)
	st, rec := receive(t, ch)
	if st != 500 || rec.Status != automate.StatusCanceled || rec.ErrorCode != "" || len(rec.Steps) != 0 {
		t.Fatalf("%d %+v", st, rec)
	}
	if up.abortedCount() != 0 {
		t.Errorf("a soft cancel aborted the model call")
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "never.txt")); err == nil {
		t.Errorf("a step ran after the soft cancel")
	}
	if hl := h.health(); !hl.WorkerRunning {
		t.Errorf("a soft cancel killed the worker")
	}
}

// TestChatRouteWithTools: the OpenAI-style route's tools park the run and
// tool messages resume it.
func TestChatRouteWithTools(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	up.script(reply{content: "Looking it up.", calls: []fakeCall{call("u1", "lookup", map[string]any{"q": "x"})}}, reply{content: "x is 42"})
	r := h.do("POST", "/v1/chat/completions", map[string]any{
		"model":    "anything",
		"messages": []any{map[string]any{"role": "system", "content": "Be brief."}, map[string]any{"role": "user", "content": "what is x?"}},
		"tools":    []any{map[string]any{"type": "function", "function": map[string]any{"name": "lookup", "description": "look up", "parameters": map[string]any{"type": "object"}}}},
	})
	var cc automate.ChatCompletion
	if err := json.Unmarshal(r.body, &cc); err != nil || r.status != 200 || cc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	tc := cc.Choices[0].Message.ToolCalls[0]
	r = h.do("POST", "/v1/chat/completions", map[string]any{
		"messages": []any{
			map[string]any{"role": "user", "content": "what is x?"},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{tc}},
			map[string]any{"role": "tool", "tool_call_id": tc.ID, "content": "42"},
		},
	})
	if err := json.Unmarshal(r.body, &cc); err != nil || r.status != 200 || cc.Choices[0].Message.Content != "x is 42" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if got, _ := up.seen()[1].toolResult("u1"); got != "42" {
		t.Errorf("tool result %q", got)
	}
	if !strings.Contains(up.seen()[0].system(), "Be brief.") {
		t.Errorf("system messages not in the system prompt")
	}
}
