package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

func user(content any) map[string]any   { return map[string]any{"role": "user", "content": content} }
func system(content any) map[string]any { return map[string]any{"role": "system", "content": content} }

func (h *harness) chat(body map[string]any) (response, automate.ChatCompletion) {
	h.t.Helper()
	r := h.do("POST", "/v1/chat/completions", body)
	var cc automate.ChatCompletion
	if r.status == 200 || r.status == 500 {
		r.json(h.t, &cc)
	}
	return r, cc
}

func TestChatMapsMessagesAndAnswers(t *testing.T) {
	h := newHarness(t)
	r, cc := h.chat(map[string]any{
		"model": "whatever-not-validated",
		"messages": []any{
			system("Be brief."),
			user("an earlier turn that is dropped"),
			map[string]any{"role": "assistant", "content": "old reply"},
			system("Use metric units."),
			user("Weigh the parcel\n#!sleep 1"),
		},
		// Accepted and ignored.
		"stream": true, "temperature": 0.2, "top_p": 1, "top_k": 3, "seed": 1, "max_tokens": 5,
		"max_completion_tokens": 5, "n": 3, "stop": []string{"x"}, "logit_bias": map[string]int{}, "logprobs": true,
		"presence_penalty": 0, "frequency_penalty": 0, "response_format": map[string]string{"type": "text"},
		"user": "u", "metadata": map[string]string{"a": "b"}, "functions": []any{}, "tool_choice": "auto",
	})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	checkContractHeaders(t, r)
	if cc.Object != "chat.completion" || cc.Model != "service-agent" || cc.ID != cc.Service.RequestID || cc.Created != cc.Service.StartedAt.Unix() {
		t.Errorf("envelope %+v", cc)
	}
	if len(cc.Choices) != 1 || cc.Choices[0].Index != 0 || cc.Choices[0].FinishReason != "stop" ||
		cc.Choices[0].Message.Role != "assistant" || cc.Choices[0].Message.Content != "Done: Weigh the parcel" {
		t.Errorf("choices %+v", cc.Choices)
	}
	u := cc.Service.Usage
	if cc.Usage.PromptTokens != u.InputTokens || cc.Usage.CompletionTokens != u.OutputTokens || cc.Usage.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("usage %+v vs %+v", cc.Usage, u)
	}
	var sys struct{ Content string }
	json.Unmarshal(cc.Service.Trace[0], &sys)
	if !strings.Contains(sys.Content, "Be brief.\n\nUse metric units.") {
		t.Errorf("system messages not joined into the workflow prompt: %q", sys.Content)
	}
	if strings.Contains(string(r.body), "an earlier turn") {
		t.Error("an earlier user turn reached the run")
	}
}

func TestChatValidation(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		body any
		msg  string
	}{
		{map[string]any{}, "messages must be an array"},
		{map[string]any{"messages": "hi"}, "messages must be an array"},
		{map[string]any{"messages": []any{}}, "The latest user message must contain string content"},
		{map[string]any{"messages": []any{user([]any{map[string]any{"type": "text", "text": "hi"}})}}, "The latest user message must contain string content"},
		{map[string]any{"messages": []any{user("ok"), user(nil)}}, "The latest user message must contain string content"},
		{map[string]any{"messages": []any{user("hi")}, "timeout_ms": 10}, "timeoutMs must be at least 1000"},
		{map[string]any{"messages": []any{user("hi")}, "service": map[string]any{"answerContract": 1}}, "answerContract must be a string"},
		{map[string]any{"messages": []any{user("hi")}, "service": map[string]any{"continuation": 1}}, "continuation must be a boolean"},
		{map[string]any{"messages": []any{user("hi")}, "service": map[string]any{"include": 1}}, "include must be an object"},
		{map[string]any{"messages": []any{user("hi")}, "service": map[string]any{"include": map[string]any{"steps": 1}}}, "include.steps must be a boolean"},
		{map[string]any{"messages": []any{user("hi")}, "service": map[string]any{"mcpServers": []any{map[string]any{"name": "a--b"}}}}, "mcpServers[0].name: must not contain --"},
		{map[string]any{"messages": []any{user("hi")}, "tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "mcp__x"}}}}, "tools[0].function.name must not start with mcp__"},
		{"[]", "Request body must be a JSON object"},
		{"{", "Malformed JSON"},
		{`{"messages":[{"role":"user","content":"` + strings.Repeat("a", automate.MaxBodyBytes) + `"}]}`, "Request body exceeds 1 MiB"},
	} {
		h.do("POST", "/v1/chat/completions", c.body).envelope(t, 400, "invalid_request_error", c.msg)
	}
	// An invalid thinkingLevel is ignored on this route.
	if r, _ := h.chat(map[string]any{"messages": []any{user("hi")}, "service": map[string]any{"thinkingLevel": "extreme"}}); r.status != 200 {
		t.Errorf("ignored thinkingLevel: %d %s", r.status, r.body)
	}
}

func TestChatServiceExtension(t *testing.T) {
	h := newHarness(t)
	r, cc := h.chat(map[string]any{
		"messages": []any{user("q\n#!answer reasoning... FINAL ANSWER: 7")},
		"service":  map[string]any{"answerContract": "End with FINAL ANSWER: <n>", "include": map[string]bool{"events": false, "trace": false}},
	})
	if r.status != 200 || cc.Choices[0].Message.Content != "7" || cc.Service.Answer != "reasoning... FINAL ANSWER: 7" {
		t.Fatalf("%d content %q answer %q", r.status, cc.Choices[0].Message.Content, cc.Service.Answer)
	}
	var raw struct{ Service map[string]any }
	r.json(t, &raw)
	if _, ok := raw.Service["events"]; ok {
		t.Error("events included")
	}
	if _, ok := raw.Service["trace"]; ok {
		t.Error("trace included")
	}
	if _, ok := raw.Service["steps"]; !ok {
		t.Error("steps missing")
	}
	// continuation through the extension
	h.chat(map[string]any{"messages": []any{user("the green lamp")}})
	_, cc = h.chat(map[string]any{"messages": []any{user("#!recall")}, "service": map[string]any{"continuation": true}})
	if cc.Service.Answer != "the green lamp" {
		t.Errorf("recall %q", cc.Service.Answer)
	}
}

func TestChatFailedRunIs500ChatShaped(t *testing.T) {
	h := newHarness(t)
	r, cc := h.chat(map[string]any{"messages": []any{user("x\n#!fail CONTEXT_LIMIT_EXCEEDED")}})
	if r.status != 500 || cc.Object != "chat.completion" || cc.Service == nil || cc.Service.Status != "failed" ||
		cc.Service.ErrorCode != "CONTEXT_LIMIT_EXCEEDED" || cc.Service.SchemaVersion != 1 {
		t.Errorf("%d %+v", r.status, cc)
	}
	h.do("POST", "/v1/chat/completions", map[string]any{"messages": []any{user("x\n#!sleep 20000")}, "timeout_ms": 1000}).
		envelope(t, 400, "invalid_request_error", "Automate run timed out after 1000ms")
}

func TestChatToolLoop(t *testing.T) {
	h := newHarness(t)
	tools := []any{
		map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": map[string]any{"type": "object"}}},
		map[string]any{"type": "other-kind"},
	}
	msgs := []any{user("weather\n#!tool get_weather {\"city\":\"Oslo\"}\n#!answer sunny")}
	r, cc := h.chat(map[string]any{"messages": msgs, "tools": tools})
	if r.status != 200 || cc.Choices[0].FinishReason != "tool_calls" || len(cc.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	call := cc.Choices[0].Message.ToolCalls[0]
	if call.Type != "function" || call.Function.Name != "get_weather" || call.Function.Arguments != `{"city":"Oslo"}` ||
		!strings.Contains(call.ID, cc.Service.ResumeToken) || cc.Choices[0].Message.Content != "" {
		t.Fatalf("tool call %+v content %q", call, cc.Choices[0].Message.Content)
	}
	if cc.Service.Status != "awaiting_tool_results" {
		t.Errorf("service status %s", cc.Service.Status)
	}
	// While parked: a chat without tool results is 409, like any run.
	if r := h.do("POST", "/v1/chat/completions", map[string]any{"messages": []any{user("other")}}); r.status != 409 {
		t.Errorf("fresh chat while parked: %d", r.status)
	}
	assistantMsg := map[string]any{"role": "assistant", "content": nil, "refusal": nil, "tool_calls": []any{
		map[string]any{"id": call.ID, "type": "function", "function": map[string]any{"name": call.Function.Name, "arguments": call.Function.Arguments}},
	}}
	msgs = append(msgs, assistantMsg, map[string]any{"role": "tool", "tool_call_id": call.ID, "content": "sunny, 21C"})
	r, cc = h.chat(map[string]any{"messages": msgs, "tools": tools})
	if r.status != 200 || cc.Choices[0].FinishReason != "stop" || cc.Choices[0].Message.Content != "sunny" {
		t.Fatalf("after results: %d %s", r.status, r.body)
	}
	if !strings.Contains(cc.Service.Steps[0].ResultSummary, "sunny, 21C") {
		t.Errorf("tool content did not reach the step: %+v", cc.Service.Steps[0])
	}
	// The same tool message again names no live run: a fresh run starts
	// from the latest user message (and parks again).
	r, cc2 := h.chat(map[string]any{"messages": msgs, "tools": tools})
	if r.status != 200 || cc2.ID == cc.ID || cc2.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("stale tool ids: %d %s", r.status, r.body)
	}
	h.do("POST", "/v1/automate/cancel", nil)
}
