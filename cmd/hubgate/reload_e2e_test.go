package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge"
)

// A SIGHUP that changes bridge.ask_timeout alone names it alone, applied
// (not as needing a restart), and the next question waits the new time;
// a SIGHUP that changes nothing names nothing.
func TestSIGHUPAppliesAskTimeoutAndNamesOnlyIt(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: askRules})
	d := startListening(t, s)

	rewriteBridge(t, s, strings.Replace(askRules, "ask_timeout: 8s", "ask_timeout: 5s", 1))
	since := time.Now()
	d.signal(syscall.SIGHUP)
	ev := d.waitEvent("the reload", func(e bridge.Event) bool { return e.Kind == bridge.EventReloaded && !e.At.Before(since) })
	if strings.Join(ev.Changes, "|") != "bridge.ask_timeout: 8s -> 5s" || len(ev.Restart) != 0 {
		t.Fatalf("the reload names %q as applied and %q as needing a restart; want the ask timeout only, applied", ev.Changes, ev.Restart)
	}

	h.push("lonely", nil)
	q := d.waitEvent("the question", func(e bridge.Event) bool { return e.Kind == bridge.EventQuestion })
	if q.Deadline == nil || q.Deadline.Sub(q.At) > 5*time.Second || q.Deadline.Sub(q.At) < 4*time.Second {
		t.Fatalf("the question after the reload waits until %v from %v; want 5 s", q.Deadline, q.At)
	}
	fin := d.waitEvent("the unanswered run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished })
	if fin.Answer != "No answer: the person did not answer within 5 s." {
		t.Errorf("finished %+v", fin)
	}

	since = time.Now()
	d.signal(syscall.SIGHUP)
	ev = d.waitEvent("the second reload", func(e bridge.Event) bool { return e.Kind == bridge.EventReloaded && !e.At.Before(since) })
	if len(ev.Changes)+len(ev.Restart) != 0 || ev.Describe() != "configuration reloaded; nothing changed" {
		t.Errorf("a reload of the same file names %q and %q: %q", ev.Changes, ev.Restart, ev.Describe())
	}
}
