package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/deviceapi/pairing"
)

// A second `run` stops on the instance lock before it reads a secret or
// builds an engine: with another daemon holding the lock and no usable
// keyring, it says that the other one runs, naming its PID (exit 5), not
// that the keyring is unavailable.
func TestSecondRunSaysAlreadyRunningBeforeTouchingTheKeyring(t *testing.T) {
	xdg := t.TempDir()
	sock := filepath.Join(t.TempDir(), "control.sock")
	lock, err := control.Lock(sock) // the first daemon: this test process
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if err := pairing.SaveState(filepath.Join(xdg, "hubgate", "state.json"), pairing.State{
		DeviceID: "dev-1", DeviceName: "d", APIURL: "http://127.0.0.1:1", DeviceTypeID: "t", TokenID: "tok-1",
	}); err != nil {
		t.Fatal(err)
	}
	e := env(t,
		"XDG_CONFIG_HOME="+xdg,
		"XDG_RUNTIME_DIR="+t.TempDir(),
		"HUBGATE_CONTROL_SOCKET="+sock,
		"HUBGATE_JOURNAL="+filepath.Join(t.TempDir(), "journal.db"),
		// No secret store answers here.
		"DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(t.TempDir(), "no-bus"),
	)
	r := runCmd(t, e, "", "run")
	want := "another hubgate daemon is running (pid " + strconv.Itoa(os.Getpid())
	if r.code != ExitUnavailable || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, ExitUnavailable, want)
	}
	if strings.Contains(strings.ToLower(r.stderr), "secret store") || strings.Contains(r.stderr, "keyring") {
		t.Errorf("the keyring was read before the lock: %q", r.stderr)
	}
}
