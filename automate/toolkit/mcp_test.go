package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const everything = "@modelcontextprotocol/server-everything/dist/index.js"

func stdioEverything(t *testing.T, name string) automate.InlineMcpServer {
	node := testenv.RequireNode(t)
	return automate.InlineMcpServer{
		Name: name, Description: "everything", Transport: "stdio",
		Command: node, Args: []string{testenv.NpmBin(t, everything), "stdio"},
	}
}

func exposedNames(tools []McpTool) map[string]McpTool {
	m := map[string]McpTool{}
	for _, t := range tools {
		m[t.Exposed] = t
	}
	return m
}

// stdioPgids returns the process group of every connected stdio server.
func stdioPgids(p *McpPool) []int {
	var out []int
	for _, c := range p.conns {
		if c != nil && c.group != nil {
			out = append(out, c.group.ID())
		}
	}
	return out
}

func TestMcpStdioEverything(t *testing.T) {
	srv := stdioEverything(t, "ev")
	srv.Env = map[string]string{"HUBGATE_MCP_TEST": "from-server-env"}
	srv.DisabledTools = []string{"get-sum"}
	ctx := context.Background()
	pool := ConnectMcp(ctx, []automate.InlineMcpServer{srv}, McpConfig{Env: append(os.Environ(), "HUBGATE_BASE=from-base")})
	closed := false
	defer func() {
		if !closed {
			pool.Close()
		}
	}()
	if errs := pool.Errors(); len(errs) != 0 {
		t.Fatalf("connect errors: %v", errs)
	}
	tools := exposedNames(pool.Tools())
	echo, ok := tools["mcp__ev__echo"]
	if !ok || echo.Server != "ev" || echo.Name != "echo" || !strings.Contains(string(echo.InputSchema), "message") {
		t.Fatalf("echo tool: %+v (have %d tools)", echo, len(tools))
	}
	if _, ok := tools["mcp__ev__get-sum"]; ok {
		t.Fatal("disabled tool get-sum is listed")
	}

	res, err := pool.Call(ctx, "ev", "echo", json.RawMessage(`{"message":"hi there"}`))
	if err != nil || res.IsError || res.Text != "Echo: hi there" {
		t.Fatalf("echo: %+v %v", res, err)
	}
	// nil arguments go out as {}: get-env takes none.
	res, err = pool.Call(ctx, "ev", "get-env", nil)
	if err != nil || res.IsError {
		t.Fatalf("get-env: %+v %v", res, err)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(res.Text), &env); err != nil {
		t.Fatalf("get-env text: %v", err)
	}
	if env["HUBGATE_MCP_TEST"] != "from-server-env" || env["HUBGATE_BASE"] != "from-base" {
		t.Fatalf("server env misses the base or server entries")
	}
	// Bad arguments reach the server, which reports a failed call.
	res, err = pool.Call(ctx, "ev", "echo", json.RawMessage(`{"nope":1}`))
	if err != nil || !res.IsError {
		t.Fatalf("echo without message: %+v %v", res, err)
	}
	if _, err := pool.Call(ctx, "ev", "get-sum", json.RawMessage(`{"a":1,"b":2}`)); !errors.Is(err, ErrMcpToolUnavailable) {
		t.Fatalf("disabled tool: %v", err)
	}
	if _, err := pool.Call(ctx, "ev", "no-such-tool", nil); !errors.Is(err, ErrMcpToolUnavailable) {
		t.Fatalf("unknown tool: %v", err)
	}
	if _, err := pool.Call(ctx, "other", "echo", nil); !errors.Is(err, ErrMcpServerUnknown) {
		t.Fatalf("unknown server: %v", err)
	}
	var ae *ArgsError
	if _, err := pool.Call(ctx, "ev", "echo", json.RawMessage(`[1]`)); !errors.As(err, &ae) {
		t.Fatalf("array args: %v", err)
	}

	pgids := stdioPgids(pool)
	if len(pgids) != 1 {
		t.Fatalf("pgids %v", pgids)
	}
	start := time.Now()
	pool.Close()
	closed = true
	t.Logf("Close took %s", time.Since(start))
	for _, g := range pgids {
		if err := testenv.WaitGroupGone(g, testutil.DefaultTimeout); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Call(ctx, "ev", "echo", nil); !errors.Is(err, ErrMcpClosed) {
		t.Fatalf("after close: %v", err)
	}
	pool.Close() // idempotent
}

// A wrapper that leaves a process behind in its group (as npx does with the
// real server) must not outlive Close.
func TestMcpStdioWrapperOrphansAreKilled(t *testing.T) {
	node := testenv.RequireNode(t)
	script := testenv.NpmBin(t, everything)
	dir := t.TempDir()
	srv := automate.InlineMcpServer{
		Name: "wrapped", Description: "d", Transport: "stdio", Command: "/bin/sh",
		Args: []string{"-c", `sleep 300 & echo $! > "$PIDDIR/bg.tmp"; mv "$PIDDIR/bg.tmp" "$PIDDIR/bg"; exec "$NODE" "$SCRIPT" stdio`},
		Env:  map[string]string{"PIDDIR": dir, "NODE": node, "SCRIPT": script},
	}
	pool := ConnectMcp(context.Background(), []automate.InlineMcpServer{srv}, McpConfig{})
	if errs := pool.Errors(); len(errs) != 0 {
		pool.Close()
		t.Fatalf("connect: %v", errs)
	}
	res, err := pool.Call(context.Background(), "wrapped", "get-sum", json.RawMessage(`{"a":2,"b":40}`))
	if err != nil || !strings.Contains(res.Text, "42") {
		pool.Close()
		t.Fatalf("get-sum: %+v %v", res, err)
	}
	bg := testenv.ReadPidFile(t, filepath.Join(dir, "bg"))
	pgids := stdioPgids(pool)
	pool.Close()
	if err := testenv.WaitPidGone(bg, testutil.DefaultTimeout); err != nil {
		t.Fatalf("orphan survived Close: %v", err)
	}
	for _, g := range pgids {
		if err := testenv.WaitGroupGone(g, testutil.DefaultTimeout); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMcpFailuresAreReportedPerServer(t *testing.T) {
	good := stdioEverything(t, "good")
	missing := automate.InlineMcpServer{Name: "missing", Description: "d", Transport: "stdio", Command: "/nonexistent/hubgate-mcp"}
	crash := automate.InlineMcpServer{Name: "crash", Description: "d", Transport: "stdio", Command: "/bin/sh", Args: []string{"-c", "echo boom-on-stderr >&2; exit 7"}}
	refused := automate.InlineMcpServer{Name: "refused", Description: "d", Transport: "http", URL: "http://" + testenv.RefusedAddr(t) + "/mcp"}
	start := time.Now()
	pool := ConnectMcp(context.Background(), []automate.InlineMcpServer{good, missing, crash, refused}, McpConfig{ConnectTimeout: time.Minute})
	t.Logf("connect took %s", time.Since(start))
	pgids := stdioPgids(pool)
	if len(pgids) != 2 { // good and crash started a process, missing did not
		t.Errorf("pgids %v", pgids)
	}
	defer func() {
		pool.Close()
		for _, g := range pgids {
			if err := testenv.WaitGroupGone(g, testutil.DefaultTimeout); err != nil {
				t.Error(err)
			}
		}
	}()
	errs := pool.Errors()
	if _, ok := errs["good"]; ok || len(errs) != 3 {
		t.Fatalf("errors: %v", errs)
	}
	if !strings.Contains(errs["crash"].Error(), "boom-on-stderr") {
		t.Errorf("crash error lacks stderr: %v", errs["crash"])
	}
	for name := range errs {
		if _, err := pool.Call(context.Background(), name, "echo", nil); !errors.Is(err, ErrMcpServerUnavailable) {
			t.Errorf("%s: call %v", name, err)
		}
	}
	for _, tool := range pool.Tools() {
		if tool.Server != "good" {
			t.Fatalf("tool of a failed server: %+v", tool)
		}
	}
	if res, err := pool.Call(context.Background(), "good", "echo", json.RawMessage(`{"message":"still here"}`)); err != nil || res.Text != "Echo: still here" {
		t.Fatalf("good server: %+v %v", res, err)
	}
}

// headerRecorder is a reverse proxy in front of a node server that records
// the X-Test-Auth header of every request by method.
type headerRecorder struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (h *headerRecorder) proxy(t *testing.T, port int) *httptest.Server {
	target, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(port))
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen[r.Method] = append(h.seen[r.Method], r.Header.Get("X-Test-Auth"))
		h.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestMcpHTTPAndSSEEverything(t *testing.T) {
	script := testenv.NpmBin(t, everything)
	for _, tc := range []struct{ transport, mode, path string }{
		{"http", "streamableHttp", "/mcp"},
		{"sse", "sse", "/sse"},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			port, _ := testenv.StartNodeServer(t, nil, script, tc.mode)
			rec := &headerRecorder{seen: map[string][]string{}}
			front := rec.proxy(t, port)
			srv := automate.InlineMcpServer{
				Name: "remote", Description: "d", Transport: tc.transport, URL: front.URL + tc.path,
				Headers: map[string]string{"X-Test-Auth": "caller-secret"},
			}
			pool := ConnectMcp(context.Background(), []automate.InlineMcpServer{srv}, McpConfig{})
			if errs := pool.Errors(); len(errs) != 0 {
				pool.Close()
				t.Fatalf("connect: %v", errs)
			}
			// The session outlives the connect timeout's context: call after
			// a pause longer than nothing at all, on the live stream.
			res, err := pool.Call(context.Background(), "remote", "get-sum", json.RawMessage(`{"a":20,"b":22}`))
			if err != nil || res.IsError || !strings.Contains(res.Text, "42") {
				pool.Close()
				t.Fatalf("get-sum: %+v %v", res, err)
			}
			if _, ok := exposedNames(pool.Tools())["mcp__remote__echo"]; !ok {
				t.Fatal("echo not listed")
			}
			pool.Close()
			rec.mu.Lock()
			defer rec.mu.Unlock()
			n := 0
			for method, vals := range rec.seen {
				for _, v := range vals {
					n++
					if v != "caller-secret" {
						t.Errorf("%s request without the header (got %q)", method, v)
					}
				}
			}
			if len(rec.seen["POST"]) < 3 {
				t.Errorf("expected several POSTs, saw %v", rec.seen)
			}
			if tc.transport == "sse" && len(rec.seen["GET"]) == 0 {
				t.Errorf("sse: no GET stream seen")
			}
			t.Logf("%d requests all carried the header: %v", n, methodsOf(rec.seen))
		})
	}
}

func methodsOf(m map[string][]string) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[k] = len(v)
	}
	return out
}

func TestMcpHTTPConnectTimeout(t *testing.T) {
	// A listener that accepts and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	for _, tr := range []string{"http", "sse"} {
		srv := automate.InlineMcpServer{Name: "silent", Description: "d", Transport: tr, URL: "http://" + l.Addr().String() + "/mcp"}
		// The server never answers: only the connect timeout ends the
		// connect, and its error says so.
		connected := make(chan *McpPool, 1)
		go func() {
			connected <- ConnectMcp(context.Background(), []automate.InlineMcpServer{srv}, McpConfig{ConnectTimeout: 500 * time.Millisecond})
		}()
		var pool *McpPool
		select {
		case pool = <-connected:
		case <-time.After(testutil.DefaultTimeout):
			t.Fatalf("timed out waiting for %s connect to give up on a silent server", tr)
		}
		pool.Close()
		err := pool.Errors()["silent"]
		if err == nil || !strings.Contains(err.Error(), "timed out") {
			t.Fatalf("%s: %v", tr, err)
		}
	}
}

func TestMcpStdioConnectTimeout(t *testing.T) {
	hang := automate.InlineMcpServer{Name: "hang", Description: "d", Transport: "stdio", Command: "/bin/sh", Args: []string{"-c", "exec sleep 300"}}
	pool := ConnectMcp(context.Background(), []automate.InlineMcpServer{hang}, McpConfig{ConnectTimeout: 500 * time.Millisecond})
	pgids := stdioPgids(pool)
	if len(pgids) != 1 {
		t.Fatalf("the hanging server's process group is not tracked: %v", pgids)
	}
	pool.Close()
	if err := pool.Errors()["hang"]; err == nil || !strings.Contains(err.Error(), "timed out after 500ms") {
		t.Fatalf("%v", err)
	}
	for _, g := range pgids {
		if err := testenv.WaitGroupGone(g, testutil.DefaultTimeout); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMcpConnectHonoursCallerContext(t *testing.T) {
	hang := automate.InlineMcpServer{Name: "hang", Description: "d", Transport: "stdio", Command: "/bin/sh", Args: []string{"-c", "exec sleep 300"}}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	pool := ConnectMcp(ctx, []automate.InlineMcpServer{hang}, McpConfig{ConnectTimeout: time.Minute})
	pgids := stdioPgids(pool)
	if len(pgids) != 1 {
		t.Fatalf("the hanging server's process group is not tracked: %v", pgids)
	}
	pool.Close()
	if err := pool.Errors()["hang"]; !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	for _, g := range pgids {
		if err := testenv.WaitGroupGone(g, testutil.DefaultTimeout); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResultText(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "one"},
		&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///x", Text: "embedded"}},
		&mcp.ResourceLink{URI: "file:///y"},
	}}
	if got := ResultText(res); got != "one\n[image image/png]\nembedded\n[resource link file:///y]" {
		t.Fatalf("%q", got)
	}
	if got := ResultText(&mcp.CallToolResult{StructuredContent: json.RawMessage(`{ "a": 1 }`)}); got != `{"a":1}` {
		t.Fatalf("structured: %q", got)
	}
	if ResultText(nil) != "" {
		t.Fatal("nil")
	}
}

// TestTransportErrorsLeaveTheURLOut: a server's URL may carry a key in its
// query; an error of the HTTP client does not repeat it.
func TestTransportErrorsLeaveTheURLOut(t *testing.T) {
	refuse := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("connection refused")
	})}
	const u = "http://mcp.invalid/mcp?api_key=sekrit-123"
	for _, tr := range []string{"http", "sse"} {
		srv := automate.InlineMcpServer{Name: "keyed", Description: "d", Transport: tr, URL: u}
		pool := ConnectMcp(context.Background(), []automate.InlineMcpServer{srv}, McpConfig{HTTPClient: refuse, ConnectTimeout: 5 * time.Second})
		pool.Close()
		err := pool.Errors()["keyed"]
		if err == nil || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("%s: %v", tr, err)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
