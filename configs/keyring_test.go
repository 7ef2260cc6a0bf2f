package configs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
	keyring "github.com/zalando/go-keyring"
)

// waitLimit bounds every wait of these tests; a hang fails instead of
// stalling the run.
const waitLimit = 30 * time.Second

// fakeBackend is an in-memory go-keyring stand-in. When gate is non-nil,
// every call first announces itself on entered (if non-nil) and then blocks
// until gate is closed.
type fakeBackend struct {
	gate    chan struct{}
	entered chan struct{}
	err     error // returned by every call when set

	calls    atomic.Int32
	inflight atomic.Int32
	maxSeen  atomic.Int32

	mu    sync.Mutex
	items map[string]string
}

func (f *fakeBackend) enter() func() {
	f.calls.Add(1)
	n := f.inflight.Add(1)
	for {
		m := f.maxSeen.Load()
		if n <= m || f.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	if f.entered != nil {
		f.entered <- struct{}{}
	}
	if f.gate != nil {
		<-f.gate
	}
	return func() { f.inflight.Add(-1) }
}

func (f *fakeBackend) Get(service, user string) (string, error) {
	defer f.enter()()
	if f.err != nil {
		return "", f.err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.items[service+"/"+user]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (f *fakeBackend) Set(service, user, pw string) error {
	defer f.enter()()
	if f.err != nil {
		return f.err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.items == nil {
		f.items = map[string]string{}
	}
	f.items[service+"/"+user] = pw
	return nil
}

func (f *fakeBackend) Delete(service, user string) error {
	defer f.enter()()
	if f.err != nil {
		return f.err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.items[service+"/"+user]; !ok {
		return keyring.ErrNotFound
	}
	delete(f.items, service+"/"+user)
	return nil
}

// testKeyring returns a Keyring over b with the bus guard satisfied.
func testKeyring(t *testing.T, timeout time.Duration, b backend) *Keyring {
	t.Helper()
	k := newKeyring(KeyringOptions{Timeout: timeout}, b)
	k.runtimeDir = "" // the guard has its own tests
	return k
}

// result runs f in a goroutine and fails the test if it does not return
// within waitLimit (the code under test must never hang).
func result[T any](t *testing.T, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("call did not return within %s", waitLimit)
		panic("unreachable")
	}
}

func mustStoreError(t *testing.T, err error) *StoreError {
	t.Helper()
	var se *StoreError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *StoreError", err, err)
	}
	return se
}

func TestKeyringDefaults(t *testing.T) {
	k := NewKeyring(KeyringOptions{})
	if k.Service() != "hubgate" || k.timeout != 5*time.Second {
		t.Fatalf("defaults: service %q timeout %s", k.Service(), k.timeout)
	}
	if _, ok := k.backend.(goKeyring); !ok {
		t.Fatalf("production backend is %T, want goKeyring", k.backend)
	}
	want := ""
	if runtime.GOOS == "linux" {
		want = fmt.Sprintf("/run/user/%d", os.Getuid())
	}
	if k.runtimeDir != want {
		t.Fatalf("runtimeDir %q, want %q", k.runtimeDir, want)
	}
}

func TestKeyringRoundTripAndNotFound(t *testing.T) {
	ctx := context.Background()
	b := &fakeBackend{}
	k := testKeyring(t, time.Second, b)

	if _, err := k.Get(ctx, AccountDeviceToken); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("Get of a missing account: %v, want ErrSecretNotFound", err)
	}
	if err := k.Set(ctx, AccountDeviceToken, "tok-1"); err != nil {
		t.Fatal(err)
	}
	if got := b.items["hubgate/"+AccountDeviceToken]; got != "tok-1" {
		t.Fatalf("backend holds %q under hubgate/%s", got, AccountDeviceToken)
	}
	if v, err := k.Get(ctx, AccountDeviceToken); err != nil || v != "tok-1" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if err := k.Delete(ctx, AccountDeviceToken); err != nil {
		t.Fatal(err)
	}
	err := k.Delete(ctx, AccountDeviceToken)
	if !errors.Is(err, ErrSecretNotFound) || errors.Is(err, ErrStoreUnavailable) {
		t.Fatalf("second Delete: %v", err)
	}
	if se := mustStoreError(t, err); se.Op != "delete" || se.Account != AccountDeviceToken || se.Kind != KindNotFound {
		t.Fatalf("StoreError %+v", se)
	}
	if err := k.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if len(b.items) != 0 {
		t.Fatalf("Check left items behind: %v", b.items)
	}
}

func TestKeyringRefusesEmptyAccountAndValue(t *testing.T) {
	b := &fakeBackend{}
	k := testKeyring(t, time.Second, b)
	if err := k.Set(context.Background(), "device-token", ""); err == nil || !strings.Contains(err.Error(), "empty secret") {
		t.Fatalf("Set of empty value: %v", err)
	}
	if _, err := k.Get(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "empty account") {
		t.Fatalf("Get of empty account: %v", err)
	}
	if n := b.calls.Load(); n != 0 {
		t.Fatalf("backend called %d times", n)
	}
}

func TestKeyringClassifiesBackendErrorsWithoutLeakingTheSecret(t *testing.T) {
	const secret = "s3cr3t-value-never-shown"
	b := &fakeBackend{err: fmt.Errorf("provider echoed %s back: %w", secret, keyring.ErrSetDataTooBig)}
	k := testKeyring(t, time.Second, b)
	err := k.Set(context.Background(), AccountOAuthRefreshToken, secret)
	se := mustStoreError(t, err)
	if se.Kind != KindTooBig {
		t.Fatalf("kind %v, want too-big", se.Kind)
	}
	for e := error(se); e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), secret) {
			t.Fatalf("error chain leaks the secret: %q", e.Error())
		}
	}
	if !strings.Contains(se.Err.Error(), "[REDACTED]") {
		t.Fatalf("cause not redacted: %q", se.Err.Error())
	}
}

func TestKeyringTimeoutAndSingleSlot(t *testing.T) {
	gate := make(chan struct{})
	b := &fakeBackend{gate: gate, entered: make(chan struct{}, 8)}
	k := testKeyring(t, 200*time.Millisecond, b)
	ctx := context.Background()

	// 1. A hanging backend call ends in a timeout, not a hang.
	err := result(t, func() error { _, err := k.Get(ctx, AccountDeviceToken); return err })
	se := mustStoreError(t, err)
	if se.Kind != KindTimeout || !errors.Is(err, ErrStoreUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hanging call: kind %v, err %v", se.Kind, err)
	}
	if errors.Is(err, ErrKeyringBusy) {
		t.Fatalf("first call reported busy: %v", err)
	}
	if !strings.Contains(err.Error(), "did not answer") || !strings.Contains(err.Error(), "nothing was written to a plain file") {
		t.Fatalf("message: %q", err.Error())
	}

	// 2. The stuck call keeps the slot: the next call never reaches the
	// backend and fails as busy.
	err = result(t, func() error { return k.Set(ctx, AccountDeviceToken, "x-value") })
	se = mustStoreError(t, err)
	if se.Kind != KindTimeout || !errors.Is(err, ErrKeyringBusy) || !errors.Is(err, ErrStoreUnavailable) {
		t.Fatalf("second call: kind %v, err %v", se.Kind, err)
	}
	if !strings.Contains(err.Error(), "keyring busy: an earlier call is still stuck") {
		t.Fatalf("busy message: %q", err.Error())
	}
	if n := b.calls.Load(); n != 1 {
		t.Fatalf("backend entered %d times, want 1 (the busy call must not reach it)", n)
	}

	// 3. When the stuck call finally returns, the slot is free again.
	close(gate)
	var setErr error
	// The slot frees inside the keyring once the backend's call returns;
	// nothing announces it: a bounded poll.
	testutil.Until(t, "the stuck call's slot to free", testutil.NoEvent, func() bool {
		setErr = k.Set(ctx, AccountDeviceToken, "x-value")
		return !errors.Is(setErr, ErrKeyringBusy)
	})
	if setErr != nil {
		t.Fatalf("after release: %v", setErr)
	}
	if v, err := k.Get(ctx, AccountDeviceToken); err != nil || v != "x-value" {
		t.Fatalf("Get after release = %q, %v", v, err)
	}
	if m := b.maxSeen.Load(); m != 1 {
		t.Fatalf("%d backend calls overlapped", m)
	}
}

func TestKeyringOneCallInFlight(t *testing.T) {
	b := &fakeBackend{}
	k := testKeyring(t, waitLimit, b)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acct := fmt.Sprintf("acct-%d", i)
			for range 4 {
				if err := k.Set(context.Background(), acct, "v"); err != nil {
					errs <- err
				}
				if _, err := k.Get(context.Background(), acct); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m := b.maxSeen.Load(); m != 1 {
		t.Fatalf("max backend calls in flight = %d, want 1", m)
	}
	if n := b.calls.Load(); n != 16*4*2 {
		t.Fatalf("backend calls = %d", n)
	}
}

func TestKeyringRespectsContext(t *testing.T) {
	t.Run("already cancelled", func(t *testing.T) {
		b := &fakeBackend{}
		k := testKeyring(t, time.Second, b)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := k.Get(ctx, AccountDeviceToken)
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrStoreUnavailable) || b.calls.Load() != 0 {
			t.Fatalf("err %v, backend calls %d", err, b.calls.Load())
		}
		if !strings.Contains(err.Error(), "canceled") {
			t.Fatalf("message %q", err.Error())
		}
	})
	t.Run("cancelled while the backend hangs", func(t *testing.T) {
		gate := make(chan struct{})
		defer close(gate)
		b := &fakeBackend{gate: gate, entered: make(chan struct{}, 1)}
		k := testKeyring(t, time.Hour, b)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { _, err := k.Get(ctx, AccountDeviceToken); errc <- err }()
		select {
		case <-b.entered:
		case <-time.After(waitLimit):
			t.Fatal("backend never entered")
		}
		cancel()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v", err)
			}
		case <-time.After(waitLimit):
			t.Fatal("cancel did not end the call")
		}
	})
	t.Run("caller deadline shorter than the timeout", func(t *testing.T) {
		gate := make(chan struct{})
		defer close(gate)
		b := &fakeBackend{gate: gate}
		k := testKeyring(t, time.Hour, b)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := result(t, func() error { _, err := k.Get(ctx, AccountDeviceToken); return err })
		if se := mustStoreError(t, err); se.Kind != KindTimeout {
			t.Fatalf("kind %v: %v", se.Kind, err)
		}
	})
}

func TestKeyringBusGuard(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the bus guard only exists on Linux")
	}
	run := t.TempDir()
	b := &fakeBackend{}
	k := newKeyring(KeyringOptions{Timeout: time.Second}, b)
	k.runtimeDir = run

	for _, addr := range []string{"", "autolaunch:"} {
		t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
		_, err := k.Get(context.Background(), AccountDeviceToken)
		se := mustStoreError(t, err)
		if se.Kind != KindUnavailable || !errors.Is(err, ErrStoreUnavailable) {
			t.Fatalf("addr %q: kind %v err %v", addr, se.Kind, err)
		}
		for _, want := range []string{"unavailable", "no D-Bus session bus", "DBUS_SESSION_BUS_ADDRESS is ", "the D-Bus addresses tried",
			filepath.Join(run, "bus"), "nothing was written to a plain file"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("message %q lacks %q", err.Error(), want)
			}
		}
	}
	if n := b.calls.Load(); n != 0 {
		t.Fatalf("guard let %d calls through", n)
	}

	// A session bus named in the environment lets calls through.
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
	if _, err := k.Get(context.Background(), AccountDeviceToken); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("with an address: %v", err)
	}
	// So does a bus socket in the runtime dir (godbus finds it there).
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	if err := os.WriteFile(filepath.Join(run, "bus"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Get(context.Background(), AccountDeviceToken); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("with %s/bus: %v", run, err)
	}
	if n := b.calls.Load(); n != 2 {
		t.Fatalf("backend calls %d, want 2", n)
	}
}

// TestKeyringBusGuardStopsAutolaunch runs the real go-keyring in a child
// process (godbus caches its session connection per process) with a fake
// dbus-launch first on PATH that records being run. With the guard, it must
// never run; without it (as on a machine without the guard), it does, which
// proves this test can see the leak.
func TestKeyringBusGuardStopsAutolaunch(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the bus guard only exists on Linux")
	}
	bin := t.TempDir()
	marker := filepath.Join(t.TempDir(), "dbus-launch-ran")
	script := "#!/bin/sh\necho ran >> " + marker + "\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "dbus-launch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	runtimeDir := t.TempDir() // no bus socket in it

	child := func(guard string) string {
		t.Helper()
		env := []string{"HUBGATE_AUTOLAUNCH_HELPER=" + guard, "HUBGATE_HELPER_RUNTIME_DIR=" + runtimeDir,
			"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") && !strings.HasPrefix(kv, "PATH=") {
				env = append(env, kv)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestAutolaunchHelper$", "-test.v")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper (%s) failed: %v\n%s", guard, err, out)
		}
		return string(out)
	}

	out := child("guard")
	if !strings.Contains(out, "KIND=unavailable") {
		t.Fatalf("with the guard, want unavailable:\n%s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("dbus-launch ran although the guard was on")
	}

	if _, err := os.Stat(fmt.Sprintf("/run/user/%d/bus", os.Getuid())); err == nil {
		t.Skip("control half skipped: /run/user/<uid>/bus exists, so godbus would not autolaunch here")
	}
	out = child("noguard")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control: without the guard go-keyring did not run dbus-launch, so this test cannot see the leak:\n%s", out)
	}
	if !strings.Contains(out, "KIND=unavailable") {
		t.Fatalf("control: a failed autolaunch should classify as unavailable:\n%s", out)
	}
}

// TestAutolaunchHelper is the child process of
// TestKeyringBusGuardStopsAutolaunch; it does nothing in a normal run.
func TestAutolaunchHelper(t *testing.T) {
	mode := os.Getenv("HUBGATE_AUTOLAUNCH_HELPER")
	if mode == "" {
		t.Skip("helper process only")
	}
	k := NewKeyring(KeyringOptions{Timeout: 10 * time.Second})
	k.runtimeDir = os.Getenv("HUBGATE_HELPER_RUNTIME_DIR")
	if mode == "noguard" {
		k.runtimeDir = ""
	}
	_, err := k.Get(context.Background(), "autolaunch-probe")
	var se *StoreError
	if !errors.As(err, &se) {
		t.Fatalf("err %v", err)
	}
	fmt.Printf("KIND=%s\nERR=%v\n", se.Kind, err)
}
