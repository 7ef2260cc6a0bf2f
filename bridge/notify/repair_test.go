//go:build !darwin && !windows

package notify_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/notify"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

// hubEvent is a hub state change as the bridge publishes it.
func hubEvent(status, cause, reason string, attempt int, repair bool) bridge.Event {
	return bridge.Event{Kind: bridge.EventHub, Hub: &bridge.HubStatus{Status: status, Cause: cause, Reason: reason, Attempt: attempt, NeedsRepair: repair}}
}

// A hub that refuses the device (its token disabled or the device
// deleted: 401/403; a token of another device) is told once per loss, not
// at each reconnect attempt, naming `hubgate pair --reuse`, on a real
// notification server over D-Bus, and spoken where speech is on; a loss
// after the hub connected again is told again.
func TestARefusedDeviceIsToldOncePerLoss(t *testing.T) {
	srv, _ := serveNotifications(t)
	sh := testenv.RequireProgram(t, "sh")
	spoken := filepath.Join(t.TempDir(), "spoken")
	sp, err := notify.NewSpeaker(notify.SpeakerOptions{Command: []string{sh, "-c", `printf '%s\n' "$1" >> "$2"`, "sh", "{text}", spoken}})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	desktop := &notify.Freedesktop{}
	defer desktop.Close()
	s := notify.New(notify.Options{Desktop: desktop, Speaker: sp, SpeechOn: func() bool { return true },
		Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	events := make(chan bridge.Event, 20)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		s.Run(ctx, events)
	}()
	refused := "the hub refused the device token (negotiate: 401): the device must be paired again"
	// next collects the notifications up to the answer of command id: once
	// it is shown, every event before it was handled.
	next := func(id int64) []notifyCall {
		t.Helper()
		events <- bridge.Event{Kind: bridge.EventFinished, CommandID: id, Command: "hello", Rule: "hello", Status: automate.StatusCompleted, Answer: "hi"}
		var got []notifyCall
		for {
			c := <-srv.got
			if c.Body == "hi" {
				return got
			}
			got = append(got, c)
		}
	}
	spokenLines := func(n int) string {
		t.Helper()
		var said []byte
		// The speech program (a child) writes the file: a bounded poll.
		testutil.WaitFor(t, "the loss spoken", func() bool {
			said, _ = os.ReadFile(spoken)
			return strings.Count(string(said), "\n") >= n
		})
		return string(said)
	}
	check := func(got []notifyCall, why string) {
		t.Helper()
		if len(got) != 1 || got[0].Summary != "hubgate: pair this device again" || !strings.Contains(got[0].Body, "run 'hubgate pair --reuse'") ||
			!strings.Contains(got[0].Body, why) || got[0].Urgency != 2 {
			t.Errorf("want one notification naming hubgate pair --reuse and %q; got %+v", why, got)
		}
	}

	events <- hubEvent("listening", "", "", 0, false)
	for attempt := 1; attempt <= 4; attempt++ { // reconnect attempts, each refused
		events <- hubEvent("reconnecting", "unauthorized", refused, attempt, true)
		events <- hubEvent("reconnecting", "network", "dial failed", attempt, false)
	}
	check(next(1), "negotiate: 401")
	if said := spokenLines(1); said != "hubgate cannot reach your app: the device must be paired again. Run hubgate pair --reuse.\n" {
		t.Errorf("spoken: %q", said)
	}
	events <- hubEvent("listening", "", "", 0, false) // paired again
	events <- hubEvent("stopped", "wrong-device", `hub: VerifySelf answered another device: the hub identified this token as device "d2"`, 0, true)
	check(next(2), "another device")
	if said := spokenLines(2); strings.Count(said, "Run hubgate pair --reuse.") != 2 {
		t.Errorf("spoken: %q", said)
	}
	close(events)
	<-ran
}

// Without speech (no rule speaks) it is shown and not spoken; with
// bridge.notify none it is not shown (status and watch still say it).
func TestARefusedDeviceWithoutSpeechOrNotifications(t *testing.T) {
	refused := hubEvent("reconnecting", "unauthorized", "the hub refused the device token (negotiate: 403)", 1, true)
	for _, c := range []struct {
		policy string
		shown  int
	}{{rules.NotifyAnswers, 1}, {rules.NotifyFailures, 1}, {rules.NotifyNone, 0}} {
		d := &recordingDesktop{}
		s := notify.New(notify.Options{Desktop: d, Default: c.policy, SpeechOn: func() bool { return false },
			Logger: slog.New(slog.DiscardHandler)})
		s.Handle(context.Background(), refused)
		s.Handle(context.Background(), refused)
		if len(d.got) != c.shown || c.shown == 1 && !strings.Contains(d.got[0].Body, "hubgate pair --reuse") {
			t.Errorf("policy %s: shown %+v", c.policy, d.got)
		}
	}
}
