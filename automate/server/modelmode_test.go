package server_test

// Model mode over raw HTTP with the scripted engine: the wire shapes of a
// whole answer and of a stream, the slot, cancel, keep-alive and the
// errors. The official clients drive it in automate/llm (openai engine).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/internal/testutil"
)

func modelBody(stream bool, msgs ...any) map[string]any {
	return map[string]any{
		"model":    "service-model",
		"messages": msgs,
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "lookup", "parameters": map[string]any{"type": "object"}}}},
		"stream":         stream,
		"stream_options": map[string]any{"include_usage": true},
	}
}

func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

func TestModelModeIsListed(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/v1/models", nil)
	if got, want := strings.TrimSpace(string(r.body)),
		`{"object":"list","data":[{"id":"service-agent","object":"model","owned_by":"service","mode":"assistant"},{"id":"service-model","object":"model","owned_by":"service","mode":"model"}]}`; got != want {
		t.Errorf("models %s, want %s", got, want)
	}
	// An engine without model mode lists only the assistant and refuses
	// the model id.
	plain := newHarness(t, withWrap(func(a assistant.Assistant) assistant.Assistant { return struct{ assistant.Assistant }{a} }))
	var list automate.ModelList
	plain.do("GET", "/v1/models", nil).json(t, &list)
	if len(list.Data) != 1 {
		t.Errorf("models %+v", list.Data)
	}
	plain.do("POST", "/v1/chat/completions", modelBody(false, msg("user", "hi"))).envelope(t, 400, "invalid_request_error",
		"The model service-model is not available: this assistant engine has no model mode")
}

func TestModelModeWholeAnswer(t *testing.T) {
	h := newHarness(t)
	r := h.do("POST", "/v1/chat/completions", modelBody(false,
		msg("system", "You are terse."), msg("user", `#!tool lookup {"id":"4471"}`+"\n"+`#!tool lookup {"id":"9"}`)))
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	checkContractHeaders(t, r)
	if r.header.Get("X-Should-Retry") != "false" {
		t.Error("no x-should-retry: false")
	}
	var c struct {
		ID, Object, Model string
		Choices           []struct {
			Message struct {
				Role      string
				Content   *string
				ToolCalls []automate.ChatToolCall `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
		Usage automate.ChatUsage
	}
	r.json(t, &c)
	ch := c.Choices[0]
	if c.Object != "chat.completion" || c.Model != "service-model" || ch.FinishReason != "tool_calls" || ch.Message.Content != nil ||
		len(ch.Message.ToolCalls) != 2 || ch.Message.ToolCalls[0].Function.Arguments != `{"id":"4471"}` ||
		ch.Message.ToolCalls[1].ID != "call_1_2" || ch.Message.ToolCalls[0].Type != "function" || c.Usage.TotalTokens == 0 {
		t.Fatalf("completion %s", r.body)
	}
	raw := r.raw(t)
	if _, ok := raw["service"]; ok {
		t.Error("a model-mode answer carries a record")
	}
	// The caller's tool results: nothing was parked, the model answers.
	r = h.do("POST", "/v1/chat/completions", modelBody(false,
		msg("user", `#!tool lookup {"id":"4471"}`),
		map[string]any{"role": "assistant", "content": nil, "tool_calls": ch.Message.ToolCalls},
		map[string]any{"role": "tool", "tool_call_id": "call_1_1", "content": "held"},
		map[string]any{"role": "tool", "tool_call_id": "call_1_2", "content": "shipped"}))
	r.json(t, &c)
	if r.status != 200 || *c.Choices[0].Message.Content != "Tool results: held; shipped" || c.Choices[0].FinishReason != "stop" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if hl := h.health(); hl.Busy || hl.WorkflowStatus != "idle" {
		t.Errorf("health after: %+v", hl)
	}
}

// sseEvents reads a stream into its data payloads and comment count.
func sseEvents(t *testing.T, resp *http.Response) (data []string, comments int) {
	t.Helper()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, ":"):
			comments++
		}
	}
	return data, comments
}

func (h *harness) post(ctx context.Context, body any) *http.Response {
	h.t.Helper()
	j, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", h.url+"/v1/chat/completions", bytes.NewReader(j))
	req.Header.Set("Authorization", "Bearer "+h.key)
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

// TestModelModeStreamKeepAlive: a model that stays quiet gets keep-alive
// comments at the configured interval, before its first piece. The real
// server and engine run in a synctest bubble (over an in-memory
// listener), so the model's 150 ms of silence and the 20 ms ticks are fake
// time and the count is exact.
func TestModelModeStreamKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := server.New(server.Config{Key: testKey, Workspace: t.TempDir(), KeepAlive: 20 * time.Millisecond,
			Assistant: scripted.New(scripted.Config{Logger: slog.New(slog.DiscardHandler)}), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		client := testutil.ServePipe(t, srv.Handler())
		t.Cleanup(func() { srv.Close(context.Background()) })
		j, _ := json.Marshal(modelBody(true, msg("user", "#!sleep 150\n#!answer It is held.")))
		req, _ := http.NewRequest("POST", "http://127.0.0.1:4317/v1/chat/completions", bytes.NewReader(j))
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var lines []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if line := sc.Text(); line != "" {
				lines = append(lines, line)
			}
		}
		// The headers and the role chunk go out at the first tick, and one
		// comment per tick while the model is quiet (20, 40, ..., 140 ms);
		// the answer comes at 150 ms.
		var comments, firstContent int
		for i, line := range lines {
			if line == ": keep-alive" {
				comments++
			}
			if firstContent == 0 && strings.Contains(line, `"delta":{"content":"It`) {
				firstContent = i
			}
		}
		if comments != 7 || firstContent == 0 || lines[firstContent-1] != ": keep-alive" {
			t.Errorf("%d keep-alive comments during 150 ms of quiet with a 20 ms interval, want 7 before the content:\n%s",
				comments, strings.Join(lines, "\n"))
		}
	})
}

func TestModelModeStream(t *testing.T) {
	h := newHarness(t)
	resp := h.post(context.Background(), modelBody(true, msg("user", "#!reason think first\n#!answer It is held.\n#!tool lookup {\"id\":\"4471\"}")))
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header)
	}
	data, _ := sseEvents(t, resp)
	if len(data) < 4 || data[len(data)-1] != "[DONE]" {
		t.Fatalf("events %q", data)
	}
	var content, reasoning, args, finish string
	var usage *automate.ChatUsage
	for i, d := range data[:len(data)-1] {
		var c struct {
			Object  string
			Choices []struct {
				Delta struct {
					Role             string
					Content          string
					ReasoningContent string `json:"reasoning_content"`
					ToolCalls        []struct {
						Index    int
						ID       string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
				FinishReason *string `json:"finish_reason"`
			}
			Usage *automate.ChatUsage
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("event %d %q: %v", i, d, err)
		}
		if i == 0 && (len(c.Choices) != 1 || c.Choices[0].Delta.Role != "assistant") {
			t.Fatalf("first event %s", d)
		}
		if c.Usage != nil {
			usage = c.Usage
		}
		for _, ch := range c.Choices {
			content += ch.Delta.Content
			reasoning += ch.Delta.ReasoningContent
			for _, tc := range ch.Delta.ToolCalls {
				args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if content != "It is held." || reasoning != "think first" || args != `{"id":"4471"}` || finish != "tool_calls" || usage == nil {
		t.Errorf("content %q reasoning %q args %q finish %q usage %v", content, reasoning, args, finish, usage)
	}
}

func TestModelModeHoldsTheSlot(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		j, _ := json.Marshal(modelBody(true, msg("user", "#!sleep 60000")))
		req, _ := http.NewRequestWithContext(ctx, "POST", h.url+"/v1/chat/completions", bytes.NewReader(j))
		req.Header.Set("Authorization", "Bearer "+h.key)
		resp, err := h.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	hl := h.waitFor("the model call", func(hl automate.Health) bool { return hl.Busy })
	if hl.ActiveRequestID == nil || hl.WorkflowStatus != "thinking" {
		t.Errorf("health %+v", hl)
	}
	h.do("POST", "/v1/runs", map[string]any{"prompt": "hi"}).envelope(t, 409, "conflict",
		"The on-device assistant is already running or preparing (thinking)")
	h.do("POST", "/v1/chat/completions", modelBody(false, msg("user", "hi"))).envelope(t, 409, "conflict",
		"The on-device assistant is already running or preparing (thinking)")
	// The caller goes away: the call stops and frees the slot.
	cancel()
	if err := <-done; err == nil {
		t.Error("the request did not end with the caller's cancel")
	}
	h.waitFor("the slot freed", func(hl automate.Health) bool { return !hl.Busy && hl.WorkflowStatus == "idle" })

	// A cancel stops a call whatever its force: the answer says so.
	ch := h.startAsync("/v1/chat/completions", modelBody(false, msg("user", "#!sleep 60000")))
	h.waitFor("the model call", func(hl automate.Health) bool { return hl.Busy })
	var cr automate.CancelResponse
	h.do("POST", "/v1/automate/cancel", nil).json(t, &cr)
	if !cr.Stopped || cr.Mode != "cancel" || cr.RequestID == nil {
		t.Errorf("cancel %+v", cr)
	}
	r := receive(t, ch)
	r.envelope(t, 500, "canceled", "The model call was canceled")
	if h.health().Busy {
		t.Error("busy after the cancel answered")
	}
}

func TestModelModeErrors(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"model": "service-model"}, "messages must be an array"},
		{map[string]any{"model": "service-model", "messages": []any{}}, "messages must not be empty"},
		{map[string]any{"model": "service-model", "messages": []any{msg("robot", "x")}}, "messages[0].role must be one of system, developer, user, assistant, tool"},
		{map[string]any{"model": "service-model", "messages": []any{msg("user", "x")}, "tools": []any{map[string]any{"type": "function"}}}, "tools[0] must be a function tool with a name"},
		{map[string]any{"model": "service-model", "messages": []any{msg("user", "x")}, "stream": "yes"}, "stream must be a boolean"},
		{map[string]any{"model": "service-model", "messages": []any{msg("user", "x")}, "n": 2}, "n must be 1: model mode answers one choice"},
	} {
		h.do("POST", "/v1/chat/completions", tc.body).envelope(t, 400, "invalid_request_error", tc.msg)
	}
	// Too long for the context: a 400 with OpenAI's code, streamed or not.
	long := strings.Repeat("word ", 200000) // ~250k tokens by the engine's estimate, beyond its largest context (131072)
	for _, stream := range []bool{false, true} {
		r := h.do("POST", "/v1/chat/completions", modelBody(stream, msg("user", long)))
		var env automate.ErrorEnvelope
		r.json(t, &env)
		if r.status != 400 || env.Error.Code != "context_length_exceeded" || !strings.Contains(env.Error.Message, "context") {
			t.Errorf("stream %v: %d %s", stream, r.status, r.body)
		}
	}
	r := h.do("POST", "/v1/chat/completions", modelBody(false, msg("user", "#!fail SERVER_LOST")))
	var env automate.ErrorEnvelope
	r.json(t, &env)
	if r.status != 502 || env.Error.Code != "SERVER_LOST" || env.Error.Type != "upstream_error" {
		t.Errorf("%d %s", r.status, r.body)
	}
	if h.health().Busy {
		t.Error("busy after errors")
	}
}

func TestModelModeTimeoutAndForceCancel(t *testing.T) {
	h := newHarness(t)
	body := modelBody(false, msg("user", "#!sleep 60000"))
	body["timeout_ms"] = 1000
	h.do("POST", "/v1/chat/completions", body).envelope(t, 400, "invalid_request_error", "Automate run timed out after 1000ms")

	ch := h.startAsync("/v1/chat/completions", modelBody(true, msg("user", "#!sleep 60000")))
	h.waitFor("the model call", func(hl automate.Health) bool { return hl.Busy })
	var cr automate.CancelResponse
	h.do("POST", "/v1/automate/cancel", map[string]bool{"force": true}).json(t, &cr)
	if !cr.Stopped || cr.Mode != "terminate" {
		t.Errorf("cancel %+v", cr)
	}
	// Nothing was streamed yet: the answer is the error with its status.
	receive(t, ch).envelope(t, 500, "canceled", "The model call was stopped (forced cancel)")
	if hl := h.health(); hl.Busy || hl.WorkerRunning {
		t.Errorf("after a force cancel: %+v", hl)
	}
}

// TestModelModeRecordWhenAsked: the vendor's own-loop sample asks for the
// call's record with the extension object's include (non-streamed) and
// reads mode "model" from it; without it no record comes.
func TestModelModeRecordWhenAsked(t *testing.T) {
	h := newHarness(t, withServerConfig(func(c *server.Config) { c.Product = "acme" }))
	body := modelBody(false, msg("user", "#!answer fine"))
	body["model"] = "acme-model"
	r := h.do("POST", "/v1/chat/completions", body)
	if _, ok := r.raw(t)["acme"]; ok || r.status != 200 {
		t.Fatalf("a record nobody asked for: %d %s", r.status, r.body)
	}
	body["acme"] = map[string]any{"include": map[string]bool{"steps": true}}
	r = h.do("POST", "/v1/chat/completions", body)
	var out struct {
		Choices []struct{ Message struct{ Content string } }
		Acme    *automate.RunRecord
	}
	r.json(t, &out)
	if r.status != 200 || out.Acme == nil || out.Acme.Mode != "model" || out.Acme.SchemaVersion != 1 || out.Acme.Answer != "fine" ||
		out.Acme.Steps == nil || out.Acme.Status != automate.StatusCompleted || out.Choices[0].Message.Content != "fine" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	body["acme"] = map[string]any{"include": "all"}
	h.do("POST", "/v1/chat/completions", body).envelope(t, 400, "invalid_request_error", "include must be an object")
}

// TestModelModeStreamLeavesNoWriteDeadline: a streamed model call bounds
// each of its writes, and the connection it used is kept alive for the
// caller's next request: that request, made after the bound has passed,
// must still be answered on the same connection. net/http clears the
// write deadline after each request today; this keeps the stream's
// bounds from ever outliving its request. Fake time in a synctest bubble
// over an in-memory listener, whose write deadlines follow the bubble's
// clock.
func TestModelModeStreamLeavesNoWriteDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := server.New(server.Config{Key: testKey, Workspace: t.TempDir(),
			Assistant: scripted.New(scripted.Config{Logger: slog.New(slog.DiscardHandler)}), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		client := testutil.ServePipe(t, srv.Handler())
		t.Cleanup(func() { srv.Close(context.Background()) })
		var reused []bool
		do := func(method, path string, body []byte) {
			t.Helper()
			trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) }}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), method,
				"http://127.0.0.1:4317"+path, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+testKey)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			defer resp.Body.Close()
			if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s %s: %d, body read: %v", method, path, resp.StatusCode, err)
			}
		}
		j, _ := json.Marshal(modelBody(true, msg("user", "#!answer It is held.")))
		do("POST", "/v1/chat/completions", j)
		time.Sleep(2 * time.Minute) // well past the stream's 30 s write bound
		do("GET", "/health", nil)
		if len(reused) != 2 || !reused[1] {
			t.Fatalf("connections reused %v: the second request must reuse the stream's connection", reused)
		}
	})
}
