//go:build unix

package llm_test

// Inline and configured MCP servers against the real
// @modelcontextprotocol/server-everything from testdata/npm, on all three
// transports, driven by the fake upstream through the Automate server.

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/testenv"
)

const markerVar = "HUBGATE_LLM_TEST_MARKER"

func everythingScript(t *testing.T) string {
	return testenv.NpmBin(t, "@modelcontextprotocol/server-everything/dist/index.js")
}

// startEverything starts server-everything over HTTP (mode
// streamableHttp or sse) on a port it binds itself and returns the port
// (testenv.StartNodeServer reads it from the server, not from its log).
func startEverything(t *testing.T, mode string) int {
	t.Helper()
	port, _ := testenv.StartNodeServer(t, nil, everythingScript(t), mode)
	return port
}

func offeredTool(req seenRequest, name string) (seenTool, bool) {
	for _, t := range req.Tools {
		if t.Function.Name == name {
			return t, true
		}
	}
	return seenTool{}, false
}

// TestInlineMcpAllTransports: the model sees each server's tools as
// mcp__<server>__<tool> (minus disabledTools, with their schemas), calls
// them, and invalid arguments never reach the server.
func TestInlineMcpAllTransports(t *testing.T) {
	node := testenv.RequireNode(t)
	script := everythingScript(t)
	httpPort, ssePort := startEverything(t, "streamableHttp"), startEverything(t, "sse")
	marker := markerVar + "=" + uuid.NewString()
	markerValue := strings.TrimPrefix(marker, markerVar+"=")

	servers := []any{
		map[string]any{"name": "local", "description": "everything over stdio", "transport": "stdio",
			"command": node, "args": []string{script, "stdio"}, "env": map[string]string{markerVar: markerValue}, "disabledTools": []string{"get-env"}},
		map[string]any{"name": "web", "description": "everything over streamable HTTP", "transport": "http",
			"url": "http://127.0.0.1:" + strconv.Itoa(httpPort) + "/mcp"},
		map[string]any{"name": "legacy", "description": "everything over SSE", "transport": "sse",
			"url": "http://127.0.0.1:" + strconv.Itoa(ssePort) + "/sse"},
	}
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	park := map[string]any{"name": "confirm", "description": "ask the caller"}
	up.script(
		reply{content: "Using all three servers.", calls: []fakeCall{
			call("e1", "mcp__local__echo", map[string]any{"message": "over stdio"}),
			call("e2", "mcp__web__get-sum", map[string]any{"a": 40, "b": 2}),
			call("e3", "mcp__legacy__echo", map[string]any{"message": "over sse"}),
			call("e4", "mcp__web__echo", map[string]any{"text": "wrong field"}),
			call("e5", "confirm", map[string]any{}),
		}},
		reply{content: "all done"},
	)
	st, rec := h.run(map[string]any{"prompt": "use the servers", "mcpServers": servers, "clientTools": []any{park}})
	if st != 200 || rec.Status != automate.StatusAwaitingToolResults {
		t.Fatalf("%d %+v", st, rec)
	}
	// Parked: the stdio server is alive, and so are the SDK's goroutines
	// (the leftover check below is not vacuous).
	if len(testenv.MarkedProcesses(t, marker)) == 0 {
		t.Fatal("no stdio server process while parked")
	}
	if len(leftovers()) == 0 {
		t.Fatal("no MCP goroutine seen while parked")
	}
	first := up.seen()[0]
	echo, ok := offeredTool(first, "mcp__local__echo")
	if !ok || !strings.Contains(string(echo.Function.Parameters), `"message"`) || echo.Function.Description == "" {
		t.Errorf("echo offered as %+v", echo)
	}
	if _, ok := offeredTool(first, "mcp__local__get-env"); ok {
		t.Errorf("a disabled tool was offered")
	}
	for _, n := range []string{"mcp__web__get-env", "mcp__legacy__get-sum"} {
		if _, ok := offeredTool(first, n); !ok {
			t.Errorf("%s not offered", n)
		}
	}

	st, rec = h.resume(rec.ResumeToken, automate.TextResult(rec.ToolCalls[0].ID, "go"))
	if st != 200 || rec.Status != automate.StatusCompleted || len(rec.Steps) != 5 {
		t.Fatalf("%d %+v", st, rec)
	}
	if s := rec.Steps[0]; s.Status != automate.StepSuccess || s.ResultSummary != "Echo: over stdio" || s.Title != "Call echo of MCP server local" || s.ProducedContentID != "s1" {
		t.Errorf("stdio %+v", s)
	}
	if s := rec.Steps[1]; s.Status != automate.StepSuccess || !strings.Contains(s.ResultSummary, "42") {
		t.Errorf("http %+v", s)
	}
	if s := rec.Steps[2]; s.Status != automate.StepSuccess || s.ResultSummary != "Echo: over sse" {
		t.Errorf("sse %+v", s)
	}
	if s := rec.Steps[3]; s.Status != automate.StepFailed || !strings.Contains(s.ResultSummary, "invalid arguments for mcp__web__echo") {
		t.Errorf("invalid call %+v", s)
	}
	if got, _ := up.seen()[1].toolResult("e1"); got != "Echo: over stdio" {
		t.Errorf("model saw %q", got)
	}
	testenv.WaitNoMarked(t, marker)
}

// TestConfiguredMcpServers: configured servers need approval by default;
// the relevance step connects only the relevant ones (selected ones always).
func TestConfiguredMcpServers(t *testing.T) {
	node := testenv.RequireNode(t)
	script := everythingScript(t)
	usedMarker, unusedMarker := uuid.NewString(), uuid.NewString()
	t.Setenv("HUBGATE_LLM_TEST_REF", usedMarker)
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url(), func(o *harnessOpts) {
		o.engine.McpServers = []automate.InlineMcpServer{
			{Name: "everything", Description: "Echo messages and add numbers", Transport: "stdio", Command: node, Args: []string{script, "stdio"},
				Env: map[string]string{markerVar: "${HUBGATE_LLM_TEST_REF}"}, RequireApproval: true},
			{Name: "calendar", Description: "Calendar events and meetings", Transport: "stdio", Command: node, Args: []string{script, "stdio"},
				Env: map[string]string{markerVar: unusedMarker}, RequireApproval: false},
		}
		o.server.ConfiguredMcpServers = []string{"everything", "calendar"}
	})
	up.script(
		reply{calls: []fakeCall{call("c1", "mcp__everything__echo", map[string]any{"message": "needs approval"}), call("c2", "mcp__everything__get-env", map[string]any{})}},
		reply{content: "rejected"},
	)
	st, rec := h.run(map[string]any{"prompt": "echo a message and add numbers"})
	if st != 200 || len(rec.Steps) != 2 {
		t.Fatalf("%d %+v", st, rec)
	}
	if s := rec.Steps[0]; s.Status != automate.StepSkipped || !strings.HasPrefix(s.ResultSummary, "Rejected by Automate HTTP server policy") {
		t.Errorf("unapproved configured call %+v", s)
	}
	names := up.seen()[0].toolNames()
	if !strings.Contains(strings.Join(names, ","), "mcp__everything__echo") || strings.Contains(strings.Join(names, ","), "mcp__calendar__") {
		t.Errorf("offered %v", names)
	}

	up.script(
		reply{calls: []fakeCall{call("c3", "mcp__everything__get-env", map[string]any{})}},
		reply{calls: []fakeCall{call("c4", "mcp__calendar__echo", map[string]any{"message": "selected"})}},
		reply{content: "approved"},
	)
	st, rec = h.run(map[string]any{"prompt": "echo a message and add numbers", "allowDestructiveTools": true, "selectedMcpServerIds": []string{"calendar"}})
	if st != 200 || len(rec.Steps) != 2 {
		t.Fatalf("%d %+v", st, rec)
	}
	env := rec.Steps[0]
	if env.Status != automate.StepSuccess || !strings.Contains(env.ProducedContent, usedMarker) {
		t.Errorf("approved call (with the ${VAR} env reference expanded) %+v", env.Status)
	}
	var vars map[string]string
	if json.Unmarshal([]byte(env.ProducedContent), &vars) == nil {
		for k := range vars {
			if strings.HasPrefix(k, "HUBGATE_") && (strings.Contains(k, "KEY") || strings.Contains(k, "TOKEN")) {
				t.Errorf("a hubgate secret reached the MCP server: %s", k)
			}
		}
	}
	if s := rec.Steps[1]; s.Status != automate.StepSuccess || s.ResultSummary != "Echo: selected" {
		t.Errorf("selected configured server %+v", s)
	}
	testenv.WaitNoMarked(t, markerVar+"="+usedMarker)
	testenv.WaitNoMarked(t, markerVar+"="+unusedMarker)

	// An inline server may not take a configured name.
	r := h.do("POST", "/v1/runs", map[string]any{"prompt": "x", "mcpServers": []any{map[string]any{"name": "calendar", "description": "d", "transport": "stdio", "command": node}}})
	if r.status != 400 || !strings.Contains(string(r.body), "collides with an MCP server already configured") {
		t.Errorf("%d %s", r.status, r.body)
	}
}
