package main

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
)

// TestBrokenConfigStillReachesTheDaemon: a daemon runs a long run; its
// config file is then broken (an unknown key). `cancel` still stops the
// run, `status` and `history` still answer (their --json output stays
// clean JSON), each with one warning line on stderr that names the file
// and the problem. The endpoints come from the broken file's own bridge
// keys (the test does not set HUBGATE_CONTROL_SOCKET).
func TestBrokenConfigStillReachesTheDaemon(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "cancel_grace: 60s\nrules:\n" + busyRule("work", "single", "", 600)})
	d := startListening(t, s)
	h.push("work 1", nil)
	waitRunning(t, s, d, "work 1")

	good, err := os.ReadFile(s.configPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.configPath, append(good, []byte("no_such_key: 1\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	// The file is broken indeed: a command that needs all of it says so.
	if r := runCmd(t, s.environ(), "", "--config", s.configPath, "config", "check"); r.code != ExitConfig {
		t.Fatalf("config check of the broken file: %+v", r)
	}
	warned := func(what string, r result) {
		t.Helper()
		lines := 0
		for _, l := range strings.Split(r.stderr, "\n") {
			if strings.Contains(l, "warning") {
				lines++
				if !strings.Contains(l, s.configPath) || !strings.Contains(l, "no_such_key") {
					t.Errorf("%s: the warning does not name the file and the problem: %q", what, l)
				}
			}
		}
		if lines != 1 {
			t.Errorf("%s: %d warning lines, want 1:\n%s", what, lines, r.stderr)
		}
	}

	r := runCmd(t, s.environ(), "", "--config", s.configPath, "status", "--json")
	var st bridge.Status
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Current == nil || st.Current.Command != "work 1" {
		t.Fatalf("status --json with a broken config: %+v (decode: %v)", r, err)
	}
	warned("status", r)

	r = runCmd(t, s.environ(), "", "--config", s.configPath, "history", "--json")
	var es []journal.Entry
	if err := json.Unmarshal([]byte(r.stdout), &es); err != nil || r.code != 0 || len(es) != 1 || es[0].Command != "work 1" {
		t.Fatalf("history --json with a broken config: %+v (decode: %v)", r, err)
	}
	warned("history", r)

	r = runCmd(t, s.environ(), "", "--config", s.configPath, "cancel")
	if r.code != 0 || !strings.Contains(r.stdout, "#") {
		t.Fatalf("cancel with a broken config: %+v", r)
	}
	warned("cancel", r)
	if e := waitSettled(t, s, "work 1"); e.Status != automate.StatusCanceled {
		t.Errorf("cancel did not stop the run: %s", e2eDump([]journal.Entry{e}))
	}

	// Stopped, history reads the journal file itself, found through the
	// broken file too.
	if code := d.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("the daemon exited %d", code)
	}
	r = runCmd(t, s.environ(), "", "--config", s.configPath, "history", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &es); err != nil || r.code != 0 || len(es) != 1 || es[0].Status != automate.StatusCanceled {
		t.Fatalf("history of a stopped daemon with a broken config: %+v (decode: %v)", r, err)
	}
	if r := runCmd(t, s.environ(), "", "--config", s.configPath, "cancel"); r.code != ExitNotRunning {
		t.Errorf("cancel without a daemon: %+v, want exit %d", r, ExitNotRunning)
	}
}
