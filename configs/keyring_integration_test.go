//go:build linux

package configs

// Integration tests against a real Secret Service (D-Bus, so Linux only).
// They run under .ci/with-keyring (a private D-Bus session with a
// throwaway, unlocked gnome-keyring), which sets HUBGATE_TEST_KEYRING=1. With CI set and no
// harness they fail; otherwise they skip.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dbus "github.com/godbus/dbus/v5"
	"github.com/hubgate/hubgate/internal/testutil"
	ss "github.com/zalando/go-keyring/secret_service"
)

// integrationTimeout is the per-call keyring timeout of these tests:
// generous, since a loaded CI machine can be slow, yet far below a hang.
const integrationTimeout = 20 * time.Second

func inCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// requireKeyringHarness skips (or fails, in CI) unless a real Secret
// Service is reachable through the harness.
func requireKeyringHarness(t *testing.T) {
	t.Helper()
	if os.Getenv("HUBGATE_TEST_KEYRING") == "1" {
		return
	}
	if inCI() {
		t.Fatal("CI is set but HUBGATE_TEST_KEYRING is not: the keyring harness is missing; run the tests as `.ci/with-keyring go test ./...`")
	}
	t.Skip("no Secret Service harness: run `.ci/with-keyring go test ./configs/...` to include this test")
}

// requireTool returns the path of a tool the harness installs.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if inCI() || os.Getenv("HUBGATE_TEST_KEYRING") == "1" {
			t.Fatalf("%s is not installed (apt-get install -y --no-install-recommends dbus gnome-keyring libsecret-tools)", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return p
}

// secretTool runs secret-tool, bounded in time.
func secretTool(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	out, err := exec.CommandContext(ctx, requireTool(t, "secret-tool"), args...).Output()
	return string(out), err
}

func testAccount() string { return "hubgate-test-" + randomHex(6) }

func TestKeyringIntegrationRoundTrip(t *testing.T) {
	requireKeyringHarness(t)
	ctx := context.Background()
	k := NewKeyring(KeyringOptions{Timeout: integrationTimeout})
	acct := testAccount()
	t.Cleanup(func() { _ = k.Delete(context.Background(), acct) })

	if _, err := k.Get(ctx, acct); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("Get before Set: %v, want ErrSecretNotFound", err)
	}
	if err := k.Set(ctx, acct, "first-value"); err != nil {
		t.Fatalf("Set: %v", err)
	}
	// The item really is in the Secret Service, under service "hubgate".
	out, err := secretTool(t, "lookup", "service", "hubgate", "username", acct)
	if err != nil || out != "first-value" {
		t.Fatalf("secret-tool lookup = %q, %v", out, err)
	}
	if err := k.Set(ctx, acct, "second-value"); err != nil {
		t.Fatalf("Set (replace): %v", err)
	}
	if v, err := k.Get(ctx, acct); err != nil || v != "second-value" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	out, err = secretTool(t, "search", "--all", "service", "hubgate", "username", acct)
	if err != nil || strings.Count(out, "label = Password for '"+acct+"' on 'hubgate'") != 1 {
		t.Fatalf("want exactly one item after a replace, secret-tool search says (%v):\n%s", err, out)
	}
	if err := k.Delete(ctx, acct); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if out, err := secretTool(t, "lookup", "service", "hubgate", "username", acct); err == nil || out != "" {
		t.Fatalf("item still present after Delete: %q, %v", out, err)
	}
	if _, err := k.Get(ctx, acct); !errors.Is(err, ErrSecretNotFound) || errors.Is(err, ErrStoreUnavailable) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if err := k.Delete(ctx, acct); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("second Delete: %v", err)
	}

	// An item written by another Secret Service client is readable.
	cmd := exec.Command(requireTool(t, "secret-tool"), "store", "--label=hubgate test", "service", "hubgate", "username", acct)
	cmd.Stdin = strings.NewReader("from-secret-tool")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("secret-tool store: %v\n%s", err, out)
	}
	if v, err := k.Get(ctx, acct); err != nil || v != "from-secret-tool" {
		t.Fatalf("Get of a secret-tool item = %q, %v", v, err)
	}
}

func TestKeyringIntegrationCheck(t *testing.T) {
	requireKeyringHarness(t)
	k := NewKeyring(KeyringOptions{Timeout: integrationTimeout})
	if err := k.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	out, err := secretTool(t, "search", "--all", "service", "hubgate")
	if err != nil && out != "" {
		t.Fatalf("secret-tool search: %v", err)
	}
	if strings.Contains(out, CanaryAccountPrefix) {
		t.Fatalf("Check left its canary behind:\n%s", out)
	}
}

const loginCollection = "/org/freedesktop/secrets/collection/login"

// lockLogin locks the login collection the way the notes describe
// (dbus-send; `secret-tool lock` can hang).
func lockLogin(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	out, err := exec.CommandContext(ctx, requireTool(t, "dbus-send"), "--session", "--print-reply",
		"--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
		"org.freedesktop.Secret.Service.Lock", "array:objpath:"+loginCollection).CombinedOutput()
	if err != nil || !strings.Contains(string(out), loginCollection) {
		t.Fatalf("lock: %v\n%s", err, out)
	}
}

// unlockLogin unlocks the login collection with the harness's throwaway
// password through gnome-keyring's prompt-free interface.
func unlockLogin(password string) error {
	svc, err := ss.NewSecretService()
	if err != nil {
		return err
	}
	session, err := svc.OpenSession()
	if err != nil {
		return err
	}
	defer svc.Close(session)
	call := svc.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").Call(
		"org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface.UnlockWithMasterPassword", 0,
		dbus.ObjectPath(loginCollection), ss.NewSecret(session.Path(), password))
	return call.Err
}

// TestKeyringIntegrationLocked locks the harness's login collection and
// expects a Locked (or Timeout) error within the timeout, not a hang, then
// unlocks it again so the order of tests does not matter.
func TestKeyringIntegrationLocked(t *testing.T) {
	requireKeyringHarness(t)
	pwFile := os.Getenv("HUBGATE_TEST_KEYRING_PASSWORD_FILE")
	if pwFile == "" {
		// Never lock a keyring this test did not get the password of: it
		// could be a person's own.
		if inCI() {
			t.Fatal("HUBGATE_TEST_KEYRING_PASSWORD_FILE is not set: run under .ci/with-keyring")
		}
		t.Skip("locking needs the throwaway keyring of .ci/with-keyring (HUBGATE_TEST_KEYRING_PASSWORD_FILE)")
	}
	pw, err := os.ReadFile(pwFile)
	if err != nil || len(pw) == 0 {
		t.Fatalf("read the harness password: %v", err)
	}
	ctx := context.Background()
	acct := testAccount()
	setup := NewKeyring(KeyringOptions{Timeout: integrationTimeout})
	if err := setup.Set(ctx, acct, "locked-value"); err != nil {
		t.Fatalf("Set: %v", err)
	}
	t.Cleanup(func() { _ = setup.Delete(context.Background(), acct) })

	lockLogin(t)
	unlocked := false
	t.Cleanup(func() {
		if !unlocked {
			if err := unlockLogin(string(pw)); err != nil {
				t.Errorf("unlock after the test: %v", err)
			}
		}
	})

	// A fresh store, so a stuck call cannot block the other tests' stores.
	const lockedTimeout = 5 * time.Second
	k := NewKeyring(KeyringOptions{Timeout: lockedTimeout})
	for _, op := range []string{"get", "set"} {
		err := result(t, func() error {
			if op == "get" {
				_, err := k.Get(ctx, acct)
				return err
			}
			return k.Set(ctx, acct, "never-stored")
		})
		se := mustStoreError(t, err)
		if !errors.Is(err, ErrStoreUnavailable) || (se.Kind != KindLocked && se.Kind != KindTimeout) {
			t.Fatalf("%s on a locked collection: kind %v, %v", op, se.Kind, err)
		}
		if strings.Contains(err.Error(), "never-stored") || !strings.Contains(err.Error(), "nothing was written to a plain file") {
			t.Fatalf("message: %q", err.Error())
		}
		t.Logf("%s on a locked collection: kind %v: %v", op, se.Kind, err)
	}

	if err := unlockLogin(string(pw)); err != nil {
		t.Fatalf("unlock: %v", err)
	}
	unlocked = true
	if v, err := setup.Get(ctx, acct); err != nil || v != "locked-value" {
		t.Fatalf("after unlocking: Get = %q, %v", v, err)
	}
}

// privateBus starts a dbus-daemon of its own with no activatable services
// and returns its address; it is stopped when the test ends.
func privateBus(t *testing.T) string {
	t.Helper()
	daemon := requireTool(t, "dbus-daemon")
	dir := t.TempDir()
	conf := filepath.Join(dir, "bus.conf")
	err := os.WriteFile(conf, []byte(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=`+filepath.Join(dir, "bus")+`</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--config-file="+conf, "--nofork", "--print-address=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		addr <- strings.TrimSpace(line)
	}()
	select {
	case a := <-addr:
		if a == "" {
			t.Fatal("dbus-daemon printed no address")
		}
		return a
	case <-time.After(waitLimit):
		t.Fatal("dbus-daemon did not start")
		return ""
	}
}

// runKeyringChild runs TestKeyringChildHelper in a child process (godbus
// keeps one session connection per process) against the bus at addr and
// returns the kinds of its calls.
func runKeyringChild(t *testing.T, addr string, calls int, timeout time.Duration) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit+2*time.Duration(calls)*timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKeyringChildHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "HUBGATE_KEYRING_CHILD="+strconv.Itoa(calls),
		"HUBGATE_KEYRING_CHILD_TIMEOUT="+timeout.String(), "DBUS_SESSION_BUS_ADDRESS="+addr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var kinds []string
	for _, line := range strings.Split(string(out), "\n") {
		if k, ok := strings.CutPrefix(line, "KIND="); ok {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != calls {
		t.Fatalf("child reported %d calls, want %d:\n%s", len(kinds), calls, out)
	}
	t.Logf("child output:\n%s", out)
	return kinds
}

// TestKeyringChildHelper is the child process of the tests above; it does
// nothing in a normal run.
func TestKeyringChildHelper(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("HUBGATE_KEYRING_CHILD"))
	if n == 0 {
		t.Skip("helper process only")
	}
	timeout, err := time.ParseDuration(os.Getenv("HUBGATE_KEYRING_CHILD_TIMEOUT"))
	if err != nil {
		t.Fatal(err)
	}
	k := NewKeyring(KeyringOptions{Timeout: timeout})
	for range n {
		_, err := k.Get(context.Background(), "child-probe")
		var se *StoreError
		if !errors.As(err, &se) {
			t.Fatalf("err %v", err)
		}
		fmt.Printf("KIND=%s busy=%v\nERR=%v\n", se.Kind, errors.Is(err, ErrKeyringBusy), err)
	}
}

// TestKeyringNoProvider: a real session bus on which nobody provides
// org.freedesktop.secrets gives a real ServiceUnknown error.
func TestKeyringNoProvider(t *testing.T) {
	requireKeyringHarness(t)
	addr := privateBus(t)
	kinds := runKeyringChild(t, addr, 1, integrationTimeout)
	if kinds[0] != "unavailable busy=false" {
		t.Fatalf("kind %s, want unavailable", kinds[0])
	}
}

// TestKeyringFrozenProvider: a Secret Service provider that stops answering
// (a gnome-keyring-daemon under SIGSTOP) makes go-keyring block forever;
// the store must time out, then report busy while the first call is stuck.
func TestKeyringFrozenProvider(t *testing.T) {
	requireKeyringHarness(t)
	addr := privateBus(t)
	daemon := requireTool(t, "gnome-keyring-daemon")
	runtimeDir, dataDir := t.TempDir(), t.TempDir()
	cmd := exec.Command(daemon, "--foreground", "--unlock", "--components=secrets")
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+addr,
		"XDG_RUNTIME_DIR="+runtimeDir, "XDG_DATA_HOME="+dataDir)
	cmd.Stdin = strings.NewReader("frozen-" + randomHex(8))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The bus announces the name's new owner (NameOwnerChanged): the wait
	// re-asks at each such signal, having subscribed before it first asks.
	owners := make(chan *dbus.Signal, 16)
	conn.Signal(owners)
	if err := conn.AddMatchSignal(dbus.WithMatchInterface("org.freedesktop.DBus"), dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, "org.freedesktop.secrets")); err != nil {
		t.Fatal(err)
	}
	var ownErr error
	testutil.Until(t, "gnome-keyring-daemon to own org.freedesktop.secrets", owners, func() bool {
		var has bool
		ownErr = conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.freedesktop.secrets").Store(&has)
		return ownErr == nil && has
	}, func() string { return fmt.Sprintf("last answer: %v", ownErr) })
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	kinds := runKeyringChild(t, addr, 2, 2*time.Second)
	if kinds[0] != "timeout busy=false" || kinds[1] != "timeout busy=true" {
		t.Fatalf("kinds %v, want a timeout, then busy", kinds)
	}
}
