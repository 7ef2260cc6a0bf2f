package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/controlcli"
	"github.com/hubgate/hubgate/internal/testutil"
)

// Issue 17's re-pairing: the device token is disabled (the mock's admin
// API), status says to pair again, `hubgate pair --reuse` gives the running
// daemon a new token, and every command after it is answered. (The new hub
// client numbered its events from 1 again and the journal took them for
// the old connection's: as many commands were lost, silently, as the old
// connection had carried.) Issue 24: the person is told, by one desktop
// notification (a notification server of the test's own on the session
// bus) naming `hubgate pair --reuse`, not by silence.
func TestRePairingAnswersEveryCommand(t *testing.T) {
	srv := ownNotifications(t)
	var (
		shownMu sync.Mutex
		shown   [][2]string
	)
	go func() {
		for n := range srv.got {
			shownMu.Lock()
			shown = append(shown, n)
			shownMu.Unlock()
		}
	}()
	repairNotices := func() (n int, all [][2]string) {
		shownMu.Lock()
		defer shownMu.Unlock()
		for _, c := range shown {
			if strings.Contains(c[1], "run 'hubgate pair --reuse'") {
				n++
			}
		}
		return n, slices.Clone(shown)
	}
	u := pairAndRun(t)
	m, apiURL, e, first, d := u.mock, u.apiURL, u.env, u.first, u.run
	if !onDaemonEvents(defaultSocketOf(e), func() bool { return runCmd(t, e, "", "status").code == ExitOK }) {
		t.Fatalf("status never said listening:\n%s", d.Stderr())
	}
	var asked []string
	ask := func(n int) {
		t.Helper()
		for range n {
			text := "hey task " + string(rune('a'+len(asked)))
			asked = append(asked, text)
			if err := m.PushCommand(first.DeviceID, text, nil); err != nil {
				t.Fatal(err)
			}
			// One at a time: the starter config's rule drops a command
			// that arrives while one runs.
			waitHistory(t, e, d, "the answer to "+text, func(es []journal.Entry) bool {
				return len(es) == len(asked) && es[0].Command == text && es[0].Status != ""
			})
		}
	}
	ask(3)

	resp, err := http.Post(apiURL+"/mock/tokens/"+first.TokenID+"/disable", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("disable the token: %d", resp.StatusCode)
	}
	if !onDaemonEvents(defaultSocketOf(e), func() bool {
		r := runCmd(t, e, "", "status")
		return r.code == ExitNeedsRepair && strings.Contains(r.stdout, "run 'hubgate pair --reuse'")
	}) {
		t.Fatalf("status never asked to pair again:\n%s", d.Stderr())
	}
	// The notifications are a file the fake notifier writes: no event.
	testutil.Until(t, "a notification naming hubgate pair --reuse", testutil.NoEvent, func() bool { n, _ := repairNotices(); return n > 0 },
		func() string { _, all := repairNotices(); return fmt.Sprintf("notifications: %q\n%s", all, d.Stderr()) })
	if r := runCmd(t, e, "", "pair", "--reuse", "--timeout", "50s"); r.code != 0 || !strings.Contains(r.stderr, "reconnecting now with device "+first.DeviceID) {
		t.Fatalf("pair --reuse: %d\n%s", r.code, r.stderr)
	}
	if !onDaemonEvents(defaultSocketOf(e), func() bool { return runCmd(t, e, "", "status").code == ExitOK }) {
		t.Fatalf("status never said listening after pair --reuse:\n%s", d.Stderr())
	}
	ask(5) // more than the old connection carried

	es := waitHistory(t, e, d, "every answer", func(es []journal.Entry) bool { return len(es) == len(asked) })
	for i, entry := range es {
		want := asked[len(asked)-1-i]
		if entry.Command != want || entry.Status != automate.StatusCompleted || entry.Answer != "Done: "+strings.TrimPrefix(want, "hey ") {
			t.Errorf("command %q: %+v", want, entry)
		}
	}
	// The answers after the re-pairing were shown after the notice (the
	// notifier shows in order): the notice was shown once.
	testutil.Until(t, "every notification", testutil.NoEvent, func() bool { _, all := repairNotices(); return len(all) >= len(asked)+1 },
		func() string { _, all := repairNotices(); return fmt.Sprintf("notifications: %q", all) })
	if n, all := repairNotices(); n != 1 {
		t.Errorf("%d notifications named hubgate pair --reuse, want 1: %q", n, all)
	}
	if strings.Contains(d.Stderr(), "command already journaled") {
		t.Errorf("commands taken for duplicates:\n%s", d.Stderr())
	}
	r := runCmd(t, e, "", "status", "--json")
	var st bridge.Status
	if r.code != ExitOK || json.Unmarshal([]byte(r.stdout), &st) != nil {
		t.Fatalf("status --json: %d %s", r.code, r.stdout)
	}
	c := st.Counters
	if c.Received != uint64(len(asked)) || c.Completed != uint64(len(asked)) || c.Duplicates != 0 || c.Unrecorded != 0 ||
		c.Last["started"].Command != asked[len(asked)-1] {
		t.Errorf("status counters %+v", c)
	}
	if r := runCmd(t, e, "", "status"); !strings.Contains(r.stdout, "duplicates 0") || !strings.Contains(r.stdout, "refused 0") {
		t.Errorf("status (text) does not show every count:\n%s", r.stdout)
	}
	if code := d.stopWith(t, syscall.SIGTERM, e2eWait); code != 0 {
		t.Errorf("the daemon exited %d", code)
	}
}

// waitHistory waits until `hubgate history --json` (newest first) holds
// what cond wants and returns it.
func waitHistory(t *testing.T, e []string, d *runProc, what string, cond func([]journal.Entry) bool) []journal.Entry {
	t.Helper()
	var entries []journal.Entry
	if !onDaemonEvents(defaultSocketOf(e), func() bool {
		r := runCmd(t, e, "", "history", "--json")
		entries = nil
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &entries) == nil && cond(entries)
	}) {
		t.Fatalf("waiting for %s; history: %+v\n%s", what, entries, d.Stderr())
	}
	return entries
}

// A command after the hub's StopListening runs, as in the vendor's own
// clients; status, watch and the journal show what the hub asked. With
// bridge.listening: obey it is refused instead, and the person is told how
// to resume (a notification on the session bus).
func TestCommandAfterStopListening(t *testing.T) {
	t.Run("runs by default", func(t *testing.T) {
		h := startHub(t)
		s := newDaemonSetup(t, h, daemonConfig{Bridge: "unmatched: {action: run}\n"})
		startListening(t, s)
		lines, _ := startWatch(t, s, "--history", "100")
		h.pushListening(false)
		asked := nextLine(t, lines, "the listening request", func(e bridge.Event) bool { return e.Kind == bridge.EventListening })
		if line := controlcli.FormatEvent(asked.event); *asked.event.Listening || !strings.Contains(line, "the hub asked to stop listening: commands still run") {
			t.Errorf("watch: %q", line)
		}
		h.push("after stop", nil)
		e := waitSettled(t, s, "after stop")
		if e.Decision != journal.DecisionStarted || e.Status != automate.StatusCompleted || e.Answer != "Done: after stop" ||
			!strings.Contains(e.Note, "the hub had asked to stop listening") {
			t.Fatalf("the command after StopListening: %s", e2eDump([]journal.Entry{e}))
		}
		r := runCmd(t, s.environ(), "", "--config", s.configPath, "status")
		if r.code != ExitOK || !strings.Contains(r.stdout, "listening  yes: commands are acted on; the hub asked to stop listening at ") ||
			!strings.Contains(r.stdout, "(bridge.listening: follow-vendor)") {
			t.Errorf("status: %d\n%s", r.code, r.stdout)
		}
	})
	t.Run("refused and told with listening: obey", func(t *testing.T) {
		if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
			if os.Getenv("CI") == "true" {
				t.Fatal("no D-Bus session bus: run the tests with -exec .ci/with-keyring")
			}
			t.Skip("no D-Bus session bus: run the tests with -exec .ci/with-keyring")
		}
		srv := ownNotifications(t)
		h := startHub(t)
		s := newDaemonSetup(t, h, daemonConfig{Bridge: "unmatched: {action: run}\nlistening: obey\n"})
		startListening(t, s)
		h.pushListening(false)
		h.push("after stop", nil)
		e := waitSettled(t, s, "after stop")
		if e.Decision != journal.DecisionRefused || e.Run != journal.RunNone || !strings.Contains(e.Note, "to resume") {
			t.Fatalf("the command after StopListening: %s", e2eDump([]journal.Entry{e}))
		}
		select {
		case n := <-srv.got:
			if n[0] != "hubgate · after stop: not run (refused)" || n[1] != e.Note {
				t.Fatalf("notification %q", n)
			}
		case <-time.After(e2eWait):
			t.Fatal("no notification reached the server")
		}
		var st bridge.Status
		r := runCmd(t, s.environ(), "", "--config", s.configPath, "status", "--json")
		if json.Unmarshal([]byte(r.stdout), &st) != nil || r.code != ExitNotListening || st.Listening || st.Counters.Refused != 1 ||
			st.Counters.Last["refused"].Reason != e.Note || st.HubAsked == nil || st.HubAsked.Listen {
			t.Fatalf("status --json: %d %s", r.code, r.stdout)
		}
		// StartListening: commands run again.
		h.pushListening(true)
		h.push("after start", nil)
		if e := waitSettled(t, s, "after start"); e.Status != automate.StatusCompleted {
			t.Fatalf("the command after StartListening: %s", e2eDump([]journal.Entry{e}))
		}
		if es := journalEntries(t, s.journal); len(es) != 2 || !slices.ContainsFunc(es, func(e journal.Entry) bool { return e.Command == "after stop" }) {
			t.Fatalf("journal: %s", e2eDump(es))
		}
	})
}

// ownNotifications owns org.freedesktop.Notifications on the session bus
// of .ci/with-keyring, which the daemon under test shares, until the test
// ends.
func ownNotifications(t *testing.T) *e2eNotifications {
	t.Helper()
	needSessionBus(t)
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	srv := &e2eNotifications{got: make(chan [2]string, 10)}
	if err := conn.Export(srv, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own the name: %v %v", reply, err)
	}
	t.Cleanup(func() { conn.ReleaseName("org.freedesktop.Notifications") })
	return srv
}
