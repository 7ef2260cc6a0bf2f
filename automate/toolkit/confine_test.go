package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestEveryFileToolIsConfined: each file tool refuses every way out of
// the workspace (`..`, an absolute path, a symlink inside pointing out, a
// relative link out, a dangling link out, a path under such a link whose
// parents do not exist yet) and a link loop, and leaves the folder outside
// as it was; inside, a path whose parents do not exist yet is created.
func TestEveryFileToolIsConfined(t *testing.T) {
	ws, outside := layout(t)
	tb := New(Config{Workspace: ws, Confine: ws})
	ctx := context.Background()
	must(t, os.WriteFile(filepath.Join(ws, "mine.txt"), []byte("mine"), 0o644))
	escapes := []string{
		"../outside/x.txt",
		"sub/../../outside/x.txt",
		filepath.Join(outside, "x.txt"),
		"/etc/passwd",
		"out/x.txt",
		"out/not/yet/x.txt",
		"sub/rel-out/x.txt",
		"dangling",
		"dangling/x.txt",
	}
	call := func(tool string, args map[string]string) error {
		b, _ := json.Marshal(args)
		_, err := tb.Call(ctx, tool, b)
		return err
	}
	for _, p := range escapes {
		for _, c := range []struct {
			tool string
			args map[string]string
		}{
			{ToolWriteFile, map[string]string{"path": p, "content": "planted"}},
			{ToolReadFile, map[string]string{"path": p}},
			{ToolListDir, map[string]string{"path": p}},
			{ToolDeletePath, map[string]string{"path": p}},
			{ToolMovePath, map[string]string{"from": "mine.txt", "to": p}},
			{ToolMovePath, map[string]string{"from": p, "to": "taken.txt"}},
		} {
			if p == "dangling" && c.tool != ToolWriteFile && c.tool != ToolReadFile && c.tool != ToolListDir {
				continue // delete and move act on the link itself, an entry inside (below)
			}
			if err := call(c.tool, c.args); !isEscape(err) {
				t.Errorf("%s %v: %v, want an *EscapeError", c.tool, c.args, err)
			}
		}
	}
	// list_dir of a link to a folder outside, and of an absolute folder.
	for _, p := range []string{"out", outside, ".."} {
		if err := call(ToolListDir, map[string]string{"path": p}); !isEscape(err) {
			t.Errorf("list_dir %q: %v", p, err)
		}
	}
	for tool, args := range map[string]map[string]string{
		ToolWriteFile: {"path": "loop1/x.txt", "content": "x"},
		ToolReadFile:  {"path": "loop1"},
		ToolListDir:   {"path": "loop2/"},
		ToolMovePath:  {"from": "mine.txt", "to": "loop1/x.txt"},
	} {
		if err := call(tool, args); !errors.Is(err, ErrTooManyLinks) {
			t.Errorf("%s through a link loop: %v", tool, err)
		}
	}
	entries, err := os.ReadDir(outside)
	if err != nil || len(entries) != 1 || entries[0].Name() != "secret.txt" {
		t.Fatalf("the folder outside changed: %v %v", entries, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "mine.txt")); string(b) != "mine" {
		t.Fatalf("mine.txt moved or changed")
	}

	// Inside: missing parents are created; a move creates the destination's.
	if out, err := tb.WriteFile("fresh/a/b/c.txt", "c"); err != nil || out.Path != filepath.Join(ws, "fresh", "a", "b", "c.txt") {
		t.Fatalf("write under new folders: %+v %v", out, err)
	}
	if out, err := tb.MovePath("mine.txt", "later/d/mine.txt"); err != nil || out.Path != filepath.Join(ws, "later", "d", "mine.txt") {
		t.Fatalf("move under new folders: %+v %v", out, err)
	}
	// The dangling link itself is an entry inside: moving or deleting it
	// touches the link, never what it would point to.
	if out, err := tb.MovePath("dangling", "renamed-link"); err != nil || out.Path != filepath.Join(ws, "renamed-link") {
		t.Fatalf("move the dangling link: %+v %v", out, err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "nothing-yet")); !os.IsNotExist(err) {
		t.Fatalf("the link's target was created: %v", err)
	}
}

// TestConfinedOpsRefuseALinkSwappedIn: a folder checked inside and then
// replaced by a link pointing out before the tool acts (a race with
// another process) is refused at use time by the os.Root the tools work
// through, not written through.
func TestConfinedOpsRefuseALinkSwappedIn(t *testing.T) {
	ws, outside := layout(t)
	tb := New(Config{Workspace: ws, Confine: ws})
	must(t, os.MkdirAll(filepath.Join(ws, "later"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "mine.txt"), []byte("mine"), 0o644))
	swap := func() {
		t.Helper()
		must(t, os.RemoveAll(filepath.Join(ws, "later")))
		must(t, os.Symlink(outside, filepath.Join(ws, "later")))
	}
	unswap := func() {
		t.Helper()
		must(t, os.Remove(filepath.Join(ws, "later")))
		must(t, os.MkdirAll(filepath.Join(ws, "later"), 0o755))
	}
	for name, act := range map[string]func(o *ops, abs string) error{
		"write":  func(o *ops, abs string) error { return o.writeFile(abs, []byte("planted")) },
		"mkdir":  func(o *ops, abs string) error { return o.mkdirAll(filepath.Join(abs, "deeper")) },
		"rename": func(o *ops, abs string) error { return o.rename(filepath.Join(ws, "mine.txt"), abs) },
		"open": func(o *ops, abs string) error {
			f, err := o.open(abs)
			if err == nil {
				f.Close()
			}
			return err
		},
		"remove": func(o *ops, abs string) error { return o.removeAll(abs) },
	} {
		target := "later/planted.txt"
		if name == "open" || name == "remove" {
			target = "later/secret.txt"
		}
		abs, o, err := tb.resolveOps(Resolve, target, false)
		if err != nil {
			t.Fatalf("%s: the check before the swap: %v", name, err)
		}
		swap()
		err = act(o, abs)
		o.close()
		unswap()
		if err == nil {
			t.Errorf("%s through a link swapped in after the check: no error", name)
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 || entries[0].Name() != "secret.txt" {
		t.Fatalf("the folder outside changed: %v", entries)
	}
}
