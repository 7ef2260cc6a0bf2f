package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/llm"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/internal/testutil"
)

const testKey = "llm-test-key-0123456789abcdefghijkl"

// harness runs the real Automate server over HTTP on loopback with the
// llm engine in front of an upstream.
type harness struct {
	t         testing.TB
	noCheck   bool
	eng       *llm.Engine
	srv       *server.Server
	url       string
	workspace string
	client    *http.Client
}

type harnessOpts struct {
	engine  llm.Config
	server  server.Config
	noCheck bool // skip the goroutine check at cleanup
}

func quietLogger() *slog.Logger {
	if os.Getenv("HUBGATE_TEST_VERBOSE") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// newHarness starts the server and the engine for upstreamURL. mods adjust
// the configuration. At cleanup it closes everything and checks that no
// goroutine of the engine, the toolkit, the MCP SDK or an upstream
// connection is left.
func newHarness(t testing.TB, upstreamURL string, mods ...func(*harnessOpts)) *harness {
	t.Helper()
	o := harnessOpts{
		engine: llm.Config{
			Upstream:          upstreamURL,
			Logger:            quietLogger(),
			ConversationStore: t.TempDir() + "/conversation.json",
			DialRetryWait:     20 * time.Millisecond,
			TotalMemory:       func() uint64 { return 32 << 30 },
		},
		server: server.Config{Key: testKey, Workspace: t.TempDir(), AppVersion: "9.9.9-test", Logger: quietLogger()},
	}
	for _, m := range mods {
		m(&o)
	}
	eng := llm.New(o.engine)
	cfg := o.server
	cfg.Assistant = eng
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	h := &harness{t: t, noCheck: o.noCheck, eng: eng, srv: srv, url: ts.URL, workspace: srv.Workspace(),
		// No keep-alive: a connection left open is always the engine's.
		client: &http.Client{Timeout: 10 * time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}}
	t.Cleanup(func() {
		// Checked before anything is closed: whatever a run started must
		// be gone once it ended, not only once the engine closes.
		if !o.noCheck && !t.Failed() {
			checkNoLeftovers(t)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("server Close: %v", err)
		}
		ts.Close()
		eng.Close()
	})
	return h
}

// leftoverMarkers are stack frames that must not survive a run.
var leftoverMarkers = []string{
	"hubgate/automate/llm.",
	"hubgate/automate/toolkit.",
	"modelcontextprotocol/go-sdk/",
	"net/http.(*persistConn)",
}

// checkNoLeftovers waits until no goroutine runs code of the engine, the
// toolkit or the MCP client and no client connection is open.
func checkNoLeftovers(t testing.TB) {
	t.Helper()
	var bad []string
	// A goroutine's end is no event: a bounded poll of the stacks.
	testutil.Until(t, "the runs' goroutines to end", testutil.NoEvent,
		func() bool { bad = leftovers(); return len(bad) == 0 },
		func() string { return fmt.Sprintf("%d outlived the runs:\n\n%s", len(bad), strings.Join(bad, "\n\n")) })
}

func leftovers() []string {
	buf := make([]byte, 1<<22)
	n := runtime.Stack(buf, true)
	var bad []string
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if strings.Contains(g, "checkNoLeftovers") || strings.Contains(g, "leftovers()") {
			continue
		}
		for _, m := range leftoverMarkers {
			if strings.Contains(g, m) {
				bad = append(bad, g)
				break
			}
		}
	}
	return bad
}

type response struct {
	status int
	body   []byte
}

func (h *harness) do(method, path string, body any) response {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return response{status: resp.StatusCode, body: b}
}

// run posts a native run and decodes its record (200 or 500).
func (h *harness) run(body map[string]any) (int, automate.RunRecord) {
	h.t.Helper()
	r := h.do("POST", "/v1/runs", body)
	var rec automate.RunRecord
	if r.status == 200 || r.status == 500 {
		if err := json.Unmarshal(r.body, &rec); err != nil {
			h.t.Fatalf("decode record: %v: %s", err, r.body)
		}
		if rec.SchemaVersion != 1 {
			h.t.Fatalf("not a record: %s", r.body)
		}
		h.afterRun(rec)
	} else {
		h.t.Logf("run answered %d: %s", r.status, r.body)
	}
	return r.status, rec
}

func (h *harness) resume(token string, results ...automate.ToolResult) (int, automate.RunRecord) {
	h.t.Helper()
	r := h.do("POST", "/v1/runs/"+token+"/tool-results", map[string]any{"results": results})
	var rec automate.RunRecord
	if r.status == 200 || r.status == 500 {
		if err := json.Unmarshal(r.body, &rec); err != nil {
			h.t.Fatalf("decode record: %v: %s", err, r.body)
		}
		h.afterRun(rec)
	}
	return r.status, rec
}

// afterRun checks, once a run has ended, that nothing it started is left.
func (h *harness) afterRun(rec automate.RunRecord) {
	h.t.Helper()
	if rec.Status.Terminal() && !h.noCheck {
		checkNoLeftovers(h.t)
	}
}

// runAsync posts a run in the background.
func (h *harness) runAsync(body map[string]any) <-chan response {
	ch := make(chan response, 1)
	go func() {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", h.url+"/v1/runs", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := h.client.Do(req)
		if err != nil {
			ch <- response{status: -1, body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		rb, _ := io.ReadAll(resp.Body)
		ch <- response{status: resp.StatusCode, body: rb}
	}()
	return ch
}

func receive(t *testing.T, ch <-chan response) (int, automate.RunRecord) {
	t.Helper()
	select {
	case r := <-ch:
		var rec automate.RunRecord
		if r.status == 200 || r.status == 500 {
			if err := json.Unmarshal(r.body, &rec); err != nil {
				t.Fatalf("decode: %v: %s", err, r.body)
			}
		} else {
			t.Logf("answer %d: %s", r.status, r.body)
		}
		return r.status, rec
	case <-time.After(2 * testutil.DefaultTimeout):
		t.Fatalf("no answer within %s", 2*testutil.DefaultTimeout)
	}
	return 0, automate.RunRecord{}
}

func (h *harness) health() automate.Health {
	h.t.Helper()
	r := h.do("GET", "/health", nil)
	var hl automate.Health
	if err := json.Unmarshal(r.body, &hl); err != nil {
		h.t.Fatalf("health: %d %s", r.status, r.body)
	}
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

func (h *harness) catalog() automate.CatalogResponse {
	h.t.Helper()
	r := h.do("GET", "/v1/automate/models", nil)
	var c automate.CatalogResponse
	if err := json.Unmarshal(r.body, &c); err != nil {
		h.t.Fatalf("catalog: %d %s", r.status, r.body)
	}
	return c
}

// waitCatalog waits until the catalog is ready (polled, as /health).
func (h *harness) waitCatalog() automate.CatalogResponse {
	h.t.Helper()
	var c automate.CatalogResponse
	testutil.Until(h.t, "the catalog to be ready", testutil.NoEvent,
		func() bool { c = h.catalog(); return c.Catalog.Status == automate.CatalogReady },
		func() string { return "catalog still " + string(c.Catalog.Status) })
	return c
}

func stepNamed(rec automate.RunRecord, tool string) (automate.Step, bool) {
	for _, s := range rec.Steps {
		if s.ToolName == tool {
			return s, true
		}
	}
	return automate.Step{}, false
}

func ptr[T any](v T) *T { return &v }
