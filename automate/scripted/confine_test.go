package scripted

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

// TestConfinedDirectives: in a confined run every file directive (#!write,
// #!read, #!move in both directions, #!delete) refuses a path that leaves
// the workspace, by `..`, an absolute path, a symlink inside pointing out,
// a dangling link pointing out or a link loop; nothing outside changes,
// and the default answer says why. A new folder inside is fine.
func TestConfinedDirectives(t *testing.T) {
	ws := workspace(t)
	outside := filepath.Join(filepath.Dir(ws), "outside")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(outside, 0o755))
	must(os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o600))
	must(os.WriteFile(filepath.Join(ws, "mine.txt"), []byte("mine"), 0o644))
	must(os.Symlink(outside, filepath.Join(ws, "out")))
	must(os.Symlink(filepath.Join(outside, "later.txt"), filepath.Join(ws, "dangling")))
	must(os.Symlink("loop-b", filepath.Join(ws, "loop-a")))
	must(os.Symlink("loop-a", filepath.Join(ws, "loop-b")))

	cases := []struct {
		directive string
		refusal   string // the step's summary holds it
	}{
		{"#!write ../escape.txt x", "outside the folder this run is confined to"},
		{"#!write " + filepath.Join(outside, "abs.txt") + " x", "outside the folder this run is confined to"},
		{"#!write out/planted.txt x", "outside the folder this run is confined to"},
		{"#!write out/new/deeper/planted.txt x", "outside the folder this run is confined to"},
		{"#!write dangling x", "outside the folder this run is confined to"},
		{"#!write loop-a/x.txt x", "too many levels of symbolic links"},
		{"#!read out/secret.txt", "outside the folder this run is confined to"},
		{"#!read ../outside/secret.txt", "outside the folder this run is confined to"},
		{"#!move mine.txt ../outside/stolen.txt", "outside the folder this run is confined to"},
		{"#!move mine.txt out/stolen.txt", "outside the folder this run is confined to"},
		{"#!move out/secret.txt taken.txt", "outside the folder this run is confined to"},
		{"#!move " + filepath.Join(outside, "secret.txt") + " taken.txt", "outside the folder this run is confined to"},
		{"#!delete ../outside/secret.txt", "outside the folder this run is confined to"},
		{"#!delete out/secret.txt", "outside the folder this run is confined to"},
	}
	var prompt strings.Builder
	prompt.WriteString("Tidy my files\n")
	for _, c := range cases {
		prompt.WriteString(c.directive + "\n")
	}
	prompt.WriteString("#!write new/folder/ok.txt fine\n#!move mine.txt kept/mine.txt\n")
	tk := task(prompt.String())
	tk.Workspace, tk.Confine, tk.AllowDestructiveTools = ws, ws, true
	env := newEnv()
	res := mustRun(t, newEngine(Config{}), tk, env)
	s := env.stepList()
	if res.Status != automate.StatusCompleted || len(s) != len(cases)+2 {
		t.Fatalf("%+v, %d steps", res, len(s))
	}
	for i, c := range cases {
		if s[i].Status != automate.StepFailed || !strings.Contains(s[i].ResultSummary, c.refusal) || s[i].ProducedFilePath != "" || strings.Contains(s[i].ProducedContent, "secret") {
			t.Errorf("%s: %s %q", c.directive, s[i].Status, s[i].ResultSummary)
		}
	}
	// Inside: a folder that does not exist yet is created; a move stays in.
	if st := s[len(cases)]; st.Status != automate.StepSuccess || st.ProducedFilePath != filepath.Join(ws, "new", "folder", "ok.txt") {
		t.Errorf("write inside: %+v", st)
	}
	if st := s[len(cases)+1]; st.Status != automate.StepSuccess || st.ProducedFilePath != filepath.Join(ws, "kept", "mine.txt") {
		t.Errorf("move inside: %+v", st)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 || entries[0].Name() != "secret.txt" {
		t.Errorf("the folder outside changed: %v", entries)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "secret.txt")); err != nil || string(b) != "secret" {
		t.Errorf("secret.txt: %q %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(ws), "escape.txt")); !os.IsNotExist(err) {
		t.Errorf("escape.txt written: %v", err)
	}
	// 13 refused (the loop is an error of its own); the answer names the
	// first and says why.
	if want := "Done: Tidy my files (13 steps refused; step 1: path \"../escape.txt\" resolves to "; !strings.HasPrefix(res.Answer, want) ||
		!strings.Contains(res.Answer, "outside the folder this run is confined to") {
		t.Errorf("answer %q, want it to begin %q", res.Answer, want)
	}

	// One refusal: the answer says which step and why.
	tk = task("Save it\n#!write ../escape.txt x")
	tk.Workspace, tk.Confine = ws, ws
	res = mustRun(t, newEngine(Config{}), tk, newEnv())
	if !strings.HasPrefix(res.Answer, "Done: Save it (step 1 refused: path \"../escape.txt\" resolves to ") {
		t.Errorf("answer %q", res.Answer)
	}
}

// TestRunStepEnvironment: a #!run env step shows neither the session bus
// nor a hubgate secret; automate.child_env.allow (Config.ChildEnvAllow)
// passes the named ones, and only those.
func TestRunStepEnvironment(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/scripted-test-bus")
	t.Setenv("XDG_RUNTIME_DIR", "/tmp/scripted-test-runtime")
	t.Setenv("HUBGATE_DEVICE_TOKEN", "device-token-scripted-test")
	t.Setenv("HUBGATE_LOG_LEVEL", "debug")
	run := func(cfg Config) string {
		t.Helper()
		tk := task("What is set?\n#!run env")
		ws := workspace(t)
		tk.Workspace, tk.Confine, tk.AllowDestructiveTools = ws, ws, true
		env := newEnv()
		mustRun(t, newEngine(cfg), tk, env)
		st := env.stepList()[0]
		if st.Status != automate.StepSuccess {
			t.Fatalf("#!run env: %+v", st)
		}
		return st.ProducedContent + "\n" + st.ResultSummary
	}
	out := run(Config{})
	for _, hidden := range []string{"DBUS_SESSION_BUS_ADDRESS", "scripted-test-bus", "XDG_RUNTIME_DIR=", "device-token-scripted-test"} {
		if strings.Contains(out, hidden) {
			t.Errorf("the step shows %q:\n%s", hidden, out)
		}
	}
	if !strings.Contains(out, "HUBGATE_LOG_LEVEL=debug") {
		t.Errorf("the step lost an ordinary variable:\n%s", out)
	}
	out = run(Config{ChildEnvAllow: []string{"DBUS_SESSION_BUS_ADDRESS"}})
	if !strings.Contains(out, "DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/scripted-test-bus") || strings.Contains(out, "device-token-scripted-test") || strings.Contains(out, "XDG_RUNTIME_DIR=") {
		t.Errorf("allowed the bus address only:\n%s", out)
	}
}
