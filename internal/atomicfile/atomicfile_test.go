package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// names lists the entries of dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteFileCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := WriteFile(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("two, longer"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "two, longer" {
		t.Fatalf("read %q %v", got, err)
	}
	if n := names(t, dir); len(n) != 1 || n[0] != "state.json" {
		t.Errorf("entries after two writes: %v", n)
	}
}

func TestWriteFileSetsThePermission(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX permissions")
	}
	dir := t.TempDir()
	for _, perm := range []os.FileMode{0o600, 0o640, 0o644} {
		path := filepath.Join(dir, perm.String())
		if err := WriteFile(path, []byte("x"), perm); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != perm {
			t.Errorf("mode %v %v, want %v", fi.Mode(), err, perm)
		}
	}
	// Replacing a file gives it perm, not the old file's mode.
	path := filepath.Join(dir, "replaced")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %v %v", fi.Mode(), err)
	}
}

// A rename over a non-empty directory fails after the temp file was
// written: path is unchanged and no temp file is left behind.
func TestWriteFileFailedRenameCleansUp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "target")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "x"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("data"), 0o600); err == nil {
		t.Fatal("renamed over a non-empty directory")
	}
	if n := names(t, dir); len(n) != 1 || n[0] != "target" {
		t.Errorf("entries after a failed write: %v", n)
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Errorf("target changed: %v %v", fi, err)
	}
}

func TestWriteFileMissingFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "f")
	if err := WriteFile(path, []byte("x"), 0o600); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err %v, want not exist", err)
	}
}

func TestWriteFileReadOnlyFolderKeepsTheOldFile(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs a non-root user on a POSIX system for a read-only directory")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if err := WriteFile(path, []byte("new"), 0o600); err == nil {
		t.Fatal("wrote into a read-only directory")
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "old" {
		t.Errorf("old file damaged: %q %v", got, err)
	}
}
