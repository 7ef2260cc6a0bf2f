package llm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

// TestBuiltInToolsDenyMeansDeny: with allowDestructiveTools true and
// builtInTools deny @destructive, the model's run_command and delete_path
// calls do not run and the model sees the policy's rejection; an allow
// list refuses every other built-in tool (write_file, fetch_url); on the
// chat route through the extension object too.
func TestBuiltInToolsDenyMeansDeny(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	victim := filepath.Join(h.workspace, "old.txt")
	if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	up.script(
		reply{calls: []fakeCall{
			call("c1", "run_command", map[string]any{"command": "touch ran.txt"}),
			call("d1", "delete_path", map[string]any{"path": "old.txt"}),
		}},
		reply{content: "could not"},
	)
	status, rec := h.run(map[string]any{"prompt": "clean up", "allowDestructiveTools": true,
		"builtInTools": map[string]any{"deny": []string{"@destructive"}}})
	if status != 200 || len(rec.Steps) != 2 {
		t.Fatalf("%d %+v", status, rec)
	}
	for _, s := range rec.Steps {
		if s.Status != automate.StepSkipped || !strings.HasPrefix(s.ResultSummary, "Rejected by Automate HTTP server policy") {
			t.Errorf("step %s = %s %q", s.ToolName, s.Status, s.ResultSummary)
		}
	}
	for _, id := range []string{"c1", "d1"} {
		if got, _ := up.seen()[1].toolResult(id); !strings.HasPrefix(got, "Rejected by Automate HTTP server policy") {
			t.Errorf("model saw %q for %s", got, id)
		}
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("a denied delete deleted: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "ran.txt")); err == nil {
		t.Fatal("a denied run_command ran")
	}

	// allow: read_file only.
	up.script(
		reply{calls: []fakeCall{
			call("r1", "read_file", map[string]any{"path": "old.txt"}),
			call("w1", "write_file", map[string]any{"path": "new.txt", "content": "y"}),
			call("f1", "fetch_url", map[string]any{"url": "http://127.0.0.1:1/"}),
		}},
		reply{content: "read only"},
	)
	status, rec = h.run(map[string]any{"prompt": "look", "builtInTools": map[string]any{"allow": []string{"read_file"}}})
	if status != 200 || len(rec.Steps) != 3 {
		t.Fatalf("%d %+v", status, rec)
	}
	if s, _ := stepNamed(rec, "read_file"); s.Status != automate.StepSuccess {
		t.Errorf("allowed read_file = %+v", s)
	}
	for _, name := range []string{"write_file", "fetch_url"} {
		if s, _ := stepNamed(rec, name); s.Status != automate.StepSkipped || !strings.HasPrefix(s.ResultSummary, "Rejected by Automate HTTP server policy") {
			t.Errorf("%s outside the allow list = %+v", name, s)
		}
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "new.txt")); err == nil {
		t.Fatal("write_file ran outside the allow list")
	}

	// The chat route's extension object.
	up.script(reply{calls: []fakeCall{call("w2", "write_file", map[string]any{"path": "chat.txt", "content": "z"})}}, reply{content: "no"})
	r := h.do("POST", "/v1/chat/completions", map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "write it"}},
		"service":  map[string]any{"builtInTools": map[string]any{"deny": []string{"@content"}}},
	})
	if r.status != 200 {
		t.Fatalf("chat: %d %s", r.status, r.body)
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "chat.txt")); err == nil {
		t.Fatal("a denied write_file ran on the chat route")
	}
	if got, _ := up.seen()[len(up.seen())-1].toolResult("w2"); !strings.HasPrefix(got, "Rejected by Automate HTTP server policy") {
		t.Errorf("chat: model saw %q", got)
	}
}
