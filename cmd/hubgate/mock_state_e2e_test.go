package main

// `hubgate mock --state FILE` restarted under a running daemon, on the
// address the OS chose for its first start (the default port may be
// taken).

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/hub/mockhub"
)

func TestMockStateKeepsADaemonPairedAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "mock-state.json")
	environ := e2eEnv(dir)
	p := startMockProc(t, environ, "--listen", "127.0.0.1:0", "--state", state)
	h := &e2eHub{tb: t, proc: p, url: p.url, client: &http.Client{Timeout: 30 * time.Second}}
	if st, body := h.admin("POST", "/mock/devices", map[string]string{"name": "kept pad"}, &h.device); st != http.StatusCreated {
		t.Fatalf("create a device: %d %s", st, body)
	}
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "rules:\n" + busyRule("work", "single", "", 1)})
	d := startListening(t, s)
	h.push("work 1", nil)
	if e := waitSettled(t, s, "work 1"); e.Status != automate.StatusCompleted || e.Answer != "done work 1" {
		t.Fatalf("before the restart: %s", e2eDump([]journal.Entry{e}))
	}

	// The state file is private and holds no device token.
	fi, err := os.Stat(state)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(state); !strings.Contains(string(b), h.id()) || strings.Contains(string(b), h.device.Token.Token) {
		t.Errorf("the state file lacks the device or holds its token:\n%s", b)
	}

	// Restart the mock on the same address with the same state.
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("mock SIGTERM: exit %d\n%s", code, p.Stderr())
	}
	p2 := startMockProc(t, environ, "--listen", strings.TrimPrefix(p.url, "http://"), "--state", state)
	if p2.url != p.url {
		t.Fatalf("the restarted mock is at %s, was at %s", p2.url, p.url)
	}
	// Its URL line came after all it says of its start.
	if !strings.Contains(p2.Stderr(), "state kept in "+state+" (1 device(s))") {
		t.Errorf("the restarted mock does not say what it loaded: %s", p2.Stderr())
	}
	h.proc = p2
	// The daemon reconnects on its own: its device token is known again.
	d.since = 0
	d.waitListening()
	h.push("work 2", nil)
	if e := waitSettled(t, s, "work 2"); e.Status != automate.StatusCompleted || e.Answer != "done work 2" {
		t.Fatalf("after the restart: %s", e2eDump([]journal.Entry{e}))
	}

	// No new pairing: the new mock saw no sign-in, no REST call and no new
	// device; the one device is the daemon's, verified with its old token.
	evs := h.events(0)
	for _, e := range evs {
		if e.Source == mockhub.SourceOAuth || e.Source == mockhub.SourceREST || e.Action == "CreateDevice" || e.Action == "rejected" {
			t.Errorf("after the restart the mock saw %s %s (status %d)", e.Source, e.Action, e.Status)
		}
	}
	verified := false
	for _, e := range evs {
		verified = verified || e.Action == "VerifySelf" && e.DeviceID == h.id() && e.TokenID == h.device.Token.ID
	}
	var list []mockhub.DeviceInfo
	h.admin("GET", "/mock/devices", nil, &list)
	if !verified || len(list) != 1 || list[0].Device.ID != h.id() || !list[0].Device.IsVerified || list[0].Connections != 1 {
		t.Errorf("after the restart: verified=%v devices %+v", verified, list)
	}
	d.stop(syscall.SIGTERM)
}

// A corrupt state file stops the mock with a clear error (exit 3); the
// file is left as it was.
func TestMockRefusesACorruptStateFile(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "mock-state.json")
	os.WriteFile(state, []byte(`{"version":1,"devices":[{"device":{"id":"d"}`), 0o600)
	r := runCmd(t, e2eEnv(dir), "", "mock", "--listen", "127.0.0.1:0", "--state", state)
	if r.code != ExitConfig || !strings.Contains(r.stderr, "state file is corrupt") || !strings.Contains(r.stderr, state) {
		t.Errorf("corrupt state: %+v", r)
	}
	if b, _ := os.ReadFile(state); string(b) != `{"version":1,"devices":[{"device":{"id":"d"}` {
		t.Errorf("the corrupt file was changed: %s", b)
	}
}
