package configs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	dbus "github.com/godbus/dbus/v5"
	keyring "github.com/zalando/go-keyring"

	"github.com/hubgate/hubgate/internal/proc"
)

// SecretStore keeps hubgate's secrets. Consumers (cmd, oauth, pair) depend
// on this interface, never on a concrete store.
//
// Get of an account that holds nothing, and Delete of one, return an error
// for which errors.Is(err, ErrSecretNotFound) is true. Errors never contain
// the secret value.
type SecretStore interface {
	Get(ctx context.Context, account string) (string, error)
	Set(ctx context.Context, account, value string) error
	Delete(ctx context.Context, account string) error
}

// Account names under which hubgate stores its secrets (the go-keyring
// "user"; the service is KeyringOptions.Service, "hubgate" by default).
// They name what earlier versions stored: never rename one.
const (
	// AccountAutomateAccessKey is the bearer key of the Automate server
	// (Authorization: Bearer <key>), see GenerateAccessKey.
	AccountAutomateAccessKey = "automate-access-key"
	// AccountOAuthRefreshToken is the OAuth refresh token of the remote
	// device service, rotated on every refresh that returns a new one.
	AccountOAuthRefreshToken = "oauth-refresh-token"
	// AccountOAuthClientSecret is the OAuth client secret, for clients that
	// are confidential (public PKCE clients have none).
	AccountOAuthClientSecret = "oauth-client-secret"
	// AccountDeviceToken is the hub device token of the paired User Device,
	// used to connect to {api_url}/device.
	AccountDeviceToken = "device-token"
)

// CanaryAccountPrefix starts the throwaway account names used by CheckStore.
const CanaryAccountPrefix = "hubgate-canary-"

// ErrSecretNotFound: the account holds no secret. It matches fs.ErrNotExist
// too, so that a consumer declaring its own store interface
// (deviceapi/pairing) tells "nothing stored" without importing configs.
var ErrSecretNotFound error = secretNotFound{}

type secretNotFound struct{}

func (secretNotFound) Error() string        { return "secret not found" }
func (secretNotFound) Is(target error) bool { return target == fs.ErrNotExist }

var (
	// ErrStoreUnavailable matches (errors.Is) every *StoreError whose kind
	// means "the OS secret store cannot be used right now": KindUnavailable,
	// KindLocked and KindTimeout.
	ErrStoreUnavailable = errors.New("the OS secret store is unavailable")
	// ErrKeyringBusy: a call could not get the keyring's single slot within
	// its timeout because an earlier call is still stuck. Wrapped in a
	// *StoreError of KindTimeout.
	ErrKeyringBusy = errors.New("keyring busy: an earlier call is still stuck")
)

// ErrorKind classifies a *StoreError.
type ErrorKind int

const (
	// KindOther is any failure not classified below.
	KindOther ErrorKind = iota
	// KindUnavailable: no D-Bus session bus, no Secret Service provider on
	// it, or no secret store on this platform.
	KindUnavailable
	// KindLocked: the collection is locked and could not be unlocked
	// without a person (no prompt could be shown, or it was dismissed).
	KindLocked
	// KindTimeout: the call did not finish within the store's timeout (or
	// the caller's deadline), or the single slot stayed taken.
	KindTimeout
	// KindTooBig: the secret is too big for the store.
	KindTooBig
	// KindNotFound: the account holds no secret (matches ErrSecretNotFound).
	KindNotFound
)

func (k ErrorKind) String() string {
	switch k {
	case KindUnavailable:
		return "unavailable"
	case KindLocked:
		return "locked"
	case KindTimeout:
		return "timeout"
	case KindTooBig:
		return "too-big"
	case KindNotFound:
		return "not-found"
	default:
		return "other"
	}
}

// unavailable reports whether the kind means the store cannot be used now.
func (k ErrorKind) unavailable() bool {
	return k == KindUnavailable || k == KindLocked || k == KindTimeout
}

// StoreError is the error of every SecretStore call of this package. Its
// message is meant for a person and never contains the secret value.
type StoreError struct {
	Op      string // "get", "set", "delete", "check" or "list"
	Account string
	// File is the secrets file of a FileStore's error; "" for the OS
	// secret store.
	File string
	Kind ErrorKind
	Err  error // the underlying cause (never carries the secret value)

	reason string // human explanation, set by classify
}

// noPlaintext ends every "unavailable" message of the OS secret store, so
// nobody wonders whether the secret went somewhere else instead, and says
// how to choose the file store.
const noPlaintext = "nothing was written to a plain file instead (to keep the secrets in a private file on this machine, set 'secrets: file' in the configuration)"

func (e *StoreError) Error() string {
	prefix := fmt.Sprintf("secret store %s %q: ", e.Op, e.Account)
	if e.Account == "" {
		prefix = "secret store " + e.Op + ": "
	}
	reason := e.reason
	if reason == "" && e.Err != nil {
		reason = e.Err.Error()
	}
	if e.File != "" {
		return e.fileError(prefix, reason)
	}
	switch e.Kind {
	case KindOther:
		if errors.Is(e.Err, context.Canceled) {
			return prefix + "canceled by the caller"
		}
		return prefix + "the OS secret store failed: " + reason
	case KindNotFound:
		return prefix + "no secret stored under this account"
	case KindUnavailable:
		return prefix + "the OS secret store is unavailable: " + reason + "; " + noPlaintext
	case KindLocked:
		return prefix + "the OS secret store is locked: " + reason + "; " + noPlaintext
	case KindTimeout:
		return prefix + "the OS secret store did not answer: " + reason + "; " + noPlaintext
	case KindTooBig:
		return prefix + "the secret is too big for the OS secret store"
	}
	return prefix + "the OS secret store failed: " + reason
}

// fileError is Error for a FileStore's error.
func (e *StoreError) fileError(prefix, reason string) string {
	file := "the secrets file " + e.File
	switch e.Kind {
	case KindNotFound:
		return prefix + "no secret stored under this account (in " + e.File + ")"
	case KindOther:
		if errors.Is(e.Err, context.Canceled) {
			return prefix + "canceled by the caller"
		}
	}
	return prefix + file + " cannot be used: " + reason
}

// Unwrap returns the underlying cause.
func (e *StoreError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrStoreUnavailable) true for the kinds that mean
// "unusable now", and errors.Is(err, ErrSecretNotFound) true for KindNotFound.
func (e *StoreError) Is(target error) bool {
	switch target {
	case ErrStoreUnavailable:
		return e.Kind.unavailable()
	case ErrSecretNotFound, fs.ErrNotExist:
		return e.Kind == KindNotFound
	}
	return false
}

// D-Bus error names that classify. Any org.freedesktop.DBus.Error.Spawn.*
// name also means "no provider could be started".
var dbusErrorKinds = map[string]ErrorKind{
	"org.freedesktop.DBus.Error.ServiceUnknown": KindUnavailable,
	"org.freedesktop.DBus.Error.NameHasNoOwner": KindUnavailable,
	"org.freedesktop.DBus.Error.NoServer":       KindUnavailable,
	"org.freedesktop.DBus.Error.Disconnected":   KindUnavailable,
	"org.freedesktop.DBus.Error.NoReply":        KindTimeout,
	"org.freedesktop.DBus.Error.Timeout":        KindTimeout,
	"org.freedesktop.DBus.Error.TimedOut":       KindTimeout,
	"org.freedesktop.Secret.Error.IsLocked":     KindLocked,
	// No default collection: a Secret Service without a login keyring.
	"org.freedesktop.Secret.Error.NoSuchObject": KindUnavailable,
}

// classify maps a backend error onto a kind and a human reason. It never
// sees the secret value.
func classify(err error) (ErrorKind, string) {
	var (
		execErr *exec.Error
		exitErr *exec.ExitError
		opErr   *net.OpError
		dbusErr dbus.Error
		dbusPtr *dbus.Error
	)
	switch {
	case errors.Is(err, keyring.ErrNotFound), errors.Is(err, ErrSecretNotFound):
		return KindNotFound, ""
	case errors.Is(err, keyring.ErrSetDataTooBig):
		return KindTooBig, ""
	case errors.Is(err, keyring.ErrUnsupportedPlatform):
		return KindUnavailable, "no supported secret store on this platform (" + err.Error() + ")"
	case errors.Is(err, ErrKeyringBusy):
		return KindTimeout, err.Error() + " (the secret store or D-Bus is hanging)"
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout, "no answer before the deadline (a locked collection waiting on an unlock prompt, or a stuck D-Bus)"
	case errors.Is(err, errNoSessionBus):
		return KindUnavailable, err.Error()
	case errors.As(err, &exitErr):
		return KindUnavailable, "no D-Bus session bus (autolaunching one with dbus-launch failed: " + exitErr.Error() + ")"
	case errors.As(err, &execErr):
		return KindUnavailable, "no D-Bus session bus (could not run " + execErr.Name + ": " + execErr.Err.Error() + ")"
	case errors.As(err, &opErr):
		return KindUnavailable, "cannot connect to the D-Bus session bus (" + opErr.Error() + ")"
	case errors.Is(err, dbus.ErrClosed):
		return KindUnavailable, "the D-Bus session bus connection is closed"
	case errors.As(err, &dbusErr):
		return classifyDBus(dbusErr)
	case errors.As(err, &dbusPtr) && dbusPtr != nil:
		return classifyDBus(*dbusPtr)
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "failed to unlock correct collection"):
		return KindLocked, "the login collection could not be unlocked without a person (no unlock prompt can be shown, or it was dismissed); unlock it, for example by logging in to the desktop session, and retry"
	case strings.HasPrefix(msg, "dbus: couldn't determine address of session bus"),
		strings.HasPrefix(msg, "dbus: authentication failed"):
		return KindUnavailable, "no usable D-Bus session bus (" + msg + ")"
	}
	return KindOther, msg
}

func classifyDBus(e dbus.Error) (ErrorKind, string) {
	kind, ok := dbusErrorKinds[e.Name]
	if !ok && strings.HasPrefix(e.Name, "org.freedesktop.DBus.Error.Spawn.") {
		kind, ok = KindUnavailable, true
	}
	if !ok {
		return KindOther, "D-Bus error " + e.Name + ": " + e.Error()
	}
	switch kind {
	case KindUnavailable:
		if e.Name == "org.freedesktop.Secret.Error.NoSuchObject" {
			return kind, "the Secret Service has no default collection (" + e.Name + ")"
		}
		return kind, "no Secret Service provider (org.freedesktop.secrets) on the D-Bus session bus (" + e.Name + "); install and start one such as gnome-keyring or KeePassXC"
	case KindTimeout:
		return kind, "the Secret Service did not reply (" + e.Name + ")"
	case KindLocked:
		return kind, "the collection is locked (" + e.Name + "); unlock it and retry"
	}
	return kind, e.Name
}

// newStoreError builds a classified *StoreError. When secret is non-empty
// and the cause's text contains it (no known backend does that, but a
// future one might), the cause is replaced by a redacted copy of its text.
func newStoreError(op, account string, err error, secret string) *StoreError {
	var se *StoreError
	if errors.As(err, &se) {
		return se
	}
	kind, reason := classify(err)
	if secret != "" && strings.Contains(err.Error(), secret) {
		err = errors.New(strings.ReplaceAll(err.Error(), secret, "[REDACTED]"))
		reason = strings.ReplaceAll(reason, secret, "[REDACTED]")
	}
	return &StoreError{Op: op, Account: account, Kind: kind, Err: err, reason: reason}
}

// CheckStore proves that s works: it stores a random value under a
// throwaway account (the canary: CanaryAccountPrefix + "<pid>-<start>-"
// + random hex, naming the process that made it), reads it back,
// compares, and deletes it. Callers run it before creating anything
// remotely whose secret they must persist. The first failure is returned
// (the failed call's *StoreError, or one with Op "check" when the value read
// back differs); the canary is deleted whenever it was stored.
//
// A process killed mid-check (kill -9) cannot delete its canary, so every
// canary is written down first, in CanaryRegisterAccount, and each check
// begins by sweeping the register: a canary whose process is gone (or
// whose pid now names a later process: the start time differs) is
// deleted; a live process's is never touched. The register is deleted
// once it is empty. Two checks at the same instant may both rewrite the
// register; the worst that costs is one leftover name, never a live
// canary.
func CheckStore(ctx context.Context, s SecretStore) (err error) {
	pid := os.Getpid()
	account := fmt.Sprintf("%s%d-%d-%s", CanaryAccountPrefix, pid, proc.StartTime(pid), randomHex(4))
	value := "canary-" + randomHex(16)
	pending, err := sweepCanaries(ctx, s)
	if err != nil {
		return err
	}
	if err := writeCanaryRegister(ctx, s, append(pending, account)); err != nil {
		return err
	}
	stored := false
	defer func() {
		if stored {
			if derr := s.Delete(ctx, account); derr != nil && !errors.Is(derr, ErrSecretNotFound) {
				if err == nil {
					err = derr
				}
				return // the name stays in the register: a later check retries
			}
		}
		var se *StoreError
		if errors.As(err, &se) && se.Op == "check" {
			// The store gives back other values than it was given: the
			// register cannot be read back either; it goes whole (a live
			// check's name lost from it costs a leftover, never its canary).
			if rerr := writeCanaryRegister(ctx, s, nil); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return
		}
		if rerr := dropFromCanaryRegister(ctx, s, account); rerr != nil && err == nil {
			err = rerr
		}
	}()
	stored = true // from here on the canary may exist, even if Set fails
	if err := s.Set(ctx, account, value); err != nil {
		return err
	}
	got, err := s.Get(ctx, account)
	if err != nil {
		return err
	}
	if got != value {
		return &StoreError{Op: "check", Account: account, Kind: KindOther,
			reason: "the canary secret read back differs from the one stored"}
	}
	return nil
}

// CanaryRegisterAccount holds the names of the canaries CheckStore may
// have stored and not yet deleted, one a line (names, not secrets).
const CanaryRegisterAccount = "hubgate-canaries"

// readCanaryRegister returns the register's names (none when it is empty
// or missing).
func readCanaryRegister(ctx context.Context, s SecretStore) ([]string, error) {
	v, err := s.Get(ctx, CanaryRegisterAccount)
	if errors.Is(err, ErrSecretNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Fields(v), nil
}

// writeCanaryRegister stores names as the register, or deletes it when
// there are none.
func writeCanaryRegister(ctx context.Context, s SecretStore, names []string) error {
	if len(names) == 0 {
		if err := s.Delete(ctx, CanaryRegisterAccount); err != nil && !errors.Is(err, ErrSecretNotFound) {
			return err
		}
		return nil
	}
	return s.Set(ctx, CanaryRegisterAccount, strings.Join(names, "\n"))
}

// dropFromCanaryRegister removes name from the register as it is now
// (another check may have added its own meanwhile).
func dropFromCanaryRegister(ctx context.Context, s SecretStore, name string) error {
	names, err := readCanaryRegister(ctx, s)
	if err != nil {
		return err
	}
	return writeCanaryRegister(ctx, s, slices.DeleteFunc(names, func(n string) bool { return n == name }))
}

// sweepCanaries deletes the registered canaries of processes that are
// gone and returns the names still pending (live processes' canaries,
// and names it cannot read, which it leaves alone).
func sweepCanaries(ctx context.Context, s SecretStore) ([]string, error) {
	names, err := readCanaryRegister(ctx, s)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	var pending []string
	for _, n := range names {
		pid, start, ok := canaryOwner(n)
		if !ok || proc.Alive(pid, start) {
			pending = append(pending, n)
			continue
		}
		if err := s.Delete(ctx, n); err != nil && !errors.Is(err, ErrSecretNotFound) {
			return nil, err
		}
	}
	return pending, nil
}

// canaryOwner reads the process of a canary's name: prefix, pid, start
// time, random hex.
func canaryOwner(name string) (pid int, start uint64, ok bool) {
	rest, found := strings.CutPrefix(name, CanaryAccountPrefix)
	parts := strings.Split(rest, "-")
	if !found || len(parts) != 3 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return 0, 0, false
	}
	return pid, start, true
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
