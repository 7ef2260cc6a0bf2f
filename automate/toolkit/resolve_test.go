package toolkit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layout builds base/{ws, outside} with links and returns (ws, outside).
// base is resolved so that t.TempDir living under a symlink (macOS /var)
// does not confuse the expectations.
func layout(t *testing.T) (ws, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws = filepath.Join(base, "ws")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{ws, outside, filepath.Join(ws, "sub"), filepath.Join(ws, "inner")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "inner", "ok.txt"), []byte("ok"), 0o644))
	must(t, os.Symlink(outside, filepath.Join(ws, "out")))                                    // absolute link outside
	must(t, os.Symlink("../../outside", filepath.Join(ws, "sub", "rel-out")))                 // relative link outside
	must(t, os.Symlink(filepath.Join(outside, "nothing-yet"), filepath.Join(ws, "dangling"))) // dangling, outside
	must(t, os.Symlink("inner", filepath.Join(ws, "in")))                                     // link inside
	must(t, os.Symlink("loop2", filepath.Join(ws, "loop1")))
	must(t, os.Symlink("loop1", filepath.Join(ws, "loop2")))
	return ws, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestResolveConfined(t *testing.T) {
	ws, outside := layout(t)
	cases := []struct {
		path   string
		want   string // "" means an *EscapeError
		errNot bool
	}{
		{"a.txt", filepath.Join(ws, "a.txt"), false},
		{"new/dir/b.txt", filepath.Join(ws, "new/dir/b.txt"), false},
		{"sub/../a.txt", filepath.Join(ws, "a.txt"), false},
		{"", ws, false},
		{".", ws, false},
		{filepath.Join(ws, "x"), filepath.Join(ws, "x"), false},
		{"in/ok.txt", filepath.Join(ws, "inner", "ok.txt"), false},
		{"in/../inner/ok.txt", filepath.Join(ws, "inner", "ok.txt"), false},
		{"../outside/secret.txt", "", false},
		{"sub/../../outside/secret.txt", "", false},
		{"../../../../../../../../etc/passwd", "", false},
		{"..", "", false},
		{"/etc/passwd", "", false},
		{outside, "", false},
		{"out/secret.txt", "", false},
		{"out", "", false},
		{"out/new/file.txt", "", false}, // last components do not exist yet
		{"sub/rel-out/secret.txt", "", false},
		{"dangling", "", false}, // dangling link pointing outside
		{"dangling/deeper.txt", "", false},
		// `..` after a link applies to the link's target, as in the kernel:
		// out/.. is the parent of outside, not the workspace.
		{"out/../ws/a.txt", filepath.Join(ws, "a.txt"), false},
		{"out/../outside/secret.txt", "", false},
	}
	for _, c := range cases {
		got, err := Resolve(ws, ws, c.path)
		if c.want == "" {
			var esc *EscapeError
			if !errors.As(err, &esc) {
				t.Errorf("Resolve(%q) = %q, %v; want an *EscapeError", c.path, got, err)
				continue
			}
			if esc.Root != ws || esc.Path != c.path || strings.HasPrefix(esc.Resolved, ws+string(filepath.Separator)) {
				t.Errorf("Resolve(%q): escape error fields %+v", c.path, esc)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}
}

func TestResolveUnconfinedAllowsAbsolute(t *testing.T) {
	ws, outside := layout(t)
	got, err := Resolve(ws, "", filepath.Join(outside, "secret.txt"))
	if err != nil || got != filepath.Join(outside, "secret.txt") {
		t.Fatalf("got %q, %v", got, err)
	}
	got, err = Resolve(ws, "", "out/secret.txt")
	if err != nil || got != filepath.Join(outside, "secret.txt") {
		t.Fatalf("link through: got %q, %v", got, err)
	}
	got, err = Resolve(ws, "", "../outside/x")
	if err != nil || got != filepath.Join(outside, "x") {
		t.Fatalf("dotdot: got %q, %v", got, err)
	}
}

func TestResolveSymlinkedWorkspace(t *testing.T) {
	ws, outside := layout(t)
	link := filepath.Join(filepath.Dir(ws), "ws-link")
	must(t, os.Symlink(ws, link))
	got, err := Resolve(link, link, "inner/ok.txt")
	if err != nil || got != filepath.Join(ws, "inner", "ok.txt") {
		t.Fatalf("got %q, %v", got, err)
	}
	// The confinement root is the link's target: the link's own folder is
	// outside of it.
	if _, err := Resolve(link, link, "../outside/secret.txt"); !isEscape(err) {
		t.Fatalf("want escape, got %v", err)
	}
	if _, err := Resolve(link, link, filepath.Join(link, "out", "secret.txt")); !isEscape(err) {
		t.Fatalf("want escape through link, got %v", err)
	}
	_ = outside
}

func isEscape(err error) bool {
	var esc *EscapeError
	return errors.As(err, &esc)
}

func TestResolveErrors(t *testing.T) {
	ws, _ := layout(t)
	if _, err := Resolve(ws, ws, "loop1/x"); !errors.Is(err, ErrTooManyLinks) {
		t.Fatalf("loop: %v", err)
	}
	if _, err := Resolve(ws, ws, "a\x00b"); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("nul: %v", err)
	}
	if _, err := Resolve("", "", "rel.txt"); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("relative without workspace: %v", err)
	}
	if _, err := Resolve(ws, "relative-root", "a"); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("relative confine: %v", err)
	}
}

func TestResolveEntry(t *testing.T) {
	ws, outside := layout(t)
	// The link itself is inside even though it points outside.
	got, err := ResolveEntry(ws, ws, "out")
	if err != nil || got != filepath.Join(ws, "out") {
		t.Fatalf("link entry: %q, %v", got, err)
	}
	// But its parent folder is resolved: an entry under it is outside.
	if _, err := ResolveEntry(ws, ws, "out/secret.txt"); !isEscape(err) {
		t.Fatalf("entry under outside link: %v", err)
	}
	if _, err := ResolveEntry(ws, ws, "../outside/secret.txt"); !isEscape(err) {
		t.Fatalf("dotdot entry: %v", err)
	}
	for _, p := range []string{".", "", "sub/..", ws} {
		if _, err := ResolveEntry(ws, ws, p); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("ResolveEntry(%q) = %v, want ErrInvalidPath (the workspace itself)", p, err)
		}
	}
	if _, err := ResolveEntry(ws, "", "/"); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("root: %v", err)
	}
	got, err = ResolveEntry(ws, "", filepath.Join(outside, "secret.txt"))
	if err != nil || got != filepath.Join(outside, "secret.txt") {
		t.Fatalf("unconfined: %q %v", got, err)
	}
	got, err = ResolveEntry(ws, ws, "in/ok.txt")
	if err != nil || got != filepath.Join(ws, "inner", "ok.txt") {
		t.Fatalf("entry through inside link: %q %v", got, err)
	}
}
