package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
)

// stepNamed returns the record's step that called tool.
func stepNamed(t *testing.T, rec *automate.RunRecord, tool string) automate.Step {
	t.Helper()
	for _, st := range rec.Steps {
		if st.ToolName == tool {
			return st
		}
	}
	t.Fatalf("no %s step in %+v", tool, rec.Steps)
	return automate.Step{}
}

// rejected checks that a step was refused by policy with a message the
// agent sees.
func rejected(t *testing.T, st automate.Step) {
	t.Helper()
	if st.Status != automate.StepSkipped || !strings.HasPrefix(st.ResultSummary, assistant.PolicyRejectionPrefix) {
		t.Fatalf("step %s = %s %q, want skipped by policy", st.ToolName, st.Status, st.ResultSummary)
	}
}

// TestBuiltInToolsDenyMeansDeny: deny @destructive wins over
// allowDestructiveTools (run_command and delete_path do not run); an allow
// list excludes every other built-in tool; on the native route.
func TestBuiltInToolsDenyMeansDeny(t *testing.T) {
	h := newHarness(t)
	keep := filepath.Join(h.workspace, "keep.txt")
	if err := os.WriteFile(keep, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, rec := h.run(map[string]any{
		"prompt":                "x\n#!run touch ran.txt\n#!delete keep.txt\n#!write w.txt w",
		"allowDestructiveTools": true,
		"builtInTools":          map[string]any{"deny": []string{"@destructive"}},
	})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	rejected(t, stepNamed(t, &rec, "run_command"))
	rejected(t, stepNamed(t, &rec, "delete_path"))
	if st := stepNamed(t, &rec, "write_file"); st.Status != automate.StepSuccess {
		t.Fatalf("write_file (not denied) = %s %q", st.Status, st.ResultSummary)
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "ran.txt")); err == nil {
		t.Fatal("a denied run_command ran")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("a denied delete_path deleted: %v", err)
	}

	// allow: only read_file may run.
	_, rec = h.run(map[string]any{
		"prompt":       "x\n#!read keep.txt\n#!write w2.txt w\n#!run touch ran.txt",
		"builtInTools": map[string]any{"allow": []string{"read_file"}}, "allowDestructiveTools": true,
	})
	if st := stepNamed(t, &rec, "read_file"); st.Status != automate.StepSuccess {
		t.Fatalf("allowed read_file = %s %q", st.Status, st.ResultSummary)
	}
	rejected(t, stepNamed(t, &rec, "write_file"))
	rejected(t, stepNamed(t, &rec, "run_command"))
	if _, err := os.Stat(filepath.Join(h.workspace, "w2.txt")); err == nil {
		t.Fatal("write_file ran outside the allow list")
	}

	// Without allowDestructiveTools an allowed destructive tool is still
	// refused: builtInTools only narrows.
	_, rec = h.run(map[string]any{"prompt": "x\n#!run touch ran.txt", "builtInTools": map[string]any{"allow": []string{"@all"}}})
	rejected(t, stepNamed(t, &rec, "run_command"))
}

// TestBuiltInToolsOnChat honours builtInTools in the chat extension object.
func TestBuiltInToolsOnChat(t *testing.T) {
	h := newHarness(t)
	r, cc := h.chat(map[string]any{
		"messages": []any{user("x\n#!write c.txt c\n#!read c.txt")},
		"service":  map[string]any{"builtInTools": map[string]any{"deny": []string{"write_file"}}},
	})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	rejected(t, stepNamed(t, cc.Service, "write_file"))
	if _, err := os.Stat(filepath.Join(h.workspace, "c.txt")); err == nil {
		t.Fatal("a denied write_file ran")
	}
}

// TestBuiltInToolsUnknownNameIs400 names the unknown entry, on both
// routes, and starts no run.
func TestBuiltInToolsUnknownNameIs400(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		path string
		body map[string]any
		name string
	}{
		{"/v1/runs", map[string]any{"prompt": "x", "builtInTools": map[string]any{"deny": []string{"@destructive", "rm_rf"}}}, `builtInTools.deny[1]: unknown built-in tool or group "rm_rf"`},
		{"/v1/runs", map[string]any{"prompt": "x", "builtInTools": map[string]any{"allow": []string{"@everything"}}}, `builtInTools.allow[0]: unknown built-in tool or group "@everything"`},
		{"/v1/chat/completions", map[string]any{"messages": []any{user("x")}, "service": map[string]any{"builtInTools": map[string]any{"allow": []string{"mcp__x__y"}}}}, `builtInTools.allow[0]: unknown built-in tool or group "mcp__x__y"`},
		{"/v1/runs", map[string]any{"prompt": "x", "builtInTools": map[string]any{"deny": "run_command"}}, "builtInTools must be an object with arrays of strings allow and deny"},
	} {
		r := h.do("POST", tc.path, tc.body)
		var env automate.ErrorEnvelope
		r.json(t, &env)
		if r.status != 400 || env.Error.Type != automate.ErrTypeInvalidRequest || !strings.HasPrefix(env.Error.Message, tc.name) {
			t.Errorf("%s %v: %d %s, want 400 starting %q", tc.path, tc.body, r.status, r.body, tc.name)
		}
	}
	if hl := h.health(); hl.Busy {
		t.Fatal("a refused request started a run")
	}
}
