package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
)

var echoTool = map[string]any{"name": "lookup", "description": "Looks a thing up", "parameters": map[string]any{"type": "object"}}

func TestRunCompletesWithAFullRecord(t *testing.T) {
	h := newHarness(t)
	before := time.Now().Add(-time.Second)
	r, rec := h.run(map[string]any{"prompt": "Tidy the desk\nthen rest\n#!write notes/a.txt hello world", "taskId": "task-7"})
	if r.status != 200 {
		t.Fatalf("status %d %s", r.status, r.body)
	}
	checkContractHeaders(t, r)
	if rec.SchemaVersion != 1 || !strings.HasPrefix(rec.RequestID, "automate-run-") || len(rec.RequestID) != len("automate-run-")+36 {
		t.Errorf("identity: %s", brief(rec))
	}
	if rec.TaskID != "task-7" || rec.Status != "completed" || rec.Answer != "Done: Tidy the desk" || rec.ErrorCode != "" {
		t.Errorf("outcome: %s", brief(rec))
	}
	if rec.StartedAt.Before(before) || rec.CompletedAt.Before(rec.StartedAt.Time) || rec.DurationMs < 0 {
		t.Errorf("times: %v %v %d", rec.StartedAt, rec.CompletedAt, rec.DurationMs)
	}
	if rec.Model != "scripted-mini" || rec.AppVersion != "1.2.3-test" || rec.Backend == nil || rec.Usage == nil {
		t.Errorf("runtime: model %q app %q backend %v usage %v", rec.Model, rec.AppVersion, rec.Backend, rec.Usage)
	}
	if len(rec.Steps) != 1 || rec.Steps[0].ToolName != "write_file" || rec.Steps[0].Status != "success" {
		t.Fatalf("steps %+v", rec.Steps)
	}
	want := filepath.Join(h.workspace, "notes", "a.txt")
	if rec.Steps[0].ProducedFilePath != want {
		t.Errorf("producedFilePath %q, want %q", rec.Steps[0].ProducedFilePath, want)
	}
	if b, err := os.ReadFile(want); err != nil || string(b) != "hello world" {
		t.Errorf("file: %q %v", b, err)
	}
	if len(rec.Trace) == 0 || len(rec.Events) == 0 {
		t.Errorf("trace %d events %d", len(rec.Trace), len(rec.Events))
	}
	raw := r.raw(t)
	for _, k := range []string{"toolCalls", "resumeToken", "finalAnswer", "errorCode"} {
		if _, ok := raw[k]; ok {
			t.Errorf("completed record carries %q", k)
		}
	}
	// Timestamps are ISO 8601 UTC with milliseconds.
	if s := raw["startedAt"].(string); len(s) != len("2026-11-21T19:49:38.123Z") || !strings.HasSuffix(s, "Z") {
		t.Errorf("startedAt %q", s)
	}
	// Events: statuses and step lists in order, ending with the result.
	last := rec.Events[len(rec.Events)-1]
	if last.Channel != automate.ChannelResult {
		t.Errorf("last event %+v", last)
	}
	for i, e := range rec.Events {
		if e.Seq != i+1 {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
}

func TestIncludeSwitchesOmitBlocks(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		include map[string]bool
		absent  []string
		present []string
	}{
		{map[string]bool{"steps": false}, []string{"steps"}, []string{"trace", "events"}},
		{map[string]bool{"trace": false}, []string{"trace"}, []string{"steps", "events"}},
		{map[string]bool{"events": false}, []string{"events"}, []string{"steps", "trace"}},
		{map[string]bool{"steps": false, "trace": false, "events": false}, []string{"steps", "trace", "events"}, nil},
		{map[string]bool{}, nil, []string{"steps", "trace", "events"}},
	} {
		r, _ := h.run(map[string]any{"prompt": "x\n#!sleep 1", "include": c.include})
		raw := r.raw(t)
		for _, k := range c.absent {
			if _, ok := raw[k]; ok {
				t.Errorf("include %v: %q present", c.include, k)
			}
		}
		for _, k := range c.present {
			if _, ok := raw[k]; !ok {
				t.Errorf("include %v: %q absent", c.include, k)
			}
		}
	}
}

func TestAnswerContractAndFinalAnswer(t *testing.T) {
	h := newHarness(t)
	cases := []struct{ answer, final string }{
		{"thinking... Final Answer: 42", "42"},
		{"FINAL ANSWER: first; more; final answer:   second", "second"},
		{"no marker at all", "no marker at all"},
		{"final answer:", ""},
		{"FINAL ANSWER - not it", "FINAL ANSWER - not it"},
	}
	for _, c := range cases {
		r, rec := h.run(map[string]any{"prompt": "q\n#!answer " + c.answer, "answerContract": "Reply with FINAL ANSWER: <n>"})
		if r.status != 200 || rec.FinalAnswer == nil || *rec.FinalAnswer != c.final || rec.Answer != c.answer {
			t.Errorf("answer %q: final %v answer %q (status %d)", c.answer, deref(rec.FinalAnswer), rec.Answer, r.status)
		}
		var sys struct{ Role, Content string }
		if err := json.Unmarshal(rec.Trace[0], &sys); err != nil || sys.Role != "system" || !strings.HasSuffix(sys.Content, "Reply with FINAL ANSWER: <n>") {
			t.Errorf("system prompt does not end with the contract: %+v %v", sys, err)
		}
	}
	// An empty contract still yields finalAnswer; no contract yields none.
	_, rec := h.run(map[string]any{"prompt": "q\n#!answer a FINAL ANSWER: b", "answerContract": ""})
	if rec.FinalAnswer == nil || *rec.FinalAnswer != "b" {
		t.Errorf("empty contract: %v", rec.FinalAnswer)
	}
	_, rec = h.run(map[string]any{"prompt": "q\n#!answer a FINAL ANSWER: b"})
	if rec.FinalAnswer != nil {
		t.Errorf("no contract but finalAnswer %q", *rec.FinalAnswer)
	}
}

func TestRunValidationMessages(t *testing.T) {
	h := newHarness(t, withServerConfig(func(c *server.Config) { c.ConfiguredMcpServers = []string{"files"} }))
	mcp := func(over map[string]any) map[string]any {
		s := map[string]any{"name": "ok", "description": "d", "transport": "stdio", "command": "true"}
		for k, v := range over {
			s[k] = v
		}
		return map[string]any{"prompt": "p", "mcpServers": []any{s}}
	}
	tool := func(name string) map[string]any {
		return map[string]any{"prompt": "p", "clientTools": []any{map[string]any{"name": name, "description": "d"}}}
	}
	cases := []struct {
		body any
		msg  string
	}{
		{map[string]any{}, "prompt must be a non-empty string"},
		{map[string]any{"prompt": "   \n\t"}, "prompt must be a non-empty string"},
		{map[string]any{"prompt": 5}, "prompt must be a non-empty string"},
		{map[string]any{"prompt": "p", "timeoutMs": 999}, "timeoutMs must be at least 1000"},
		{map[string]any{"prompt": "p", "timeoutMs": "fast"}, "timeoutMs must be a number"},
		{map[string]any{"prompt": "p", "answerContract": 5}, "answerContract must be a string"},
		{map[string]any{"prompt": "p", "continuation": "yes"}, "continuation must be a boolean"},
		{map[string]any{"prompt": "p", "include": true}, "include must be an object"},
		{map[string]any{"prompt": "p", "include": []any{}}, "include must be an object"},
		{map[string]any{"prompt": "p", "include": map[string]any{"steps": "no"}}, "include.steps must be a boolean"},
		{map[string]any{"prompt": "p", "thinkingLevel": "extreme"}, "thinkingLevel must be one of low, medium, high, max"},
		{"{not json", "Malformed JSON"},
		{"", "Malformed JSON"},
		{"[1,2]", "Request body must be a JSON object"},
		{mcp(map[string]any{"name": "Bad"}), "mcpServers[0].name: must contain only lowercase letters, numbers and hyphens"},
		{mcp(map[string]any{"name": ""}), "mcpServers[0].name: must be 1 to 64 characters"},
		{mcp(map[string]any{"name": strings.Repeat("a", 65)}), "mcpServers[0].name: must be 1 to 64 characters"},
		{mcp(map[string]any{"name": "-a"}), "mcpServers[0].name: must not start or end with a hyphen"},
		{mcp(map[string]any{"name": "a-"}), "mcpServers[0].name: must not start or end with a hyphen"},
		{mcp(map[string]any{"name": "a--b"}), "mcpServers[0].name: must not contain --"},
		{mcp(map[string]any{"name": "files"}), "mcpServers[0].name collides with an MCP server already configured"},
		{mcp(map[string]any{"description": ""}), "mcpServers[0].description: is required"},
		{mcp(map[string]any{"description": strings.Repeat("d", 1025)}), "mcpServers[0].description: must be at most 1024 characters"},
		{mcp(map[string]any{"transport": "ws"}), "mcpServers[0].transport: must be one of stdio, http, sse"},
		{mcp(map[string]any{"command": ""}), "mcpServers[0].command: is required for the stdio transport"},
		{mcp(map[string]any{"transport": "http", "command": "", "url": "ftp://x"}), "mcpServers[0].url: must be a valid http:// or https:// URL"},
		{mcp(map[string]any{"transport": "sse", "command": "", "url": ""}), "mcpServers[0].url: must be a valid http:// or https:// URL"},
		{tool("has space"), "clientTools[0].name must contain only letters, numbers, underscores and hyphens"},
		{tool("mcp__x"), "clientTools[0].name must not start with mcp__"},
		{tool(strings.Repeat("t", 65)), "clientTools[0].name must be at most 64 characters"},
		{map[string]any{"prompt": "p", "clientTools": []any{map[string]any{"name": "t"}}}, "clientTools[0].description is required"},
		{map[string]any{"prompt": "p", "hitlAnswers": map[string]any{"x": 1}}, "hitlAnswers.x must be a string or an array of strings"},
	}
	for _, c := range cases {
		h.do("POST", "/v1/runs", c.body).envelope(t, 400, "invalid_request_error", c.msg)
	}
	nine := make([]any, 9)
	for i := range nine {
		nine[i] = map[string]any{"name": "s" + string(rune('a'+i)), "description": "d", "transport": "stdio", "command": "true"}
	}
	h.do("POST", "/v1/runs", map[string]any{"prompt": "p", "mcpServers": nine}).
		envelope(t, 400, "invalid_request_error", "mcpServers must have at most 8 entries")
	tools := make([]any, 33)
	for i := range tools {
		tools[i] = map[string]any{"name": "t" + strings.Repeat("x", i), "description": "d"}
	}
	h.do("POST", "/v1/runs", map[string]any{"prompt": "p", "clientTools": tools}).
		envelope(t, 400, "invalid_request_error", "clientTools must have at most 32 entries")
	// 1 MiB: a body just over the limit is refused, one just under runs.
	big := `{"prompt":"` + strings.Repeat("a", automate.MaxBodyBytes) + `"}`
	h.do("POST", "/v1/runs", big).envelope(t, 400, "invalid_request_error", "Request body exceeds 1 MiB")
	fits := `{"prompt":"` + strings.Repeat("a", automate.MaxBodyBytes-20) + `"}`
	if r := h.do("POST", "/v1/runs", fits); r.status != 200 {
		t.Errorf("a body under 1 MiB: %d", r.status)
	}
	// Nothing above started a run.
	if hl := h.health(); hl.Busy {
		t.Error("a rejected request holds the slot")
	}
}

func TestFailedRunIsARecordUnder500(t *testing.T) {
	h := newHarness(t)
	for _, code := range automate.ErrorCodes {
		r, rec := h.run(map[string]any{"prompt": "p\n#!fail " + code})
		if r.status != 500 || rec.SchemaVersion != 1 || rec.Status != "failed" || rec.ErrorCode != code {
			t.Errorf("fail %s: %d %s", code, r.status, brief(rec))
		}
		checkContractHeaders(t, r)
		if r.header.Get("X-Should-Retry") != "false" {
			t.Errorf("500 without x-should-retry: false")
		}
	}
}

func TestOneRunAtATime(t *testing.T) {
	h := newHarness(t)
	done := h.startAsync("/v1/runs", map[string]any{"prompt": "slow\n#!sleep 60000"})
	hl := h.waitFor("busy", func(hl automate.Health) bool { return hl.Busy })
	if hl.ActiveRequestID == nil || hl.AwaitingToolResults {
		t.Errorf("busy health %+v", hl)
	}
	for _, path := range []string{"/v1/runs", "/v1/chat/completions"} {
		body := map[string]any{"prompt": "second", "messages": []any{map[string]any{"role": "user", "content": "second"}}}
		r := h.do("POST", path, body)
		var env automate.ErrorEnvelope
		r.json(t, &env)
		want := "The on-device assistant is already running or preparing (" + h.health().WorkflowStatus + ")"
		if r.status != 409 || env.Error.Type != "conflict" || env.Error.Message != want {
			t.Errorf("%s while busy: %d %+v (want %q)", path, r.status, env.Error, want)
		}
	}
	// /health, models, catalog and cancel never answer 409.
	for _, rt := range []struct{ m, p string }{{"GET", "/health"}, {"GET", "/v1/models"}, {"GET", "/v1/automate/models"}} {
		if r := h.do(rt.m, rt.p, nil); r.status != 200 {
			t.Errorf("%s while busy: %d", rt.p, r.status)
		}
	}
	r := h.do("POST", "/v1/automate/cancel", map[string]bool{"force": true})
	var cr automate.CancelResponse
	r.json(t, &cr)
	if !cr.Stopped || cr.Mode != "terminate" || cr.RequestID == nil || *cr.RequestID != *hl.ActiveRequestID {
		t.Errorf("cancel %+v", cr)
	}
	res := receive(t, done)
	var rec automate.RunRecord
	res.json(t, &rec)
	if res.status != 500 || rec.Status != "terminated" || rec.SchemaVersion != 1 {
		t.Errorf("force-cancelled run: %d %s", res.status, brief(rec))
	}
	hl = h.health()
	if hl.Busy || hl.WorkflowStatus != "terminated" || hl.WorkerRunning || !hl.Ready() {
		t.Errorf("after force cancel: %+v", hl)
	}
	// The next run cold starts and works.
	if r, rec := h.run(map[string]any{"prompt": "again"}); r.status != 200 || rec.Status != "completed" {
		t.Errorf("run after terminate: %d %s", r.status, brief(rec))
	}
	if hl := h.health(); hl.WorkflowStatus != "idle" || !hl.WorkerRunning {
		t.Errorf("after a run: %+v", hl)
	}
}

// TestSoftCancelLandsBetweenSteps runs on the fake clock of a synctest
// bubble, so the cancel reaches the run inside its sleep step however
// loaded the machine is (on the wall clock, a cancel later than the
// 700 ms sleep found the write already running).
func TestSoftCancelLandsBetweenSteps(t *testing.T) {
	synctest.Test(t, testSoftCancelLandsBetweenSteps)
}

func testSoftCancelLandsBetweenSteps(t *testing.T) {
	h := newHarness(t, onPipe())
	done := h.startAsync("/v1/runs", map[string]any{"prompt": "x\n#!sleep 700\n#!write after.txt should-not-exist"})
	synctest.Wait() // every goroutine waits: the run is in its sleep step
	if hl := h.health(); !hl.Busy {
		t.Fatalf("not running: %+v", hl)
	}
	var cr automate.CancelResponse
	h.do("POST", "/v1/automate/cancel", map[string]any{}).json(t, &cr)
	if !cr.Stopped || cr.Mode != "cancel" {
		t.Fatalf("cancel %+v", cr)
	}
	res := receive(t, done)
	var rec automate.RunRecord
	res.json(t, &rec)
	if res.status != 500 || rec.Status != "canceled" || rec.ErrorCode != "" {
		t.Fatalf("soft-cancelled run: %d %s", res.status, brief(rec))
	}
	// The sleep step finished; the write never ran.
	if len(rec.Steps) < 1 || rec.Steps[0].Status != "success" || rec.Steps[0].ToolName != "sleep" {
		t.Errorf("steps %s", stepSummary(rec.Steps))
	}
	for _, s := range rec.Steps[1:] {
		if s.Status == "success" || s.Status == "running" {
			t.Errorf("a step after the cancel: %s", stepSummary(rec.Steps))
		}
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "after.txt")); !os.IsNotExist(err) {
		t.Errorf("the step after the cancel ran: %v", err)
	}
	if hl := h.health(); hl.WorkflowStatus != "idle" || !hl.WorkerRunning {
		t.Errorf("a soft cancel keeps the worker warm: %+v", hl)
	}
}

func TestRunTimeoutIs400AndFreesTheSlot(t *testing.T) {
	h := newHarness(t)
	r := h.do("POST", "/v1/runs", map[string]any{"prompt": "x\n#!sleep 30000", "timeoutMs": 1000})
	r.envelope(t, 400, "invalid_request_error", "Automate run timed out after 1000ms")
	h.waitFor("idle", func(hl automate.Health) bool { return !hl.Busy })
}

// TestTimeoutCoversResumeRounds: the run's timeout is armed once, at its
// start, not again by a resume. The resumed script sleeps 3 s and then
// writes a file: armed at the start (4 s), the timeout ends the run during
// that sleep (1.5 s after the resume); re-armed by the resume, it would
// fire only after the write (4 s after the resume), and the run would
// complete. The assertion is the order of the server's own two events,
// not a duration measured by the test.
// TestTimeoutCoversResumeRounds runs on the fake clock of a synctest
// bubble: the run parks at once, its caller answers 2.5 s later, and the
// resumed step (3 s) would end after the run's 4 s timeout, which must
// cut it (the timeout is armed once, at the run's start).
func TestTimeoutCoversResumeRounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, onPipe())
		_, rec := h.run(map[string]any{"prompt": "x\n#!tool lookup {}\n#!sleep 3000\n#!write after-resume.txt written", "timeoutMs": 4000, "clientTools": []any{echoTool}})
		if rec.Status != "awaiting_tool_results" {
			t.Fatalf("not parked: %s", brief(rec))
		}
		time.Sleep(2500 * time.Millisecond)
		r, _ := h.resume(rec.ResumeToken, automate.TextResult(rec.ToolCalls[0].ID, "found"))
		r.envelope(t, 400, "invalid_request_error", "Automate run timed out after 4000ms")
		// The run has ended: a step that did not run by now never will.
		synctest.Wait()
		if _, err := os.Stat(filepath.Join(h.workspace, "after-resume.txt")); !os.IsNotExist(err) {
			t.Errorf("the step after the resumed sleep ran (%v): the timeout was re-armed by the resume", err)
		}
		r404, _ := h.resume(rec.ResumeToken, automate.TextResult("call_1", "x"))
		r404.envelope(t, 404, "not_found", "No suspended run matches that resume token")
	})
}

func TestInitializationLimit(t *testing.T) {
	h := newHarness(t,
		withEngineConfig(func(c *scripted.Config) { c.ColdStart = time.Minute }),
		withServerConfig(func(c *server.Config) { c.InitTimeout = 300 * time.Millisecond }))
	h.do("POST", "/v1/runs", map[string]any{"prompt": "x"}).
		envelope(t, 400, "invalid_request_error", "Timed out initializing the on-device assistant")
	hl := h.waitFor("free slot", func(hl automate.Health) bool { return !hl.Busy })
	if hl.WorkerRunning {
		t.Errorf("a worker that never came up is reported running: %+v", hl)
	}
}

// A caller that gets its record can start the next run at once, even while
// others poll /health (the slot is freed before the outcome is visible).
func TestNextRunStartsRightAfterARecord(t *testing.T) {
	h := newHarness(t, withEngineConfig(func(c *scripted.Config) { c.Logger = nil }))
	stop := make(chan struct{})
	defer close(stop)
	for i := 0; i < 2; i++ {
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
					h.srv.Health()
				}
			}
		}()
	}
	for i := 0; i < 300; i++ {
		r, rec := h.run(map[string]any{"prompt": "quick", "include": map[string]bool{"steps": false, "trace": false, "events": false}})
		if r.status != 200 {
			t.Fatalf("run %d: %d %s", i, r.status, r.body)
		}
		if rec.Status != "completed" {
			t.Fatalf("run %d: %s", i, brief(rec))
		}
	}
}

func TestCommandsDoNotSeeHubgateSecrets(t *testing.T) {
	t.Setenv("HUBGATE_AUTOMATE_KEY", "leak-check-automate-key-0123456789")
	h := newHarness(t)
	r, rec := h.run(map[string]any{"prompt": "x\n#!run env", "allowDestructiveTools": true})
	if r.status != 200 || len(toolSteps(rec.Steps)) != 1 || toolSteps(rec.Steps)[0].Status != "success" {
		t.Fatalf("%d %s", r.status, brief(rec))
	}
	if strings.Contains(string(r.body), "leak-check-automate-key") {
		t.Error("a command printed the access key into the record")
	}
}

func TestCallerToolLoop(t *testing.T) {
	h := newHarness(t)
	tools := []any{echoTool, map[string]any{"name": "second", "description": "Another"}}
	r, rec := h.run(map[string]any{
		"prompt":      "loop\n#!tool lookup {\"q\":\"cats\"}\n#!tools [{\"name\":\"second\",\"arguments\":{\"n\":1}},{\"name\":\"lookup\",\"arguments\":{\"q\":\"dogs\"}}]\n#!answer all done",
		"clientTools": tools,
	})
	if r.status != 200 || rec.Status != "awaiting_tool_results" || len(rec.ToolCalls) != 1 || rec.ResumeToken == "" || rec.Answer != "" {
		t.Fatalf("first park: %d %s", r.status, brief(rec))
	}
	if c := rec.ToolCalls[0]; c.Name != "lookup" || string(c.Arguments) != `{"q":"cats"}` {
		t.Errorf("call %+v", c)
	}
	hl := h.health()
	if !hl.Busy || !hl.AwaitingToolResults || *hl.ActiveRequestID != rec.RequestID {
		t.Errorf("parked health %+v", hl)
	}
	if r := h.do("POST", "/v1/runs", map[string]any{"prompt": "other"}); r.status != 409 {
		t.Errorf("a parked run must hold the slot: %d", r.status)
	}
	token := rec.ResumeToken
	// An unknown id is ignored: still parked with the same pending call.
	_, again := h.resume(token, automate.TextResult("call_999", "stray"))
	if again.Status != "awaiting_tool_results" || len(again.ToolCalls) != 1 || again.ToolCalls[0].ID != rec.ToolCalls[0].ID {
		t.Fatalf("unknown id changed the run: %s", brief(again))
	}
	_, rec2 := h.resume(token, automate.TextResult(rec.ToolCalls[0].ID, "cats: 3"))
	if rec2.Status != "awaiting_tool_results" || len(rec2.ToolCalls) != 2 || rec2.ResumeToken != token || rec2.RequestID != rec.RequestID {
		t.Fatalf("second park: %s", brief(rec2))
	}
	byName := map[string]automate.ToolCall{}
	for _, c := range rec2.ToolCalls {
		byName[c.Name] = c
	}
	// Answer part of the round: still parked, only the rest pending.
	_, part := h.resume(token, automate.ToolResult{ID: byName["second"].ID, Error: "second is broken"})
	if part.Status != "awaiting_tool_results" || len(part.ToolCalls) != 1 || part.ToolCalls[0].ID != byName["lookup"].ID {
		t.Fatalf("partial answer: %s", brief(part))
	}
	// A retried resume for the answered call is harmless; results match by id, not order.
	res, final := h.resume(token,
		automate.ToolResult{ID: byName["lookup"].ID, Result: json.RawMessage(`{"dogs":2}`)},
		automate.ToolResult{ID: byName["second"].ID, Error: "ignored duplicate"})
	if res.status != 200 || final.Status != "completed" || final.Answer != "all done" {
		t.Fatalf("final: %d %s", res.status, brief(final))
	}
	var summaries []string
	var statuses []string
	for _, s := range final.Steps {
		summaries = append(summaries, s.ResultSummary)
		statuses = append(statuses, s.Status)
	}
	joined := strings.Join(summaries, "|")
	if !strings.Contains(joined, "cats: 3") || !strings.Contains(joined, `{"dogs":2}`) || !strings.Contains(joined, "second is broken") {
		t.Errorf("results did not reach the steps: %q", joined)
	}
	if !strings.Contains(strings.Join(statuses, ","), "failed") {
		t.Errorf("a tool error must fail its step: %v", statuses)
	}
	// The token is dead now.
	dead, _ := h.resume(token, automate.TextResult("call_1", "late"))
	dead.envelope(t, 404, "not_found", "No suspended run matches that resume token")
	// A new run mints a new token.
	_, rec3 := h.run(map[string]any{"prompt": "x\n#!tool lookup {}", "clientTools": []any{echoTool}})
	if rec3.ResumeToken == "" || rec3.ResumeToken == token {
		t.Errorf("new run token %q", rec3.ResumeToken)
	}
	h.do("POST", "/v1/automate/cancel", nil)
}

func TestResumeValidation(t *testing.T) {
	h := newHarness(t)
	h.do("POST", "/v1/runs/rt_nope/tool-results", map[string]any{"results": []any{map[string]any{"id": "x"}}}).
		envelope(t, 404, "not_found", "No suspended run matches that resume token")
	for _, c := range []struct {
		body any
		msg  string
	}{
		{map[string]any{"results": []any{map[string]any{"result": "x"}}}, "results[0].id is required"},
		{map[string]any{"results": []any{map[string]any{"id": "a"}, map[string]any{"id": ""}}}, "results[1].id is required"},
		{map[string]any{}, "results is required"},
		{map[string]any{"results": "x"}, "results must be an array"},
		{map[string]any{"results": []any{5}}, "results[0] must be an object"},
		{"{", "Malformed JSON"},
	} {
		h.do("POST", "/v1/runs/rt_nope/tool-results", c.body).envelope(t, 400, "invalid_request_error", c.msg)
	}
}

func TestParkedRunCancelsItselfAfterTheToolWait(t *testing.T) {
	h := newHarness(t, withToolWait(300*time.Millisecond))
	_, rec := h.run(map[string]any{"prompt": "x\n#!tool lookup {}", "clientTools": []any{echoTool}})
	if rec.Status != "awaiting_tool_results" {
		t.Fatalf("not parked: %s", brief(rec))
	}
	h.waitFor("self-cancel", func(hl automate.Health) bool { return !hl.Busy })
	late, _ := h.resume(rec.ResumeToken, automate.TextResult(rec.ToolCalls[0].ID, "late"))
	late.envelope(t, 404, "not_found", "No suspended run matches that resume token")
}

func TestSoftCancelOfAParkedRun(t *testing.T) {
	h := newHarness(t)
	_, rec := h.run(map[string]any{"prompt": "x\n#!tool lookup {}", "clientTools": []any{echoTool}})
	var cr automate.CancelResponse
	h.do("POST", "/v1/automate/cancel", nil).json(t, &cr)
	if !cr.Stopped || cr.Mode != "cancel" || *cr.RequestID != rec.RequestID {
		t.Fatalf("cancel %+v", cr)
	}
	h.waitFor("idle", func(hl automate.Health) bool { return !hl.Busy })
	late, _ := h.resume(rec.ResumeToken, automate.TextResult(rec.ToolCalls[0].ID, "late"))
	late.envelope(t, 404, "not_found", "No suspended run matches that resume token")
}

func TestUndeclaredClientToolFailsTheStepOnly(t *testing.T) {
	h := newHarness(t)
	r, rec := h.run(map[string]any{"prompt": "x\n#!tool ghost {}\n#!answer carried on"})
	if r.status != 200 || rec.Status != "completed" || rec.Answer != "carried on" || rec.Steps[0].Status != "failed" {
		t.Errorf("%d %s %q %s", r.status, rec.Status, rec.Answer, stepSummary(rec.Steps))
	}
}

func TestHITLAnswers(t *testing.T) {
	h := newHarness(t)
	ask := `#!ask {"fields":[{"id":"city","required":true},{"id":"tags","multi":true}]}`
	r, rec := h.run(map[string]any{"prompt": "trip\n" + ask, "hitlAnswers": map[string]any{"city": "Oslo", "tags": []string{"a", "b"}, "extra": "ignored"}})
	if r.status != 200 || rec.Status != "completed" || !strings.Contains(rec.Steps[0].ResultSummary, "Oslo") {
		t.Fatalf("answered: %d %s", r.status, brief(rec))
	}
	r, rec = h.run(map[string]any{"prompt": "trip\n" + ask + "\n#!write never.txt x", "hitlAnswers": map[string]any{"tags": "a"}})
	if r.status != 500 || rec.Status != "canceled" || rec.SchemaVersion != 1 {
		t.Fatalf("missing required field: %d %s", r.status, brief(rec))
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "never.txt")); !os.IsNotExist(err) {
		t.Error("the run went on after a missing required answer")
	}
}

func TestDestructiveToolPolicy(t *testing.T) {
	h := newHarness(t)
	victim := filepath.Join(h.workspace, "victim.txt")
	if err := os.WriteFile(victim, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, rec := h.run(map[string]any{"prompt": "x\n#!delete victim.txt\n#!run echo hi > ran.txt\n#!move victim.txt moved.txt\n#!answer went on"})
	if r.status != 200 || rec.Answer != "went on" || len(toolSteps(rec.Steps)) != 3 {
		t.Fatalf("%d %q %s", r.status, rec.Answer, stepSummary(rec.Steps))
	}
	for _, s := range toolSteps(rec.Steps) {
		if s.Status != "skipped" || !strings.HasPrefix(s.ResultSummary, "Rejected by Automate HTTP server policy") {
			t.Errorf("step %s: %q", s.ToolName, s.ResultSummary)
		}
	}
	if _, err := os.Stat(victim); err != nil {
		t.Error("a rejected delete deleted")
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "ran.txt")); !os.IsNotExist(err) {
		t.Error("a rejected command ran")
	}
	r, rec = h.run(map[string]any{"prompt": "x\n#!run echo hi > ran.txt\n#!move victim.txt moved.txt\n#!delete moved.txt", "allowDestructiveTools": true})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	for _, s := range toolSteps(rec.Steps) {
		if s.Status != "success" {
			t.Errorf("approved step %s: %s %q", s.ToolName, s.Status, s.ResultSummary)
		}
	}
	if b, err := os.ReadFile(filepath.Join(h.workspace, "ran.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
		t.Errorf("approved command: %q %v", b, err)
	}
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Error("approved move+delete left the file")
	}
}

func TestRestrictToWorkspaceNarrowsAndDoesNotPersist(t *testing.T) {
	h := newHarness(t)
	outside := filepath.Join(filepath.Dir(h.workspace), "outside-"+filepath.Base(h.workspace)+".txt")
	t.Cleanup(func() { os.Remove(outside) })
	_, rec := h.run(map[string]any{"prompt": "x\n#!write " + outside + " escaped", "restrictToWorkspace": true})
	if rec.Steps[0].Status != "failed" {
		t.Fatalf("confined write outside the workspace: %+v", rec.Steps[0])
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatal("the confined run wrote outside")
	}
	_, rec = h.run(map[string]any{"prompt": "x\n#!write ../" + filepath.Base(outside) + " escaped", "restrictToWorkspace": true})
	if rec.Steps[0].Status != "failed" {
		t.Fatalf("confined ../ write: %+v", rec.Steps[0])
	}
	// The scope does not persist into the next run.
	_, rec = h.run(map[string]any{"prompt": "x\n#!write " + outside + " free"})
	if rec.Steps[0].Status != "success" || rec.Steps[0].ProducedFilePath != outside {
		t.Fatalf("unrestricted run: %+v", rec.Steps[0])
	}

	// The user's own restriction wins over the option.
	own := t.TempDir()
	h2 := newHarness(t, withServerConfig(func(c *server.Config) { c.WorkspaceRestriction = own }))
	_, rec = h2.run(map[string]any{"prompt": "x\n#!write " + filepath.Join(h2.workspace, "in-workspace.txt") + " no"})
	if rec.Steps[0].Status != "failed" {
		t.Errorf("user restriction ignored: %+v", rec.Steps[0])
	}
	_, rec = h2.run(map[string]any{"prompt": "x\n#!write " + filepath.Join(own, "ok.txt") + " yes", "restrictToWorkspace": true})
	if rec.Steps[0].Status != "success" {
		t.Errorf("write inside the user's restriction: %+v", rec.Steps[0])
	}
	// Relative paths land in the user's restriction folder.
	_, rec = h2.run(map[string]any{"prompt": "x\n#!write rel.txt yes"})
	if rec.Steps[0].Status != "success" || rec.Steps[0].ProducedFilePath != filepath.Join(own, "rel.txt") {
		t.Errorf("relative write under the user's restriction: %+v", rec.Steps[0])
	}
}

func TestContinuation(t *testing.T) {
	h := newHarness(t)
	h.run(map[string]any{"prompt": "remember the blue key"})
	_, rec := h.run(map[string]any{"prompt": "#!recall", "continuation": true})
	if rec.Answer != "remember the blue key" {
		t.Errorf("continued recall = %q", rec.Answer)
	}
	_, rec = h.run(map[string]any{"prompt": "#!recall"})
	if rec.Answer != "" {
		t.Errorf("fresh conversation recall = %q", rec.Answer)
	}
	// A force-killed worker: the thread is rebuilt from stored history.
	h.run(map[string]any{"prompt": "the red door"})
	done := h.startAsync("/v1/runs", map[string]any{"prompt": "slow\n#!sleep 60000", "continuation": true})
	h.waitFor("busy", func(hl automate.Health) bool { return hl.Busy })
	h.do("POST", "/v1/automate/cancel", map[string]bool{"force": true})
	receive(t, done)
	_, rec = h.run(map[string]any{"prompt": "#!recall", "continuation": true})
	if rec.Answer != "slow" && rec.Answer != "the red door" {
		t.Errorf("recall after terminate = %q", rec.Answer)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// toolSteps are the steps that called a tool.
func toolSteps(steps []automate.Step) []automate.Step {
	var out []automate.Step
	for _, s := range steps {
		if s.ToolName != "" {
			out = append(out, s)
		}
	}
	return out
}

// stepSummary is a short description of steps for failure messages.
func stepSummary(steps []automate.Step) string {
	var parts []string
	for _, s := range steps {
		parts = append(parts, s.ToolName+":"+s.Status+":"+s.ResultSummary)
	}
	return "[" + strings.Join(parts, " | ") + "]"
}

// brief describes a record in one line for failure messages.
func brief(rec automate.RunRecord) string {
	return fmt.Sprintf("{status %s code %q answer %q calls %d token %q steps %s}", rec.Status, rec.ErrorCode, rec.Answer, len(rec.ToolCalls), rec.ResumeToken, stepSummary(rec.Steps))
}
