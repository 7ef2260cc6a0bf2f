package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
)

// A cancelled run, with the real binaries: `hubgate cancel`, `hubgate
// cancel --force` and a cancel while the run waits in ask_person each end
// the run canceled in the journal and in history, counted canceled (not
// failed) in status, who stopped it and whether it was forced in its note,
// and no failure notification reaches the desktop's notification server
// (one of the test's own on the session bus): the first notification
// after them is the next command's answer.
func TestCancelledRunsAreCanceledNotFailed(t *testing.T) {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		t.Skip("no D-Bus session bus: run the tests with -exec .ci/with-keyring")
	}
	srv := ownNotifications(t)
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "cancel_grace: 30s\nrules:\n" + busyRule("work", "single", "", 300) + `  - name: pick
    match: {command: pick}
    ask: true
    run:
      prompt: "p\n#!tool ask_person {\"question\":\"Which colour?\"}\n#!answer you chose ${result}"
  - name: hello
    match: {command: hello}
    run:
      prompt: "h\n#!answer hello there"
`})
	d := startListening(t, s)
	cancel := func(args ...string) {
		t.Helper()
		if r := runCmd(t, s.environ(), "", append([]string{"--config", s.configPath, "cancel"}, args...)...); r.code != 0 {
			t.Fatalf("hubgate cancel %q: %+v", args, r)
		}
	}

	h.push("work 1", nil)
	waitRunning(t, s, d, "work 1")
	cancel()
	if e := waitSettled(t, s, "work 1"); e.Status != automate.StatusCanceled || e.Note != "stopped by hubgate cancel" {
		t.Errorf("hubgate cancel: %s", e2eDump([]journal.Entry{e}))
	}
	h.push("work 2", nil)
	waitRunning(t, s, d, "work 2")
	cancel("--force")
	if e := waitSettled(t, s, "work 2"); e.Status != automate.StatusCanceled || e.Note != "stopped by hubgate cancel --force (forced)" {
		t.Errorf("hubgate cancel --force: %s", e2eDump([]journal.Entry{e}))
	}
	h.push("pick", nil)
	d.waitEvent("the question", func(e bridge.Event) bool { return e.Kind == bridge.EventQuestion })
	cancel()
	if e := waitSettled(t, s, "pick"); e.Status != automate.StatusCanceled || e.Note != "stopped by hubgate cancel" {
		t.Errorf("a cancel while the run asks: %s", e2eDump([]journal.Entry{e}))
	}

	h.push("hello", nil)
	// The question was shown; the next is the answer: no failure between.
	for {
		select {
		case n := <-srv.got:
			if strings.Contains(n[0], "failed") || strings.Contains(n[1], "failed") {
				t.Errorf("a failure notification: %q", n)
			}
			if strings.Contains(n[0], "hello") {
				if n[1] != "hello there" {
					t.Errorf("the answer's notification: %q", n)
				}
				goto answered
			}
		case <-time.After(e2eWait):
			t.Fatal("the answer's notification never came")
		}
	}
answered:
	c := d.status().Counters
	if c.Canceled != 3 || c.Failed != 0 || c.Completed != 1 || !strings.Contains(c.Last["canceled"].Reason, "stopped by hubgate cancel") {
		t.Errorf("counters: canceled %d, failed %d, completed %d, last %+v", c.Canceled, c.Failed, c.Completed, c.Last)
	}
	r := runCmd(t, s.environ(), "", "--config", s.configPath, "history")
	if r.code != 0 || strings.Count(r.stdout, "canceled") != 3 || !strings.Contains(r.stdout, "stopped by hubgate cancel --force (forced)") {
		t.Errorf("history:\n%s", r.stdout)
	}
	r = runCmd(t, s.environ(), "", "--config", s.configPath, "status")
	if !strings.Contains(r.stdout, "canceled 3") {
		t.Errorf("status:\n%s", r.stdout)
	}
}
