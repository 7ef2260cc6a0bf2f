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

var qwen = fakeModel{name: "qwen3:8b", family: "qwen3", params: "8.2B", size: 5_200_000_000, caps: []string{"completion", "tools", "thinking"}}

// TestToolLoopThroughServer drives a whole run through the Automate server:
// a turn with two parallel built-in calls (with stated reasoning), a read
// of the file written, and a closing message under an answer contract.
func TestToolLoopThroughServer(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	os.WriteFile(filepath.Join(h.workspace, "todo.txt"), []byte("buy milk\ncall bob\n"), 0o644)

	up.script(
		reply{content: "I will look at the workspace and write a summary.",
			calls: []fakeCall{call("call_a", "list_dir", map[string]any{}), call("call_b", "write_file", map[string]any{"path": "out/summary.md", "content": "# Summary\n2 tasks"})},
			usage: usage(900, 40)},
		reply{content: "", reasoning: "Now check the file.", calls: []fakeCall{call("call_c", "read_file", `{"path":"out/summary.md"}`)}, usage: usage(1000, 12)},
		reply{content: "Wrote the summary.\nFINAL ANSWER: 2 tasks", usage: usage(1100, 9)},
	)
	status, rec := h.run(map[string]any{
		"prompt":                   "Summarise my todo list into out/summary.md",
		"taskId":                   "t-1",
		"additionalWorkflowPrompt": "Prefer markdown.",
		"answerContract":           "End with FINAL ANSWER: <count> tasks",
	})
	if status != 200 || rec.Status != automate.StatusCompleted {
		t.Fatalf("status %d record %+v", status, rec)
	}
	if rec.Answer != "Wrote the summary.\nFINAL ANSWER: 2 tasks" || rec.FinalAnswer == nil || *rec.FinalAnswer != "2 tasks" {
		t.Errorf("answer %q final %v", rec.Answer, rec.FinalAnswer)
	}
	if rec.Model != "qwen3:8b" || rec.Backend == nil || rec.Backend.FlavorID != "ollama" {
		t.Errorf("model %q backend %+v", rec.Model, rec.Backend)
	}
	if len(rec.Steps) != 3 {
		t.Fatalf("steps %+v", rec.Steps)
	}
	list, write, read := rec.Steps[0], rec.Steps[1], rec.Steps[2]
	if list.ToolName != "list_dir" || list.Status != automate.StepSuccess || string(list.ToolArgs) != `{}` ||
		list.Thinking != "I will look at the workspace and write a summary." || !strings.Contains(list.ProducedContent, "todo.txt") {
		t.Errorf("list step %+v", list)
	}
	wantPath := filepath.Join(h.workspace, "out", "summary.md")
	if real, err := filepath.EvalSymlinks(h.workspace); err == nil {
		wantPath = filepath.Join(real, "out", "summary.md")
	}
	if write.ToolName != "write_file" || write.Status != automate.StepSuccess || write.Title != "Write out/summary.md" ||
		string(write.ToolArgs) != `{"content":"# Summary\n2 tasks","path":"out/summary.md"}` && string(write.ToolArgs) != `{"path":"out/summary.md","content":"# Summary\n2 tasks"}` ||
		write.ProducedFilePath != wantPath || write.ProducedContent != "# Summary\n2 tasks" || write.ProducedContentID != "g2" ||
		write.Thinking != list.Thinking {
		t.Errorf("write step %+v (want path %s)", write, wantPath)
	}
	if b, err := os.ReadFile(wantPath); err != nil || string(b) != "# Summary\n2 tasks" {
		t.Errorf("file on disk: %q %v", b, err)
	}
	if read.Thinking != "Now check the file." || read.ProducedContent != "# Summary\n2 tasks" ||
		!slices.Equal(read.ConsumedContentIDs, []string{"g2"}) || read.ProducedContentID != "s3" || read.ID != "step-3" || read.Index != 3 {
		t.Errorf("read step %+v", read)
	}

	// What the upstream saw.
	reqs := up.seen()
	if len(reqs) != 3 {
		t.Fatalf("%d chat requests", len(reqs))
	}
	first := reqs[0]
	if first.Model != "qwen3:8b" || !first.Stream || first.ToolChoice != "auto" || first.ParallelToolCalls == nil || !*first.ParallelToolCalls ||
		first.MaxTokens != 4096 || first.ReasoningEffort != "" {
		t.Errorf("request fields %+v", first)
	}
	for _, tool := range []string{"read_file", "write_file", "list_dir", "delete_path", "move_path", "run_command", "fetch_url", "request_user_input"} {
		if !hasTool(first, tool) {
			t.Errorf("tool %s not offered: %v", tool, first.toolNames())
		}
	}
	sys := first.system()
	contract := strings.Index(sys, "End with FINAL ANSWER")
	if !strings.HasPrefix(sys, "You are the on-device assistant") || !strings.Contains(sys, "Prefer markdown.") ||
		contract < strings.Index(sys, "Prefer markdown.") || !strings.HasSuffix(sys, "End with FINAL ANSWER: <count> tasks") ||
		!strings.Contains(sys, h.workspace) {
		t.Errorf("system prompt:\n%s", sys)
	}
	if lastUser(first) != "Summarise my todo list into out/summary.md" {
		t.Errorf("user message %q", lastUser(first))
	}
	second := reqs[1]
	if got, ok := second.toolResult("call_a"); !ok || !strings.Contains(got, "todo.txt") {
		t.Errorf("list result sent back: %q", got)
	}
	if got, ok := second.toolResult("call_b"); !ok || !strings.Contains(got, "Wrote 17 bytes") {
		t.Errorf("write result sent back: %q", got)
	}
	// The assistant turn went back with its calls, results in call order.
	var order []string
	for _, m := range second.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) == 2 {
			order = append(order, m.ToolCalls[0].ID, m.ToolCalls[1].ID)
		}
		if m.Role == "tool" {
			order = append(order, m.ToolCallID)
		}
	}
	if !slices.Equal(order, []string{"call_a", "call_b", "call_a", "call_b"}) {
		t.Errorf("message order %v", order)
	}
	if got, _ := reqs[2].toolResult("call_c"); got != "# Summary\n2 tasks" {
		t.Errorf("read result %q", got)
	}

	// Usage: tokens summed from the upstream, timings measured.
	if rec.Usage == nil || rec.Usage.InputTokens != 3000 || rec.Usage.OutputTokens != 61 || rec.Usage.TPS <= 0 || rec.Usage.GenerationMs < 0 {
		t.Errorf("usage %+v", rec.Usage)
	}
	// Trace: system, user, assistant(2 calls), 2 tools, assistant(1 call), tool, closing.
	var roles []string
	for _, m := range rec.Trace {
		var x struct{ Role string }
		json.Unmarshal(m, &x)
		roles = append(roles, x.Role)
	}
	if !slices.Equal(roles, []string{"system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant"}) {
		t.Errorf("trace roles %v", roles)
	}
	hl := h.health()
	if !hl.WorkerRunning || hl.ModelName == nil || *hl.ModelName != "qwen3:8b" || hl.ContextSize == nil || hl.Backend == nil {
		t.Errorf("health %+v", hl)
	}
}
