package automate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func completion(id, finish, content string, calls ...ChatToolCall) ChatCompletion {
	status := StatusCompleted
	if finish == FinishToolCalls {
		status = StatusAwaitingToolResults
	}
	rec := record(id, status)
	rec.Answer = content
	return ChatCompletion{ID: id, Object: "chat.completion", Created: 1790000000, Model: ServiceID,
		Choices: []ChatChoice{{Message: ChatReplyMessage{Role: RoleAssistant, Content: content, ToolCalls: calls},
			FinishReason: finish}},
		Usage:   ChatUsage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7},
		Service: &rec}
}

func TestChatCompleted(t *testing.T) {
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/chat/completions": func(w http.ResponseWriter, r *http.Request) {
			var req ChatRequest
			json.NewDecoder(r.Body).Decode(&req)
			last, _ := req.Messages[len(req.Messages)-1].ContentText()
			writeJSON(w, 200, completion("automate-run-chat", FinishStop, "echo: "+last))
		},
	})
	req := NewChatRequest("hello", "be brief", "use metric units")
	contract := "one line"
	req.Service = &ChatService{AnswerContract: &contract, ThinkingLevel: "low"}
	comp, err := f.client(ClientOptions{}).Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if comp.Text() != "echo: hello" || comp.FinishReason() != FinishStop || comp.Service.RequestID != "automate-run-chat" {
		t.Fatalf("completion %+v", comp)
	}
	var sent map[string]any
	json.Unmarshal(f.body("POST /v1/chat/completions", 0), &sent)
	msgs := sent["messages"].([]any)
	if len(msgs) != 3 || msgs[0].(map[string]any)["role"] != "system" || msgs[2].(map[string]any)["content"] != "hello" {
		t.Fatalf("messages %v", msgs)
	}
	if sent["service"].(map[string]any)["answerContract"] != "one line" || sent["model"] != ServiceID {
		t.Fatalf("sent %v", sent)
	}
}

func TestChatFailedRunIsRunError(t *testing.T) {
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/chat/completions": func(w http.ResponseWriter, r *http.Request) {
			comp := completion("automate-run-cf", FinishStop, "could not finish")
			comp.Service.Status = StatusFailed
			comp.Service.ErrorCode = ErrorContextLimitExceeded
			writeJSON(w, 500, comp)
		},
	})
	comp, err := f.client(ClientOptions{}).Chat(context.Background(), NewChatRequest("x"))
	var re *RunError
	if !errors.As(err, &re) || !errors.Is(err, ErrRunFailed) {
		t.Fatalf("want *RunError, got %T %v", err, err)
	}
	if re.Completion == nil || re.Completion != comp || re.Record != comp.Service || re.Record.ErrorCode != ErrorContextLimitExceeded {
		t.Fatalf("run error %+v", re)
	}
	if !strings.Contains(err.Error(), ErrorContextLimitExceeded) {
		t.Fatalf("message %q", err)
	}
}

func TestChatFailedRequests(t *testing.T) {
	for name, tc := range map[string]struct {
		h    http.HandlerFunc
		want error
	}{
		"timeout": {func(w http.ResponseWriter, r *http.Request) {
			envelope(w, 400, ErrTypeInvalidRequest, "Automate run timed out after 5000ms")
		}, ErrRunTimedOut},
		"content parts": {func(w http.ResponseWriter, r *http.Request) {
			envelope(w, 400, ErrTypeInvalidRequest, "The latest user message must contain string content")
		}, ErrInvalidRequest},
		"busy": {func(w http.ResponseWriter, r *http.Request) {
			envelope(w, 409, ErrTypeConflict, "The on-device assistant is already running or preparing (planning).")
		}, ErrBusy},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, map[string]http.HandlerFunc{"POST /v1/chat/completions": tc.h})
			comp, err := f.client(ClientOptions{}).Chat(context.Background(), NewChatRequest("x"))
			if comp != nil || !errors.Is(err, tc.want) || errors.Is(err, ErrRunFailed) {
				t.Fatalf("want %v, got %v %v", tc.want, comp, err)
			}
		})
	}
	t.Run("500 without record", func(t *testing.T) {
		f := newFake(t, map[string]http.HandlerFunc{"POST /v1/chat/completions": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 500, map[string]any{"id": "x", "object": "chat.completion", "choices": []any{}})
		}})
		_, err := f.client(ClientOptions{}).Chat(context.Background(), NewChatRequest("x"))
		var re *ResponseError
		if !errors.As(err, &re) || re.HTTPStatus != 500 || errors.Is(err, ErrRunFailed) {
			t.Fatalf("want ResponseError 500, got %v", err)
		}
	})
}

func TestChatWithToolsTwoRounds(t *testing.T) {
	var mu sync.Mutex
	var problems []string
	f := newFake(t, map[string]http.HandlerFunc{
		// The loop checks that its run still waits before each round.
		"GET /health": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, Health{Status: "ok", Service: ServiceID, Busy: true, AwaitingToolResults: true, ActiveRequestID: ptrTo("automate-run-ct")})
		},
		"POST /v1/chat/completions": func(w http.ResponseWriter, r *http.Request) {
			var req ChatRequest
			json.NewDecoder(r.Body).Decode(&req)
			// Results are the tool messages after the last assistant message.
			lastAssistant := -1
			for i, m := range req.Messages {
				if m.Role == RoleAssistant {
					lastAssistant = i
				}
			}
			results := map[string]string{}
			for _, m := range req.Messages[lastAssistant+1:] {
				if m.Role == RoleTool {
					text, _ := m.ContentText()
					results[m.ToolCallID] = text
				}
			}
			switch {
			case lastAssistant < 0:
				if len(req.Tools) != 2 || req.Tools[0].Type != "function" || req.Tools[1].Function.Name != "add" {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("tools %+v", req.Tools))
					mu.Unlock()
				}
				writeJSON(w, 200, completion("automate-run-ct", FinishToolCalls, "",
					ChatToolCall{ID: "tok1.call-1", Type: "function", Function: ChatFunctionCall{Name: "get_time", Arguments: "{}"}}))
			case results["tok1.call-1"] == "12:00" && len(req.Messages) == 3:
				if len(req.Messages[1].ToolCalls) != 1 || req.Messages[1].ToolCalls[0].ID != "tok1.call-1" {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("assistant message %+v", req.Messages[1]))
					mu.Unlock()
				}
				writeJSON(w, 200, completion("automate-run-ct", FinishToolCalls, "",
					ChatToolCall{ID: "tok2.call-2", Type: "function", Function: ChatFunctionCall{Name: "add", Arguments: `{"a":1,"b":2}`}},
					ChatToolCall{ID: "tok2.call-3", Type: "function", Function: ChatFunctionCall{Name: "nope", Arguments: `{}`}}))
			case results["tok2.call-2"] == "3" && len(req.Messages) == 6:
				writeJSON(w, 200, completion("automate-run-ct", FinishStop,
					fmt.Sprintf("sum=%s other=%s", results["tok2.call-2"], results["tok2.call-3"])))
			default:
				envelope(w, 400, ErrTypeInvalidRequest, fmt.Sprintf("unexpected conversation of %d messages: %v", len(req.Messages), results))
			}
		},
	})
	var rounds [][]string
	req := NewChatRequest("time and sum")
	req.Tools = ChatTools(twoTools)
	comp, err := f.client(ClientOptions{}).ChatWithTools(context.Background(), req, ToolLoop{Execute: addExecutor(&rounds)})
	if err != nil {
		t.Fatal(err)
	}
	if comp.Text() != "sum=3 other=Error: unknown tool" {
		t.Fatalf("answer %q", comp.Text())
	}
	if fmt.Sprint(rounds) != "[[get_time:tok1.call-1] [add:tok2.call-2 nope:tok2.call-3]]" {
		t.Fatalf("rounds %v", rounds)
	}
	if n := f.count("POST /v1/chat/completions"); n != 3 {
		t.Fatalf("%d posts", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Fatal(problems)
	}
}

func TestToolCallsFromChat(t *testing.T) {
	got := ToolCallsFromChat([]ChatToolCall{
		{ID: "a", Function: ChatFunctionCall{Name: "n", Arguments: `{"x":1}`}},
		{ID: "b", Function: ChatFunctionCall{Name: "n", Arguments: `not json`}},
		{ID: "c", Function: ChatFunctionCall{Name: "n"}},
	})
	if string(got[0].Arguments) != `{"x":1}` || string(got[1].Arguments) != `"not json"` || string(got[2].Arguments) != `{}` {
		t.Fatalf("arguments %s %s %s", got[0].Arguments, got[1].Arguments, got[2].Arguments)
	}
	m := ToolMessage(ToolResult{ID: "a", Result: json.RawMessage(`{"k":2}`)})
	if text, _ := m.ContentText(); text != `{"k":2}` || m.Role != RoleTool || m.ToolCallID != "a" {
		t.Fatalf("tool message %+v", m)
	}
}

func TestChatGiveUpCancels(t *testing.T) {
	s := newSlot()
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/chat/completions": s.hang("automate-run-cg"),
		"GET /health":               s.health(""),
		"POST /v1/automate/cancel":  s.cancel,
	})
	t.Cleanup(s.release) // before the server's Close, which waits for the hanging handler
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-s.started; cancel() }()
	_, err := f.client(ClientOptions{}).Chat(ctx, NewChatRequest("x"))
	var ae *AbandonedError
	if !errors.As(err, &ae) || !ae.CancelSent || !errors.Is(err, context.Canceled) {
		t.Fatalf("want abandon with cancel, got %v", err)
	}
}

func ptrTo[T any](v T) *T { return &v }
