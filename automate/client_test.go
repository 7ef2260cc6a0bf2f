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

func TestRunCompletedDecodesRecordTolerantly(t *testing.T) {
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/runs": func(w http.ResponseWriter, r *http.Request) {
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("content type %q", ct)
			}
			var req RunRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				t.Errorf("decode: %v", err)
			}
			// A record with fields this client does not know.
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(200)
			fmt.Fprintf(w, `{"schemaVersion":1,"requestId":"automate-run-1","taskId":%q,"status":"completed",
				"answer":"done. FINAL ANSWER: 42","finalAnswer":"42","startedAt":"2026-11-21T19:00:00.000Z",
				"completedAt":"2026-11-21T19:00:02.500Z","durationMs":2500,"model":"m.gguf","appVersion":"1.2.3",
				"backend":{"flavorId":"cuda","accelerator":"gpu","cpuFallback":false,"futureField":1},
				"steps":[{"id":"s1","index":0,"title":"Think","status":"success","brandNew":true}],
				"usage":{"inputTokens":10,"outputTokens":5,"generationMs":100,"ttftMs":20,"tps":50.5},
				"somethingNew":{"a":[1,2,3]}}`, req.TaskID)
		},
	})
	c := f.client(ClientOptions{})
	contract := "answer with FINAL ANSWER:"
	rec, err := c.Run(context.Background(), RunRequest{Prompt: "compute", TaskID: "task-7", AnswerContract: &contract})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != StatusCompleted || rec.TaskID != "task-7" || rec.RequestID != "automate-run-1" {
		t.Fatalf("record %+v", rec)
	}
	if rec.FinalAnswer == nil || *rec.FinalAnswer != "42" || rec.Answer != "done. FINAL ANSWER: 42" {
		t.Fatalf("answers %q %v", rec.Answer, rec.FinalAnswer)
	}
	if rec.Usage == nil || rec.Usage.TPS != 50.5 || rec.Backend == nil || rec.Backend.FlavorID != "cuda" {
		t.Fatalf("usage/backend %+v %+v", rec.Usage, rec.Backend)
	}
	if len(rec.Steps) != 1 || rec.Steps[0].Title != "Think" || rec.DurationMs != 2500 {
		t.Fatalf("steps %+v", rec.Steps)
	}
	if got := rec.CompletedAt.Sub(rec.StartedAt.Time); got != 2500*time.Millisecond {
		t.Fatalf("timestamps differ by %v", got)
	}
	var sent map[string]any
	if err := json.Unmarshal(f.body("POST /v1/runs", 0), &sent); err != nil {
		t.Fatal(err)
	}
	if sent["prompt"] != "compute" || sent["answerContract"] != contract || sent["taskId"] != "task-7" {
		t.Fatalf("sent body %v", sent)
	}
	if _, has := sent["timeoutMs"]; has {
		t.Fatalf("zero timeoutMs must be omitted (server default), sent %v", sent)
	}
}

func TestRunFailedIsRunErrorWithRecord(t *testing.T) {
	for _, status := range []RunStatus{StatusFailed, StatusCanceled, StatusTerminated} {
		t.Run(string(status), func(t *testing.T) {
			f := newFake(t, map[string]http.HandlerFunc{
				"POST /v1/runs": func(w http.ResponseWriter, r *http.Request) {
					writeJSON(w, 500, record("automate-run-f", status))
				},
			})
			rec, err := f.client(ClientOptions{}).Run(context.Background(), RunRequest{Prompt: "x"})
			var re *RunError
			if !errors.As(err, &re) {
				t.Fatalf("want *RunError, got %T %v", err, err)
			}
			if re.HTTPStatus != 500 || re.Record.Status != status || re.Completion != nil {
				t.Fatalf("run error %+v", re)
			}
			if rec == nil || rec != re.Record {
				t.Fatalf("Run must return the record with the RunError")
			}
			if !errors.Is(err, ErrRunFailed) || errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("errors.Is wrong for %v", err)
			}
			var ae *APIError
			if errors.As(err, &ae) {
				t.Fatalf("a failed run is not a failed request")
			}
			if !strings.Contains(err.Error(), "automate-run-f") || !strings.Contains(err.Error(), string(status)) {
				t.Fatalf("message %q", err)
			}
		})
	}
}

func TestRunFailedRequests(t *testing.T) {
	cases := []struct {
		name   string
		handle http.HandlerFunc
		is     []error
		isNot  []error
		api    bool
		status int
		inMsg  string
	}{
		{"invalid", func(w http.ResponseWriter, r *http.Request) {
			envelope(w, 400, ErrTypeInvalidRequest, "prompt must be a non-empty string")
		}, []error{ErrInvalidRequest}, []error{ErrRunTimedOut, ErrRunFailed}, true, 400, "prompt must be"},
		{"timed out", func(w http.ResponseWriter, r *http.Request) {
			envelope(w, 400, ErrTypeInvalidRequest, "Automate run timed out after 1000ms")
		}, []error{ErrRunTimedOut, ErrInvalidRequest}, []error{ErrBusy}, true, 400, "timed out after 1000ms"},
		{"busy", func(w http.ResponseWriter, r *http.Request) {
			envelope(w, 409, ErrTypeConflict, "The on-device assistant is already running or preparing (planning).")
		}, []error{ErrBusy}, []error{ErrInvalidRequest, ErrRunFailed}, true, 409, "(planning)"},
		{"500 envelope is not a run", func(w http.ResponseWriter, r *http.Request) {
			envelope(w, 500, "server_error", "boom")
		}, nil, []error{ErrRunFailed, ErrBusy}, true, 500, "boom"},
		{"500 without schemaVersion", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 500, map[string]any{"status": "failed"})
		}, nil, []error{ErrRunFailed}, false, 500, "HTTP 500"},
		{"non-JSON 502", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			w.Write([]byte("<html>bad gateway</html>"))
		}, nil, []error{ErrRunFailed, ErrInvalidRequest}, false, 502, "HTTP 502"},
		{"200 not JSON", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("hello"))
		}, nil, []error{ErrRunFailed}, false, 200, "HTTP 200"},
		{"200 other schema", func(w http.ResponseWriter, r *http.Request) {
			rec := record("automate-run-2", StatusCompleted)
			rec.SchemaVersion = 2
			writeJSON(w, 200, rec)
		}, nil, []error{ErrRunFailed}, false, 200, "schemaVersion 2"},
		{"200 envelope", func(w http.ResponseWriter, r *http.Request) {
			envelope(w, 200, ErrTypeInvalidRequest, "odd")
		}, nil, []error{ErrInvalidRequest}, false, 200, "schemaVersion missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, map[string]http.HandlerFunc{"POST /v1/runs": tc.handle})
			rec, err := f.client(ClientOptions{}).Run(context.Background(), RunRequest{Prompt: "x"})
			if err == nil || rec != nil {
				t.Fatalf("want error and no record, got %v %v", rec, err)
			}
			for _, target := range tc.is {
				if !errors.Is(err, target) {
					t.Errorf("%v should match %v", err, target)
				}
			}
			for _, target := range tc.isNot {
				if errors.Is(err, target) {
					t.Errorf("%v should not match %v", err, target)
				}
			}
			var ae *APIError
			var re *ResponseError
			switch {
			case tc.api && !errors.As(err, &ae):
				t.Fatalf("want *APIError, got %T %v", err, err)
			case tc.api && ae.HTTPStatus != tc.status:
				t.Fatalf("status %d", ae.HTTPStatus)
			case !tc.api && !errors.As(err, &re):
				t.Fatalf("want *ResponseError, got %T %v", err, err)
			case !tc.api && re.HTTPStatus != tc.status:
				t.Fatalf("status %d", re.HTTPStatus)
			}
			if !strings.Contains(err.Error(), tc.inMsg) {
				t.Fatalf("message %q lacks %q", err, tc.inMsg)
			}
			if f.count("POST /v1/automate/cancel") != 0 || f.count("GET /health") != 0 {
				t.Fatalf("a failed request must not trigger a cancel")
			}
		})
	}
}

func TestUnauthorizedNeverShowsKey(t *testing.T) {
	// One server answers the contract's 401 envelope, another one echoes
	// the Authorization header back in a non-JSON 401 and in an envelope.
	echo := func(envelopeStyle bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if envelopeStyle {
				envelope(w, 401, ErrTypeAuthentication, "bad token "+r.Header.Get("Authorization"))
				return
			}
			w.WriteHeader(401)
			fmt.Fprintf(w, "you sent %s", r.Header.Get("Authorization"))
		}
	}
	for name, h := range map[string]http.HandlerFunc{"echo text": echo(false), "echo envelope": echo(true)} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, map[string]http.HandlerFunc{"POST /v1/runs": h, "GET /health": h})
			logger, logs := logBuffer()
			c := f.client(ClientOptions{Logger: logger})
			_, err := c.Run(context.Background(), RunRequest{Prompt: "x"})
			if err == nil || strings.Contains(err.Error(), testKey) {
				t.Fatalf("error leaks the key or is nil: %v", err)
			}
			if !strings.Contains(err.Error(), "401") {
				t.Fatalf("error does not name the status: %v", err)
			}
			_, err = c.Health(context.Background())
			if err == nil || strings.Contains(err.Error(), testKey) {
				t.Fatalf("health error leaks the key: %v", err)
			}
			if logs.String() == "" || strings.Contains(logs.String(), testKey) {
				t.Fatalf("logs empty or leak the key:\n%s", logs)
			}
		})
	}
	t.Run("wrong key", func(t *testing.T) {
		f := newFake(t, map[string]http.HandlerFunc{})
		wrong := "wrong-" + testKey
		logger, logs := logBuffer()
		c := f.client(ClientOptions{Key: wrong, Logger: logger})
		_, err := c.Run(context.Background(), RunRequest{Prompt: "x"})
		if !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("want ErrUnauthorized, got %v", err)
		}
		var ae *APIError
		if !errors.As(err, &ae) || ae.Message != "Unauthorized" || ae.Type != ErrTypeAuthentication {
			t.Fatalf("envelope %+v", ae)
		}
		if strings.Contains(err.Error(), wrong) || strings.Contains(logs.String(), wrong) {
			t.Fatalf("key leaked: %v\n%s", err, logs)
		}
	})
	t.Run("invalid key", func(t *testing.T) {
		bad := testKey + "\r\nX-Evil: 1"
		_, err := NewClient(ClientOptions{BaseURL: "http://127.0.0.1:1", Key: bad})
		if err == nil || strings.Contains(err.Error(), testKey) {
			t.Fatalf("want an error without the key, got %v", err)
		}
	})
}

func TestSendsExactBearerHeader(t *testing.T) {
	var got []string
	var mu sync.Mutex
	f := newFake(t, map[string]http.HandlerFunc{
		"GET /v1/models": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got = r.Header.Values("Authorization")
			mu.Unlock()
			writeJSON(w, 200, ModelList{Object: "list", Data: []ModelEntry{{ID: ServiceID, Object: "model", OwnedBy: "service"}}})
		},
	})
	m, err := f.client(ClientOptions{}).Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Data) != 1 || m.Data[0].ID != ServiceID {
		t.Fatalf("models %+v", m)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "Bearer "+testKey {
		t.Fatalf("authorization headers %q", got)
	}
}

// TestNoRetries proves that a 409, a 500 record and a connection reset each
// produce exactly one request.
func TestNoRetries(t *testing.T) {
	cases := map[string]http.HandlerFunc{
		"409": func(w http.ResponseWriter, r *http.Request) {
			envelope(w, 409, ErrTypeConflict, "The on-device assistant is already running or preparing (thinking).")
		},
		"500 record": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 500, record("automate-run-x", StatusFailed))
		},
		"connection reset": func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			if tcp, ok := conn.(*net.TCPConn); ok {
				tcp.SetLinger(0) // close with RST
			}
			conn.Close()
		},
		"503 text": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "overloaded", 503)
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, map[string]http.HandlerFunc{
				"POST /v1/runs":                      h,
				"POST /v1/runs/{token}/tool-results": h,
				"POST /v1/chat/completions":          h,
				"POST /v1/automate/models/select":    h,
			})
			c := f.client(ClientOptions{})
			ctx := context.Background()
			// A warm connection first, so that the reset hits a reused
			// connection: the case where net/http could resend.
			if _, err := c.Health(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Run(ctx, RunRequest{Prompt: "x"}); err == nil {
				t.Fatal("want an error")
			} else if errors.As(err, new(*AbandonedError)) {
				t.Fatalf("not a give-up: %v", err)
			}
			if _, err := c.Resume(ctx, "tok-1", []ToolResult{TextResult("c1", "r")}); err == nil {
				t.Fatal("want an error")
			}
			if _, err := c.Chat(ctx, NewChatRequest("x")); err == nil {
				t.Fatal("want an error")
			}
			if _, err := c.SelectModel(ctx, SelectRequest{Family: "f"}); err == nil {
				t.Fatal("want an error")
			}
			for _, route := range []string{"POST /v1/runs", "POST /v1/runs/{token}/tool-results",
				"POST /v1/chat/completions", "POST /v1/automate/models/select"} {
				if n := f.count(route); n != 1 {
					t.Errorf("%s: %d requests, want exactly 1", route, n)
				}
			}
			if n := f.count("POST /v1/automate/cancel"); n != 0 {
				t.Errorf("cancel sent %d times without a give-up", n)
			}
		})
	}
}

// deadlineRecorder is a RoundTripper that records each request's context
// deadline and forwards to a real transport.
type deadlineRecorder struct {
	mu        sync.Mutex
	deadlines map[string]time.Time
	next      http.RoundTripper
}

func (d *deadlineRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	dl, ok := r.Context().Deadline()
	d.mu.Lock()
	if ok {
		d.deadlines[r.Method+" "+r.URL.Path] = dl
	} else {
		d.deadlines[r.Method+" "+r.URL.Path] = time.Time{}
	}
	d.mu.Unlock()
	return d.next.RoundTrip(r)
}

func (d *deadlineRecorder) get(t *testing.T, key string) time.Time {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	dl, ok := d.deadlines[key]
	if !ok {
		t.Fatalf("no request %s", key)
	}
	if dl.IsZero() {
		t.Fatalf("request %s had no deadline", key)
	}
	return dl
}

func TestRequestDeadlines(t *testing.T) {
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/runs": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, record("automate-run-d", StatusCompleted))
		},
		"POST /v1/chat/completions": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, completion("automate-run-c", FinishStop, "hi"))
		},
	})
	rec := &deadlineRecorder{deadlines: map[string]time.Time{}, next: defaultHTTPClient().Transport}
	within := func(t *testing.T, key string, before, after time.Time, want time.Duration) {
		t.Helper()
		dl := rec.get(t, key)
		if dl.Before(before.Add(want)) || dl.After(after.Add(want)) {
			t.Fatalf("%s deadline %v after start, want %v", key, dl.Sub(before), want)
		}
	}
	hc := &http.Client{Transport: rec}
	ctx := context.Background()

	t.Run("timeoutMs plus margin", func(t *testing.T) {
		c := f.client(ClientOptions{HTTPClient: hc, TimeoutMargin: 7 * time.Second})
		before := time.Now()
		if _, err := c.Run(ctx, RunRequest{Prompt: "x", TimeoutMs: 60000}); err != nil {
			t.Fatal(err)
		}
		within(t, "POST /v1/runs", before, time.Now(), 67*time.Second)
	})
	t.Run("defaults", func(t *testing.T) {
		c := f.client(ClientOptions{HTTPClient: hc})
		before := time.Now()
		if _, err := c.Run(ctx, RunRequest{Prompt: "x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Chat(ctx, NewChatRequest("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Health(ctx); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		within(t, "POST /v1/runs", before, after, 900*time.Second+30*time.Second)
		within(t, "POST /v1/chat/completions", before, after, 900*time.Second+30*time.Second)
		within(t, "GET /health", before, after, 30*time.Second)
	})
	t.Run("chat timeout_ms", func(t *testing.T) {
		c := f.client(ClientOptions{HTTPClient: hc, TimeoutMargin: time.Second})
		req := NewChatRequest("x")
		req.TimeoutMs = 5000
		before := time.Now()
		if _, err := c.Chat(ctx, req); err != nil {
			t.Fatal(err)
		}
		within(t, "POST /v1/chat/completions", before, time.Now(), 6*time.Second)
	})
	t.Run("ctx shortens", func(t *testing.T) {
		c := f.client(ClientOptions{HTTPClient: hc})
		short, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		want, _ := short.Deadline()
		if _, err := c.Run(short, RunRequest{Prompt: "x", TimeoutMs: 600000}); err != nil {
			t.Fatal(err)
		}
		if got := rec.get(t, "POST /v1/runs"); !got.Equal(want) {
			t.Fatalf("deadline %v, want the caller's %v", got, want)
		}
	})
}

func TestDefaultHTTPClient(t *testing.T) {
	c, err := NewClient(ClientOptions{BaseURL: "http://127.0.0.1:4317/", Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	if c.http.Timeout != 0 {
		t.Fatalf("global timeout %v, want none (deadlines are per request)", c.http.Timeout)
	}
	if tr := c.http.Transport.(*http.Transport); tr.Proxy != nil {
		t.Fatal("default client must not use a proxy")
	}
	if c.BaseURL() != "http://127.0.0.1:4317" {
		t.Fatalf("base URL %q", c.BaseURL())
	}
	for _, bad := range []string{"", "127.0.0.1:4317", "ftp://127.0.0.1", "http://127.0.0.1:4317/?a=b", "http://u:p@127.0.0.1"} {
		if _, err := NewClient(ClientOptions{BaseURL: bad, Key: testKey}); err == nil {
			t.Errorf("base URL %q accepted", bad)
		}
	}
	if _, err := NewClient(ClientOptions{BaseURL: "http://127.0.0.1:1"}); err == nil {
		t.Error("empty key accepted")
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	target := newFake(t, map[string]http.HandlerFunc{})
	f := newFake(t, map[string]http.HandlerFunc{
		"GET /health": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.srv.URL+"/health", http.StatusFound)
		},
	})
	_, err := f.client(ClientOptions{}).Health(context.Background())
	var re *ResponseError
	if !errors.As(err, &re) || re.HTTPStatus != http.StatusFound {
		t.Fatalf("want a ResponseError naming 302, got %v", err)
	}
	if target.count("GET /health") != 0 {
		t.Fatal("redirect was followed (with the key)")
	}
}

func TestResponseSizeCap(t *testing.T) {
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/runs": func(w http.ResponseWriter, r *http.Request) {
			rec := record("automate-run-big", StatusCompleted)
			rec.Answer = strings.Repeat("a", 4096)
			writeJSON(w, 200, rec)
		},
	})
	_, err := f.client(ClientOptions{MaxResponseBytes: 1024}).Run(context.Background(), RunRequest{Prompt: "x"})
	var re *ResponseError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "exceeds 1024 bytes") {
		t.Fatalf("want a size error, got %v", err)
	}
	rec, err := f.client(ClientOptions{}).Run(context.Background(), RunRequest{Prompt: "x"})
	if err != nil || len(rec.Answer) != 4096 {
		t.Fatalf("default cap: %v", err)
	}
}

func TestSimpleRoutes(t *testing.T) {
	sel := ModelOption{Name: "qwen-8b.gguf", Family: "qwen", SizeCode: "8b", SupportsTools: true,
		AvailableForDevice: true, Downloaded: true, Selected: true}
	f := newFake(t, map[string]http.HandlerFunc{
		"GET /health": func(w http.ResponseWriter, r *http.Request) {
			h := health(true, "automate-run-h")
			h.AwaitingToolResults = true
			w.Header().Set("Content-Type", "application/json")
			b, _ := json.Marshal(h)
			// an unknown field must not break decoding
			w.Write(append(b[:len(b)-1], []byte(`,"newThing":{"x":1}}`)...))
		},
		"GET /v1/automate/models": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, CatalogResponse{Object: "list", Data: []ModelOption{sel},
				Catalog: CatalogInfo{Status: CatalogReady, ModelCount: 1}})
		},
		"POST /v1/automate/models/select": func(w http.ResponseWriter, r *http.Request) {
			var req SelectRequest
			json.NewDecoder(r.Body).Decode(&req)
			switch {
			case req == SelectRequest{}:
				writeJSON(w, 200, SelectResponse{Models: []ModelOption{sel}})
			case strings.EqualFold(req.Family, "qwen"):
				writeJSON(w, 200, SelectResponse{Selected: &sel, Models: []ModelOption{sel}})
			case req.Family == "busy":
				envelope(w, 409, ErrTypeConflict, "The on-device assistant is already running or preparing (planning).")
			default:
				envelope(w, 400, ErrTypeInvalidRequest, "Model selector is ambiguous; matches: a, b")
			}
		},
		"POST /v1/automate/cancel": func(w http.ResponseWriter, r *http.Request) {
			var req CancelRequest
			json.NewDecoder(r.Body).Decode(&req)
			id := "automate-run-h"
			mode := CancelModeCancel
			if req.Force {
				mode = CancelModeTerminate
			}
			writeJSON(w, 200, CancelResponse{Stopped: true, Mode: mode, RequestID: &id, WorkflowStatus: WorkflowExecutingProgress})
		},
	})
	c := f.client(ClientOptions{})
	ctx := context.Background()
	h, err := c.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Busy || !h.AwaitingToolResults || h.ActiveRequestID == nil || *h.ActiveRequestID != "automate-run-h" || h.Ready() {
		t.Fatalf("health %+v", h)
	}
	cat, err := c.Catalog(ctx)
	if err != nil || cat.Catalog.Status != CatalogReady || len(cat.Data) != 1 || cat.Data[0].Name != sel.Name {
		t.Fatalf("catalog %+v %v", cat, err)
	}
	got, err := c.SelectModel(ctx, SelectRequest{Family: "QWEN"})
	if err != nil || got.Selected == nil || got.Selected.Name != sel.Name {
		t.Fatalf("select %+v %v", got, err)
	}
	got, err = c.SelectModel(ctx, SelectRequest{})
	if err != nil || got.Selected != nil {
		t.Fatalf("unpin %+v %v", got, err)
	}
	if string(f.body("POST /v1/automate/models/select", 1)) != "{}\n" && string(f.body("POST /v1/automate/models/select", 1)) != "{}" {
		t.Fatalf("unpin body %q", f.body("POST /v1/automate/models/select", 1))
	}
	if _, err := c.SelectModel(ctx, SelectRequest{Family: "busy"}); !errors.Is(err, ErrBusy) {
		t.Fatalf("want ErrBusy, got %v", err)
	}
	if _, err := c.SelectModel(ctx, SelectRequest{Family: "x"}); !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("want ErrInvalidRequest, got %v", err)
	}
	cr, err := c.Cancel(ctx, true)
	if err != nil || !cr.Stopped || cr.Mode != CancelModeTerminate || cr.RequestID == nil {
		t.Fatalf("cancel %+v %v", cr, err)
	}
	cr, err = c.Cancel(ctx, false)
	if err != nil || cr.Mode != CancelModeCancel {
		t.Fatalf("cancel %+v %v", cr, err)
	}
	var forceBody map[string]any
	json.Unmarshal(f.body("POST /v1/automate/cancel", 0), &forceBody)
	if forceBody["force"] != true {
		t.Fatalf("force body %v", forceBody)
	}
}

func TestNotFoundRoute(t *testing.T) {
	f := newFake(t, map[string]http.HandlerFunc{
		"POST /v1/runs/{token}/tool-results": func(w http.ResponseWriter, r *http.Request) {
			envelope(w, 404, ErrTypeNotFound, "No suspended run matches that resume token")
		},
	})
	_, err := f.client(ClientOptions{}).Resume(context.Background(), "stale-token-0123456789", []ToolResult{TextResult("c1", "x")})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("want ErrNotFound, got %v", err)
	}
	if strings.Contains(err.Error(), "stale-token-0123456789") {
		t.Fatalf("resume token shown in full: %v", err)
	}
}
