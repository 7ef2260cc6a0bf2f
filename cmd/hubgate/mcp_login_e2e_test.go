package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/internal/testutil/mcpauthfake"
)

// `hubgate mcp login <url>` signs in to a remote MCP server that needs
// OAuth (a loopback authorization server; BROWSER follows the address as
// a browser would), keeps the tokens in the secret store, and a run the
// daemon starts from a hub command then calls the server's tool with
// them; before, the run's step names the command to run. An unknown name is a usage error naming the configured servers.
func TestMcpLoginThenARunCallsTheServer(t *testing.T) {
	as := mcpauthfake.NewAuthServer(t)
	mcpURL := mcpauthfake.ProtectedMCP(t, as)
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: fmt.Sprintf(`rules:
  - name: who
    match: {command: who}
    run:
      prompt: "who\n#!mcp prot whoami\n#!answer ${result}"
      mcp_servers:
        - name: prot
          description: needs a sign-in
          transport: http
          url: %q
`, mcpURL)})

	startListening(t, s)
	lines, _ := startWatch(t, s, "--history", "50")
	nextLine(t, lines, "the hub state", func(e bridge.Event) bool { return e.Kind == bridge.EventHub && e.Hub.Status == "listening" })
	send := func() {
		t.Helper()
		if r := runCmd(t, env(t), "", "mock", "send", "--url", h.url, "--device", h.id(), "--command", "who"); r.code != 0 {
			t.Fatalf("mock send: %+v", r)
		}
	}

	// Before signing in: the server's step fails, naming the command.
	send()
	st := nextLine(t, lines, "the failed MCP step", func(e bridge.Event) bool {
		return e.Kind == bridge.EventStep && e.Step.Status == "failed"
	}).event
	if !strings.Contains(st.Step.ResultSummary, "hubgate mcp login prot") {
		t.Fatalf("failed step %+v does not name the sign-in command", st.Step)
	}
	nextLine(t, lines, "the first run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished })

	if r := runCmd(t, s.environ(), "", "--config", s.configPath, "mcp", "login", "nosuch"); r.code != ExitUsage || !strings.Contains(r.stderr, `no MCP server named "nosuch"`) {
		t.Fatalf("mcp login nosuch: %+v", r)
	}
	r := runCmd(t, append(s.environ(), "BROWSER=curl -sfL -o /dev/null"), "", "--config", s.configPath, "mcp", "login", mcpURL)
	if r.code != 0 || !strings.Contains(r.stdout, "Signed in to") || !strings.Contains(r.stderr, as.URL()+"/authorize?") {
		t.Fatalf("mcp login: %+v", r)
	}
	if strings.Contains(r.stdout+r.stderr, "access-") || strings.Contains(r.stdout+r.stderr, "refresh-") {
		t.Fatalf("mcp login printed a token: %+v", r)
	}

	send()
	fin := nextLine(t, lines, "the run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished }).event
	if fin.Status != "completed" || fin.Answer != "signed in" {
		t.Fatalf("finished event %+v", fin)
	}
}
