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

// hookLog records the tool loop's hooks and executor calls in order.
type hookLog struct{ steps []string }

func (h *hookLog) loop(exec ToolExecutor) ToolLoop {
	return ToolLoop{
		Execute: func(ctx context.Context, calls []ToolCall) ([]ToolResult, error) {
			h.steps = append(h.steps, fmt.Sprintf("execute %d", len(calls)))
			return exec(ctx, calls)
		},
		OnParked: func(p *RunRecord) {
			var names []string
			for _, c := range p.ToolCalls {
				names = append(names, c.Name)
			}
			h.steps = append(h.steps, fmt.Sprintf("parked %s %s %s", p.RequestID, p.ResumeToken, strings.Join(names, ",")))
		},
		OnResumed: func(p *RunRecord, results []ToolResult) {
			h.steps = append(h.steps, fmt.Sprintf("resumed %s %d", p.ResumeToken, len(results)))
		},
	}
}

func TestRunWithToolsHooksFollowEveryRound(t *testing.T) {
	f := toolServer(t)
	var rounds [][]string
	var h hookLog
	rec, err := f.client(ClientOptions{}).RunWithTools(context.Background(),
		RunRequest{Prompt: "what time, and sums", ClientTools: twoTools}, h.loop(addExecutor(&rounds)))
	if err != nil || rec.Status != StatusCompleted {
		t.Fatalf("%v %v", rec, err)
	}
	want := []string{
		"parked automate-run-t tok-round-1 get_time", "execute 1", "resumed tok-round-1 1",
		"parked automate-run-t tok-round-2 add,add", "execute 2", "resumed tok-round-2 2",
	}
	if fmt.Sprint(h.steps) != fmt.Sprint(want) {
		t.Fatalf("hooks\n got %q\nwant %q", h.steps, want)
	}
}

// parkedSlot is a server whose run parks once and stays parked until a
// cancel: /health reports it as active and parked.
func parkedSlot(t *testing.T, rec RunRecord) *fake {
	var mu sync.Mutex
	active := ""
	return newFake(t, map[string]http.HandlerFunc{
		"POST /v1/runs": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			active = rec.RequestID
			mu.Unlock()
			writeJSON(w, 200, rec)
		},
		"POST /v1/runs/{token}/tool-results": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, record(rec.RequestID, StatusCompleted))
		},
		"GET /health": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			h := health(active != "", active)
			h.AwaitingToolResults = active != ""
			writeJSON(w, 200, h)
		},
		"POST /v1/automate/cancel": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			id := active
			active = ""
			mu.Unlock()
			writeJSON(w, 200, CancelResponse{Stopped: id != "", Mode: CancelModeCancel, RequestID: &id, WorkflowStatus: WorkflowCanceled})
		},
	})
}

// A parked record that cannot be resumed holds the slot: the loop
// releases it with an explicit cancel instead of leaving it to the
// server's two-minute wait.
func TestRunWithToolsUnresumableParkCancels(t *testing.T) {
	rec := parked("automate-run-u", "tok-u") // no calls
	f := parkedSlot(t, rec)
	var h hookLog
	_, err := f.client(ClientOptions{}).RunWithTools(context.Background(), RunRequest{Prompt: "x", ClientTools: twoTools},
		h.loop(func(context.Context, []ToolCall) ([]ToolResult, error) { return nil, nil }))
	var ae *AbandonedError
	if !errors.As(err, &ae) || ae.RequestID != "automate-run-u" || ae.Cancel == nil || !ae.Cancel.Stopped {
		t.Fatalf("want an abandon that cancelled the parked run, got %v", err)
	}
	if len(h.steps) != 0 || f.count("POST /v1/runs/{token}/tool-results") != 0 {
		t.Fatalf("hooks %q, resumes %d", h.steps, f.count("POST /v1/runs/{token}/tool-results"))
	}
}

// A caller that gives up after its tools answered but before the resume
// went out still owns a parked run: the resume is not sent and the run is
// cancelled (an unsent resume proves nothing about a run that exists).
func TestRunWithToolsGivesUpBeforeResumeCancels(t *testing.T) {
	f := parkedSlot(t, parked("automate-run-b", "tok-b", ToolCall{ID: "c1", Name: "get_time"}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	loop := ToolLoop{
		Execute: func(_ context.Context, calls []ToolCall) ([]ToolResult, error) {
			return []ToolResult{TextResult(calls[0].ID, "12:00")}, nil
		},
		OnResumed: func(*RunRecord, []ToolResult) { cancel() },
	}
	_, err := f.client(ClientOptions{}).RunWithTools(ctx, RunRequest{Prompt: "x", ClientTools: twoTools}, loop)
	var ae *AbandonedError
	if !errors.As(err, &ae) || !errors.Is(err, context.Canceled) || ae.RequestID != "automate-run-b" || !ae.CancelSent {
		t.Fatalf("want an abandon with a cancel of automate-run-b, got %v", err)
	}
	if f.count("POST /v1/runs/{token}/tool-results") != 0 || f.count("POST /v1/automate/cancel") != 1 {
		t.Fatalf("resumes %d cancels %d", f.count("POST /v1/runs/{token}/tool-results"), f.count("POST /v1/automate/cancel"))
	}
}

// Under LeaveRunning the loop stops waiting and leaves the run to the
// server: no health check, no cancel.
func TestRunWithToolsLeaveRunningSendsNoCancel(t *testing.T) {
	f := parkedSlot(t, parked("automate-run-l", "tok-l", ToolCall{ID: "c1", Name: "get_time"}))
	ctx, cancel := context.WithCancel(LeaveRunning(context.Background()))
	defer cancel()
	_, err := f.client(ClientOptions{}).RunWithTools(ctx, RunRequest{Prompt: "x", ClientTools: twoTools},
		ToolLoop{Execute: func(ctx context.Context, _ []ToolCall) ([]ToolResult, error) {
			cancel()
			return nil, ctx.Err()
		}})
	var ae *AbandonedError
	if !errors.As(err, &ae) || !errors.Is(err, context.Canceled) || ae.CancelSent {
		t.Fatalf("want an abandon without cancel, got %v", err)
	}
	if f.count("GET /health") != 0 || f.count("POST /v1/automate/cancel") != 0 || f.count("POST /v1/runs/{token}/tool-results") != 0 {
		t.Fatalf("health %d cancel %d resume %d", f.count("GET /health"), f.count("POST /v1/automate/cancel"),
			f.count("POST /v1/runs/{token}/tool-results"))
	}
}

func TestRunWithToolsNeedsAnExecutor(t *testing.T) {
	f := toolServer(t)
	_, err := f.client(ClientOptions{}).RunWithTools(context.Background(), RunRequest{Prompt: "x", ClientTools: twoTools}, ToolLoop{})
	if err == nil || f.count("POST /v1/runs") != 0 {
		t.Fatalf("err %v, runs %d", err, f.count("POST /v1/runs"))
	}
}

// The chat contract runs the same loop: its hooks see the parked record
// the answer carries.
func TestChatWithToolsHooks(t *testing.T) {
	var mu sync.Mutex
	posts := 0
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/chat/completions": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			posts++
			n := posts
			mu.Unlock()
			if n == 1 {
				c := completion("automate-run-ch", FinishToolCalls, "",
					ChatToolCall{ID: "tok1.call-1", Type: "function", Function: ChatFunctionCall{Name: "get_time", Arguments: `{}`}})
				c.Service.ResumeToken = "tok1"
				c.Service.ToolCalls = []ToolCall{{ID: "call-1", Name: "get_time", Arguments: json.RawMessage(`{}`)}}
				writeJSON(w, 200, c)
				return
			}
			writeJSON(w, 200, completion("automate-run-ch", FinishStop, "done"))
		},
		"GET /health": func(w http.ResponseWriter, r *http.Request) {
			h := health(true, "automate-run-ch")
			h.AwaitingToolResults = true
			writeJSON(w, 200, h)
		},
	})
	var rounds [][]string
	var h hookLog
	req := NewChatRequest("time")
	req.Tools = ChatTools(twoTools)
	comp, err := f.client(ClientOptions{}).ChatWithTools(context.Background(), req, h.loop(addExecutor(&rounds)))
	if err != nil || comp.Text() != "done" {
		t.Fatalf("%v %v", comp, err)
	}
	want := []string{"parked automate-run-ch tok1 get_time", "execute 1", "resumed tok1 1"}
	if fmt.Sprint(h.steps) != fmt.Sprint(want) {
		t.Fatalf("hooks\n got %q\nwant %q", h.steps, want)
	}
}
