package configs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	keyring "github.com/zalando/go-keyring"
)

// Keyring defaults.
const (
	DefaultKeyringService = "hubgate"
	DefaultKeyringTimeout = 5 * time.Second
)

// KeyringOptions configures NewKeyring.
type KeyringOptions struct {
	// Service is the go-keyring service name (the Secret Service attribute
	// "service"). Zero: "hubgate".
	Service string
	// Timeout bounds every call, including the wait for the single slot.
	// go-keyring itself has no timeout and can block forever. Zero: 5s.
	Timeout time.Duration
	// Logger receives debug lines per call and a warning when a call
	// finishes after its caller gave up. Never the secret. Zero: discard.
	Logger *slog.Logger
}

// backend is the part of go-keyring Keyring uses; unit tests plug a fake.
type backend interface {
	Get(service, user string) (string, error)
	Set(service, user, password string) error
	Delete(service, user string) error
}

// goKeyring is the production backend: go-keyring's package functions
// (the Secret Service over D-Bus on Linux).
type goKeyring struct{}

func (goKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }
func (goKeyring) Set(service, user, pw string) error       { return keyring.Set(service, user, pw) }
func (goKeyring) Delete(service, user string) error        { return keyring.Delete(service, user) }

// Keyring is the SecretStore over the OS secret store (the Secret Service
// on Linux, the Keychain on macOS, the Credential Manager on Windows).
//
// Every call runs under Timeout and respects its ctx. Only one call is in
// flight at a time: a call that hangs keeps the slot until the backend
// returns (go-keyring cannot be cancelled), and later calls that cannot get
// the slot within their own timeout fail with ErrKeyringBusy instead of
// piling up more stuck goroutines.
//
// On Linux, when DBUS_SESSION_BUS_ADDRESS is unset (or "autolaunch:") and
// neither /run/user/<uid>/bus nor /run/user/<uid>/dbus-session exists, the
// store reports KindUnavailable without calling go-keyring: godbus would
// otherwise run dbus-launch on every call and leave a dbus-daemon (and a
// keyring daemon) running each time. An unavailable error names the D-Bus
// address that was tried.
type Keyring struct {
	service    string
	timeout    time.Duration
	log        *slog.Logger
	backend    backend
	slot       chan struct{}
	runtimeDir string // "/run/user/<uid>" on Linux; empty disables the bus guard
}

var _ SecretStore = (*Keyring)(nil)

// NewKeyring returns a Keyring over go-keyring.
func NewKeyring(o KeyringOptions) *Keyring {
	return newKeyring(o, goKeyring{})
}

func newKeyring(o KeyringOptions, b backend) *Keyring {
	if o.Service == "" {
		o.Service = DefaultKeyringService
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultKeyringTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	k := &Keyring{
		service: o.Service,
		timeout: o.Timeout,
		log:     o.Logger,
		backend: b,
		slot:    make(chan struct{}, 1),
	}
	if runtime.GOOS == "linux" {
		k.runtimeDir = fmt.Sprintf("/run/user/%d", os.Getuid())
	}
	return k
}

// Service returns the service name items are stored under.
func (k *Keyring) Service() string { return k.service }

// Get returns the secret stored under account.
func (k *Keyring) Get(ctx context.Context, account string) (string, error) {
	return k.call(ctx, "get", account, "", func() (string, error) {
		return k.backend.Get(k.service, account)
	})
}

// Set stores value under account, replacing any previous value. An empty
// value is refused (storing nothing is always a caller bug).
func (k *Keyring) Set(ctx context.Context, account, value string) error {
	if value == "" {
		return &StoreError{Op: "set", Account: account, Kind: KindOther, reason: "refusing to store an empty secret"}
	}
	_, err := k.call(ctx, "set", account, value, func() (string, error) {
		return "", k.backend.Set(k.service, account, value)
	})
	return err
}

// Delete removes the secret stored under account. Deleting an account that
// holds nothing returns an error matching ErrSecretNotFound.
func (k *Keyring) Delete(ctx context.Context, account string) error {
	_, err := k.call(ctx, "delete", account, "", func() (string, error) {
		return "", k.backend.Delete(k.service, account)
	})
	return err
}

// Check proves that the store works with a canary Set/Get/Delete (see
// CheckStore). At most three calls, each under the timeout.
func (k *Keyring) Check(ctx context.Context) error { return CheckStore(ctx, k) }

// errNoSessionBus is the cause of the bus guard's refusal.
var errNoSessionBus = errors.New("no D-Bus session bus")

// busGuard refuses when godbus would autolaunch a session bus. Its
// message names what godbus looks at, in its order (v5.2.2,
// getSessionBusAddress): DBUS_SESSION_BUS_ADDRESS, then
// /run/user/<uid>/bus, then /run/user/<uid>/dbus-session. godbus does not
// read $XDG_RUNTIME_DIR; when a bus socket is there instead, the message
// says how to point DBUS_SESSION_BUS_ADDRESS at it.
func (k *Keyring) busGuard() error {
	if k.runtimeDir == "" {
		return nil
	}
	addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if addr != "" && addr != "autolaunch:" {
		return nil
	}
	bus := filepath.Join(k.runtimeDir, "bus")
	session := filepath.Join(k.runtimeDir, "dbus-session")
	for _, p := range []string{bus, session} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			return nil // godbus discovers the bus here; no autolaunch
		}
	}
	env := "DBUS_SESSION_BUS_ADDRESS is unset"
	if addr != "" {
		env = "DBUS_SESSION_BUS_ADDRESS is " + addr + " (hubgate never autolaunches a bus)"
	}
	fix := "run hubgate inside a desktop or D-Bus session with a Secret Service provider such as gnome-keyring"
	if xdg := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(xdg) && filepath.Clean(xdg) != k.runtimeDir {
		if _, err := os.Stat(filepath.Join(xdg, "bus")); err == nil {
			fix = "a bus socket exists at " + filepath.Join(xdg, "bus") + ": export DBUS_SESSION_BUS_ADDRESS=unix:path=" + filepath.Join(xdg, "bus")
		} else {
			fix += " ($XDG_RUNTIME_DIR/bus is not looked at, and " + filepath.Join(xdg, "bus") + " does not exist either)"
		}
	}
	return fmt.Errorf("%w: %s, and neither %s nor %s exists (the D-Bus addresses tried); %s", errNoSessionBus, env, bus, session, fix)
}

// busAddress names the D-Bus session bus address godbus connects to (see
// busGuard for its order); "" off Linux.
func (k *Keyring) busAddress() string {
	if k.runtimeDir == "" {
		return ""
	}
	if addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); addr != "" && addr != "autolaunch:" {
		return "DBUS_SESSION_BUS_ADDRESS=" + addr
	}
	bus := filepath.Join(k.runtimeDir, "bus")
	if _, err := os.Stat(bus); err == nil {
		return "unix:path=" + bus
	}
	return "the address in " + filepath.Join(k.runtimeDir, "dbus-session")
}

type callResult struct {
	value string
	err   error
}

// call runs fn under the timeout and the single slot, and classifies its
// error. secret is the value being stored (Set), used only to make sure it
// never reaches an error message.
func (k *Keyring) call(ctx context.Context, op, account, secret string, fn func() (string, error)) (string, error) {
	if account == "" {
		return "", &StoreError{Op: op, Kind: KindOther, reason: "empty account name"}
	}
	if err := k.busGuard(); err != nil {
		k.log.Debug("keyring call refused", "op", op, "account", account, "reason", "no session bus")
		return "", newStoreError(op, account, err, "")
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	if ctx.Err() != nil {
		return "", k.ctxError(ctx, op, account, start, false)
	}
	select {
	case k.slot <- struct{}{}:
	case <-ctx.Done():
		return "", k.ctxError(ctx, op, account, start, true)
	}

	done := make(chan callResult, 1)
	var abandoned atomic.Bool
	go func() {
		defer func() { <-k.slot }()
		v, err := fn()
		if abandoned.Load() {
			// The caller was told this call failed; say what really happened
			// (a late successful set did store the secret).
			k.log.Warn("keyring call finished after its caller gave up",
				"op", op, "account", account,
				"elapsed", time.Since(start).Round(time.Millisecond), "result", kindName(err))
		}
		done <- callResult{v, err}
	}()

	select {
	case r := <-done:
		k.log.Debug("keyring call", "op", op, "account", account,
			"elapsed", time.Since(start).Round(time.Millisecond), "result", kindName(r.err))
		if r.err != nil {
			se := newStoreError(op, account, r.err, secret)
			if addr := k.busAddress(); se.Kind == KindUnavailable && addr != "" && se.reason != "" {
				se.reason += " (D-Bus session bus tried: " + addr + ")"
			}
			return "", se
		}
		return r.value, nil
	case <-ctx.Done():
		abandoned.Store(true)
		return "", k.ctxError(ctx, op, account, start, false)
	}
}

// kindName names a call result for log lines.
func kindName(err error) string {
	if err == nil {
		return "ok"
	}
	kind, _ := classify(err)
	return kind.String()
}

// ctxError turns the end of ctx into a *StoreError: KindTimeout for a
// deadline (ErrKeyringBusy when the slot never came free), KindOther
// wrapping context.Canceled for a cancelled caller.
func (k *Keyring) ctxError(ctx context.Context, op, account string, start time.Time, waitingForSlot bool) *StoreError {
	err := ctx.Err()
	if errors.Is(err, context.Canceled) {
		return &StoreError{Op: op, Account: account, Kind: KindOther, Err: err, reason: "canceled by the caller"}
	}
	budget := k.timeout
	if dl, ok := ctx.Deadline(); ok {
		budget = dl.Sub(start).Round(time.Millisecond)
	}
	if waitingForSlot {
		k.log.Warn("keyring busy", "op", op, "account", account, "waited", budget)
		return &StoreError{Op: op, Account: account, Kind: KindTimeout, Err: ErrKeyringBusy,
			reason: fmt.Sprintf("%v (waited %s for it; the secret store or D-Bus is hanging)", ErrKeyringBusy, budget)}
	}
	k.log.Warn("keyring call timed out", "op", op, "account", account, "timeout", budget)
	return &StoreError{Op: op, Account: account, Kind: KindTimeout,
		Err:    fmt.Errorf("keyring %s gave up after %s: %w", op, budget, context.DeadlineExceeded),
		reason: fmt.Sprintf("no answer within %s (a locked collection waiting on an unlock prompt, or a stuck D-Bus or keyring daemon)", budget)}
}
