//go:build !darwin && !windows

package notify_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/notify"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/internal/testutil"
)

// fakeNotifications is a notification server of the test's own: it owns
// org.freedesktop.Notifications on the private session bus of
// .ci/with-keyring and records every Notify call.
type fakeNotifications struct {
	mu    sync.Mutex
	calls []notifyCall
	got   chan notifyCall
}

type notifyCall struct {
	App, Summary, Body string
	Urgency            byte
	Timeout            int32
}

func (f *fakeNotifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	c := notifyCall{App: app, Summary: summary, Body: body, Timeout: timeout}
	if u, ok := hints["urgency"].Value().(byte); ok {
		c.Urgency = u
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	n := uint32(len(f.calls))
	f.mu.Unlock()
	f.got <- c
	return n, nil
}

func (f *fakeNotifications) GetCapabilities() ([]string, *dbus.Error) {
	return []string{"body"}, nil
}

func (f *fakeNotifications) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "hubgate-test", "hubgate", "1", "1.2", nil
}

// serveNotifications exports a fakeNotifications; release gives the name
// up (no receiver any more).
func serveNotifications(t *testing.T) (f *fakeNotifications, release func()) {
	t.Helper()
	need(t, os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "", "a D-Bus session bus (DBUS_SESSION_BUS_ADDRESS; run the tests with -exec .ci/with-keyring)")
	f = &fakeNotifications{got: make(chan notifyCall, 10)}
	return f, serveObject(t, f)
}

// serveObject exports obj as the notification server on a connection of
// its own; release gives the name up.
func serveObject(t testing.TB, obj any) (release func()) {
	t.Helper()
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.Export(obj, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own org.freedesktop.Notifications: reply %v, err %v", reply, err)
	}
	return func() {
		if _, err := conn.ReleaseName("org.freedesktop.Notifications"); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAnswersReachARealNotificationServerOverDBus(t *testing.T) {
	srv, release := serveNotifications(t)
	var logs testutil.SyncBuffer
	desktop := &notify.Freedesktop{}
	defer desktop.Close()
	s := notify.New(notify.Options{Desktop: desktop, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Rule: func(name string) (string, bool) {
			switch name {
			case "quiet":
				return rules.NotifyFailures, false
			case "silent":
				return rules.NotifyNone, false
			}
			return "", false
		}})
	ctx := context.Background()
	final := "22 degrees and sunny"
	events := make(chan bridge.Event, 10)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		s.Run(ctx, events)
	}()

	events <- finished(1, "weather", "weather", "It is 22 degrees and sunny in Lyon.")
	events <- bridge.Event{Kind: bridge.EventFinished, CommandID: 2, Command: "contract", Rule: "weather",
		Status: automate.StatusCompleted, Answer: "long reasoning", FinalAnswer: &final}
	events <- finished(3, "quiet one", "quiet", "not shown: the rule says failures only")
	events <- bridge.Event{Kind: bridge.EventDecided, CommandID: 4, Command: "slow two", Rule: "quiet",
		Decision: journal.DecisionDropped, Note: "busy with command 3"}
	events <- bridge.Event{Kind: bridge.EventNotify, CommandID: 5, Command: "kettle", Rule: "weather", Level: "info", Message: "the kettle is on"}
	events <- bridge.Event{Kind: bridge.EventFinished, CommandID: 6, Command: "broken", Rule: "weather",
		Status: automate.StatusFailed, ErrorCode: "model_unavailable", Answer: ""}
	// Every command not run tells the person why, but a StopOutputs macro
	// (journaled ignored: it did what was asked) and a rule that says none.
	events <- bridge.Event{Kind: bridge.EventStopOutputs, CommandID: 7, Command: "stop"}
	events <- bridge.Event{Kind: bridge.EventDecided, CommandID: 7, Command: "stop", Decision: journal.DecisionIgnored, Note: "StopOutputs: nothing to cancel"}
	events <- bridge.Event{Kind: bridge.EventDecided, CommandID: 8, Command: "dance", Decision: journal.DecisionIgnored, Note: "no rule matches"}
	events <- bridge.Event{Kind: bridge.EventDecided, CommandID: 9, Command: "lights", Rule: "silent", Decision: journal.DecisionRefused, Note: "not shown"}
	events <- bridge.Event{Kind: bridge.EventDecided, CommandID: 10, Command: "lights", Decision: journal.DecisionRefused, Note: "the hub asked to stop listening; to resume, ..."}
	events <- bridge.Event{Kind: bridge.EventUnrecorded, Command: "lost", Note: "not run: the journal could not record it (disk full)"}

	want := []notifyCall{
		{Summary: "hubgate · weather", Body: "It is 22 degrees and sunny in Lyon.", Urgency: 1},
		{Summary: "hubgate · contract", Body: final, Urgency: 1},
		{Summary: "hubgate · slow two: not run (dropped)", Body: "busy with command 3", Urgency: 1},
		{Summary: "hubgate · kettle", Body: "the kettle is on", Urgency: 1},
		{Summary: "hubgate · broken: failed", Body: "the run failed (model_unavailable)", Urgency: 2},
		{Summary: "hubgate · dance: not run (ignored)", Body: "no rule matches", Urgency: 1},
		{Summary: "hubgate · lights: not run (refused)", Body: "the hub asked to stop listening; to resume, ...", Urgency: 1},
		{Summary: "hubgate · lost: not run", Body: "not run: the journal could not record it (disk full)", Urgency: 2},
	}
	for i, w := range want {
		select {
		case got := <-srv.got:
			w.App, w.Timeout = "hubgate", -1
			if got != w {
				t.Errorf("notification %d:\n got %+v\nwant %+v", i, got, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("notification %d (%q) never reached the server", i, w.Summary)
		}
	}

	close(events)
	<-ran // every answer of the server is counted

	// No receiver any more: one warning, then the log only, and no hang:
	// the bus answers the one attempt at once (no receiver), it does not
	// run into the call's timeout, and the next two make no attempt
	// (failed stays 1 below).
	release()
	for i := range 3 {
		s.Handle(ctx, finished(int64(10+i), "after", "weather", "nobody shows this"))
	}
	if strings.Contains(logs.String(), context.DeadlineExceeded.Error()) {
		t.Errorf("a desktop call ran into its timeout instead of being refused by the bus:\n%s", logs.String())
	}
	if n := strings.Count(logs.String(), "desktop notifications are not available"); n != 1 {
		t.Errorf("%d warnings, want 1; log:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "nobody shows this"); n != 3 {
		t.Errorf("the log shows %d of the 3 notifications:\n%s", n, logs.String())
	}
	if sent, failed := s.Counts(); sent != uint64(len(want)) || failed != 1 {
		t.Errorf("sent %d failed %d; want %d and 1 (then log only until the retry)", sent, failed, len(want))
	}
}

// With no session bus known, the notifier must not start one: godbus's
// ConnectSessionBus runs dbus-launch (a child outside internal/proc, with the
// daemon's whole environment, and a dbus-daemon left behind at every
// retry). A fake dbus-launch on PATH writes a marker if it is ever run.
func TestNoSessionBusIsNotLaunched(t *testing.T) {
	bin := t.TempDir()
	marker := filepath.Join(t.TempDir(), "dbus-launch-ran")
	script := "#!/bin/sh\n: > '" + marker + "'\necho 'DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/hubgate-test-bus'\necho 'DBUS_SESSION_BUS_PID=1'\n"
	if err := os.WriteFile(filepath.Join(bin, "dbus-launch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir()) // no bus socket in it

	if a, err := notify.SessionBusAddress(); !errors.Is(err, notify.ErrNoSessionBus) {
		t.Errorf("SessionBusAddress() = %q, %v; want ErrNoSessionBus", a, err)
	}

	var logs testutil.SyncBuffer
	desktop := &notify.Freedesktop{}
	defer desktop.Close()
	// Notify returns only once its connect attempt is over (no timeout
	// here), so whatever the attempt ran has run by then.
	err := desktop.Notify(context.Background(), notify.Message{Summary: "s", Body: "b"})
	if !errors.Is(err, notify.ErrNoSessionBus) {
		t.Errorf("Notify without a bus: %v; want ErrNoSessionBus", err)
	}
	s := notify.New(notify.Options{Desktop: desktop, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Timeout: time.Hour})
	s.Handle(context.Background(), finished(1, "weather", "weather", "sunny"))
	if !strings.Contains(logs.String(), "desktop notifications are not available") {
		t.Errorf("no unavailability warning; log:\n%s", logs.String())
	}
	if sent, failed := s.Counts(); sent != 0 || failed != 1 {
		t.Errorf("sent %d failed %d; want 0 and 1", sent, failed)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the notifier ran dbus-launch")
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}
