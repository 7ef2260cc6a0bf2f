package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

// hardened serves a Server with the scripted engine in NewHTTPServer, the
// way `automate serve` and the daemon do, on a loopback port.
func hardened(t *testing.T, o server.HTTPOptions) (addr string) {
	t.Helper()
	addr, _ = hardenedCounting(t, o)
	return addr
}

// hardenedCounting is hardened, and counts the bytes the server read from
// its connections.
func hardenedCounting(t *testing.T, o server.HTTPOptions) (addr string, counted *testenv.CountingListener) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	srv, err := server.New(server.Config{Key: testKey, Assistant: scripted.New(scripted.Config{Logger: quiet}),
		Workspace: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ln, _, err := server.ListenWith(server.ListenOptions{Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	hs := server.NewHTTPServer(srv.Handler(), o)
	counted = &testenv.CountingListener{Listener: ln}
	go hs.Serve(counted)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
		hs.Close()
	})
	return ln.Addr().String(), counted
}

func TestHTTPServerRefusesAHugeHeader(t *testing.T) {
	c := testutil.RawConn(t, hardened(t, server.HTTPOptions{}))
	go func() {
		io.WriteString(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
		io.WriteString(c, strings.Repeat("a", 1<<20))
		io.WriteString(c, "\r\n\r\n")
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a 1 MiB header: %v", err)
	}
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d, want 431", resp.StatusCode)
	}
}

func TestHTTPServerClosesAStalledBodyWithinTheReadDeadline(t *testing.T) {
	c := testutil.RawConn(t, hardened(t, server.HTTPOptions{BodyReadTimeout: 200 * time.Millisecond}))
	io.WriteString(c, "POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+testKey+
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"prompt\":")
	// The client stalls mid-body. The server gives up on the body (the
	// 20 s read bound of rawConn is 100 times the deadline) and closes.
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("the connection was not closed: %v (got %q)", err, b)
	}
}

func TestHTTPServerReadDeadlineDoesNotBoundARun(t *testing.T) {
	addr := hardened(t, server.HTTPOptions{BodyReadTimeout: 100 * time.Millisecond})
	// A run of 500 ms: five times the body deadline.
	body := `{"prompt":"` + strings.ReplaceAll(sleepSteps(5, 100), "\n", `\n`) + `","include":{"events":false,"trace":false}}`
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/runs", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	defer resp.Body.Close()
	var rec automate.RunRecord
	if err := json.NewDecoder(resp.Body).Decode(&rec); err != nil || resp.StatusCode != 200 {
		t.Fatalf("run: %d %v", resp.StatusCode, err)
	}
	if rec.Status != automate.StatusCompleted || rec.DurationMs < 500 {
		t.Fatalf("run: status %s after %d ms, want completed after at least 500", rec.Status, rec.DurationMs)
	}
}

// sleepSteps is a scripted prompt of n steps that each wait ms.
func sleepSteps(n, ms int) string {
	return strings.Repeat("#!sleep "+strconv.Itoa(ms)+"\n", n)
}

func TestUnauthorizedIsAnsweredBeforeAnyBodyIsRead(t *testing.T) {
	addr, counted := hardenedCounting(t, server.HTTPOptions{})
	c := testutil.RawConn(t, addr)
	head := "POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n"
	io.WriteString(c, head)
	// Half of the body arrives, then the client stalls: the 401 must not
	// wait for the rest (net/http would read up to 256 KiB of an unread
	// body before answering), nor read what was sent.
	go io.WriteString(c, "{\"prompt\":\""+strings.Repeat("x", 100000))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no 401 before the body ended: %v", err)
	}
	var env automate.ErrorEnvelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || resp.StatusCode != http.StatusUnauthorized ||
		env.Error.Type != automate.ErrTypeAuthentication {
		t.Fatalf("answer %d %+v %v, want the 401 envelope", resp.StatusCode, env, err)
	}
	if !resp.Close {
		t.Error("the 401 keeps the connection open: the rest of the body would be read as the next request")
	}
	// net/http reads in 4 KiB buffers: beyond the headers it read that one
	// buffer at most, not the 100 KB sent.
	if n := counted.Read(); n > int64(len(head))+8<<10 {
		t.Fatalf("the server read %d bytes of an unauthenticated request", n)
	}
}

func TestOnlyALoopbackHostIsAnswered(t *testing.T) {
	addr := hardened(t, server.HTTPOptions{})
	port := addr[strings.LastIndex(addr, ":")+1:]
	cases := []struct {
		host, path, key string
		want            int
	}{
		{"127.0.0.1:" + port, "/health", testKey, 200},
		{"localhost:" + port, "/health", testKey, 200},
		{"LOCALHOST", "/health", testKey, 200},
		{"[::1]:" + port, "/health", testKey, 200},
		{"127.0.0.1:8080", "/health", testKey, 200}, // a port forward
		{"127.0.0.1:" + port, "/health", "wrong-key-0123456789abcdefghij", 401},
		// A DNS rebinding page: the same refusal with or without the key,
		// on a route or not, before authentication.
		{"rebind.example:" + port, "/health", testKey, 403},
		{"rebind.example:" + port, "/v1/runs", "", 403},
		{"rebind.example:" + port, "/no/such/route", "", 403},
		{"192.168.1.5:" + port, "/health", testKey, 403},
		{"127.0.0.1.rebind.example:" + port, "/health", testKey, 403},
	}
	for _, c := range cases {
		method, body := "GET", ""
		if c.path != "/health" {
			method, body = "POST", `{"prompt":"hi"}`
		}
		req, _ := http.NewRequest(method, "http://"+addr+c.path, strings.NewReader(body))
		req.Host = c.host
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s with Host %q: %v", method, c.path, c.host, err)
		}
		var env automate.ErrorEnvelope
		json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s with Host %q: %d, want %d", method, c.path, c.host, resp.StatusCode, c.want)
			continue
		}
		if c.want == 403 {
			if env.Error.Type != "permission_error" || !strings.Contains(env.Error.Message, "Host header") {
				t.Errorf("Host %q: envelope %+v", c.host, env)
			}
			if !resp.Close {
				t.Errorf("Host %q: the refusal keeps the connection open", c.host)
			}
		}
	}
}

// gatedEngine holds every run before the engine starts (and reports any
// status) until release is closed.
type gatedEngine struct {
	assistant.Assistant
	started chan struct{}
	release chan struct{}
}

func (g gatedEngine) Run(ctx context.Context, task *assistant.Task, env assistant.Env) (*assistant.Result, error) {
	close(g.started)
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Assistant.Run(ctx, task, env)
}

// TestConflictNamesAnInProgressStatus: between taking the slot and the
// engine's first status, a second run's 409 and /health name
// `initializing`, never `idle`.
func TestConflictNamesAnInProgressStatus(t *testing.T) {
	gate := gatedEngine{started: make(chan struct{}), release: make(chan struct{})}
	h := newHarness(t, withWrap(func(a assistant.Assistant) assistant.Assistant { gate.Assistant = a; return gate }))
	done := h.startAsync("/v1/runs", map[string]any{"prompt": "first"})
	select {
	case <-gate.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the first run never reached the engine")
	}
	want := "The on-device assistant is already running or preparing (initializing)"
	for _, path := range []string{"/v1/runs", "/v1/automate/models/select"} {
		h.do("POST", path, map[string]any{"prompt": "second", "modelName": "scripted-pro"}).envelope(t, 409, "conflict", want)
	}
	if hl := h.health(); !hl.Busy || hl.WorkflowStatus != automate.WorkflowInitializing {
		t.Errorf("health while the slot is taken: busy %v, workflowStatus %q", hl.Busy, hl.WorkflowStatus)
	}
	close(gate.release)
	if r := receive(t, done); r.status != 200 {
		t.Fatalf("the first run: %d %s", r.status, r.body)
	}
	if hl := h.health(); hl.Busy || !automate.WorkflowReady(hl.WorkflowStatus) {
		t.Errorf("health after the run: busy %v, workflowStatus %q", hl.Busy, hl.WorkflowStatus)
	}
}
