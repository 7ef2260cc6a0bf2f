package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/internal/testutil"
)

const testKey = "test-key-0123456789abcdefghijklmnop"

// harness runs the real server with the real scripted engine on a
// loopback port chosen by the OS.
type harness struct {
	t         *testing.T
	srv       *server.Server
	url       string
	key       string
	workspace string
	client    *http.Client
}

type harnessConfig struct {
	server server.Config
	engine scripted.Config
	wrap   func(assistant.Assistant) assistant.Assistant
	pipe   bool
}

type harnessOption func(*harnessConfig)

func withToolWait(d time.Duration) harnessOption {
	return func(c *harnessConfig) { c.server.ToolWait = d }
}

func withEngineConfig(f func(*scripted.Config)) harnessOption {
	return func(c *harnessConfig) { f(&c.engine) }
}

func withServerConfig(f func(*server.Config)) harnessOption {
	return func(c *harnessConfig) { f(&c.server) }
}

// onPipe serves the server over an in-memory listener instead of a
// loopback port, so that a harness made inside a testing/synctest bubble
// runs on the bubble's fake clock.
func onPipe() harnessOption {
	return func(c *harnessConfig) { c.pipe = true }
}

// withWrap wraps the scripted engine, for fault injection.
func withWrap(w func(assistant.Assistant) assistant.Assistant) harnessOption {
	return func(c *harnessConfig) { c.wrap = w }
}

func newHarness(t *testing.T, opts ...harnessOption) *harness {
	t.Helper()
	hc := harnessConfig{
		server: server.Config{Key: testKey, Workspace: t.TempDir(), AppVersion: "1.2.3-test", Logger: slog.New(slog.DiscardHandler)},
		engine: scripted.Config{Logger: slog.New(slog.DiscardHandler)},
	}
	for _, o := range opts {
		o(&hc)
	}
	var eng assistant.Assistant = scripted.New(hc.engine)
	if hc.wrap != nil {
		eng = hc.wrap(eng)
	}
	cfg := hc.server
	cfg.Assistant = eng
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	h := &harness{t: t, srv: srv, key: testKey, workspace: srv.Workspace()}
	if hc.pipe {
		h.url, h.client = "http://127.0.0.1:4317", testutil.ServePipe(t, srv.Handler())
		h.client.Timeout = 60 * time.Second
	} else {
		ts := httptest.NewServer(srv.Handler())
		t.Cleanup(ts.Close)
		h.url, h.client = ts.URL, &http.Client{Timeout: 60 * time.Second}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// response is one HTTP answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// raw decodes the body as a generic object, to check presence of keys.
func (r response) raw(t *testing.T) map[string]any {
	var m map[string]any
	r.json(t, &m)
	return m
}

// envelope checks an error envelope's status, type and message.
func (r response) envelope(t *testing.T, status int, typ, msg string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	var env automate.ErrorEnvelope
	r.json(t, &env)
	if env.Error.Type != typ || env.Error.Message != msg {
		t.Fatalf("envelope = %+v, want type %q message %q", env.Error, typ, msg)
	}
	checkContractHeaders(t, r)
}

func checkContractHeaders(t *testing.T, r response) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control = %q", cc)
	}
	if acao := r.header.Get("Access-Control-Allow-Origin"); acao != "" {
		t.Errorf("CORS header sent: %q", acao)
	}
}

// do sends a request with the bearer key; body is marshalled unless it is
// a string or []byte.
func (h *harness) do(method, path string, body any) response {
	return h.doAuth(method, path, body, "Bearer "+h.key)
}

func (h *harness) doAuth(method, path string, body any, auth string) response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// run posts a native run and decodes the record.
func (h *harness) run(body map[string]any) (response, automate.RunRecord) {
	h.t.Helper()
	r := h.do("POST", "/v1/runs", body)
	var rec automate.RunRecord
	if r.status == 200 || r.status == 500 {
		r.json(h.t, &rec)
	}
	return r, rec
}

func (h *harness) resume(token string, results ...automate.ToolResult) (response, automate.RunRecord) {
	h.t.Helper()
	r := h.do("POST", "/v1/runs/"+token+"/tool-results", map[string]any{"results": results})
	var rec automate.RunRecord
	if r.status == 200 || r.status == 500 {
		r.json(h.t, &rec)
	}
	return r, rec
}

func (h *harness) health() automate.Health {
	h.t.Helper()
	r := h.do("GET", "/health", nil)
	if r.status != 200 {
		h.t.Fatalf("health: %d %s", r.status, r.body)
	}
	var hl automate.Health
	r.json(h.t, &hl)
	return hl
}

// waitFor waits until /health satisfies cond. The server announces no
// change of its health (the Automate API is polled): a bounded poll.
func (h *harness) waitFor(what string, cond func(automate.Health) bool) automate.Health {
	h.t.Helper()
	var hl automate.Health
	testutil.Until(h.t, what, testutil.NoEvent, func() bool { hl = h.health(); return cond(hl) },
		func() string { return fmt.Sprintf("last health %+v", hl) })
	return hl
}

// startAsync posts a run in the background; the answer arrives on the
// returned channel.
func (h *harness) startAsync(path string, body map[string]any) <-chan response {
	ch := make(chan response, 1)
	go func() {
		j, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", h.url+path, bytes.NewReader(j))
		req.Header.Set("Authorization", "Bearer "+h.key)
		resp, err := h.client.Do(req)
		if err != nil {
			ch <- response{status: -1, body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		ch <- response{status: resp.StatusCode, header: resp.Header, body: b}
	}()
	return ch
}

func receive(t *testing.T, ch <-chan response) response {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no answer within 30s")
	}
	return response{}
}
