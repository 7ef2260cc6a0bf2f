//go:build !darwin && !windows

package notify_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hubgate/hubgate/bridge/notify"
)

// markupNotifications is a notification server that reads the body as
// markup.
type markupNotifications struct{ *fakeNotifications }

func (markupNotifications) GetCapabilities() ([]string, *dbus.Error) {
	return []string{"body", "body-markup"}, nil
}

// The notification server changes while the daemon runs: a plain one,
// then one that reads markup, then a plain one again. The same notifier
// (one bus connection) asks each new server's capabilities: the markup
// server gets the summary (the command text from the hub, never trusted)
// and the body escaped; the plain ones get the text as it is.
func TestMarkupIsEscapedForTheServerThatReadsIt(t *testing.T) {
	desktop := &notify.Freedesktop{}
	defer desktop.Close()
	s := notify.New(notify.Options{Desktop: desktop, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	const command, answer = "<b>& friends", "x < y & <i>z</i>"
	receive := func(what string, got chan notifyCall) notifyCall {
		t.Helper()
		select {
		case c := <-got:
			return c
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no notification reached the server", what)
			return notifyCall{}
		}
	}

	plain, release := serveNotifications(t)
	s.Handle(ctx, finished(1, command, "r", answer))
	if c := receive("the plain server", plain.got); c.Summary != "hubgate · "+command || c.Body != answer {
		t.Errorf("the plain server got %q / %q, want the text as it is", c.Summary, c.Body)
	}
	release()

	marked := markupNotifications{&fakeNotifications{got: make(chan notifyCall, 10)}}
	release = serveObject(t, marked)
	s.Handle(ctx, finished(2, command, "r", answer))
	if c := receive("the markup server", marked.got); c.Summary != "hubgate · &lt;b&gt;&amp; friends" || c.Body != "x &lt; y &amp; &lt;i&gt;z&lt;/i&gt;" {
		t.Errorf("the markup server got %q / %q, want both escaped", c.Summary, c.Body)
	}
	release()

	again, _ := serveNotifications(t)
	s.Handle(ctx, finished(3, command, "r", answer))
	if c := receive("the plain server again", again.got); c.Summary != "hubgate · "+command || c.Body != answer {
		t.Errorf("the next plain server got %q / %q, want the text as it is", c.Summary, c.Body)
	}
	if sent, failed := s.Counts(); sent != 3 || failed != 0 {
		t.Errorf("sent %d, failed %d; want 3 and 0", sent, failed)
	}
}

// quietNotifications answers every call and records nothing (benchmarks).
type quietNotifications struct{}

func (quietNotifications) Notify(string, uint32, string, string, string, []string, map[string]dbus.Variant, int32) (uint32, *dbus.Error) {
	return 1, nil
}
func (quietNotifications) GetCapabilities() ([]string, *dbus.Error) { return []string{"body"}, nil }

// What asking again costs per notification: the owner's name (a round
// trip to the bus daemon, what Notify adds) against the capabilities (a
// round trip to the notification server, here a fast fake), and a whole
// Notify.
func BenchmarkNotificationServerLookups(b *testing.B) {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		b.Skip("no D-Bus session bus (run under .ci/with-keyring)")
	}
	defer serveObject(b, quietNotifications{})()
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	b.Run("GetNameOwner", func(b *testing.B) {
		for b.Loop() {
			var owner string
			if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, "org.freedesktop.Notifications").Store(&owner); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GetCapabilities", func(b *testing.B) {
		for b.Loop() {
			var caps []string
			if err := conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications").CallWithContext(ctx, "org.freedesktop.Notifications.GetCapabilities", 0).Store(&caps); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Notify", func(b *testing.B) {
		desktop := &notify.Freedesktop{}
		defer desktop.Close()
		for b.Loop() {
			if err := desktop.Notify(ctx, notify.Message{Summary: "s", Body: "b"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
