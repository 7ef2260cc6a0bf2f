package scripted

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

// wrappedEverything is server-everything over stdio behind a shell wrapper
// that records its process group and leaves a background process in it,
// as npx-style wrappers do.
func wrappedEverything(t *testing.T, name, dir string) automate.InlineMcpServer {
	node := testenv.RequireNode(t)
	script := testenv.NpmBin(t, "@modelcontextprotocol/server-everything/dist/index.js")
	return automate.InlineMcpServer{
		Name: name, Description: "everything", Transport: "stdio", Command: "/bin/sh",
		Args: []string{"-c", `echo $$ > "$PIDDIR/` + name + `.pgid.tmp"; mv "$PIDDIR/` + name + `.pgid.tmp" "$PIDDIR/` + name + `.pgid"
sleep 300 & echo $! > "$PIDDIR/` + name + `.bg.tmp"; mv "$PIDDIR/` + name + `.bg.tmp" "$PIDDIR/` + name + `.bg"
exec "$NODE" "$SCRIPT" stdio`},
		Env: map[string]string{"PIDDIR": dir, "NODE": node, "SCRIPT": script},
	}
}

func TestMcpAgainstServerEverything(t *testing.T) {
	dir := t.TempDir()
	ev := wrappedEverything(t, "ev", dir)
	ev.DisabledTools = []string{"get-env"}
	guarded := wrappedEverything(t, "guarded", dir)
	guarded.RequireApproval = true
	broken := automate.InlineMcpServer{Name: "broken", Description: "d", Transport: "stdio", Command: "/nonexistent/mcp-server"}

	e := newEngine(Config{MCPConnectTimeout: time.Minute})

	// A run without #!mcp starts no server.
	tk := task("nothing to call")
	tk.McpServers = []automate.InlineMcpServer{ev}
	mustRun(t, e, tk, newEnv())
	if _, err := os.Stat(filepath.Join(dir, "ev.pgid")); !os.IsNotExist(err) {
		t.Fatal("an MCP server was started by a run without #!mcp")
	}

	env := newEnv()
	tk = task(`Use the servers
#!mcp ev echo {"message":"hello from the script"}
#!mcp ev get-sum {"a": 40, "b": 2}
#!mcp ev get-env
#!mcp ev echo {"wrong":"args"}
#!mcp guarded echo {"message":"x"}
#!mcp broken echo {}
#!mcp nobody echo {}
#!answer done`)
	tk.McpServers = []automate.InlineMcpServer{ev, guarded, broken}
	res := mustRun(t, e, tk, env)
	if res.Status != automate.StatusCompleted || res.Answer != "done" {
		t.Fatalf("%+v", res)
	}
	s := env.stepList()
	if s[0].Status != "success" || s[0].ResultSummary != "Echo: hello from the script" || s[0].ProducedContent != "Echo: hello from the script" ||
		s[0].ToolName != "mcp__ev__echo" || string(s[0].ToolArgs) != `{"message":"hello from the script"}` || s[0].ProducedContentID != "s1" {
		t.Fatalf("echo step %+v", s[0])
	}
	if s[1].Status != "success" || !strings.Contains(s[1].ResultSummary, "42") {
		t.Fatalf("get-sum step %+v", s[1])
	}
	if s[2].Status != "failed" || !strings.Contains(s[2].ResultSummary, "disabledTools") {
		t.Fatalf("disabled tool step %+v", s[2])
	}
	if s[3].Status != "failed" || !strings.HasPrefix(s[3].ResultSummary, "Error: ") {
		t.Fatalf("bad arguments step %+v", s[3])
	}
	if s[4].Status != "skipped" || !strings.HasPrefix(s[4].ResultSummary, "Rejected by Automate HTTP server policy") {
		t.Fatalf("requireApproval step %+v", s[4])
	}
	if s[5].Status != "failed" || !strings.Contains(s[5].ResultSummary, "not connected") {
		t.Fatalf("broken server step %+v", s[5])
	}
	if s[6].Status != "failed" || !strings.Contains(s[6].ResultSummary, "no such inline MCP server") {
		t.Fatalf("unknown server step %+v", s[6])
	}

	// Nothing the run started survives it.
	for _, name := range []string{"ev", "guarded"} {
		pgid := testenv.ReadPidFile(t, filepath.Join(dir, name+".pgid"))
		bg := testenv.ReadPidFile(t, filepath.Join(dir, name+".bg"))
		if err := testenv.WaitPidGone(bg, testutil.DefaultTimeout); err != nil {
			t.Errorf("%s: background process: %v", name, err)
		}
		if err := testenv.WaitGroupGone(pgid, testutil.DefaultTimeout); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	// With allowDestructiveTools the requireApproval server is approved.
	os.Remove(filepath.Join(dir, "guarded.pgid"))
	env = newEnv()
	tk = task(`#!mcp guarded echo {"message":"approved"}`)
	tk.McpServers = []automate.InlineMcpServer{guarded}
	tk.AllowDestructiveTools = true
	mustRun(t, e, tk, env)
	if st := env.stepList()[0]; st.Status != "success" || st.ResultSummary != "Echo: approved" {
		t.Fatalf("approved step %+v", st)
	}
	if err := testenv.WaitGroupGone(testenv.ReadPidFile(t, filepath.Join(dir, "guarded.pgid")), testutil.DefaultTimeout); err != nil {
		t.Fatal(err)
	}
}
