package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// gated wraps an engine so that every env.Checkpoint (the scripted engine
// calls it before each directive) waits for a token on gate: the test
// decides when the run may take its next step.
type gated struct {
	assistant.Assistant
	gate chan struct{}
}

type gatedEnv struct {
	assistant.Env
	gate chan struct{}
	ctx  context.Context
}

func (g *gated) Run(ctx context.Context, task *assistant.Task, env assistant.Env) (*assistant.Result, error) {
	return g.Assistant.Run(ctx, task, &gatedEnv{Env: env, gate: g.gate, ctx: ctx})
}

func (e *gatedEnv) Checkpoint() error {
	select {
	case <-e.gate:
	case <-e.ctx.Done():
	}
	return e.Env.Checkpoint()
}

func withGate(gate chan struct{}) harnessOption {
	return withWrap(func(a assistant.Assistant) assistant.Assistant { return &gated{Assistant: a, gate: gate} })
}

// sseAnswer is an open streamed answer.
type sseAnswer struct {
	t      *testing.T
	resp   *http.Response
	er     *localhttp.EventReader
	cancel context.CancelFunc
}

// stream posts body to path and returns the open event stream; it fails
// the test unless the answer is a 200 event stream.
func (h *harness) stream(path string, body map[string]any) *sseAnswer {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.t.Cleanup(cancel)
	body["stream"] = true
	j, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", h.url+path, bytes.NewReader(j))
	req.Header.Set("Authorization", "Bearer "+h.key)
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("POST %s: %v", path, err)
	}
	h.t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		b, _ := io.ReadAll(resp.Body)
		h.t.Fatalf("POST %s: %d %q %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return &sseAnswer{t: h.t, resp: resp, er: localhttp.NewEventReader(resp.Body, 0), cancel: cancel}
}

func (a *sseAnswer) next() localhttp.Event {
	a.t.Helper()
	ev, err := a.er.Next()
	if err != nil {
		a.t.Fatalf("reading the event stream: %v", err)
	}
	return ev
}

// until reads events up to and including the first named name; it returns
// every event read.
func (a *sseAnswer) until(name string) []localhttp.Event {
	a.t.Helper()
	var evs []localhttp.Event
	for {
		ev := a.next()
		evs = append(evs, ev)
		if ev.Name == name {
			return evs
		}
	}
}

// rest reads the stream to its end, which must come after run.completed
// (or error).
func (a *sseAnswer) rest() []localhttp.Event {
	a.t.Helper()
	var evs []localhttp.Event
	for {
		ev, err := a.er.Next()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			a.t.Fatalf("reading the event stream: %v", err)
		}
		evs = append(evs, ev)
	}
}

// completed reads the stream to its end and returns the record of its
// last event, which must be run.completed.
func completedRecord(t *testing.T, evs []localhttp.Event) json.RawMessage {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Name != automate.EventRunCompleted {
		t.Fatalf("the stream did not end with run.completed: %s", eventNames(evs))
	}
	return evs[len(evs)-1].Data
}

func eventNames(evs []localhttp.Event) []string {
	var names []string
	for _, e := range evs {
		names = append(names, e.Name)
	}
	return names
}

// comparable strips what differs between two runs of one script (ids,
// times) from a record.
func comparable(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("record %s: %v", raw, err)
	}
	for _, k := range []string{"requestId", "startedAt", "completedAt", "durationMs", "resumeToken"} {
		if _, ok := m[k]; ok {
			m[k] = "x"
		}
	}
	if u, ok := m["usage"].(map[string]any); ok {
		u["generationMs"], u["ttftMs"], u["tps"] = "x", "x", "x" // times, whatever the machine
	}
	if evs, ok := m["events"].([]any); ok {
		for _, e := range evs {
			e.(map[string]any)["at"] = "x"
		}
	}
	return m
}

// TestStreamedAndPlainRecordsAreIdentical runs the same scripts plain and
// streamed: the record of run.completed is the plain answer's record (the
// same JSON, ids and times aside), for completed, failed, parked and
// resumed runs; and the plain answer has no stream in it.
func TestStreamedAndPlainRecordsAreIdentical(t *testing.T) {
	h := newHarness(t)
	h.run(map[string]any{"prompt": "warm the worker up"}) // every compared run starts warm
	tool := []map[string]any{{"name": "get_time", "description": "the time", "parameters": map[string]any{"type": "object"}}}
	cases := []struct {
		name string
		body map[string]any
	}{
		{"completed", map[string]any{"prompt": "write\n#!write a.txt hello\n#!read a.txt\n#!answer done", "taskId": "t1"}},
		{"failed", map[string]any{"prompt": "x\n#!fail TOOL_TIMEOUT"}},
		{"denied", map[string]any{"prompt": "x\n#!run echo hi", "allowDestructiveTools": true, "builtInTools": map[string]any{"deny": []string{"@destructive"}}}},
		{"contract", map[string]any{"prompt": "x\n#!answer FINAL ANSWER: 42", "answerContract": "End with FINAL ANSWER: <n>"}},
		{"parked", map[string]any{"prompt": "x\n#!tool get_time {}\n#!answer t", "clientTools": tool}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plain := h.do("POST", "/v1/runs", tc.body)
			if ct := plain.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Fatalf("plain answer Content-Type %q", ct)
			}
			var plainRec automate.RunRecord
			plain.json(t, &plainRec)
			if plainRec.Status == automate.StatusAwaitingToolResults {
				h.resume(plainRec.ResumeToken, automate.TextResult(plainRec.ToolCalls[0].ID, "noon"))
			}
			body := map[string]any{"stream": true}
			for k, v := range tc.body {
				body[k] = v
			}
			evs := h.stream("/v1/runs", body).rest()
			if evs[0].Name != automate.EventRunStarted {
				t.Fatalf("first event %q", evs[0].Name)
			}
			streamed := completedRecord(t, evs)
			if !reflect.DeepEqual(comparable(t, plain.body), comparable(t, streamed)) {
				t.Fatalf("records differ:\nplain    %s\nstreamed %s", plain.body, streamed)
			}
			var rec automate.RunRecord
			if err := json.Unmarshal(streamed, &rec); err != nil {
				t.Fatal(err)
			}
			// run.step events carry the record's steps, last state last.
			last := map[int]automate.Step{}
			for _, e := range evs {
				if e.Name == automate.EventRunStep {
					var st automate.Step
					if err := json.Unmarshal(e.Data, &st); err != nil {
						t.Fatal(err)
					}
					last[st.Index] = st
				}
			}
			for _, st := range rec.Steps {
				if !reflect.DeepEqual(last[st.Index], st) {
					t.Errorf("last run.step of step %d = %+v, record has %+v", st.Index, last[st.Index], st)
				}
			}
			if rec.Status != automate.StatusAwaitingToolResults {
				return
			}
			// Resume streams too, and ends as the plain resume did.
			res := h.stream("/v1/runs/"+rec.ResumeToken+"/tool-results", map[string]any{
				"stream": true, "results": []automate.ToolResult{automate.TextResult(rec.ToolCalls[0].ID, "noon")}}).rest()
			var started automate.RunStarted
			if err := json.Unmarshal(res[0].Data, &started); err != nil || !started.Resumed || started.RequestID != rec.RequestID {
				t.Fatalf("resume run.started = %s (%v)", res[0].Data, err)
			}
			var done automate.RunRecord
			if err := json.Unmarshal(completedRecord(t, res), &done); err != nil || done.Status != automate.StatusCompleted || done.Answer != "t" {
				t.Fatalf("resumed record = %+v (%v)", done, err)
			}
			if !slices.Contains(eventNames(res), automate.EventRunStep) {
				t.Fatalf("the resumed stream has no run.step: %s", eventNames(res))
			}
		})
	}
}

// TestStreamDeliversStepsWhileTheRunIsInProgress holds a multi-step run
// before its second step: the first step's run.step events have arrived
// while /health still shows the run busy and the second step has not
// started, and the events come in order.
func TestStreamDeliversStepsWhileTheRunIsInProgress(t *testing.T) {
	gate := make(chan struct{}, 8)
	h := newHarness(t, withGate(gate))
	gate <- struct{}{} // the first directive may run
	a := h.stream("/v1/runs", map[string]any{"prompt": "x\n#!write a.txt 1\n#!write b.txt 2\n#!answer ok"})
	var seen []localhttp.Event
	for {
		ev := a.next()
		seen = append(seen, ev)
		var st automate.Step
		if ev.Name == automate.EventRunStep && json.Unmarshal(ev.Data, &st) == nil && st.Index == 1 && st.Status == automate.StepSuccess {
			break
		}
	}
	if hl := h.health(); !hl.Busy {
		t.Fatalf("the run ended before its first step reached the stream: %+v", hl)
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "b.txt")); err == nil {
		t.Fatal("the second step ran before the test let it")
	}
	if seen[0].Name != automate.EventRunStarted {
		t.Fatalf("first event %q", seen[0].Name)
	}
	close(gate)
	evs := append(seen, a.rest()...)
	rec := completedRecord(t, evs)
	// Order: steps of one index go pending, running, success; indexes
	// start in order; statuses include planning before executing.
	state := map[int]int{}
	rank := map[string]int{automate.StepPending: 1, automate.StepRunning: 2, automate.StepSuccess: 3}
	started := 0
	for _, e := range evs {
		if e.Name != automate.EventRunStep {
			continue
		}
		var st automate.Step
		_ = json.Unmarshal(e.Data, &st)
		if rank[st.Status] < state[st.Index] {
			t.Fatalf("step %d went back to %s", st.Index, st.Status)
		}
		state[st.Index] = rank[st.Status]
		if st.Status == automate.StepRunning {
			if st.Index <= started {
				t.Fatalf("step %d started after step %d", st.Index, started)
			}
			started = st.Index
		}
	}
	if started != 3 {
		t.Fatalf("steps started up to %d, want 3; events %s", started, eventNames(evs))
	}
	var statuses []string
	for _, e := range evs {
		if e.Name == automate.EventRunStatus {
			var s automate.RunStatusEvent
			_ = json.Unmarshal(e.Data, &s)
			statuses = append(statuses, s.WorkflowStatus)
		}
	}
	if i, j := slices.Index(statuses, automate.WorkflowPlanning), slices.Index(statuses, automate.WorkflowExecutingComplete); i < 0 || j < i {
		t.Fatalf("statuses %v", statuses)
	}
	var r automate.RunRecord
	_ = json.Unmarshal(rec, &r)
	if r.Status != automate.StatusCompleted || r.Answer != "ok" {
		t.Fatalf("record %s", rec)
	}
}

// TestStreamCallerGoingAwayDoesNotStopTheRun: the caller closes the
// stream mid-run; the run completes all its steps, /health shows it
// ended, and the next run is accepted.
func TestStreamCallerGoingAwayDoesNotStopTheRun(t *testing.T) {
	gate := make(chan struct{}, 8)
	h := newHarness(t, withGate(gate))
	gate <- struct{}{}
	a := h.stream("/v1/runs", map[string]any{"prompt": "x\n#!write a.txt 1\n#!write b.txt 2\n#!answer ok"})
	a.until(automate.EventRunStep)
	a.cancel()
	a.resp.Body.Close()
	close(gate)
	h.waitFor("the run to end", func(hl automate.Health) bool { return !hl.Busy })
	if b, err := os.ReadFile(filepath.Join(h.workspace, "b.txt")); err != nil || string(b) != "2" {
		t.Fatalf("the run did not finish its steps after the caller left: %q %v", b, err)
	}
	if hl := h.health(); hl.WorkflowStatus != automate.WorkflowIdle {
		t.Fatalf("health after the run: %+v", hl)
	}
	if r, rec := h.run(map[string]any{"prompt": "next\n#!answer again"}); r.status != 200 || rec.Answer != "again" {
		t.Fatalf("next run: %d %s", r.status, r.body)
	}
}

// TestStreamRefusalsArePlainJSON: a request refused before the run starts
// (400, 409) is answered as plain JSON, not a stream.
func TestStreamRefusalsArePlainJSON(t *testing.T) {
	gate := make(chan struct{})
	h := newHarness(t, withGate(gate))
	h.do("POST", "/v1/runs", map[string]any{"stream": true}).envelope(t, 400, automate.ErrTypeInvalidRequest, "prompt must be a non-empty string")
	h.do("POST", "/v1/runs", map[string]any{"prompt": "x", "stream": "yes"}).envelope(t, 400, automate.ErrTypeInvalidRequest, "stream must be a boolean")
	busy := h.stream("/v1/runs", map[string]any{"prompt": "x\n#!answer a"})
	busy.until(automate.EventRunStarted)
	r := h.do("POST", "/v1/runs", map[string]any{"prompt": "y", "stream": true})
	if r.status != 409 || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("busy: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	h.do("POST", "/v1/runs/rt_nothing/tool-results", map[string]any{"stream": true, "results": []any{}}).
		envelope(t, 404, automate.ErrTypeNotFound, "No suspended run matches that resume token")
	close(gate)
	completedRecord(t, busy.rest())
}

// TestStreamFailedRunEndsWithItsRecord: a run that ends failed or canceled
// still ends its stream with run.completed carrying the record, as the
// plain 500 answer carries it; a run timeout (the plain answer's 400 with
// no record) ends it with an error event carrying that envelope.
func TestStreamFailedRunEndsWithItsRecord(t *testing.T) {
	gate := make(chan struct{}, 8)
	h := newHarness(t, withGate(gate))
	gate <- struct{}{}
	a := h.stream("/v1/runs", map[string]any{"prompt": "x\n#!write a.txt 1\n#!write b.txt 2"})
	a.until(automate.EventRunStep)
	h.do("POST", "/v1/automate/cancel", map[string]any{"force": false})
	close(gate)
	var rec automate.RunRecord
	if err := json.Unmarshal(completedRecord(t, a.rest()), &rec); err != nil || rec.Status != automate.StatusCanceled {
		t.Fatalf("canceled run's record %+v %v", rec, err)
	}
}

// TestStreamRunTimeoutEndsWithTheErrorEnvelope: a run timeout, which the
// plain answer reports as a 400 envelope without a record, ends the
// stream with an error event carrying that envelope (fake clock).
func TestStreamRunTimeoutEndsWithTheErrorEnvelope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, onPipe())
		evs := h.stream("/v1/runs", map[string]any{"prompt": "x\n#!sleep 5000", "timeoutMs": 1000}).rest()
		last := evs[len(evs)-1]
		var env automate.ErrorEnvelope
		if last.Name != automate.EventRunError || json.Unmarshal(last.Data, &env) != nil ||
			env.Error.Type != automate.ErrTypeInvalidRequest || env.Error.Message != "Automate run timed out after 1000ms" {
			t.Fatalf("last event %q %s", last.Name, last.Data)
		}
	})
}

// TestStreamKeepAlive: a quiet streamed run gets a keep-alive comment
// every ten seconds (fake clock), and the stream still ends with its
// record.
func TestStreamKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, onPipe())
		a := h.stream("/v1/runs", map[string]any{"prompt": "x\n#!sleep 35000\n#!answer ok"})
		body, err := io.ReadAll(a.resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(body), "\n: keep-alive\n"); n != 3 {
			t.Fatalf("%d keep-alives in a 35 s run, want 3:\n%s", n, body)
		}
		evs, err := readAll(body)
		if err != nil {
			t.Fatal(err)
		}
		var rec automate.RunRecord
		if err := json.Unmarshal(completedRecord(t, evs), &rec); err != nil || rec.Answer != "ok" {
			t.Fatalf("record %+v %v", rec, err)
		}
	})
}

func readAll(b []byte) ([]localhttp.Event, error) {
	er := localhttp.NewEventReader(bytes.NewReader(b), 0)
	var evs []localhttp.Event
	for {
		ev, err := er.Next()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
}
