package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/proc"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

func TestWriteReadListConfined(t *testing.T) {
	ws, outside := layout(t)
	tb := New(Config{Workspace: ws, Confine: ws})
	ctx := context.Background()

	out, err := tb.Call(ctx, ToolWriteFile, json.RawMessage(`{"path":"notes/today/a.txt","content":"hello\nworld"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(ws, "notes", "today", "a.txt")
	if out.Path != want || !out.Produced || out.IsDir || out.Content != "hello\nworld" {
		t.Fatalf("write outcome %+v", out)
	}
	if b, _ := os.ReadFile(want); string(b) != "hello\nworld" {
		t.Fatalf("file holds %q", b)
	}
	if !strings.Contains(out.Summary, want) {
		t.Fatalf("summary %q does not name the path", out.Summary)
	}

	out, err = tb.Call(ctx, ToolReadFile, json.RawMessage(`{"path":"notes/today/a.txt"}`))
	if err != nil || out.Content != "hello\nworld" || out.Path != want || out.Produced {
		t.Fatalf("read %+v %v", out, err)
	}

	out, err = tb.Call(ctx, ToolListDir, nil)
	if err != nil || !out.IsDir || out.Path != ws {
		t.Fatalf("list %+v %v", out, err)
	}
	lines := strings.Split(out.Content, "\n")
	if !containsAll(lines, "notes/", "inner/", "sub/") {
		t.Fatalf("listing %q", out.Content)
	}

	// Escapes fail and nothing is written outside.
	for _, p := range []string{"../outside/new.txt", "out/new.txt", "dangling", filepath.Join(outside, "abs.txt")} {
		args, _ := json.Marshal(map[string]string{"path": p, "content": "x"})
		if _, err := tb.Call(ctx, ToolWriteFile, args); !isEscape(err) {
			t.Errorf("write %q: %v, want escape", p, err)
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Fatalf("outside folder changed: %v", entries)
	}
	if _, err := tb.Call(ctx, ToolReadFile, json.RawMessage(`{"path":"out/secret.txt"}`)); !isEscape(err) {
		t.Fatalf("read through link: %v", err)
	}
	if _, err := tb.Call(ctx, ToolListDir, json.RawMessage(`{"path":".."}`)); !isEscape(err) {
		t.Fatalf("list parent: %v", err)
	}
}

func containsAll(have []string, want ...string) bool {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

func TestWriteThroughInsideLinkReportsTarget(t *testing.T) {
	ws, _ := layout(t)
	tb := New(Config{Workspace: ws, Confine: ws})
	out, err := tb.WriteFile("in/ok.txt", "changed")
	if err != nil || out.Path != filepath.Join(ws, "inner", "ok.txt") {
		t.Fatalf("%+v %v", out, err)
	}
}

func TestUnconfinedWritesAnywhere(t *testing.T) {
	ws, outside := layout(t)
	tb := New(Config{Workspace: ws})
	out, err := tb.WriteFile(filepath.Join(outside, "free.txt"), "x")
	if err != nil || out.Path != filepath.Join(outside, "free.txt") {
		t.Fatalf("%+v %v", out, err)
	}
}

func TestReadFileLimits(t *testing.T) {
	ws, _ := layout(t)
	tb := New(Config{Workspace: ws, Confine: ws, MaxReadBytes: 10})
	must(t, os.WriteFile(filepath.Join(ws, "big.txt"), []byte(strings.Repeat("x", 11)), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "fits.txt"), []byte(strings.Repeat("x", 10)), 0o644))
	if _, err := tb.ReadFile("big.txt"); !errors.Is(err, ErrFileTooLarge) {
		t.Fatalf("big: %v", err)
	}
	if out, err := tb.ReadFile("fits.txt"); err != nil || len(out.Content) != 10 {
		t.Fatalf("fits: %v", err)
	}
	if _, err := tb.ReadFile("sub"); err == nil || !strings.Contains(err.Error(), "list_dir") {
		t.Fatalf("folder: %v", err)
	}
	if _, err := tb.ReadFile("missing.txt"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	if New(Config{}).cfg.MaxReadBytes != 1<<20 {
		t.Fatal("default read limit is not 1 MiB")
	}
}

func TestDeleteAndMove(t *testing.T) {
	ws, outside := layout(t)
	tb := New(Config{Workspace: ws, Confine: ws})
	ctx := context.Background()

	// Deleting a link removes the link, never its target.
	out, err := tb.Call(ctx, ToolDeletePath, json.RawMessage(`{"path":"out"}`))
	if err != nil || out.Path != filepath.Join(ws, "out") {
		t.Fatalf("delete link: %+v %v", out, err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "out")); !os.IsNotExist(err) {
		t.Fatal("link still there")
	}
	if _, err := os.Stat(filepath.Join(outside, "secret.txt")); err != nil {
		t.Fatal("link target was deleted")
	}

	// Folders go recursively.
	must(t, os.MkdirAll(filepath.Join(ws, "tree", "a", "b"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "tree", "a", "b", "f"), nil, 0o644))
	out, err = tb.DeletePath("tree")
	if err != nil || !out.IsDir {
		t.Fatalf("delete tree: %+v %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "tree")); !os.IsNotExist(err) {
		t.Fatal("tree still there")
	}
	if _, err := tb.DeletePath("tree"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("delete missing: %v", err)
	}
	if _, err := tb.DeletePath("../outside/secret.txt"); !isEscape(err) {
		t.Fatalf("delete outside: %v", err)
	}
	if _, err := tb.DeletePath("."); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("delete workspace: %v", err)
	}

	// Move creates the destination's parents and never replaces.
	must(t, os.WriteFile(filepath.Join(ws, "m.txt"), []byte("m"), 0o644))
	out, err = tb.Call(ctx, ToolMovePath, json.RawMessage(`{"from":"m.txt","to":"moved/here/m2.txt"}`))
	dst := filepath.Join(ws, "moved", "here", "m2.txt")
	if err != nil || out.Path != dst || !out.Produced {
		t.Fatalf("move: %+v %v", out, err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "m" {
		t.Fatal("moved content")
	}
	must(t, os.WriteFile(filepath.Join(ws, "other.txt"), []byte("o"), 0o644))
	if _, err := tb.MovePath("other.txt", "moved/here/m2.txt"); !errors.Is(err, ErrExists) {
		t.Fatalf("move onto existing: %v", err)
	}
	if _, err := tb.MovePath("other.txt", "../outside/stolen.txt"); !isEscape(err) {
		t.Fatalf("move outside: %v", err)
	}
	if _, err := tb.MovePath("sub/rel-out/secret.txt", "got.txt"); !isEscape(err) {
		t.Fatalf("move from outside: %v", err)
	}
}

func TestCallArgumentErrors(t *testing.T) {
	ws, _ := layout(t)
	tb := New(Config{Workspace: ws, Confine: ws})
	ctx := context.Background()
	var ae *ArgsError
	for _, c := range []struct{ tool, args string }{
		{ToolWriteFile, `[1,2]`},
		{ToolWriteFile, `{"content":"x"}`},
		{ToolWriteFile, `{"path":7}`},
		{ToolReadFile, `{}`},
		{ToolMovePath, `{"from":"a"}`},
		{ToolRunCommand, `{"command":""}`},
		{ToolDeletePath, `"x"`},
		{ToolReadFile, `{bad json`},
	} {
		if _, err := tb.Call(ctx, c.tool, json.RawMessage(c.args)); !errors.As(err, &ae) {
			t.Errorf("%s %s: %v, want *ArgsError", c.tool, c.args, err)
		}
	}
	if _, err := tb.Call(ctx, "format_disk", nil); !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("unknown tool: %v", err)
	}
	for _, d := range Definitions() {
		var schema map[string]any
		if err := json.Unmarshal(d.Parameters, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: bad schema %s", d.Name, d.Parameters)
		}
		if !IsBuiltin(d.Name) {
			t.Errorf("%s not builtin", d.Name)
		}
		if d.Destructive != (d.Name == ToolDeletePath || d.Name == ToolMovePath || d.Name == ToolRunCommand) {
			t.Errorf("%s destructive=%v", d.Name, d.Destructive)
		}
	}
}

func TestRunCommand(t *testing.T) {
	ws, _ := layout(t)
	tb := New(Config{Workspace: ws, Confine: ws})
	ctx := context.Background()

	out, err := tb.Call(ctx, ToolRunCommand, json.RawMessage(`{"command":"pwd; echo err >&2"}`))
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 0 || !strings.Contains(out.Content, ws) || !strings.Contains(out.Content, "err") {
		t.Fatalf("outcome %+v", out)
	}
	if !strings.HasPrefix(out.Summary, "exit code 0") {
		t.Fatalf("summary %q", out.Summary)
	}

	out, err = tb.RunCommand(ctx, "echo failing; exit 3")
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || out.ExitCode != 3 || !strings.Contains(out.Content, "failing") {
		t.Fatalf("exit 3: %+v %v", out, err)
	}
	if !strings.Contains(err.Error(), "code 3") {
		t.Fatalf("error text %q", err)
	}

	small := New(Config{Workspace: ws, MaxOutputBytes: 100})
	out, err = small.RunCommand(ctx, "head -c 100000 /dev/zero | tr '\\0' x")
	if err != nil || len(out.Content) != 100 || !out.Truncated || !strings.Contains(out.Summary, "truncated") {
		t.Fatalf("cap: len=%d truncated=%v err=%v", len(out.Content), out.Truncated, err)
	}

	// The environment is Config.Env.
	envd := New(Config{Workspace: ws, Env: []string{"HUBGATE_X=42", "PATH=" + os.Getenv("PATH")}})
	out, err = envd.RunCommand(ctx, `echo "x=$HUBGATE_X"`)
	if err != nil || strings.TrimSpace(out.Content) != "x=42" {
		t.Fatalf("env: %q %v", out.Content, err)
	}
}

func TestRunCommandCancelKillsProcessGroup(t *testing.T) {
	ws, _ := layout(t)
	tb := New(Config{Workspace: ws})
	pidFile := filepath.Join(ws, "pids")
	ctx, cancel := context.WithCancel(context.Background())
	type res struct {
		out Outcome
		err error
	}
	done := make(chan res, 1)
	go func() {
		// The background sleeper keeps the output pipe open, the foreground
		// one blocks the shell.
		out, err := tb.RunCommand(ctx, "sleep 300 & echo $$ > pids.tmp; mv pids.tmp pids; sleep 300")
		done <- res{out, err}
	}()
	pgid := testenv.ReadPidFile(t, pidFile)
	if !proc.GroupAlive(pgid) {
		t.Fatal("group not running")
	}
	cancel()
	select {
	case r := <-done:
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("err %v", r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("RunCommand did not return after cancel")
	}
	if err := testenv.WaitGroupGone(pgid, testutil.DefaultTimeout); err != nil {
		t.Fatal(err)
	}
}

func TestRunCommandKillsBackgroundLeftovers(t *testing.T) {
	ws, _ := layout(t)
	tb := New(Config{Workspace: ws})
	out, err := tb.RunCommand(context.Background(), "sleep 300 & echo $! > bg.tmp; mv bg.tmp bg; echo started")
	if err != nil || !strings.Contains(out.Content, "started") {
		t.Fatalf("%+v %v", out, err)
	}
	pid := testenv.ReadPidFile(t, filepath.Join(ws, "bg"))
	if err := testenv.WaitPidGone(pid, testutil.DefaultTimeout); err != nil {
		t.Fatal(err)
	}
}

func TestRunCommandCanceledBeforeStart(t *testing.T) {
	ws, _ := layout(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(Config{Workspace: ws}).RunCommand(ctx, "touch ran"); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); !os.IsNotExist(err) {
		t.Fatal("command ran after cancel")
	}
}
