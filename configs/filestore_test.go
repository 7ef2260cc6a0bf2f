package configs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func newTestFileStore(t *testing.T) *FileStore {
	t.Helper()
	return NewFileStore(filepath.Join(t.TempDir(), "hubgate", SecretsFileName))
}

func TestFileStoreRoundTripDeleteAndMode(t *testing.T) {
	ctx := context.Background()
	s := newTestFileStore(t)
	if _, err := s.Get(ctx, AccountDeviceToken); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("get before any set: %v", err)
	}
	if s.Exists() {
		t.Fatal("a get created the file")
	}
	if err := s.Set(ctx, AccountDeviceToken, "tok-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, AccountOAuthRefreshToken, "refresh-1"); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(s.Path())
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("file mode %v %v, want 0600", fi.Mode(), err)
		}
		di, err := os.Stat(filepath.Dir(s.Path()))
		if err != nil || di.Mode().Perm() != 0o700 {
			t.Fatalf("folder mode %v %v, want 0700", di.Mode(), err)
		}
	}
	// A write replaces the file (atomicfile: a new file renamed over it),
	// never rewrites it in place.
	before, _ := os.Stat(s.Path())
	if err := s.Set(ctx, AccountDeviceToken, "tok-2"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(s.Path())
	if os.SameFile(before, after) {
		t.Error("the file was rewritten in place, not replaced")
	}
	if v, err := s.Get(ctx, AccountDeviceToken); err != nil || v != "tok-2" {
		t.Fatalf("get %q %v", v, err)
	}
	if got, err := s.Accounts(ctx); err != nil || strings.Join(got, ",") != AccountDeviceToken+","+AccountOAuthRefreshToken {
		t.Fatalf("accounts %v %v", got, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(s.Path()))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	if err := s.Delete(ctx, AccountDeviceToken); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, AccountDeviceToken); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if err := s.Delete(ctx, AccountDeviceToken); !errors.Is(err, ErrSecretNotFound) || errors.Is(err, ErrStoreUnavailable) {
		t.Fatalf("second delete: %v", err)
	}
	if err := s.Delete(ctx, AccountOAuthRefreshToken); err != nil {
		t.Fatal(err)
	}
	if s.Exists() {
		t.Error("the file outlived its last secret")
	}
	if err := s.Set(ctx, AccountDeviceToken, ""); err == nil {
		t.Error("an empty secret was stored")
	}
	if _, err := s.Get(ctx, ""); err == nil {
		t.Error("an empty account was accepted")
	}
}

// unusableFile asserts err refuses the file for a person to fix.
func unusableFile(t *testing.T, err error, wants ...string) {
	t.Helper()
	se := mustStoreError(t, err)
	if se.Kind != KindUnavailable || !errors.Is(err, ErrStoreUnavailable) || se.File == "" {
		t.Fatalf("kind %v file %q: %v", se.Kind, se.File, err)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message %q lacks %q", err.Error(), w)
		}
	}
}

func TestFileStoreRefusesWiderPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX permissions")
	}
	ctx := context.Background()
	s := newTestFileStore(t)
	if err := s.Set(ctx, AccountDeviceToken, "tok-secret-value"); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660} {
		if err := os.Chmod(s.Path(), mode); err != nil {
			t.Fatal(err)
		}
		_, err := s.Get(ctx, AccountDeviceToken)
		unusableFile(t, err, s.Path(), fmt.Sprintf("%04o", mode), "chmod 600 "+s.Path())
		if strings.Contains(err.Error(), "tok-secret-value") {
			t.Fatal("the secret is in the error")
		}
		// A write refuses too, and leaves the file as it was.
		data, _ := os.ReadFile(s.Path())
		unusableFile(t, s.Set(ctx, AccountOAuthRefreshToken, "other"), fmt.Sprintf("%04o", mode))
		after, _ := os.ReadFile(s.Path())
		fi, _ := os.Stat(s.Path())
		if string(after) != string(data) || fi.Mode().Perm() != mode {
			t.Fatalf("a refused set changed the file (mode %v)", fi.Mode())
		}
	}
	if err := os.Chmod(s.Path(), 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get(ctx, AccountDeviceToken); err != nil || v != "tok-secret-value" {
		t.Fatalf("after chmod 600: %q %v", v, err)
	}
}

func TestFileStoreRefusesAnotherOwnersFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX owners")
	}
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	ctx := context.Background()
	s := newTestFileStore(t)
	if err := s.Set(ctx, AccountDeviceToken, "tok"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(s.Path(), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx, AccountDeviceToken)
	unusableFile(t, err, "belongs to user id 65534", "not to you (0)")
	unusableFile(t, s.Set(ctx, AccountDeviceToken, "tok2"), "belongs to user id 65534")
}

func TestFileStoreRefusesSymlinkAndGarbage(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix file kinds")
	}
	ctx := context.Background()
	s := newTestFileStore(t)
	if err := os.MkdirAll(filepath.Dir(s.Path()), 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte(`{"version":1,"secrets":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, s.Path()); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx, AccountDeviceToken)
	if se := mustStoreError(t, err); se.Kind != KindUnavailable || !errors.Is(se.Err, syscall.ELOOP) {
		t.Fatalf("symlink: %v", err)
	}
	os.Remove(s.Path())

	if err := os.WriteFile(s.Path(), []byte(`{"version":1,"secrets":{"device-token":"abc-secret" oops`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx, AccountDeviceToken)
	unusableFile(t, err, "not a hubgate secrets file", "byte")
	if strings.Contains(err.Error(), "abc-secret") || strings.Contains(err.Error(), "oops") {
		t.Fatalf("the file's content is in the error: %v", err)
	}
	if err := os.WriteFile(s.Path(), []byte(`{"version":2,"secrets":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx, AccountDeviceToken)
	unusableFile(t, err, "version 2")
}

// Two stores on one file stand for two processes (pair and run): each
// has its own mutex, so only the flock keeps their writes apart.
func TestFileStoreConcurrentSetGet(t *testing.T) {
	ctx := context.Background()
	a := newTestFileStore(t)
	b := NewFileStore(a.Path())
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i := range n {
		for _, s := range []*FileStore{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				acct := fmt.Sprintf("acct-%p-%d", s, i)
				if err := s.Set(ctx, acct, "v"+acct); err != nil {
					errs <- err
					return
				}
				if v, err := s.Get(ctx, acct); err != nil || v != "v"+acct {
					errs <- fmt.Errorf("get %s: %q %v", acct, v, err)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := a.Accounts(ctx)
	if err != nil || len(got) != 2*n {
		t.Fatalf("%d accounts after %d concurrent sets (%v): a write was lost", len(got), 2*n, err)
	}
}
