package configs

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	dbus "github.com/godbus/dbus/v5"
)

// secretsFixture is a keyring over a fake backend and a file path in a
// fresh folder.
type secretsFixture struct {
	b    *fakeBackend
	k    *Keyring
	file string
}

func newSecretsFixture(t *testing.T, backendErr error) secretsFixture {
	t.Helper()
	b := &fakeBackend{err: backendErr}
	k := newKeyring(KeyringOptions{Timeout: time.Second}, b)
	k.runtimeDir = "" // no bus guard: the fake answers
	return secretsFixture{b: b, k: k, file: filepath.Join(t.TempDir(), "hubgate", SecretsFileName)}
}

func (f secretsFixture) open(t *testing.T, mode string) (*Secrets, error) {
	t.Helper()
	return OpenSecrets(context.Background(), SecretsOptions{Mode: mode, File: f.file, keyring: f.k})
}

func TestOpenSecretsKeyringReachable(t *testing.T) {
	for _, mode := range []string{"", SecretsAuto, SecretsKeyring} {
		f := newSecretsFixture(t, nil)
		s, err := f.open(t, mode)
		if err != nil {
			t.Fatalf("mode %q: %v", mode, err)
		}
		if s.Backend != SecretsKeyring || s.Fallback || s.Warning != "" || s.SecretStore != SecretStore(f.k) {
			t.Fatalf("mode %q: %+v", mode, s)
		}
		if f.b.calls.Load() != 1 {
			t.Fatalf("mode %q: %d backend calls, want the one probe", mode, f.b.calls.Load())
		}
		if len(f.b.items) != 0 {
			t.Fatalf("the probe stored something: %v", f.b.items)
		}
	}
}

func TestOpenSecretsFallsBackWithoutSecretService(t *testing.T) {
	// No Secret Service provider on a bus that exists.
	f := newSecretsFixture(t, dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown"})
	s, err := f.open(t, SecretsAuto)
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend != SecretsFile || !s.Fallback || s.File != f.file {
		t.Fatalf("%+v", s)
	}
	if _, ok := s.SecretStore.(*FileStore); !ok {
		t.Fatalf("store %T", s.SecretStore)
	}
	for _, want := range []string{"WARNING", "PLAIN TEXT", f.file, "hubgate secrets migrate", "secrets: file", "org.freedesktop.secrets"} {
		if !strings.Contains(s.Warning, want) {
			t.Errorf("warning lacks %q:\n%s", want, s.Warning)
		}
	}
	// The file store works. Once a keyring answers, auto reads it first
	// and the file's secrets after it (as gh reads hosts.yml).
	ctx := context.Background()
	for a, v := range map[string]string{AccountDeviceToken: "tok-file", AccountOAuthRefreshToken: "refresh-file"} {
		if err := s.Set(ctx, a, v); err != nil {
			t.Fatal(err)
		}
	}
	g := newSecretsFixture(t, nil)
	g.file = f.file
	g.b.items = map[string]string{"hubgate/" + AccountOAuthRefreshToken: "refresh-keyring"}
	s2, err := g.open(t, SecretsAuto)
	if err != nil || s2.Backend != SecretsKeyring || s2.Fallback || !strings.Contains(s2.Warning, "hubgate secrets migrate") || !strings.Contains(s2.Warning, f.file) {
		t.Fatalf("auto with a keyring and a file: %+v %v", s2, err)
	}
	if v, err := s2.Get(ctx, AccountDeviceToken); err != nil || v != "tok-file" {
		t.Fatalf("a secret only in the file: %q %v", v, err)
	}
	if v, err := s2.Get(ctx, AccountOAuthRefreshToken); err != nil || v != "refresh-keyring" {
		t.Fatalf("the keyring's value wins: %q %v", v, err)
	}
	if _, err := s2.Get(ctx, AccountAutomateAccessKey); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("in neither: %v", err)
	}
	// A write goes to the keyring and takes the file's copy away.
	if err := s2.Set(ctx, AccountDeviceToken, "tok-new"); err != nil {
		t.Fatal(err)
	}
	file := NewFileStore(f.file)
	if _, err := file.Get(ctx, AccountDeviceToken); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("the file kept the old copy: %v", err)
	}
	if v, err := s2.Get(ctx, AccountDeviceToken); err != nil || v != "tok-new" {
		t.Fatalf("after the write: %q %v", v, err)
	}
	// A delete removes both copies; the last one takes the file with it.
	if err := s2.Delete(ctx, AccountOAuthRefreshToken); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Get(ctx, AccountOAuthRefreshToken); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if file.Exists() {
		t.Error("the emptied file stayed")
	}
	if err := s2.Delete(ctx, AccountOAuthRefreshToken); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestOpenSecretsNoDBusAtAll(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the bus guard only exists on Linux")
	}
	run := t.TempDir()
	xdg := t.TempDir() // an empty $XDG_RUNTIME_DIR
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	f := newSecretsFixture(t, nil)
	f.k.runtimeDir = run

	s, err := f.open(t, "")
	if err != nil || s.Backend != SecretsFile || !s.Fallback {
		t.Fatalf("auto: %+v %v", s, err)
	}
	for _, want := range []string{"DBUS_SESSION_BUS_ADDRESS is unset", filepath.Join(run, "bus"), filepath.Join(run, "dbus-session"), "PLAIN TEXT"} {
		if !strings.Contains(s.Warning, want) {
			t.Errorf("warning lacks %q:\n%s", want, s.Warning)
		}
	}

	// Explicit keyring: a clear error naming what was tried and the way out.
	_, err = f.open(t, SecretsKeyring)
	if !errors.Is(err, ErrStoreUnavailable) {
		t.Fatalf("keyring with no keyring: %v", err)
	}
	for _, want := range []string{"DBUS_SESSION_BUS_ADDRESS is unset", filepath.Join(run, "bus"), filepath.Join(xdg, "bus") + " does not exist", "secrets: file"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, serr := os.Stat(f.file); serr == nil {
		t.Error("keyring mode wrote the secrets file")
	}
	if f.b.calls.Load() != 0 {
		t.Errorf("%d calls reached go-keyring with no bus", f.b.calls.Load())
	}

	// A bus socket under $XDG_RUNTIME_DIR, where godbus does not look: the
	// message says how to point DBUS_SESSION_BUS_ADDRESS at it.
	if err := os.WriteFile(filepath.Join(xdg, "bus"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = f.open(t, SecretsKeyring)
	if want := "export DBUS_SESSION_BUS_ADDRESS=unix:path=" + filepath.Join(xdg, "bus"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v lacks %q", err, want)
	}
}

func TestOpenSecretsExplicitFile(t *testing.T) {
	f := newSecretsFixture(t, nil) // a keyring that works
	s, err := f.open(t, SecretsFile)
	if err != nil || s.Backend != SecretsFile || s.Fallback {
		t.Fatalf("%+v %v", s, err)
	}
	if !strings.Contains(s.Warning, "plain text") || strings.Contains(s.Warning, "WARNING") {
		t.Errorf("explicit file warning: %q", s.Warning)
	}
	if f.b.calls.Load() != 0 {
		t.Error("secrets: file probed the keyring")
	}
}

func TestOpenSecretsLockedIsAnErrorNotAFallback(t *testing.T) {
	for name, berr := range map[string]error{
		"locked":   dbus.Error{Name: "org.freedesktop.Secret.Error.IsLocked"},
		"no reply": dbus.Error{Name: "org.freedesktop.DBus.Error.NoReply"},
	} {
		f := newSecretsFixture(t, berr)
		s, err := f.open(t, SecretsAuto)
		if err == nil || !errors.Is(err, ErrStoreUnavailable) || !strings.Contains(err.Error(), "secrets: file") {
			t.Fatalf("%s: %+v %v", name, s, err)
		}
		if _, serr := os.Stat(f.file); serr == nil {
			t.Fatalf("%s: the secrets file was written", name)
		}
	}
	f := newSecretsFixture(t, nil)
	if _, err := f.open(t, "plaintext"); err == nil || !strings.Contains(err.Error(), "auto, keyring, file") {
		t.Fatalf("bad mode: %v", err)
	}
}

func TestSecretsSettingLoads(t *testing.T) {
	f := newFixture(t)
	f.writeDefault(t, "secrets: file\n")
	cfg, err := Load(f.opts(LoadOptions{}))
	if err != nil || cfg.Secrets != SecretsFile {
		t.Fatalf("secrets: file: %q %v", cfg.Secrets, err)
	}
	f.writeDefault(t, "secrets: plaintext\n")
	_, err = Load(f.opts(LoadOptions{}))
	if err == nil || !strings.Contains(err.Error(), "secrets: must be one of auto, keyring, file") {
		t.Fatalf("secrets: plaintext: %v", err)
	}
}

func TestMigrateSecrets(t *testing.T) {
	ctx := context.Background()
	from := newTestFileStore(t)
	want := map[string]string{AccountDeviceToken: "tok", AccountOAuthRefreshToken: "refresh", AccountAutomateAccessKey: "key"}
	for a, v := range want {
		if err := from.Set(ctx, a, v); err != nil {
			t.Fatal(err)
		}
	}
	// A target that fails half-way: nothing leaves the file.
	f := newSecretsFixture(t, dbus.Error{Name: "org.freedesktop.Secret.Error.IsLocked"})
	if _, _, err := MigrateSecrets(ctx, from, f.k); err == nil || !strings.Contains(err.Error(), "the file still holds every secret") {
		t.Fatalf("failing target: %v", err)
	}
	if got, _ := from.Accounts(ctx); len(got) != 3 {
		t.Fatalf("the file lost secrets on a failed migration: %v", got)
	}
	// The keyring's own value (read before the file's) stays.
	to := NewMemoryStore()
	if err := to.Set(ctx, AccountAutomateAccessKey, "keyring-key"); err != nil {
		t.Fatal(err)
	}
	want[AccountAutomateAccessKey] = "keyring-key"
	moved, shadowed, err := MigrateSecrets(ctx, from, to)
	if err != nil || strings.Join(moved, ",") != AccountDeviceToken+","+AccountOAuthRefreshToken || strings.Join(shadowed, ",") != AccountAutomateAccessKey {
		t.Fatalf("moved %v shadowed %v: %v", moved, shadowed, err)
	}
	for a, v := range want {
		if got, err := to.Get(ctx, a); err != nil || got != v {
			t.Errorf("%s: %q %v", a, got, err)
		}
	}
	if from.Exists() {
		t.Error("the file stayed after a complete migration")
	}
}

func TestLazySecretsOpensOnceAtFirstUse(t *testing.T) {
	ctx := context.Background()
	f := newSecretsFixture(t, dbus.Error{Name: "org.freedesktop.Secret.Error.IsLocked"})
	var told []*Secrets
	l := NewLazySecrets(SecretsOptions{File: f.file, keyring: f.k}, func(s *Secrets) { told = append(told, s) })
	if f.b.calls.Load() != 0 {
		t.Fatal("the store was opened before its first use")
	}
	// A failed choice is the call's error, and the next call tries again.
	if err := l.Set(ctx, AccountDeviceToken, "tok"); !errors.Is(err, ErrStoreUnavailable) {
		t.Fatalf("locked: %v", err)
	}
	f.b.err = nil
	if err := l.Set(ctx, AccountDeviceToken, "tok"); err != nil {
		t.Fatal(err)
	}
	if v, err := l.Get(ctx, AccountDeviceToken); err != nil || v != "tok" {
		t.Fatalf("get %q %v", v, err)
	}
	if err := l.Delete(ctx, AccountDeviceToken); err != nil {
		t.Fatal(err)
	}
	if len(told) != 1 || told[0].Backend != SecretsKeyring {
		t.Fatalf("told %d times: %+v", len(told), told)
	}
}

// A secret written to the file during the migration (a daemon's) keeps
// the file: nothing is lost.
func TestMigrateSecretsKeepsAFileThatChanged(t *testing.T) {
	ctx := context.Background()
	from := newTestFileStore(t)
	if err := from.Set(ctx, AccountDeviceToken, "tok"); err != nil {
		t.Fatal(err)
	}
	to := &writeThrough{MemoryStore: NewMemoryStore(), during: func() { _ = from.Set(ctx, AccountAutomateAccessKey, "late") }}
	if _, _, err := MigrateSecrets(ctx, from, to); err == nil || !strings.Contains(err.Error(), "run the migration again") {
		t.Fatalf("changed file: %v", err)
	}
	if v, err := from.Get(ctx, AccountAutomateAccessKey); err != nil || v != "late" {
		t.Fatalf("the late secret: %q %v", v, err)
	}
}

// writeThrough runs during once, at its first Set.
type writeThrough struct {
	*MemoryStore
	during func()
}

func (w *writeThrough) Set(ctx context.Context, account, value string) error {
	if w.during != nil {
		w.during()
		w.during = nil
	}
	return w.MemoryStore.Set(ctx, account, value)
}

// A bus that is named but does not answer: the error names the address.
func TestKeyringErrorNamesTheBusAddressTried(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the bus guard only exists on Linux")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/hubgate-bus")
	f := newSecretsFixture(t, &net.OpError{Op: "dial", Net: "unix", Err: errors.New("connect: no such file or directory")})
	f.k.runtimeDir = t.TempDir()
	_, err := f.open(t, SecretsKeyring)
	if want := "D-Bus session bus tried: DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/hubgate-bus"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v lacks %q", err, want)
	}
	s, err := f.open(t, SecretsAuto)
	if err != nil || s.Backend != SecretsFile || !strings.Contains(s.Warning, "unix:path=/nonexistent/hubgate-bus") {
		t.Fatalf("auto: %+v %v", s, err)
	}
}
