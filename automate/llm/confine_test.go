package llm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

// TestEveryFileToolConfined: with restrictToWorkspace the model's
// write_file, read_file, list_dir, move_path (both ways) and delete_path
// stay in the workspace whatever path it gives (`..`, absolute, a link
// inside pointing out, a dangling link out, a link loop); each escape is a
// failed step the model is told about, and nothing outside changes. A
// write under new folders inside works.
func TestEveryFileToolConfined(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	os.WriteFile(secret, []byte("top secret"), 0o600)
	os.WriteFile(filepath.Join(h.workspace, "mine.txt"), []byte("mine"), 0o644)
	os.Symlink(outside, filepath.Join(h.workspace, "out"))
	os.Symlink(filepath.Join(outside, "later.txt"), filepath.Join(h.workspace, "dangling"))
	os.Symlink("loop-b", filepath.Join(h.workspace, "loop-a"))
	os.Symlink("loop-a", filepath.Join(h.workspace, "loop-b"))
	calls := []fakeCall{
		call("w1", "write_file", map[string]any{"path": "../escape.txt", "content": "x"}),
		call("w2", "write_file", map[string]any{"path": filepath.Join(outside, "abs.txt"), "content": "x"}),
		call("w3", "write_file", map[string]any{"path": "out/new/planted.txt", "content": "x"}),
		call("w4", "write_file", map[string]any{"path": "dangling", "content": "x"}),
		call("r1", "read_file", map[string]any{"path": "out/secret.txt"}),
		call("l1", "list_dir", map[string]any{"path": "out"}),
		call("l2", "list_dir", map[string]any{"path": outside}),
		call("m1", "move_path", map[string]any{"from": "mine.txt", "to": "out/stolen.txt"}),
		call("m2", "move_path", map[string]any{"from": secret, "to": "taken.txt"}),
		call("d1", "delete_path", map[string]any{"path": "out/secret.txt"}),
		call("x1", "write_file", map[string]any{"path": "loop-a/x.txt", "content": "x"}),
		call("ok", "write_file", map[string]any{"path": "new/folder/ok.txt", "content": "fine"}),
	}
	up.script(reply{calls: calls}, reply{content: "some were blocked"})
	status, rec := h.run(map[string]any{"prompt": "tidy up", "restrictToWorkspace": true, "allowDestructiveTools": true})
	if status != 200 || len(rec.Steps) != len(calls) {
		t.Fatalf("%d %+v", status, rec)
	}
	for i, s := range rec.Steps[:len(calls)-1] {
		want := "outside the folder this run is confined to"
		if calls[i].id == "x1" {
			want = "too many levels of symbolic links"
		}
		if s.Status != automate.StepFailed || !strings.Contains(s.ResultSummary, want) || strings.Contains(s.ProducedContent, "top secret") {
			t.Errorf("step %s: %s %q", calls[i].id, s.Status, s.ResultSummary)
		}
		if got, _ := up.seen()[1].toolResult(calls[i].id); !strings.Contains(got, want) {
			t.Errorf("the model was told %q for %s", got, calls[i].id)
		}
	}
	if s := rec.Steps[len(calls)-1]; s.Status != automate.StepSuccess || s.ProducedFilePath != filepath.Join(h.workspace, "new", "folder", "ok.txt") {
		t.Errorf("write inside: %+v", s)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 || entries[0].Name() != "secret.txt" {
		t.Errorf("the folder outside changed: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.workspace), "escape.txt")); err == nil {
		t.Errorf("escape.txt written")
	}
}

// TestRunCommandEnvironment: run_command's children see neither the
// session bus nor hubgate's secrets; Config.ChildEnvAllow passes a name.
func TestRunCommandEnvironment(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/llm-test-bus")
	t.Setenv("HUBGATE_DEVICE_TOKEN", "device-token-llm-test")
	for _, allow := range [][]string{nil, {"DBUS_SESSION_BUS_ADDRESS"}} {
		up := newFakeUpstream(t, "ollama", qwen)
		h := newHarness(t, up.url(), func(o *harnessOpts) { o.engine.ChildEnvAllow = allow })
		up.script(reply{calls: []fakeCall{call("e1", "run_command", map[string]any{"command": "env"})}}, reply{content: "listed"})
		status, rec := h.run(map[string]any{"prompt": "what is set", "restrictToWorkspace": true, "allowDestructiveTools": true})
		if status != 200 || len(rec.Steps) != 1 || rec.Steps[0].Status != automate.StepSuccess {
			t.Fatalf("%d %+v", status, rec)
		}
		out := rec.Steps[0].ProducedContent
		if strings.Contains(out, "device-token-llm-test") || strings.Contains(out, "DBUS_SESSION_BUS_ADDRESS") != (allow != nil) {
			t.Errorf("allow %v: run_command saw:\n%s", allow, out)
		}
	}
}

// TestSystemPromptPointsAtTheNotifyTool: a run that declares the caller's
// notify tool tells the model to notify through it (its commands cannot
// reach the desktop's notifications); without it, nothing is said.
func TestSystemPromptPointsAtTheNotifyTool(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	up.script(reply{content: "ok"}, reply{content: "ok"})
	notify := map[string]any{"name": "notify", "description": "Send the person a notification",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}}}
	if status, rec := h.run(map[string]any{"prompt": "remind me", "clientTools": []any{notify}, "restrictToWorkspace": true}); status != 200 {
		t.Fatalf("%d %+v", status, rec)
	}
	if status, rec := h.run(map[string]any{"prompt": "remind me"}); status != 200 {
		t.Fatalf("%d %+v", status, rec)
	}
	const hint = "To notify the person, call the notify tool"
	if sys := up.seen()[0].system(); !strings.Contains(sys, hint) || !strings.Contains(sys, "File tools are confined to "+h.workspace) {
		t.Errorf("system prompt with notify, confined:\n%s", sys)
	}
	if sys := up.seen()[1].system(); strings.Contains(sys, hint) || strings.Contains(sys, "confined to") {
		t.Errorf("system prompt without notify, unconfined:\n%s", sys)
	}
}
