package server_test

// Black-box tests of inline MCP servers (`mcpServers` of a run) against the
// real @modelcontextprotocol/server-everything from testdata/npm: stdio
// (plain node, and behind a shell wrapper that leaves a background child
// the way npx does), streamable HTTP behind a recording reverse proxy that
// demands the caller's header, requireApproval, disabledTools, and the
// chat route's service.mcpServers. Processes are found by a unique marker
// in their environment (every descendant inherits it), so "no process
// outlives the run" covers grandchildren too.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

const markerVar = "HUBGATE_MCP_TEST_MARKER"

// everythingStdio declares server-everything over stdio, started as
// `node dist/index.js stdio` with a fresh marker in its environment.
func everythingStdio(t *testing.T, name string) (map[string]any, string) {
	t.Helper()
	node := testenv.RequireNode(t)
	script := testenv.NpmBin(t, "@modelcontextprotocol/server-everything/dist/index.js")
	marker := markerVar + "=" + uuid.NewString()
	_, value, _ := strings.Cut(marker, "=")
	return map[string]any{
		"name": name, "description": "The MCP reference server with every feature", "transport": "stdio",
		"command": node, "args": []string{script, "stdio"}, "env": map[string]string{markerVar: value},
	}, marker
}

func TestInlineMcpStdioRunLeavesNoProcess(t *testing.T) {
	testenv.RequireProcScan(t)
	h := newHarness(t)
	ev, marker := everythingStdio(t, "everything")
	confirm := map[string]any{"name": "confirm", "description": "Asks the caller to go on"}

	// The run calls MCP tools, parks for a caller tool (the MCP server
	// stays up meanwhile), then calls MCP again on the same session.
	r, rec := h.run(map[string]any{
		"prompt": "Use the everything server\n" +
			`#!mcp everything echo {"message":"hi from mcp"}` + "\n" +
			"#!mcp everything get-env\n" +
			"#!tool confirm\n" +
			`#!mcp everything get-sum {"a":40,"b":2}` + "\n" +
			"#!answer echoed and summed",
		"mcpServers":  []any{ev},
		"clientTools": []any{confirm},
		"include":     map[string]bool{"events": false},
	})
	if r.status != 200 || rec.Status != automate.StatusAwaitingToolResults || len(rec.Steps) != 5 {
		t.Fatalf("first outcome %d %s", r.status, r.body)
	}
	echo := rec.Steps[0]
	if echo.Status != automate.StepSuccess || echo.ToolName != "mcp__everything__echo" || string(echo.ToolArgs) != `{"message":"hi from mcp"}` ||
		echo.ResultSummary != "Echo: hi from mcp" || echo.ProducedContent != "Echo: hi from mcp" {
		t.Errorf("echo step %+v", echo)
	}
	// The declared env reached the server process.
	if env := rec.Steps[1]; env.Status != automate.StepSuccess || !strings.Contains(env.ProducedContent, strings.TrimPrefix(marker, markerVar+"=")) {
		t.Errorf("get-env step: status %s, env of the server lacks the marker", env.Status)
	}
	// Parked: the server process is alive (so the check below is not vacuous).
	if pids := testenv.MarkedProcesses(t, marker); len(pids) == 0 {
		t.Fatal("no MCP server process found while the run is parked")
	}

	r, rec = h.resume(rec.ResumeToken, automate.TextResult(rec.ToolCalls[0].ID, "go on"))
	if r.status != 200 || rec.Status != automate.StatusCompleted || rec.Answer != "echoed and summed" {
		t.Fatalf("final outcome %d %s", r.status, r.body)
	}
	if sum := rec.Steps[3]; sum.Status != automate.StepSuccess || !strings.Contains(sum.ResultSummary, "42") {
		t.Errorf("get-sum after the park: %+v", sum)
	}
	testenv.WaitNoMarked(t, marker)
}

func TestInlineMcpStdioWrapperLeavesNoOrphan(t *testing.T) {
	testenv.RequireProcScan(t)
	h := newHarness(t)
	ev, marker := everythingStdio(t, "wrapped")
	// Like npx: a shell that leaves a background child and execs the server.
	script := ev["args"].([]string)[0]
	ev["args"] = []string{"-c", `sleep 600 & exec "$0" "$@"`, ev["command"].(string), script, "stdio"}
	ev["command"] = "/bin/sh"

	r, rec := h.run(map[string]any{
		"prompt":     "#!mcp wrapped echo {\"message\":\"through a wrapper\"}\n#!tool confirm\n#!answer ok",
		"mcpServers": []any{ev}, "clientTools": []any{map[string]any{"name": "confirm", "description": "go on"}},
	})
	if r.status != 200 || rec.Status != automate.StatusAwaitingToolResults || rec.Steps[0].ResultSummary != "Echo: through a wrapper" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if pids := testenv.MarkedProcesses(t, marker); len(pids) < 2 {
		t.Fatalf("want the server and the wrapper's background child while parked, found %v", pids)
	}
	r, rec = h.resume(rec.ResumeToken, automate.TextResult(rec.ToolCalls[0].ID, "ok"))
	if r.status != 200 || rec.Status != automate.StatusCompleted {
		t.Fatalf("%d %s", r.status, r.body)
	}
	testenv.WaitNoMarked(t, marker)
}

func TestInlineMcpFailedAndCanceledRunsLeaveNoProcess(t *testing.T) {
	testenv.RequireProcScan(t)
	h := newHarness(t)

	// A run that fails after an MCP call.
	ev, marker := everythingStdio(t, "everything")
	r, rec := h.run(map[string]any{
		"prompt":     "#!mcp everything echo {\"message\":\"before failing\"}\n#!fail EXECUTION_FAILED",
		"mcpServers": []any{ev},
	})
	if r.status != 500 || rec.Status != automate.StatusFailed || rec.Steps[0].ResultSummary != "Echo: before failing" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	testenv.WaitNoMarked(t, marker)

	// A parked run cancelled by force while its MCP server is up.
	ev, marker = everythingStdio(t, "everything")
	r, rec = h.run(map[string]any{
		"prompt":     "#!mcp everything echo {\"message\":\"then park\"}\n#!tool confirm",
		"mcpServers": []any{ev}, "clientTools": []any{map[string]any{"name": "confirm", "description": "go on"}},
	})
	if r.status != 200 || rec.Status != automate.StatusAwaitingToolResults {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if len(testenv.MarkedProcesses(t, marker)) == 0 {
		t.Fatal("no MCP server process while parked")
	}
	var cr automate.CancelResponse
	h.do("POST", "/v1/automate/cancel", map[string]bool{"force": true}).json(t, &cr)
	if !cr.Stopped {
		t.Fatalf("cancel %+v", cr)
	}
	testenv.WaitNoMarked(t, marker)
	h.waitFor("ready", func(hl automate.Health) bool { return !hl.Busy })
}

func TestInlineMcpRequireApprovalAndDisabledTools(t *testing.T) {
	h := newHarness(t)
	guarded, _ := everythingStdio(t, "guarded")
	guarded["requireApproval"] = true
	open, _ := everythingStdio(t, "open")
	open["disabledTools"] = []string{"echo"}
	prompt := `Check the policy` + "\n" +
		`#!mcp guarded echo {"message":"approved echo"}` + "\n" +
		`#!mcp open echo {"message":"disabled echo"}` + "\n" +
		`#!mcp open get-sum {"a":2,"b":3}` + "\n" +
		`#!answer policy checked`

	r, rec := h.run(map[string]any{"prompt": prompt, "mcpServers": []any{guarded, open}})
	if r.status != 200 || rec.Status != automate.StatusCompleted || rec.Answer != "policy checked" || len(rec.Steps) != 4 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	g := rec.Steps[0]
	if g.Status != automate.StepSkipped || !strings.HasPrefix(g.ResultSummary, "Rejected by Automate HTTP server policy") ||
		strings.Contains(g.ResultSummary, "Echo:") || g.ProducedContent != "" {
		t.Errorf("requireApproval without allowDestructiveTools: %+v", g)
	}
	d := rec.Steps[1]
	if d.Status != automate.StepFailed || strings.Contains(d.ResultSummary, "Echo:") || d.ProducedContent != "" {
		t.Errorf("disabled tool: %+v", d)
	}
	if s := rec.Steps[2]; s.Status != automate.StepSuccess || !strings.Contains(s.ResultSummary, "5") {
		t.Errorf("the server's other tools stay usable: %+v", s)
	}

	// allowDestructiveTools approves the requireApproval server.
	r, rec = h.run(map[string]any{"prompt": prompt, "mcpServers": []any{guarded, open}, "allowDestructiveTools": true})
	if r.status != 200 || rec.Steps[0].Status != automate.StepSuccess || rec.Steps[0].ResultSummary != "Echo: approved echo" {
		t.Errorf("approved: %d %+v", r.status, rec.Steps)
	}
	if rec.Steps[1].Status != automate.StepFailed {
		t.Errorf("disabledTools does not depend on allowDestructiveTools: %+v", rec.Steps[1])
	}
}

func TestInlineMcpThroughChatExtension(t *testing.T) {
	testenv.RequireProcScan(t)
	h := newHarness(t)
	ev, marker := everythingStdio(t, "everything")
	r, cc := h.chat(map[string]any{
		"messages": []any{user("Echo it\n#!mcp everything echo {\"message\":\"via chat\"}\n#!answer sent")},
		"service":  map[string]any{"mcpServers": []any{ev}},
	})
	if r.status != 200 || cc.Choices[0].Message.Content != "sent" || cc.Service.Steps[0].ResultSummary != "Echo: via chat" ||
		cc.Service.Steps[0].ToolName != "mcp__everything__echo" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	testenv.WaitNoMarked(t, marker)
}

// mcpProxy is a reverse proxy in front of an MCP HTTP server that demands
// a header and records what crossed it.
type mcpProxy struct {
	mu       sync.Mutex
	requests []string        // "METHOD" or "POST <json-rpc method> [<tool>]"
	rejected int             // requests without the right header
	arrived  testutil.Signal // each request
}

func (p *mcpProxy) calls(tool string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.requests {
		if r == "POST tools/call "+tool {
			n++
		}
	}
	return n
}

func (p *mcpProxy) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

func (p *mcpProxy) count(prefix string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.requests {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

func newMcpProxy(t *testing.T, target, header, value string) (*mcpProxy, string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &mcpProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(header) != value {
			p.mu.Lock()
			p.rejected++
			p.mu.Unlock()
			http.Error(w, "missing caller header", http.StatusUnauthorized)
			return
		}
		entry := r.Method
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			json.Unmarshal(body, &msg)
			entry += " " + msg.Method
			if msg.Params.Name != "" {
				entry += " " + msg.Params.Name
			}
		}
		p.mu.Lock()
		p.requests = append(p.requests, entry)
		p.mu.Unlock()
		p.arrived.Notify()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return p, ts.URL
}

func TestInlineMcpStreamableHTTPWithHeaders(t *testing.T) {
	script := testenv.NpmBin(t, "@modelcontextprotocol/server-everything/dist/index.js")
	port, _ := testenv.StartNodeServer(t, nil, script, "streamableHttp")
	upstream := "http://127.0.0.1:" + strconv.Itoa(port)

	const header, secret = "X-Caller-Auth", "caller-secret-7f3a"
	remote, remoteURL := newMcpProxy(t, upstream, header, secret)
	guardedP, guardedURL := newMcpProxy(t, upstream, header, secret)
	h := newHarness(t)
	servers := []any{
		map[string]any{"name": "remote", "description": "everything over streamable HTTP", "transport": "http",
			"url": remoteURL + "/mcp", "headers": map[string]string{header: secret}, "disabledTools": []string{"get-sum"}},
		map[string]any{"name": "guarded", "description": "everything, approval required", "transport": "http",
			"url": guardedURL + "/mcp", "headers": map[string]string{header: secret}, "requireApproval": true},
	}
	r, rec := h.run(map[string]any{
		"prompt": "Over HTTP\n" +
			`#!mcp remote echo {"message":"hi over http"}` + "\n" +
			`#!mcp remote get-sum {"a":1,"b":1}` + "\n" +
			`#!mcp guarded echo {"message":"must not run"}` + "\n" +
			"#!answer http done",
		"mcpServers": servers,
	})
	if r.status != 200 || rec.Status != automate.StatusCompleted || len(rec.Steps) != 4 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if s := rec.Steps[0]; s.Status != automate.StepSuccess || s.ResultSummary != "Echo: hi over http" || s.ToolName != "mcp__remote__echo" {
		t.Errorf("echo over http: %+v", s)
	}
	if s := rec.Steps[1]; s.Status != automate.StepFailed {
		t.Errorf("disabled get-sum: %+v", s)
	}
	if s := rec.Steps[2]; s.Status != automate.StepSkipped || !strings.HasPrefix(s.ResultSummary, "Rejected by Automate HTTP server policy") {
		t.Errorf("guarded echo: %+v", s)
	}
	// What reached the servers: the echo call, never the disabled or the
	// rejected one, every request with the caller's header.
	if n := remote.calls("echo"); n != 1 {
		t.Errorf("echo calls through the proxy = %d, want 1", n)
	}
	if n := remote.calls("get-sum"); n != 0 {
		t.Errorf("a disabled tool was called %d times", n)
	}
	if n := guardedP.calls("echo"); n != 0 {
		t.Errorf("a rejected tool was called %d times", n)
	}
	if remote.count("POST initialize") != 1 {
		t.Errorf("initialize requests: %v", remote.seen())
	}
	// The session is closed when the run ends (the SDK's closing DELETE),
	// with the header too.
	testutil.Until(t, "the MCP session's closing DELETE", remote.arrived.C(), func() bool { return remote.count("DELETE") > 0 },
		func() string { return fmt.Sprintf("requests: %v", remote.seen()) })
	if remote.count("DELETE") != 1 {
		t.Errorf("the MCP session was not closed at the end of the run: %v", remote.seen())
	}
	for _, p := range []*mcpProxy{remote, guardedP} {
		p.mu.Lock()
		if p.rejected != 0 {
			t.Errorf("%d requests came without the caller's header", p.rejected)
		}
		p.mu.Unlock()
	}

	// Approved with allowDestructiveTools, the guarded server is called.
	r, rec = h.run(map[string]any{
		"prompt":     `#!mcp guarded echo {"message":"now approved"}`,
		"mcpServers": servers, "allowDestructiveTools": true,
	})
	if r.status != 200 || rec.Steps[0].ResultSummary != "Echo: now approved" || guardedP.calls("echo") != 1 {
		t.Errorf("approved guarded echo: %d %+v", r.status, rec.Steps)
	}

	// Without the header the server refuses: the step fails, the run goes on.
	bad := []any{map[string]any{"name": "remote", "description": "no header", "transport": "http", "url": remoteURL + "/mcp"}}
	remote.mu.Lock()
	before := remote.rejected
	remote.mu.Unlock()
	r, rec = h.run(map[string]any{"prompt": `#!mcp remote echo {"message":"x"}` + "\n#!answer went on", "mcpServers": bad})
	if r.status != 200 || rec.Answer != "went on" || rec.Steps[0].Status != automate.StepFailed {
		t.Errorf("headerless server: %d %+v", r.status, rec.Steps)
	}
	remote.mu.Lock()
	if remote.rejected == before {
		t.Error("the headerless connection never reached the proxy")
	}
	remote.mu.Unlock()
}

func TestInlineMcpSSEWithHeaders(t *testing.T) {
	script := testenv.NpmBin(t, "@modelcontextprotocol/server-everything/dist/index.js")
	port, _ := testenv.StartNodeServer(t, nil, script, "sse")
	const header, secret = "Authorization", "Bearer sse-caller-token-91c2"
	proxy, proxyURL := newMcpProxy(t, "http://127.0.0.1:"+strconv.Itoa(port), header, secret)
	h := newHarness(t)
	r, rec := h.run(map[string]any{
		"prompt": `#!mcp legacy echo {"message":"hi over sse"}` + "\n#!answer sse done",
		"mcpServers": []any{map[string]any{"name": "legacy", "description": "everything over the legacy SSE transport", "transport": "sse",
			"url": proxyURL + "/sse", "headers": map[string]string{header: secret}}},
	})
	if r.status != 200 || rec.Status != automate.StatusCompleted || rec.Steps[0].Status != automate.StepSuccess ||
		rec.Steps[0].ResultSummary != "Echo: hi over sse" || rec.Steps[0].ToolName != "mcp__legacy__echo" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if proxy.count("GET") == 0 || proxy.calls("echo") != 1 {
		t.Errorf("requests through the proxy: %v", proxy.seen())
	}
	proxy.mu.Lock()
	if proxy.rejected != 0 {
		t.Errorf("%d requests came without the caller's header", proxy.rejected)
	}
	proxy.mu.Unlock()
}
