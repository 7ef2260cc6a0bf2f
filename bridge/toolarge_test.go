package bridge_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub"
)

// A DeviceCommand over the hub's receive limit is journaled, refused
// with its size, counted and on the event stream (which the notifier
// shows); the next command runs.
func TestTooLargeCommandIsRefusedAndTold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		e.hub.push(hub.Event{Kind: hub.KindTooLarge, Target: "DeviceCommand", Command: "hello",
			TooLarge: &hub.TooLarge{Of: hub.KindDeviceCommand, Size: 2_000_000, Limit: 1 << 20}})
		e.hub.command("hello", nil)
		h := e.waitFor("the refusal and the run", finished(2))
		if h[0].Command != "hello" || h[0].Decision != journal.DecisionRefused ||
			!strings.HasPrefix(h[0].Note, "too large (2000000 bytes; the hub limit is 1048576 bytes") || h[0].Rule != "" {
			t.Fatalf("journal:\n%s", describe(h))
		}
		if h[1].Rule != "hello" || h[1].FinishedAt.IsZero() {
			t.Fatalf("the next command did not run:\n%s", describe(h))
		}
		st, _ := e.bridge.Status(context.Background())
		if st.Counters.Received != 2 || st.Counters.Refused != 1 || !strings.Contains(st.Counters.Last["refused"].Reason, "too large") {
			t.Errorf("counters %+v", st.Counters)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		for ev := range e.bridge.Subscribe(ctx, bridge.SubscribeOptions{History: bridge.DefaultEventHistory}) {
			if ev.Kind == bridge.EventDecided {
				if ev.CommandID != h[0].ID || ev.Decision != journal.DecisionRefused ||
					!strings.Contains(ev.Lines()[0].Text, "refused: too large (2000000 bytes") {
					t.Errorf("decided event %+v (%q)", ev, ev.Lines()[0].Text)
				}
				break
			}
		}
	})
}

// A command over the limit whose command string could not be read is
// refused all the same, and the note says so.
func TestTooLargeUnreadableCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		e.hub.push(hub.Event{Kind: hub.KindTooLarge, Target: "DeviceCommand",
			TooLarge: &hub.TooLarge{Of: hub.KindDeviceCommand, Size: 70_000, Limit: 65536, Unterminated: true}})
		h := e.waitFor("the refusal", finished(1))
		if h[0].Decision != journal.DecisionRefused || !strings.Contains(h[0].Note, "70000 bytes, cut off") ||
			!strings.Contains(h[0].Note, "could not be read") {
			t.Fatalf("journal:\n%s", describe(h))
		}
	})
}

// A record over the limit whose target could not be read (its arguments
// came first) may be a command the person triggered: it is journaled as
// refused, with its command when read, and the person is told.
func TestTooLargeUnknownTargetIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		e.hub.push(hub.Event{Kind: hub.KindTooLarge, Command: "water the plants",
			TooLarge: &hub.TooLarge{Of: hub.KindOther, Size: 204_895, Limit: 65536}})
		h := e.waitFor("the refusal", finished(1))
		if h[0].Command != "water the plants" || h[0].Decision != journal.DecisionRefused ||
			!strings.HasPrefix(h[0].Note, "too large (204895 bytes; its target could not be read; the hub limit is 65536 bytes") {
			t.Fatalf("journal:\n%s", describe(h))
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		for ev := range e.bridge.Subscribe(ctx, bridge.SubscribeOptions{History: bridge.DefaultEventHistory}) {
			if ev.Kind == bridge.EventDecided {
				if ev.CommandID != h[0].ID || !strings.Contains(ev.Lines()[0].Text, "refused: too large (204895 bytes; its target could not be read") {
					t.Errorf("decided event %+v (%q)", ev, ev.Lines()[0].Text)
				}
				break
			}
		}
	})
}

// A profile over the limit is told again after a good profile was
// loaded in between: P1 too large (told), P2 loads, P3 too large (a
// reconnect's VerifySelf) is told too.
func TestTooLargeProfileToldAgainAfterAGoodOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		e.hub.push(hub.Event{Kind: hub.KindTooLarge, Target: "DeviceProfileUpdate", TooLarge: &hub.TooLarge{Of: hub.KindDeviceProfileUpdate, Size: 3_000_000, Limit: 1 << 20}})
		e.hub.push(hub.Event{Kind: hub.KindDeviceProfileUpdate, Device: typistDevice()})
		e.hub.push(hub.Event{Kind: hub.KindTooLarge, Target: "VerifySelf", TooLarge: &hub.TooLarge{Of: hub.KindDeviceProfileUpdate, Size: 3_000_400, Limit: 1 << 20}})
		e.hub.command("type it", nil)
		h := e.waitFor("the run", finished(1))
		if len(h) != 1 || h[0].Rule != "typed" {
			t.Fatalf("P2 was not loaded:\n%s", describe(h))
		}
		told := profileTooLargeEvents(t, e)
		if len(told) != 2 || !strings.Contains(told[0].Note, "(macros: 0)") || !strings.Contains(told[1].Note, "VerifySelf") ||
			!strings.Contains(told[1].Note, "3000400 bytes") || !strings.Contains(told[1].Note, "(macros: 1)") {
			t.Fatalf("profile events %+v, want P1's and P3's", told)
		}
	})
}

// A profile over the limit keeps the catalogue, told once per profile
// (not again for a reconnect's VerifySelf); another profile over it is
// told again.
func TestTooLargeProfileKeepsTheCatalogue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		e.hub.push(hub.Event{Kind: hub.KindDeviceProfileUpdate, Device: typistDevice()})
		big := hub.Event{Kind: hub.KindTooLarge, Target: "DeviceProfileUpdate", TooLarge: &hub.TooLarge{Of: hub.KindDeviceProfileUpdate, Size: 3_000_000, Limit: 1 << 20}}
		e.hub.push(big)
		e.hub.push(big)                                                    // the same profile again: told once
		e.hub.push(hub.Event{Kind: hub.KindTooLarge, Target: "VerifySelf", // a reconnect's answer: the same profile
			TooLarge: &hub.TooLarge{Of: hub.KindDeviceProfileUpdate, Size: 3_000_400, Limit: 1 << 20}})
		e.hub.push(hub.Event{Kind: hub.KindTooLarge, Target: "DeviceProfileUpdate", // another profile: told
			TooLarge: &hub.TooLarge{Of: hub.KindDeviceProfileUpdate, Size: 3_100_000, Limit: 1 << 20}})
		e.hub.command("type it", nil)
		h := e.waitFor("the run", finished(1))
		if len(h) != 1 || h[0].Rule != "typed" || h[0].Answer != "you typed hi there" {
			t.Fatalf("the catalogue was not kept:\n%s", describe(h))
		}
		told := profileTooLargeEvents(t, e)
		if len(told) != 2 || !strings.Contains(told[1].Note, "3100000 bytes") || !strings.Contains(told[0].Note, "3000000 bytes") ||
			!strings.Contains(told[0].Note, "stays as it was (macros: 1)") {
			t.Fatalf("profile events %+v, want two", told)
		}
	})
}

// typistDevice is a device record whose profile has one macro, Typist
// ("type it", typing "hi there").
func typistDevice() *deviceapi.UserDevice {
	macro := deviceapi.Macro{ID: "m-typist", Name: "Typist", Commands: []string{"type it"},
		Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventType, Extra: map[string]json.RawMessage{"text": json.RawMessage(`"hi there"`)}}}}
	return &deviceapi.UserDevice{ID: "d", CurrentProfile: &deviceapi.Profile{Configuration: deviceapi.Configuration{Macros: []deviceapi.Macro{macro}}}}
}

// profileTooLargeEvents are the bridge's "profile too large" events before
// the first command's receipt, from its event history.
func profileTooLargeEvents(t *testing.T, e *env) []bridge.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var told []bridge.Event
	for ev := range e.bridge.Subscribe(ctx, bridge.SubscribeOptions{History: bridge.DefaultEventHistory}) {
		if ev.Kind == bridge.EventProfileTooLarge {
			told = append(told, ev)
		}
		if ev.Kind == bridge.EventReceived {
			break
		}
	}
	return told
}
