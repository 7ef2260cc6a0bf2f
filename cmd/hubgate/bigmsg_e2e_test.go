package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// bigProfile is a profile of at least size bytes: many macros, as a real
// profile with many macros has, and the macro "Big Typist" ("type big").
func bigProfile(t *testing.T, size int) ([]byte, int) {
	t.Helper()
	macros := []map[string]any{{"id": "big-typist", "name": "Big Typist", "commands": []string{"type big"},
		"events": []map[string]any{{"eventType": "Type", "typedPhrase": "big"}}}}
	n := 200
	for i := 0; n < size; i++ {
		m := map[string]any{"id": fmt.Sprintf("m-%d", i), "name": fmt.Sprintf("Macro %d", i), "commands": []string{fmt.Sprintf("phrase number %d", i)},
			"events": []map[string]any{{"eventType": "Type", "typedPhrase": strings.Repeat("lorem ipsum ", 40)}, {"eventType": "KeyPress", "keyCode": "A", "holdTimeMilliseconds": 50}}}
		b, _ := json.Marshal(m)
		n += len(b) + 1
		macros = append(macros, m)
	}
	b, err := json.Marshal(map[string]any{"id": "big-profile", "name": "Everything", "configuration": map[string]any{"macros": macros}})
	if err != nil {
		t.Fatal(err)
	}
	return b, len(macros)
}

// bigMacro is a macro of about size bytes named name (one Type event
// with a long phrase).
func bigMacro(name string, size int) map[string]any {
	return map[string]any{"id": "big-" + name, "name": name, "commands": []string{name},
		"events": []map[string]any{{"eventType": "Type", "typedPhrase": strings.Repeat("x", size)}}}
}

func (h *e2eHub) pushProfile(profile []byte) {
	h.tb.Helper()
	var res mockhub.ProfileResult
	if st, raw := h.admin("POST", "/mock/devices/"+h.id()+"/profile", json.RawMessage(profile), &res); st != http.StatusOK || res.Delivered != 1 {
		h.tb.Fatalf("push the profile: %d %s", st, raw)
	}
}

// needSessionBus skips (fails on CI) a test that needs the session bus of
// .ci/with-keyring.
func needSessionBus(t *testing.T) {
	t.Helper()
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no D-Bus session bus: run the tests with -exec .ci/with-keyring")
		}
		t.Skip("no D-Bus session bus: run the tests with -exec .ci/with-keyring")
	}
}

func nextNotification(t *testing.T, srv *e2eNotifications, what string, match func(n [2]string) bool) [2]string {
	t.Helper()
	deadline := time.After(e2eWait)
	for {
		select {
		case n := <-srv.got:
			if match(n) {
				return n
			}
		case <-deadline:
			t.Fatalf("no notification of %s reached the server", what)
		}
	}
}

// stillOneConnection checks that the daemon kept its one hub connection
// (the mock saw one connect since it started) and still listens.
func stillOneConnection(t *testing.T, s *daemonSetup, d *daemonProc) bridge.Status {
	t.Helper()
	if n := s.hub.countActions(d.since, "connected"); n != 1 {
		t.Errorf("the daemon connected %d times, want 1 (a reconnect loop?):\n%s", n, d.Stderr())
	}
	var st bridge.Status
	r := runCmd(t, s.environ(), "", "--config", s.configPath, "status", "--json")
	if r.code != ExitOK || json.Unmarshal([]byte(r.stdout), &st) != nil || !st.Listening {
		t.Fatalf("status --json: %d %s", r.code, r.stdout)
	}
	return st
}

// Issue 24: a 3 MB profile and a 2 MB command, within the default receive
// limit (16 MiB), are read and acted on, and the connection keeps
// listening (the 1 MiB limit of before dropped it in a loop).
func TestBigProfileAndCommand(t *testing.T) {
	srv := ownNotifications(t)
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "unmatched: {action: run}\n"})
	d := startListening(t, s)
	lines, _ := startWatch(t, s)

	// Through the mock's command line, as a developer would push them.
	profile, macros := bigProfile(t, 3<<20)
	dir := t.TempDir()
	profileFile, macroFile := filepath.Join(dir, "profile.json"), filepath.Join(dir, "macro.json")
	macro, _ := json.Marshal(bigMacro("Big Typist", 2<<20))
	if os.WriteFile(profileFile, profile, 0o600) != nil || os.WriteFile(macroFile, macro, 0o600) != nil {
		t.Fatal("write the files")
	}
	if r := runCmd(t, env(t), "", "mock", "profile", "--url", h.url, "--device", h.id(), "--file", profileFile); r.code != 0 {
		t.Fatalf("mock profile: %d %s", r.code, r.stderr)
	}
	if l := nextLine(t, lines, "the catalogue of the big profile", func(e bridge.Event) bool { return e.Kind == bridge.EventCatalogue }); l.event.Macros+l.event.OddMacros != macros {
		t.Fatalf("catalogue %+v, want %d macros", l.event, macros)
	}
	if r := runCmd(t, env(t), "", "mock", "send", "--url", h.url, "--device", h.id(), "--macro", macroFile); r.code != 0 {
		t.Fatalf("mock send: %d %s", r.code, r.stderr)
	}
	e := waitSettled(t, s, "Big Typist")
	if e.Status != automate.StatusCompleted || e.MacroName != "Big Typist" || len(e.Macro) < 2<<20 {
		t.Fatalf("the 2 MB command: %s", e2eDump([]journal.Entry{e}))
	}
	nextNotification(t, srv, "the 2 MB command's answer", func(n [2]string) bool { return strings.HasPrefix(n[0], "hubgate · Big Typist") })
	stillOneConnection(t, s, d)
}

// Issue 24: over the receive limit (here 1 MiB, set by the environment), a
// 2 MB command is journaled "refused: too large (N bytes)" and told, a 3 MB
// profile keeps the catalogue with a warning and a notification, and the
// connection keeps listening: the next command runs.
func TestTooLargeCommandAndProfile(t *testing.T) {
	srv := ownNotifications(t)
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "unmatched: {action: run}\n"})
	s.env = append(s.env, "HUBGATE_HUB_MAX_MESSAGE_BYTES=1048576")
	d := startListening(t, s)
	lines, _ := startWatch(t, s)

	profile, _ := bigProfile(t, 3<<20)
	h.pushProfile(profile)
	l := nextLine(t, lines, "the profile over the limit", func(e bridge.Event) bool { return e.Kind == bridge.EventProfileTooLarge })
	if !strings.Contains(l.event.Note, "limit is 1048576 bytes") || !strings.Contains(l.event.Note, "stays as it was") {
		t.Errorf("profile event %+v", l.event)
	}
	nextNotification(t, srv, "the profile over the limit", func(n [2]string) bool {
		return n[0] == "hubgate: profile not loaded" && strings.Contains(n[1], "too large")
	})

	h.push("Big Typist", bigMacro("Big Typist", 2<<20))
	e := waitSettled(t, s, "Big Typist")
	if e.Decision != journal.DecisionRefused || e.Run != journal.RunNone || !strings.HasPrefix(e.Note, "too large (") ||
		!strings.Contains(e.Note, "bytes; the hub limit is 1048576 bytes") {
		t.Fatalf("the 2 MB command: %s", e2eDump([]journal.Entry{e}))
	}
	n := nextNotification(t, srv, "the refused command", func(n [2]string) bool { return strings.HasPrefix(n[0], "hubgate · Big Typist") })
	if n[0] != "hubgate · Big Typist: not run (refused)" || n[1] != e.Note {
		t.Errorf("notification %q", n)
	}
	if r := runCmd(t, s.environ(), "", "--config", s.configPath, "history"); !strings.Contains(r.stdout, "refused") || !strings.Contains(r.stdout, "too large (") {
		t.Errorf("history does not say why:\n%s", r.stdout)
	}

	h.push("after", nil)
	if e := waitSettled(t, s, "after"); e.Status != automate.StatusCompleted {
		t.Fatalf("the command after: %s", e2eDump([]journal.Entry{e}))
	}
	st := stillOneConnection(t, s, d)
	if st.Counters.Received != 2 || st.Counters.Refused != 1 || !strings.Contains(st.Counters.Last["refused"].Reason, "too large") {
		t.Errorf("counters %+v", st.Counters)
	}
	if c := strings.Count(d.Stderr(), `"level":"WARN","msg":"the hub sent a profile over the receive limit`); c != 1 {
		t.Errorf("%d warnings about the profile, want 1:\n%s", c, d.Stderr())
	}
}
