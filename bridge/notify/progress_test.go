//go:build !darwin && !windows

package notify_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/notify"
)

// replacingNotifications is a notification server that honours
// replaces_id as the specification says: the id of a notification still
// shown is updated in place and returned; any other id gets a new one.
type replacingNotifications struct {
	mu    sync.Mutex
	next  uint32
	shown map[uint32]string // id -> summary + body now
	calls []replaceCall
}

type replaceCall struct {
	Replaces, ID  uint32
	Summary, Body string
}

func (f *replacingNotifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := replaces
	if _, ok := f.shown[id]; !ok || id == 0 {
		f.next++
		id = f.next
	}
	f.shown[id] = summary + "\n" + body
	f.calls = append(f.calls, replaceCall{Replaces: replaces, ID: id, Summary: summary, Body: body})
	return id, nil
}

func (f *replacingNotifications) GetCapabilities() ([]string, *dbus.Error) {
	return []string{"body"}, nil
}

func (f *replacingNotifications) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "hubgate-test", "hubgate", "1", "1.2", nil
}

func stepEvent(id int64, at time.Time, index int, status, title string) bridge.Event {
	return bridge.Event{Kind: bridge.EventStep, At: at, CommandID: id, Command: "summarise my inbox", Rule: "inbox",
		Step: &bridge.StepInfo{Index: index, Status: status, Title: title, ToolName: "read_file"}}
}

func TestALongRunUpdatesOneNotificationInPlace(t *testing.T) {
	need(t, os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "", "a D-Bus session bus (run the tests with -exec .ci/with-keyring)")
	srv := &replacingNotifications{shown: map[uint32]string{}}
	serveObject(t, srv)
	desktop := &notify.Freedesktop{}
	defer desktop.Close()
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	now := t0
	s := notify.New(notify.Options{Desktop: desktop, Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }})
	ctx := context.Background()

	s.Handle(ctx, bridge.Event{Kind: bridge.EventStarted, At: t0, CommandID: 7, Command: "summarise my inbox", Rule: "inbox"})
	now = t0.Add(time.Second)
	s.Handle(ctx, stepEvent(7, now, 1, automate.StepRunning, "Read the inbox"))
	srv.mu.Lock()
	early := len(srv.calls)
	srv.mu.Unlock()
	if early != 0 {
		t.Fatalf("%d notifications before progress_after", early)
	}
	now = t0.Add(12 * time.Second)
	s.Handle(ctx, stepEvent(7, now, 2, automate.StepRunning, "Sort the mails"))
	now = t0.Add(15 * time.Second)
	s.Handle(ctx, stepEvent(7, now, 3, automate.StepRunning, "Write the summary"))
	fin := finished(7, "summarise my inbox", "inbox", "3 mails, none urgent")
	fin.At = now
	s.Handle(ctx, fin)

	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.calls) != 3 {
		t.Fatalf("calls: %+v", srv.calls)
	}
	first := srv.calls[0]
	if first.Replaces != 0 || !strings.Contains(first.Summary, "running for 12s") || !strings.Contains(first.Body, "step 2 running: Sort the mails") {
		t.Errorf("first progress notification %+v", first)
	}
	// Each later one replaces the first: one notification on the screen.
	for _, c := range srv.calls[1:] {
		if c.Replaces != first.ID || c.ID != first.ID {
			t.Errorf("a new notification instead of an update: %+v (first %d)", c, first.ID)
		}
	}
	if len(srv.shown) != 1 || !strings.Contains(srv.shown[first.ID], "3 mails, none urgent") {
		t.Errorf("shown: %v", srv.shown)
	}
	if !strings.Contains(srv.calls[1].Body, "step 3 running: Write the summary") {
		t.Errorf("second update %+v", srv.calls[1])
	}
}

// lockedDesktop records notifications for a test that reads them while
// the service runs.
type lockedDesktop struct {
	mu  sync.Mutex
	got []notify.Message
}

func (d *lockedDesktop) Notify(_ context.Context, m notify.Message) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, m)
	return nil
}

func (d *lockedDesktop) shown() []notify.Message {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]notify.Message{}, d.got...)
}

func TestWithoutReplacementTheProgressIsShownOnceAtTheThreshold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		desktop := &lockedDesktop{}
		s := notify.New(notify.Options{Desktop: desktop, Logger: slog.New(slog.DiscardHandler), ProgressAfter: 10 * time.Second})
		events := make(chan bridge.Event)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.Run(ctx, events)
		}()
		events <- bridge.Event{Kind: bridge.EventStarted, At: time.Now(), CommandID: 3, Command: "long one", Rule: "long"}
		events <- stepEvent(3, time.Now(), 1, automate.StepRunning, "One long step")
		time.Sleep(9 * time.Second)
		synctest.Wait()
		if got := desktop.shown(); len(got) != 0 {
			t.Fatalf("before the threshold: %+v", got)
		}
		// No step event comes: the threshold alone shows the progress.
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := desktop.shown(); len(got) != 1 || !strings.Contains(got[0].Body, "step 1 running: One long step") {
			t.Fatalf("at the threshold: %+v", got)
		}
		events <- stepEvent(3, time.Now(), 2, automate.StepRunning, "Another")
		synctest.Wait()
		if got := desktop.shown(); len(got) != 1 {
			t.Errorf("a second progress notification on a desktop that cannot replace: %+v", got)
		}
		cancel()
		<-done
	})
}
