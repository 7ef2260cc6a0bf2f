package automate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// slot models the server's single run slot for the give-up tests: a run
// request blocks until a cancel arrives, /health reports it while it is in
// flight, and the cancel settles it with a canceled record (HTTP 500).
type slot struct {
	mu       sync.Mutex
	active   string // requestId in flight ("" none)
	started  chan struct{}
	canceled chan struct{}
	once     sync.Once
}

func newSlot() *slot {
	return &slot{started: make(chan struct{}, 8), canceled: make(chan struct{})}
}

func (s *slot) hang(id string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.active = id
		s.mu.Unlock()
		s.started <- struct{}{}
		<-s.canceled
		s.mu.Lock()
		s.active = ""
		s.mu.Unlock()
		writeJSON(w, 500, record(id, StatusCanceled))
	}
}

func (s *slot) health(reportAs string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		active := s.active
		s.mu.Unlock()
		if active != "" && reportAs != "" {
			active = reportAs
		}
		writeJSON(w, 200, health(active != "", active))
	}
}

func (s *slot) cancel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	active := s.active
	s.mu.Unlock()
	if active == "" {
		writeJSON(w, 200, CancelResponse{Mode: CancelModeNone, WorkflowStatus: WorkflowIdle})
		return
	}
	s.once.Do(func() { close(s.canceled) })
	writeJSON(w, 200, CancelResponse{Stopped: true, Mode: CancelModeCancel, RequestID: &active, WorkflowStatus: WorkflowExecutingProgress})
}

// release ends a hanging handler at test end (when no cancel came).
func (s *slot) release() { s.once.Do(func() { close(s.canceled) }) }

func TestRunCallerGivesUpCancelsExplicitly(t *testing.T) {
	s := newSlot()
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/runs":            s.hang("automate-run-g"),
		"GET /health":              s.health(""),
		"POST /v1/automate/cancel": s.cancel,
	})
	t.Cleanup(s.release) // before the server's Close, which waits for the hanging handler
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-s.started
		cancel() // the caller gives up while the run is in flight
	}()
	rec, err := f.client(ClientOptions{}).Run(ctx, RunRequest{Prompt: "x"})
	if rec != nil {
		t.Fatalf("record %+v", rec)
	}
	var ae *AbandonedError
	if !errors.As(err, &ae) {
		t.Fatalf("want *AbandonedError, got %T %v", err, err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cause lost: %v", err)
	}
	if !ae.CancelSent || ae.Cancel == nil || !ae.Cancel.Stopped || ae.CancelErr != nil {
		t.Fatalf("explicit cancel not sent or failed: %+v", ae)
	}
	if n := f.count("POST /v1/automate/cancel"); n != 1 {
		t.Fatalf("%d cancels", n)
	}
	if n := f.count("POST /v1/runs"); n != 1 {
		t.Fatalf("%d runs", n)
	}
	var body CancelRequest
	json.Unmarshal(f.body("POST /v1/automate/cancel", 0), &body)
	if body.Force {
		t.Fatal("default give-up cancel must be soft")
	}
}

func TestRunDeadlineCancelsHungServer(t *testing.T) {
	s := newSlot()
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/runs":            s.hang("automate-run-hung"),
		"GET /health":              s.health(""),
		"POST /v1/automate/cancel": s.cancel,
	})
	t.Cleanup(s.release) // before the server's Close, which waits for the hanging handler
	logger, logs := logBuffer()
	c := f.client(ClientOptions{TimeoutMargin: 1, Logger: logger, ForceCancelOnGiveUp: true})
	// The server never answers; the client's own deadline (timeoutMs plus
	// margin) ends the request and the run is cancelled explicitly.
	_, err := c.Run(context.Background(), RunRequest{Prompt: "x", TimeoutMs: 1000})
	var ae *AbandonedError
	if !errors.As(err, &ae) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want an abandoned deadline, got %v", err)
	}
	if !ae.CancelSent || ae.Cancel == nil || !ae.Cancel.Stopped {
		t.Fatalf("no explicit cancel: %+v", ae)
	}
	var body CancelRequest
	json.Unmarshal(f.body("POST /v1/automate/cancel", 0), &body)
	if !body.Force {
		t.Fatal("ForceCancelOnGiveUp not honoured")
	}
	if !strings.Contains(logs.String(), "explicit cancel sent") || strings.Contains(logs.String(), testKey) {
		t.Fatalf("logs:\n%s", logs)
	}
}

func TestGiveUpWithIdleServerSendsNoCancel(t *testing.T) {
	s := newSlot()
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/runs":            s.hang("automate-run-i"),
		"GET /health":              func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, health(false, "")) },
		"POST /v1/automate/cancel": s.cancel,
	})
	t.Cleanup(s.release) // before the server's Close, which waits for the hanging handler
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-s.started; cancel() }()
	_, err := f.client(ClientOptions{}).Run(ctx, RunRequest{Prompt: "x"})
	var ae *AbandonedError
	if !errors.As(err, &ae) || ae.CancelSent || ae.Cancel != nil {
		t.Fatalf("want an abandon without cancel, got %v", err)
	}
	if f.count("GET /health") != 1 || f.count("POST /v1/automate/cancel") != 0 {
		t.Fatalf("health %d cancel %d", f.count("GET /health"), f.count("POST /v1/automate/cancel"))
	}
}

func TestResumeRunCancelsOnlyItsOwnRun(t *testing.T) {
	for _, tc := range []struct {
		name       string
		reportAs   string // activeRequestId /health shows while the resume hangs
		wantCancel bool
	}{
		{"own run active", "automate-run-own", true},
		{"another run active", "automate-run-other", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSlot()
			f := newFake(t, map[string]http.HandlerFunc{
				"POST /v1/runs/{token}/tool-results": s.hang("automate-run-own"),
				"GET /health":                        s.health(tc.reportAs),
				"POST /v1/automate/cancel":           s.cancel,
			})
			t.Cleanup(s.release) // before the server's Close, which waits for the hanging handler
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-s.started; cancel() }()
			p := parked("automate-run-own", "tok-own", ToolCall{ID: "c1", Name: "t"})
			_, err := f.client(ClientOptions{}).ResumeRun(ctx, &p, []ToolResult{TextResult("c1", "v")})
			var ae *AbandonedError
			if !errors.As(err, &ae) || ae.RequestID != "automate-run-own" {
				t.Fatalf("want abandon of automate-run-own, got %v", err)
			}
			if ae.CancelSent != tc.wantCancel || f.count("POST /v1/automate/cancel") != map[bool]int{true: 1}[tc.wantCancel] {
				t.Fatalf("cancel sent %v (%d), want %v", ae.CancelSent, f.count("POST /v1/automate/cancel"), tc.wantCancel)
			}
		})
	}
}

// toolServer answers a run that calls client tools over two rounds: round 1
// asks get_time, round 2 asks add with two calls in one round, then the run
// completes with an answer built from the results it received.
func toolServer(t *testing.T) *fake {
	var mu sync.Mutex
	received := map[string]string{}
	return newFake(t, map[string]http.HandlerFunc{
		"POST /v1/runs": func(w http.ResponseWriter, r *http.Request) {
			var req RunRequest
			json.NewDecoder(r.Body).Decode(&req)
			if len(req.ClientTools) != 2 {
				envelope(w, 400, ErrTypeInvalidRequest, "want two client tools")
				return
			}
			writeJSON(w, 200, parked("automate-run-t", "tok-round-1",
				ToolCall{ID: "call-1", Name: "get_time", Arguments: json.RawMessage(`{}`)}))
		},
		"POST /v1/runs/{token}/tool-results": func(w http.ResponseWriter, r *http.Request) {
			var req ResumeRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				envelope(w, 400, ErrTypeInvalidRequest, "Malformed JSON")
				return
			}
			mu.Lock()
			for _, res := range req.Results {
				if res.Error != "" {
					received[res.ID] = "error:" + res.Error
				} else {
					received[res.ID] = res.ResultText()
				}
			}
			mu.Unlock()
			switch r.PathValue("token") {
			case "tok-round-1":
				if received["call-1"] == "" {
					envelope(w, 400, ErrTypeInvalidRequest, "call-1 unanswered")
					return
				}
				writeJSON(w, 200, parked("automate-run-t", "tok-round-2",
					ToolCall{ID: "call-2", Name: "add", Arguments: json.RawMessage(`{"a":1,"b":2}`)},
					ToolCall{ID: "call-3", Name: "add", Arguments: json.RawMessage(`{"a":40,"b":2}`)}))
			case "tok-round-2":
				rec := record("automate-run-t", StatusCompleted)
				mu.Lock()
				rec.Answer = fmt.Sprintf("time=%s sum1=%s sum2=%s", received["call-1"], received["call-2"], received["call-3"])
				mu.Unlock()
				writeJSON(w, 200, rec)
			default:
				envelope(w, 404, ErrTypeNotFound, "No suspended run matches that resume token")
			}
		},
	})
}

func addExecutor(rounds *[][]string) ToolExecutor {
	return func(ctx context.Context, calls []ToolCall) ([]ToolResult, error) {
		var names []string
		var out []ToolResult
		for _, c := range calls {
			names = append(names, c.Name+":"+c.ID)
			switch c.Name {
			case "get_time":
				out = append(out, TextResult(c.ID, "12:00"))
			case "add":
				var a struct{ A, B int }
				if err := json.Unmarshal(c.Arguments, &a); err != nil {
					return nil, err
				}
				b, _ := json.Marshal(a.A + a.B)
				out = append(out, ToolResult{ID: c.ID, Result: b})
			default:
				out = append(out, ToolResult{ID: c.ID, Error: "unknown tool"})
			}
		}
		*rounds = append(*rounds, names)
		return out, nil
	}
}

var twoTools = []ClientTool{
	{Name: "get_time", Description: "current time"},
	{Name: "add", Description: "adds", Parameters: json.RawMessage(`{"type":"object"}`)},
}

func TestRunWithToolsTwoRounds(t *testing.T) {
	f := toolServer(t)
	var rounds [][]string
	rec, err := f.client(ClientOptions{}).RunWithTools(context.Background(),
		RunRequest{Prompt: "what time, and sums", ClientTools: twoTools}, ToolLoop{Execute: addExecutor(&rounds)})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != StatusCompleted || rec.Answer != "time=12:00 sum1=3 sum2=42" {
		t.Fatalf("record %s %q", rec.Status, rec.Answer)
	}
	if fmt.Sprint(rounds) != "[[get_time:call-1] [add:call-2 add:call-3]]" {
		t.Fatalf("executor rounds %v", rounds)
	}
	if n := f.count("POST /v1/runs/{token}/tool-results"); n != 2 {
		t.Fatalf("%d resumes", n)
	}
	if f.count("POST /v1/automate/cancel") != 0 {
		t.Fatal("cancel sent on a good loop")
	}
}

func TestRunWithToolsExecutorFailureCancels(t *testing.T) {
	f := parkedSlot(t, parked("automate-run-e", "tok-e", ToolCall{ID: "c1", Name: "boom"}))
	execErr := errors.New("tool host unreachable")
	rec, err := f.client(ClientOptions{}).RunWithTools(context.Background(), RunRequest{Prompt: "x", ClientTools: twoTools},
		ToolLoop{Execute: func(ctx context.Context, calls []ToolCall) ([]ToolResult, error) { return nil, execErr }})
	if rec != nil || !errors.Is(err, execErr) {
		t.Fatalf("want the executor's error, got %v %v", rec, err)
	}
	var ae *AbandonedError
	if !errors.As(err, &ae) || ae.RequestID != "automate-run-e" || ae.Cancel == nil || !ae.Cancel.Stopped {
		t.Fatalf("abandon %+v", ae)
	}
	if n := f.count("POST /v1/automate/cancel"); n != 1 || f.count("POST /v1/runs/{token}/tool-results") != 0 {
		t.Fatalf("cancels %d resumes %d", n, f.count("POST /v1/runs/{token}/tool-results"))
	}
}

func TestRunWithToolsCallerGivesUpDuringExecutor(t *testing.T) {
	f := parkedSlot(t, parked("automate-run-c", "tok-c", ToolCall{ID: "c1", Name: "slow"}))
	ctx, cancel := context.WithCancel(context.Background())
	_, err := f.client(ClientOptions{}).RunWithTools(ctx, RunRequest{Prompt: "x", ClientTools: twoTools},
		ToolLoop{Execute: func(ctx context.Context, calls []ToolCall) ([]ToolResult, error) {
			cancel()
			<-ctx.Done() // an executor that honours ctx
			return nil, ctx.Err()
		}})
	var ae *AbandonedError
	if !errors.As(err, &ae) || !errors.Is(err, context.Canceled) || !ae.CancelSent {
		t.Fatalf("want abandon with cancel, got %v", err)
	}
	if f.count("POST /v1/automate/cancel") != 1 {
		t.Fatal("no explicit cancel")
	}
}

func TestRunWithToolsRunFailsMidLoop(t *testing.T) {
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/runs": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, parked("automate-run-m", "tok-m", ToolCall{ID: "c1", Name: "get_time"}))
		},
		"POST /v1/runs/{token}/tool-results": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 500, record("automate-run-m", StatusFailed))
		},
	})
	var rounds [][]string
	rec, err := f.client(ClientOptions{}).RunWithTools(context.Background(), RunRequest{Prompt: "x", ClientTools: twoTools}, ToolLoop{Execute: addExecutor(&rounds)})
	var re *RunError
	if !errors.As(err, &re) || rec == nil || rec.Status != StatusFailed || rec.ErrorCode != ErrorExecutionFailed {
		t.Fatalf("want a RunError with the failed record, got %v %v", rec, err)
	}
	if f.count("POST /v1/automate/cancel") != 0 {
		t.Fatal("a finished run needs no cancel")
	}
}

// A request that never reached the server cannot have started a run: no
// health check, no cancel (which could stop someone else's run).
func TestGiveUpBeforeSendingSendsNoCancel(t *testing.T) {
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/runs": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, record("automate-run-n", StatusCompleted))
		},
		// Someone else's run holds the slot.
		"GET /health": func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, health(true, "automate-run-other")) },
	})
	t.Run("ctx already done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := f.client(ClientOptions{}).Run(ctx, RunRequest{Prompt: "x"})
		if !errors.Is(err, context.Canceled) || errors.As(err, new(*AbandonedError)) {
			t.Fatalf("want a plain context error, got %v", err)
		}
	})
	t.Run("connection never made", func(t *testing.T) {
		dialing := make(chan struct{}, 1)
		tr := defaultHTTPClient().Transport.(*http.Transport).Clone()
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialing <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-dialing; cancel() }()
		c := f.client(ClientOptions{HTTPClient: &http.Client{Transport: tr}, CancelTimeout: 200 * time.Millisecond})
		_, err := c.Run(ctx, RunRequest{Prompt: "x"})
		if !errors.Is(err, context.Canceled) || errors.As(err, new(*AbandonedError)) {
			t.Fatalf("want a plain context error, got %v", err)
		}
	})
	for _, route := range []string{"POST /v1/runs", "GET /health", "POST /v1/automate/cancel"} {
		if n := f.count(route); n != 0 {
			t.Errorf("%s: %d requests, want none", route, n)
		}
	}
}
