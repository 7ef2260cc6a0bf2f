package toolkit

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

// TestContentChain runs real built-in calls in a workspace and checks the
// chaining ids and produced fields Record gives each step.
func TestContentChain(t *testing.T) {
	ws := t.TempDir()
	tb := New(Config{Workspace: ws, Confine: ws})
	chain := ContentChain{Workspace: ws, Confine: ws}
	index := 0
	call := func(name, args string) *automate.Step {
		t.Helper()
		index++
		st := &automate.Step{Index: index}
		out, err := tb.Call(context.Background(), name, json.RawMessage(args))
		chain.Record(st, name, json.RawMessage(args), out, err)
		return st
	}
	check := func(st *automate.Step, produced string, consumed ...string) {
		t.Helper()
		if st.ProducedContentID != produced || !slices.Equal(st.ConsumedContentIDs, consumed) {
			t.Errorf("step %d: produced %q consumed %v, want %q %v", st.Index, st.ProducedContentID, st.ConsumedContentIDs, produced, consumed)
		}
	}

	st := call(ToolWriteFile, `{"path":"a.txt","content":"one"}`)
	check(st, "g1")
	if st.ProducedFilePath != filepath.Join(ws, "a.txt") || st.ProducedIsDirectory || st.ProducedContent != "one" {
		t.Errorf("write fields %+v", st)
	}
	st = call(ToolReadFile, `{"path":"a.txt"}`)
	check(st, "s2", "g1")
	if st.ProducedFilePath != "" || st.ProducedContent != "one" {
		t.Errorf("read fields %+v", st)
	}
	check(call(ToolMovePath, `{"from":"a.txt","to":"b/a.txt"}`), "", "g1")
	check(call(ToolReadFile, `{"path":"a.txt"}`), "") // gone: failed, no id
	check(call(ToolReadFile, `{"path":"b/a.txt"}`), "s5", "g1")
	check(call(ToolListDir, `{"path":"b"}`), "s6")
	check(call(ToolDeletePath, `{"path":"b/a.txt"}`), "", "g1")
	check(call(ToolReadFile, `{"path":"b/a.txt"}`), "") // deleted
	check(call(ToolWriteFile, `{"path":"c.txt","content":"two"}`), "g9")
	check(call(ToolDeletePath, `{"path":"other.txt"}`), "") // missing: failed
	check(call(ToolReadFile, `{"path":"c.txt"}`), "s11", "g9")
	// A move forgets the source: a file made there by other means later
	// carries no id of this run.
	check(call(ToolMovePath, `{"from":"c.txt","to":"d.txt"}`), "", "g9")
	check(call(ToolRunCommand, `{"command":"printf x > c.txt"}`), "")
	check(call(ToolReadFile, `{"path":"c.txt"}`), "s14")
	check(call(ToolReadFile, `{"path":"d.txt"}`), "s15", "g9")

	// A command produces an id when it printed anything, also when it
	// failed; a silent failure produces none.
	st = call(ToolRunCommand, `{"command":"echo out; exit 3"}`)
	check(st, "s16")
	if st.ProducedContent == "" {
		t.Errorf("failed command lost its output: %+v", st)
	}
	check(call(ToolRunCommand, `{"command":"exit 4"}`), "")
	check(call(ToolRunCommand, `{"command":"true"}`), "")
}
