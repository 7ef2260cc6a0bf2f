package automate

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
)

// testKey is a key of the generated shape (43 base64url characters).
const testKey = "k3y-Zq9xW2vB7nR4tY6uI8oP0aS1dF3gH5jK7lM9cVb"

// fake is a real HTTP server on 127.0.0.1 that speaks the Automate contract
// through handlers each test writes. It checks the bearer key before
// routing (401 envelope otherwise) and counts every request per route.
type fake struct {
	t   *testing.T
	srv *httptest.Server
	mux *http.ServeMux

	mu     sync.Mutex
	counts map[string]int
	bodies map[string][][]byte
}

func newFake(t *testing.T, routes map[string]http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{t: t, mux: http.NewServeMux(), counts: map[string]int{}, bodies: map[string][][]byte{}}
	if _, ok := routes["GET /health"]; !ok {
		routes["GET /health"] = func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, health(false, ""))
		}
	}
	if _, ok := routes["POST /v1/automate/cancel"]; !ok {
		routes["POST /v1/automate/cancel"] = func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, CancelResponse{Mode: CancelModeNone, WorkflowStatus: WorkflowIdle})
		}
	}
	for pattern, h := range routes {
		f.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			f.mu.Lock()
			f.counts[pattern]++
			f.bodies[pattern] = append(f.bodies[pattern], body)
			f.mu.Unlock()
			h(w, r)
		})
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			writeJSON(w, 401, ErrorEnvelope{Error: ErrorBody{Message: "Unauthorized", Type: ErrTypeAuthentication}})
			return
		}
		f.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) count(pattern string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[pattern]
}

func (f *fake) body(pattern string, i int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.bodies[pattern]) {
		f.t.Fatalf("no request %d on %s", i, pattern)
	}
	return f.bodies[pattern][i]
}

// client returns a Client for the fake with the given options filled in.
func (f *fake) client(opts ClientOptions) *Client {
	f.t.Helper()
	opts.BaseURL = f.srv.URL
	if opts.Key == "" {
		opts.Key = testKey
	}
	c, err := NewClient(opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func envelope(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, ErrorEnvelope{Error: ErrorBody{Message: msg, Type: typ}})
}

func health(busy bool, active string) Health {
	h := Health{Status: "ok", Service: ServiceID, AppVersion: "test", WorkflowStatus: WorkflowIdle, Busy: busy}
	if active != "" {
		h.ActiveRequestID = &active
		h.WorkflowStatus = WorkflowExecutingProgress
	}
	return h
}

func record(id string, status RunStatus) RunRecord {
	now := time.Date(2026, 11, 21, 19, 0, 0, 0, time.UTC)
	rec := RunRecord{SchemaVersion: 1, RequestID: id, Status: status,
		StartedAt: Timestamp{now}, CompletedAt: Timestamp{now.Add(time.Second)},
		DurationMs: 1000, Model: "m.gguf", AppVersion: "test",
		Steps: []Step{}, Trace: []json.RawMessage{}, Events: []Event{}}
	switch status {
	case StatusFailed:
		rec.ErrorCode = ErrorExecutionFailed
	case StatusCanceled:
		rec.ErrorCode = ErrorCanceled
	}
	return rec
}

func parked(id, token string, calls ...ToolCall) RunRecord {
	rec := record(id, StatusAwaitingToolResults)
	rec.ResumeToken = token
	rec.ToolCalls = calls
	return rec
}

// logBuffer returns a debug-level logger writing into a buffer.
func logBuffer() (*slog.Logger, *testutil.SyncBuffer) {
	b := &testutil.SyncBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}
