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

// TestClientToolsParkInOneRound: the client calls of one turn park the run
// once (with a built-in call of the same turn run first); results come
// back to the model by call id, in the turn's order.
func TestClientToolsParkInOneRound(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	up.script(
		reply{content: "I need the weather in two cities.", calls: []fakeCall{
			call("c1", "get_weather", map[string]any{"city": "Oslo"}),
			call("c2", "list_dir", map[string]any{}),
			call("c3", "get_weather", map[string]any{"city": "Rome"}),
		}},
		reply{content: "Oslo is cold, Rome is warm."},
	)
	weather := map[string]any{"name": "get_weather", "description": "Weather of a city",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}}
	status, rec := h.run(map[string]any{"prompt": "Compare the weather", "clientTools": []any{weather}})
	if status != 200 || rec.Status != automate.StatusAwaitingToolResults || len(rec.ToolCalls) != 2 || rec.ResumeToken == "" {
		t.Fatalf("%d %+v", status, rec)
	}
	if rec.ToolCalls[0].Name != "get_weather" || string(rec.ToolCalls[0].Arguments) != `{"city":"Oslo"}` || string(rec.ToolCalls[1].Arguments) != `{"city":"Rome"}` {
		t.Errorf("tool calls %+v", rec.ToolCalls)
	}
	if len(rec.Steps) != 3 || rec.Steps[1].Status != automate.StepSuccess || rec.Steps[0].Status != automate.StepRunning || rec.Steps[2].Status != automate.StepRunning {
		t.Errorf("steps while parked %+v", rec.Steps)
	}
	if hl := h.health(); !hl.Busy || !hl.AwaitingToolResults {
		t.Errorf("health while parked %+v", hl)
	}
	// Answered out of order: the server matches by id.
	status, rec = h.resume(rec.ResumeToken,
		automate.ToolResult{ID: rec.ToolCalls[1].ID, Error: "service down"},
		automate.TextResult(rec.ToolCalls[0].ID, "-3 C"))
	if status != 200 || rec.Status != automate.StatusCompleted || rec.Answer != "Oslo is cold, Rome is warm." {
		t.Fatalf("%d %+v", status, rec)
	}
	if s := rec.Steps[0]; s.Status != automate.StepSuccess || s.ResultSummary != "-3 C" || s.ProducedContent != "-3 C" || s.Title != "Call client tool get_weather" {
		t.Errorf("oslo step %+v", s)
	}
	if s := rec.Steps[2]; s.Status != automate.StepFailed || !strings.Contains(s.ResultSummary, "service down") {
		t.Errorf("rome step %+v", s)
	}
	second := up.seen()[1]
	if got, _ := second.toolResult("c1"); got != "-3 C" {
		t.Errorf("c1 -> %q", got)
	}
	if got, _ := second.toolResult("c3"); got != "Error: service down" {
		t.Errorf("c3 -> %q", got)
	}
	if !hasTool(up.seen()[0], "get_weather") {
		t.Errorf("client tool not offered")
	}
}

// TestMalformedArgumentsAreShownToTheModel: arguments that are not JSON,
// or do not match the schema, fail the step and the model sees why; a
// valid call afterwards goes through.
func TestMalformedArgumentsAreShownToTheModel(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	up.script(
		reply{calls: []fakeCall{{id: "m1", name: "write_file", args: `{"path": "a.txt", "content": `}}},
		reply{calls: []fakeCall{call("m2", "write_file", map[string]any{"path": 7})}},
		reply{calls: []fakeCall{call("m3", "no_such_tool", map[string]any{})}},
		reply{calls: []fakeCall{call("m4", "write_file", map[string]any{"path": "a.txt", "content": "ok"})}},
		reply{content: "written"},
	)
	status, rec := h.run(map[string]any{"prompt": "write a.txt"})
	if status != 200 || rec.Status != automate.StatusCompleted || len(rec.Steps) != 4 {
		t.Fatalf("%d %+v", status, rec)
	}
	bad := rec.Steps[0]
	if bad.Status != automate.StepFailed || string(bad.ToolArgs) != `{"_raw":"{\"path\": \"a.txt\", \"content\": "}` ||
		!strings.Contains(bad.ResultSummary, "not valid JSON") {
		t.Errorf("malformed step %+v", bad)
	}
	if s := rec.Steps[1]; s.Status != automate.StepFailed || string(s.ToolArgs) != `{"path":7}` || !strings.Contains(s.ResultSummary, "invalid arguments for write_file") {
		t.Errorf("schema step %+v", s)
	}
	if s := rec.Steps[2]; s.Status != automate.StepFailed || !strings.Contains(s.ResultSummary, "no tool of that name") {
		t.Errorf("unknown tool step %+v", s)
	}
	if s := rec.Steps[3]; s.Status != automate.StepSuccess {
		t.Errorf("valid step %+v", s)
	}
	reqs := up.seen()
	if got, _ := reqs[1].toolResult("m1"); !strings.HasPrefix(got, "Error: invalid arguments for write_file: the arguments are not valid JSON") {
		t.Errorf("model saw %q", got)
	}
	if got, _ := reqs[2].toolResult("m2"); !strings.Contains(got, "Error: invalid arguments for write_file") {
		t.Errorf("model saw %q", got)
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "a.txt")); err != nil {
		t.Errorf("the valid call did not write: %v", err)
	}
}

// TestRepeatedInvalidCallsAreSchemaInvalid: the same tool invalid three
// times in a row ends the run with SCHEMA_INVALID; a client tool's
// declared schema is enforced too (the caller never sees the bad call).
func TestRepeatedInvalidCallsAreSchemaInvalid(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	weather := map[string]any{"name": "get_weather", "description": "Weather of a city",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}}
	up.script(
		reply{calls: []fakeCall{call("x1", "get_weather", map[string]any{"town": "Oslo"})}},
		reply{calls: []fakeCall{call("x2", "get_weather", map[string]any{})}},
		reply{calls: []fakeCall{call("x3", "get_weather", `{"city": 3}`)}},
	)
	status, rec := h.run(map[string]any{"prompt": "weather?", "clientTools": []any{weather}})
	if status != 500 || rec.Status != automate.StatusFailed || rec.ErrorCode != automate.ErrorSchemaInvalid || len(rec.ToolCalls) != 0 {
		t.Fatalf("%d %+v", status, rec)
	}
	if !strings.Contains(rec.Answer, "get_weather with invalid arguments 3 times in a row") || len(rec.Steps) != 3 {
		t.Errorf("answer %q steps %d", rec.Answer, len(rec.Steps))
	}
	if up.remaining() != 0 || len(up.seen()) != 3 {
		t.Errorf("requests %d", len(up.seen()))
	}
}

// TestCutOffAnswers: an answer cut by the output limit is continued and
// joined; one cut because the context is full fails the run.
func TestCutOffAnswers(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url(), func(o *harnessOpts) { o.engine.ContextSize = 8192 })
	up.script(
		reply{content: "The three files are a, b", finish: "length", usage: usage(500, 4096)},
		reply{content: " and c.", usage: usage(4600, 4)},
	)
	status, rec := h.run(map[string]any{"prompt": "list the files"})
	if status != 200 || rec.Answer != "The three files are a, b and c." {
		t.Fatalf("%d %q", status, rec.Answer)
	}
	second := up.seen()[1]
	if n := len(second.Messages); n < 2 || second.Messages[n-2].Role != "assistant" || second.Messages[n-2].Content != "The three files are a, b" ||
		!strings.HasPrefix(lastUser(second), "Your previous message was cut off") {
		t.Errorf("continuation request %+v", second.Messages)
	}

	up.script(reply{content: "partial", finish: "length", usage: usage(8000, 192)})
	status, rec = h.run(map[string]any{"prompt": "a long task"})
	if status != 500 || rec.ErrorCode != automate.ErrorContextLimitExceeded {
		t.Fatalf("%d %+v", status, rec)
	}

	// A tool turn cut off by the limit is still a tool turn; its truncated
	// arguments are an invalid call the model sees.
	up.script(
		reply{calls: []fakeCall{{id: "t1", name: "write_file", args: `{"path":"x.txt","content":"abc`}}, finish: "length"},
		reply{content: "gave up"},
	)
	status, rec = h.run(map[string]any{"prompt": "write x"})
	if status != 200 || len(rec.Steps) != 1 || rec.Steps[0].Status != automate.StepFailed || rec.Answer != "gave up" {
		t.Fatalf("%d %+v", status, rec)
	}
}

// TestDyingConnectionIsServerLost: a connection that dies in the middle
// of a streamed answer ends the run with SERVER_LOST; the worker is gone
// and the next run cold starts.
func TestDyingConnectionIsServerLost(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	up.script(
		reply{content: "Listing.", calls: []fakeCall{call("d1", "list_dir", map[string]any{})}},
		reply{content: "Here is a long answer that never ends properly", cut: true},
	)
	status, rec := h.run(map[string]any{"prompt": "list"})
	if status != 500 || rec.Status != automate.StatusFailed || rec.ErrorCode != automate.ErrorServerLost {
		t.Fatalf("%d %+v", status, rec)
	}
	if !strings.Contains(rec.Answer, "lost") || len(rec.Steps) != 1 || rec.Steps[0].Status != automate.StepSuccess {
		t.Errorf("answer %q steps %+v", rec.Answer, rec.Steps)
	}
	if hl := h.health(); hl.WorkerRunning || hl.WorkflowStatus != automate.WorkflowTerminated {
		t.Errorf("health after a lost server %+v", hl)
	}
	up.script(reply{content: "back"})
	status, rec = h.run(map[string]any{"prompt": "again"})
	if status != 200 || rec.Answer != "back" {
		t.Fatalf("%d %+v", status, rec)
	}
}

// TestUpstreamGoneMidRunIsServerLost: the upstream process dies while the
// run is parked; the next request cannot connect: SERVER_LOST. A new run
// against the dead upstream cannot start: MODEL_LOAD_FAILED.
func TestUpstreamGoneMidRunIsServerLost(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	up.script(reply{calls: []fakeCall{call("p1", "confirm", map[string]any{})}})
	status, rec := h.run(map[string]any{"prompt": "confirm then go", "clientTools": []any{map[string]any{"name": "confirm", "description": "ask"}}})
	if status != 200 || rec.Status != automate.StatusAwaitingToolResults {
		t.Fatalf("%d %+v", status, rec)
	}
	up.close()
	status, rec = h.resume(rec.ResumeToken, automate.TextResult(rec.ToolCalls[0].ID, "yes"))
	// Depending on timing the client finds its kept-alive connection dead
	// (the connection broke) or cannot connect at all: lost either way.
	if status != 500 || rec.ErrorCode != automate.ErrorServerLost || !strings.HasPrefix(rec.Answer, "The model server") {
		t.Fatalf("%d %+v", status, rec)
	}
	status, rec = h.run(map[string]any{"prompt": "anything"})
	if status != 500 || rec.ErrorCode != automate.ErrorModelLoadFailed || !strings.Contains(rec.Answer, "cannot be reached") {
		t.Fatalf("%d %+v", status, rec)
	}
	if rec.Usage != nil || len(rec.Steps) != 0 {
		t.Errorf("usage %+v steps %+v", rec.Usage, rec.Steps)
	}
}

// TestContextOverflow: the upstream's 400 naming the context, and a
// conversation the engine already knows cannot fit, are both
// CONTEXT_LIMIT_EXCEEDED.
func TestContextOverflow(t *testing.T) {
	up := newFakeUpstream(t, "llama", fakeModel{name: "model.gguf"})
	up.nCtx = 4096
	h := newHarness(t, up.url())
	up.script(reply{status: 400, errBody: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}`})
	status, rec := h.run(map[string]any{"prompt": "hello"})
	if status != 500 || rec.ErrorCode != automate.ErrorContextLimitExceeded || !strings.Contains(rec.Answer, "exceeds the available context size") {
		t.Fatalf("%d %+v", status, rec)
	}
	if hl := h.health(); hl.ContextSize == nil || *hl.ContextSize != 4096 || hl.Backend == nil || hl.Backend.FlavorID != "llama.cpp" {
		t.Errorf("health %+v", hl)
	}
	// The upstream counted a prompt that fills the context: it was cut.
	up.script(reply{content: "an answer about half a conversation", usage: usage(4096, 7)})
	status, rec = h.run(map[string]any{"prompt": "hello again"})
	if status != 500 || rec.ErrorCode != automate.ErrorContextLimitExceeded || !strings.Contains(rec.Answer, "4096 prompt tokens") {
		t.Fatalf("%d %+v", status, rec)
	}
	// About 6000 tokens of prompt for a 4096-token context: refused before
	// any request.
	before := len(up.seen())
	status, rec = h.run(map[string]any{"prompt": strings.Repeat("word ", 5000)})
	if status != 500 || rec.ErrorCode != automate.ErrorContextLimitExceeded || len(up.seen()) != before {
		t.Fatalf("%d %+v (requests %d -> %d)", status, rec.ErrorCode, before, len(up.seen()))
	}
}

// TestModelNotServed: a configured model the upstream does not serve, or
// one known but not downloaded, cannot load.
func TestModelNotServed(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url(), func(o *harnessOpts) {
		o.engine.Model = "llama3.3:70b"
		o.engine.KnownModels = []automate.ModelOption{{Name: "llama3.3:70b", Family: "llama", SupportsTools: true}}
	})
	status, rec := h.run(map[string]any{"prompt": "hi"})
	if status != 500 || rec.ErrorCode != automate.ErrorModelLoadFailed || !strings.Contains(rec.Answer, "not downloaded") || rec.Model != "llama3.3:70b" {
		t.Fatalf("%d %+v", status, rec)
	}
	up2 := newFakeUpstream(t, "ollama", qwen)
	h2 := newHarness(t, up2.url(), func(o *harnessOpts) { o.engine.Model = "mistral:7b" })
	status, rec = h2.run(map[string]any{"prompt": "hi"})
	if status != 500 || rec.ErrorCode != automate.ErrorModelLoadFailed || !strings.Contains(rec.Answer, "it serves: qwen3:8b") {
		t.Fatalf("%d %+v", status, rec)
	}
	// Ollama's own "not found" at chat time is a load failure too.
	up3 := newFakeUpstream(t, "ollama", qwen)
	h3 := newHarness(t, up3.url())
	up3.script(reply{status: 404, errBody: `{"error":{"message":"model \"qwen3:8b\" not found, try pulling it first","type":"api_error"}}`})
	status, rec = h3.run(map[string]any{"prompt": "hi"})
	if status != 500 || rec.ErrorCode != automate.ErrorModelLoadFailed {
		t.Fatalf("%d %+v", status, rec)
	}
}
