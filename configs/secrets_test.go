package configs

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	dbus "github.com/godbus/dbus/v5"
	keyring "github.com/zalando/go-keyring"

	"github.com/hubgate/hubgate/internal/proc"
)

// realExitError returns a genuine *exec.ExitError (the shape godbus returns
// when dbus-launch exits non-zero).
func realExitError(t *testing.T) error {
	t.Helper()
	err := exec.Command("sh", "-c", "exit 1").Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("want an *exec.ExitError, got %T %v", err, err)
	}
	return err
}

// realOpError returns a genuine *net.OpError from dialling a unix socket
// that does not exist (what godbus returns for a dead bus address).
func realOpError(t *testing.T) error {
	t.Helper()
	_, err := net.Dial("unix", filepath.Join(t.TempDir(), "no-bus"))
	var oe *net.OpError
	if !errors.As(err, &oe) {
		t.Fatalf("want a *net.OpError, got %T %v", err, err)
	}
	return err
}

func TestClassify(t *testing.T) {
	const secret = "hunter2-secret-value"
	tests := []struct {
		name        string
		err         error
		kind        ErrorKind
		unavailable bool   // errors.Is(err, ErrStoreUnavailable)
		msg         string // a phrase the message must contain
	}{
		{"go-keyring not found", keyring.ErrNotFound, KindNotFound, false, "no secret stored under this account"},
		{"wrapped not found", fmt.Errorf("lookup: %w", keyring.ErrNotFound), KindNotFound, false, "no secret stored"},
		{"too big", keyring.ErrSetDataTooBig, KindTooBig, false, "too big"},
		{"unsupported platform", keyring.ErrUnsupportedPlatform, KindUnavailable, true, "no supported secret store on this platform"},
		{"no dbus-launch", &exec.Error{Name: "dbus-launch", Err: exec.ErrNotFound}, KindUnavailable, true, "no D-Bus session bus (could not run dbus-launch"},
		{"dbus-launch failed", nil, KindUnavailable, true, "autolaunching one with dbus-launch failed"},
		{"dead bus socket", nil, KindUnavailable, true, "cannot connect to the D-Bus session bus"},
		{"no address", errors.New("dbus: couldn't determine address of session bus"), KindUnavailable, true, "no usable D-Bus session bus"},
		{"auth failed", errors.New("dbus: authentication failed"), KindUnavailable, true, "no usable D-Bus session bus"},
		{"connection closed", dbus.ErrClosed, KindUnavailable, true, "connection is closed"},
		{"no provider (value)", dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown",
			Body: []any{"The name org.freedesktop.secrets was not provided by any .service files"}},
			KindUnavailable, true, "no Secret Service provider (org.freedesktop.secrets)"},
		{"no provider (pointer)", dbus.NewError("org.freedesktop.DBus.Error.ServiceUnknown", nil),
			KindUnavailable, true, "install and start one such as gnome-keyring"},
		{"no provider (wrapped)", fmt.Errorf("open session: %w", dbus.Error{Name: "org.freedesktop.DBus.Error.NameHasNoOwner"}),
			KindUnavailable, true, "no Secret Service provider"},
		{"activation failed", dbus.Error{Name: "org.freedesktop.DBus.Error.Spawn.ChildExited",
			Body: []any{"Process org.freedesktop.secrets exited with status 1"}}, KindUnavailable, true, "Spawn.ChildExited"},
		{"no default collection", dbus.Error{Name: "org.freedesktop.Secret.Error.NoSuchObject"}, KindUnavailable, true, "no default collection"},
		{"no reply", dbus.Error{Name: "org.freedesktop.DBus.Error.NoReply"}, KindTimeout, true, "did not reply"},
		{"locked (dbus)", dbus.Error{Name: "org.freedesktop.Secret.Error.IsLocked"}, KindLocked, true, "is locked"},
		{"locked (go-keyring)", fmt.Errorf("failed to unlock correct collection '%v'", dbus.ObjectPath("/org/freedesktop/secrets/aliases/default")),
			KindLocked, true, "could not be unlocked without a person"},
		{"deadline", context.DeadlineExceeded, KindTimeout, true, "did not answer"},
		{"busy", ErrKeyringBusy, KindTimeout, true, "keyring busy: an earlier call is still stuck"},
		{"no session bus (guard)", fmt.Errorf("%w (DBUS_SESSION_BUS_ADDRESS unset)", errNoSessionBus), KindUnavailable, true, "DBUS_SESSION_BUS_ADDRESS unset"},
		{"access denied", dbus.Error{Name: "org.freedesktop.DBus.Error.AccessDenied", Body: []any{"nope"}}, KindOther, false, "D-Bus error org.freedesktop.DBus.Error.AccessDenied: nope"},
		{"anything else", errors.New("boom"), KindOther, false, "the OS secret store failed: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err
			switch tc.name {
			case "dbus-launch failed":
				err = realExitError(t)
			case "dead bus socket":
				err = realOpError(t)
			}
			se := newStoreError("set", AccountDeviceToken, err, secret)
			if se.Kind != tc.kind {
				t.Fatalf("kind %v, want %v (%v)", se.Kind, tc.kind, err)
			}
			if got := errors.Is(se, ErrStoreUnavailable); got != tc.unavailable {
				t.Fatalf("errors.Is(ErrStoreUnavailable) = %v", got)
			}
			if got := errors.Is(se, ErrSecretNotFound); got != (tc.kind == KindNotFound) {
				t.Fatalf("errors.Is(ErrSecretNotFound) = %v", got)
			}
			if !reflect.DeepEqual(se.Unwrap(), err) { // dbus.Error is not comparable
				t.Fatalf("cause %v, want %v", se.Unwrap(), err)
			}
			msg := se.Error()
			if !strings.Contains(msg, tc.msg) {
				t.Fatalf("message %q lacks %q", msg, tc.msg)
			}
			if !strings.HasPrefix(msg, `secret store set "device-token": `) {
				t.Fatalf("message %q does not name the op and account", msg)
			}
			if tc.unavailable && !strings.HasSuffix(msg, noPlaintext) {
				t.Fatalf("unavailable message %q does not rule out plaintext", msg)
			}
			if strings.Contains(msg, secret) {
				t.Fatalf("message leaks the secret: %q", msg)
			}
		})
	}
}

func TestStoreErrorPassesThrough(t *testing.T) {
	inner := &StoreError{Op: "get", Account: "a", Kind: KindLocked}
	if got := newStoreError("set", "b", fmt.Errorf("x: %w", inner), ""); got != inner {
		t.Fatalf("an existing *StoreError was re-wrapped: %v", got)
	}
}

func TestMemoryStore(t *testing.T) {
	ctx := context.Background()
	var m MemoryStore // the zero value works
	if _, err := m.Get(ctx, AccountDeviceToken); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("Get missing: %v", err)
	}
	if err := m.Delete(ctx, AccountDeviceToken); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("Delete missing: %v", err)
	}
	if err := m.Set(ctx, AccountDeviceToken, "a"); err != nil {
		t.Fatal(err)
	}
	if err := m.Set(ctx, AccountDeviceToken, "b"); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Get(ctx, AccountDeviceToken); v != "b" || err != nil {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if err := m.Set(ctx, AccountDeviceToken, ""); err == nil {
		t.Fatal("empty value accepted")
	}
	if _, err := m.Get(ctx, ""); err == nil {
		t.Fatal("empty account accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.Get(cctx, AccountDeviceToken); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: %v", err)
	}
	if err := m.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := m.Delete(ctx, AccountDeviceToken); err != nil {
		t.Fatal(err)
	}
	if n := len(m.secrets); n != 0 {
		t.Fatalf("%d secrets left (Check must clean up its canary)", n)
	}
}

func TestMemoryStoreConcurrent(t *testing.T) {
	m := NewMemoryStore()
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acct := fmt.Sprintf("a%d", i)
			for j := range 100 {
				val := fmt.Sprintf("v%d", j)
				if err := m.Set(ctx, acct, val); err != nil {
					t.Error(err)
					return
				}
				if v, err := m.Get(ctx, acct); err != nil || v != val {
					t.Errorf("Get %s = %q, %v", acct, v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// lyingStore returns a different value than it was given.
type lyingStore struct{ MemoryStore }

func (l *lyingStore) Get(ctx context.Context, account string) (string, error) {
	v, err := l.MemoryStore.Get(ctx, account)
	return v + "-changed", err
}

// failingStore fails one operation with a fixed error.
type failingStore struct {
	MemoryStore
	failOp string
	err    error
}

func (f *failingStore) Get(ctx context.Context, a string) (string, error) {
	if f.failOp == "get" {
		return "", f.err
	}
	return f.MemoryStore.Get(ctx, a)
}

func (f *failingStore) Set(ctx context.Context, a, v string) error {
	if f.failOp == "set" {
		return f.err
	}
	return f.MemoryStore.Set(ctx, a, v)
}

func (f *failingStore) Delete(ctx context.Context, a string) error {
	if f.failOp == "delete" {
		return f.err
	}
	return f.MemoryStore.Delete(ctx, a)
}

func TestCheckStore(t *testing.T) {
	ctx := context.Background()
	l := &lyingStore{}
	err := CheckStore(ctx, l)
	if err == nil || !strings.Contains(err.Error(), "canary secret read back differs") {
		t.Fatalf("lying store: %v", err)
	}
	if len(l.secrets) != 0 {
		t.Fatalf("canary left behind: %v", l.secrets)
	}

	locked := &StoreError{Op: "x", Account: "y", Kind: KindLocked}
	for _, op := range []string{"set", "get", "delete"} {
		f := &failingStore{failOp: op, err: locked}
		if err := CheckStore(ctx, f); !errors.Is(err, ErrStoreUnavailable) {
			t.Fatalf("failing %s: %v", op, err)
		}
		if op == "get" && len(f.secrets) != 0 {
			t.Fatalf("canary not deleted after a failed get: %v", f.secrets)
		}
	}

	// The canary account has the documented prefix, the process's pid and
	// start time and a random suffix; each check has its own.
	rec := &recordingStore{}
	if err := CheckStore(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := CheckStore(ctx, rec); err != nil {
		t.Fatal(err)
	}
	var canaries []string
	for _, a := range rec.accounts {
		if a != CanaryRegisterAccount {
			canaries = append(canaries, a)
		}
	}
	if len(canaries) != 2 || canaries[0] == canaries[1] {
		t.Fatalf("canary accounts %v", rec.accounts)
	}
	for _, a := range canaries {
		pid, start, ok := canaryOwner(a)
		if !ok || pid != os.Getpid() || start != proc.StartTime(pid) {
			t.Fatalf("canary account %q: pid %d start %d", a, pid, start)
		}
	}
	if len(rec.secrets) != 0 {
		t.Fatalf("left behind: %v", rec.secrets)
	}
}

type recordingStore struct {
	MemoryStore
	accounts []string
}

func (r *recordingStore) Set(ctx context.Context, a, v string) error {
	r.accounts = append(r.accounts, a)
	return r.MemoryStore.Set(ctx, a, v)
}

// The account names are where earlier versions stored their secrets: a
// renamed constant would lose them.
func TestAccountNamesAreStable(t *testing.T) {
	for got, want := range map[string]string{
		AccountAutomateAccessKey: "automate-access-key",
		AccountOAuthRefreshToken: "oauth-refresh-token",
		AccountOAuthClientSecret: "oauth-client-secret",
		AccountDeviceToken:       "device-token",
	} {
		if got != want {
			t.Errorf("account %q, want %q", got, want)
		}
	}
}

func TestGenerateAccessKey(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		k, err := GenerateAccessKey()
		if err != nil {
			t.Fatal(err)
		}
		if len(k) != 43 {
			t.Fatalf("len %d, want 43", len(k))
		}
		raw, err := base64.RawURLEncoding.DecodeString(k)
		if err != nil || len(raw) != 32 {
			t.Fatalf("not 32 bytes of base64url without padding: %v", err)
		}
		if err := ValidateAccessKey(k); err != nil {
			t.Fatalf("generated key invalid: %v", err)
		}
		if seen[k] {
			t.Fatal("duplicate key")
		}
		seen[k] = true
	}
}

func TestValidateAccessKey(t *testing.T) {
	good := strings.Repeat("k", 24)
	tests := []struct {
		key  string
		want string // "" means valid
	}{
		{good, ""},
		{strings.Repeat("é", 24), ""}, // characters, not bytes
		{"", "it is empty"},
		{strings.Repeat("k", 23), "it has 23 characters, at least 24 are required"},
		{" " + good, "leading or trailing whitespace"},
		{good + "\n", "leading or trailing whitespace"},
		{good[:12] + "\x00" + good[12:], "control characters"},
	}
	for _, tc := range tests {
		err := ValidateAccessKey(tc.key)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.key, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrInvalidAccessKey) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.key, err, tc.want)
			continue
		}
		if tc.key != "" && strings.Contains(err.Error(), strings.TrimSpace(tc.key)) {
			t.Errorf("error leaks the key: %v", err)
		}
	}
}
