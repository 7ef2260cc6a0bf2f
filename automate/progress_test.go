package automate_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
)

// sameRun strips what differs between two runs of one script.
func sameRun(t *testing.T, rec *automate.RunRecord) map[string]any {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"requestId", "startedAt", "completedAt", "durationMs", "resumeToken", "usage", "events"} {
		delete(m, k)
	}
	return m
}

// TestRunProgressStreamsFromOurServer: against the real server the client
// reads the stream: each step arrives through OnStep (ending in the
// record's state), statuses through OnStatus, and the record is the one
// Run returns for the same script; a failed run is Run's *RunError; a
// resume streams too.
func TestRunProgressStreamsFromOurServer(t *testing.T) {
	c := startReal(t, 0).client(t, automate.ClientOptions{})
	ctx := context.Background()
	req := automate.RunRequest{Prompt: "x\n#!write a.txt 1\n#!read a.txt\n#!answer ok", TaskID: "p1"}
	if _, err := c.Run(ctx, automate.RunRequest{Prompt: "warm up"}); err != nil {
		t.Fatal(err)
	}
	plain, err := c.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var started automate.RunStarted
	steps := map[int]automate.Step{}
	var order []int
	var statuses []string
	rec, err := c.RunProgress(ctx, req, automate.Progress{
		OnStarted: func(s automate.RunStarted) { started = s },
		OnStep: func(st automate.Step) {
			steps[st.Index] = st
			order = append(order, st.Index)
		},
		OnStatus: func(s string) { statuses = append(statuses, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sameRun(t, plain), sameRun(t, rec)) {
		t.Fatalf("streamed record differs from the plain one:\n%+v\n%+v", plain, rec)
	}
	if started.RequestID != rec.RequestID || started.TaskID != "p1" {
		t.Fatalf("run.started %+v for record %s", started, rec.RequestID)
	}
	for _, st := range rec.Steps {
		if !reflect.DeepEqual(steps[st.Index], st) {
			t.Errorf("last OnStep of step %d = %+v, record %+v", st.Index, steps[st.Index], st)
		}
	}
	if len(order) < 2*len(rec.Steps) {
		t.Errorf("OnStep calls %v: want every step pending, running and done", order)
	}
	if len(statuses) == 0 || statuses[len(statuses)-1] != automate.WorkflowExecutingComplete {
		t.Errorf("statuses %v", statuses)
	}

	rec, err = c.RunProgress(ctx, automate.RunRequest{Prompt: "x\n#!fail SCHEMA_INVALID"}, automate.Progress{})
	var re *automate.RunError
	if !errors.As(err, &re) || re.HTTPStatus != 500 || rec == nil || rec.ErrorCode != automate.ErrorSchemaInvalid {
		t.Fatalf("failed run: %+v %v", rec, err)
	}
	if _, err := c.RunProgress(ctx, automate.RunRequest{Prompt: " "}, automate.Progress{}); !errors.Is(err, automate.ErrInvalidRequest) {
		t.Fatalf("refused run: %v", err)
	}

	parked, err := c.RunProgress(ctx, automate.RunRequest{Prompt: "x\n#!tool get_time {}\n#!write b.txt 2\n#!answer t",
		ClientTools: []automate.ClientTool{{Name: "get_time", Description: "the time"}}}, automate.Progress{})
	if err != nil || parked.Status != automate.StatusAwaitingToolResults {
		t.Fatalf("parked: %+v %v", parked, err)
	}
	var resumedSteps []automate.Step
	done, err := c.ResumeRunProgress(ctx, parked, []automate.ToolResult{automate.TextResult(parked.ToolCalls[0].ID, "noon")},
		automate.Progress{OnStep: func(st automate.Step) { resumedSteps = append(resumedSteps, st) }})
	if err != nil || done.Status != automate.StatusCompleted || done.Answer != "t" {
		t.Fatalf("resumed: %+v %v", done, err)
	}
	if len(resumedSteps) == 0 || resumedSteps[len(resumedSteps)-1].Status != automate.StepSuccess {
		t.Fatalf("resume steps %+v", resumedSteps)
	}
}

// fakeClock hands each After call to the test, which fires it.
type fakeClock struct{ calls chan chan time.Time }

func (f *fakeClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	f.calls <- ch
	return ch
}

// TestRunProgressFollowsHealthOnAPlainServer: a server that answers the
// plain record (the older desktop application) is followed through
// /health's workflowStatus on the injected clock while the answer is
// awaited: each change reported once, the POST sent once, and the record
// returned as Run returns it.
func TestRunProgressFollowsHealthOnAPlainServer(t *testing.T) {
	var (
		mu     sync.Mutex
		status = automate.WorkflowIdle
		posts  atomic.Int32
	)
	release := make(chan struct{})
	record := automate.RunRecord{SchemaVersion: 1, RequestID: "automate-run-plain", Status: automate.StatusCompleted, Answer: "done",
		Steps: []automate.Step{{ID: "step-1", Index: 1, Title: "t", Status: automate.StepSuccess}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch r.URL.Path {
		case "/health":
			mu.Lock()
			defer mu.Unlock()
			_ = json.NewEncoder(w).Encode(automate.Health{Status: "ok", WorkflowStatus: status, Busy: status != automate.WorkflowIdle})
		case "/v1/runs":
			posts.Add(1)
			body, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(body), `"stream":true`) || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
				http.Error(w, `{"error":{"message":"no stream asked","type":"invalid_request_error"}}`, 400)
				return
			}
			<-release
			_ = json.NewEncoder(w).Encode(record)
		}
	}))
	defer srv.Close()
	clock := &fakeClock{calls: make(chan chan time.Time)}
	c, err := automate.NewClient(automate.ClientOptions{BaseURL: srv.URL, Key: realKey, Logger: slog.New(slog.DiscardHandler), After: clock.After})
	if err != nil {
		t.Fatal(err)
	}
	statuses := make(chan string, 8)
	type outcome struct {
		rec *automate.RunRecord
		err error
	}
	out := make(chan outcome, 1)
	go func() {
		rec, err := c.RunProgress(context.Background(), automate.RunRequest{Prompt: "p"},
			automate.Progress{OnStatus: func(s string) { statuses <- s }})
		out <- outcome{rec, err}
	}()
	set := func(s string) {
		mu.Lock()
		status = s
		mu.Unlock()
	}
	tick := func() { (<-clock.calls) <- time.Time{} }
	for _, s := range []string{automate.WorkflowPlanning, automate.WorkflowExecutingProgress} {
		set(s)
		tick()
		if got := <-statuses; got != s {
			t.Fatalf("status %q, want %q", got, s)
		}
	}
	tick()        // unchanged: nothing reported...
	<-clock.calls // ...and the follower polls on (its next wait began)
	close(release)
	o := <-out
	if o.err != nil || !reflect.DeepEqual(*o.rec, record) {
		t.Fatalf("record %+v %v", o.rec, o.err)
	}
	select {
	case s := <-statuses:
		t.Fatalf("an unchanged status was reported again: %q", s)
	default:
	}
	if n := posts.Load(); n != 1 {
		t.Fatalf("%d POSTs, want 1", n)
	}
}

// TestRunProgressStreamCutShort: a stream that ends before run.completed
// is an error naming the run, and the POST is not sent again.
func TestRunProgressStreamCutShort(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: run.started\ndata: {\"requestId\":\"automate-run-cut\"}\n\nevent: run.step\ndata: {\"index\":1}\n\n")
	}))
	defer srv.Close()
	c, err := automate.NewClient(automate.ClientOptions{BaseURL: srv.URL, Key: realKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var steps int
	_, err = c.RunProgress(context.Background(), automate.RunRequest{Prompt: "p"}, automate.Progress{OnStep: func(automate.Step) { steps++ }})
	if err == nil || !strings.Contains(err.Error(), "automate-run-cut") || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v", err)
	}
	if steps != 1 || posts.Load() != 1 {
		t.Fatalf("steps %d posts %d", steps, posts.Load())
	}
}

// TestRunWithToolsProgress: a tool loop with ToolLoop.Progress streams the
// run and each resume: the steps of every round are reported, and the
// outcome is the plain loop's.
func TestRunWithToolsProgress(t *testing.T) {
	c := startReal(t, 0).client(t, automate.ClientOptions{})
	var steps []string
	rec, err := c.RunWithTools(context.Background(), automate.RunRequest{
		Prompt:      "x\n#!tool get_time {}\n#!write a.txt 1\n#!tool get_time {}\n#!answer done",
		ClientTools: []automate.ClientTool{{Name: "get_time", Description: "the time"}},
	}, automate.ToolLoop{
		Execute: func(_ context.Context, calls []automate.ToolCall) ([]automate.ToolResult, error) {
			return []automate.ToolResult{automate.TextResult(calls[0].ID, "noon")}, nil
		},
		Progress: &automate.Progress{OnStep: func(st automate.Step) {
			if st.Status == automate.StepSuccess {
				steps = append(steps, st.ToolName)
			}
		}},
	})
	if err != nil || rec.Status != automate.StatusCompleted || rec.Answer != "done" {
		t.Fatalf("%+v %v", rec, err)
	}
	if want := []string{"get_time", "write_file", "get_time", ""}; !reflect.DeepEqual(steps, want) {
		t.Fatalf("finished steps reported %q, want %q", steps, want)
	}
}
