package hub

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testutil"
)

// oddProfileJSON is a profile as the issue describes it: one macro typed
// by the Unity models (eventType 0, holdTimeMilliseconds "100"), one
// good macro, and one macro hubgate cannot read (events is a string).
const oddProfileJSON = `{"id":"prof-odd","name":"Unity","profileType":"Standard","configuration":{"profileType":"Standard","macros":[
 {"id":"jump","name":"Jump","commands":["jump"],"events":[{"eventType":0,"keys":["space"],"holdTimeMilliseconds":"100"},{"eventType":"1","holdTimeMilliseconds":"50"}]},
 {"id":"2","name":"Water Plants","commands":["water plants"],"events":[{"eventType":"Type","typedPhrase":"water the plants"}]},
 {"id":"3","name":"Broken","commands":["broken"],"events":"oops"}]}}`

const oddWarning = "hub sent a value of an unexpected shape"

// TestVerifySelfWithAnOddProfileStillListens: against the mock hub (real
// SignalR on loopback), VerifySelf answers a profile with an
// enum-numbered, string-timed macro and an unreadable one. The client
// still reaches listening, keeps the good macros usable, and warns once
// about the unreadable one however often the hub sends it again (the
// GetLatestDevice answer, a DeviceProfileUpdate, two DeviceCommands).
func TestVerifySelfWithAnOddProfileStillListens(t *testing.T) {
	env := newMockEnv(t, mockhub.Config{})
	var profile deviceapi.Profile
	if err := json.Unmarshal([]byte(oddProfileJSON), &profile); err != nil {
		t.Fatal(err)
	}
	if _, err := env.mock.PushProfile(env.dev.ID, profile); err != nil {
		t.Fatal(err)
	}
	logs := &testutil.SyncBuffer{}
	cfg := env.config(t)
	cfg.AutoListen = true
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := start(t, must(New(cfg)))
	waitState(t, c.Client, "listening", wait, isStatus(StatusListening))
	env.waitLogged(t, 0, "DeviceStartedListening")

	d := c.Device()
	if d == nil || d.CurrentProfile == nil {
		t.Fatalf("Device() = %+v", d)
	}
	// The hub really sent the odd shapes, and they are kept as they came
	// (the library hands the result over as a map: members sorted).
	raw, err := json.Marshal(d.CurrentProfile)
	if err != nil || !strings.Contains(string(raw), `{"eventType":0,"holdTimeMilliseconds":"100","keys":["space"]}`) || !strings.Contains(string(raw), `"events":"oops"`) {
		t.Fatalf("the profile as received: %s (%v)", raw, err)
	}
	usable := d.CurrentProfile.Configuration.UsableMacros()
	if len(usable) != 2 || usable[0].ID != "jump" || usable[1].ID != "2" {
		t.Fatalf("usable macros %+v", usable)
	}
	jump := usable[0]
	if !jump.Events[0].Is(deviceapi.EventKeyPress) || *jump.Events[0].HoldTimeMilliseconds != 100 || !jump.Events[1].Is(deviceapi.EventPause) {
		t.Errorf("the enum-numbered macro read as %+v", jump.Events)
	}

	// The same odd profile again, and the odd macro with two commands.
	if _, err := env.mock.PushProfile(env.dev.ID, profile); err != nil {
		t.Fatal(err)
	}
	broken := profile.Configuration.Macros[2]
	for range 2 {
		if err := env.mock.PushCommand(env.dev.ID, "broken", &broken); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.mock.PushCommand(env.dev.ID, "jump", &jump); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, c.Client, wait); e.Kind != KindDeviceProfileUpdate || e.DecodeErr != nil || e.Device == nil {
		t.Fatalf("profile update %+v", e)
	}
	for range 2 {
		e := nextEvent(t, c.Client, wait)
		if e.Command != "broken" || e.DecodeErr != nil || e.Macro == nil || !e.Macro.IsOdd() || e.Macro.Name != "Broken" {
			t.Fatalf("odd command %+v", e)
		}
	}
	e := nextEvent(t, c.Client, wait)
	if e.Command != "jump" || e.Macro == nil || e.Macro.IsOdd() || *e.Macro.Events[0].HoldTimeMilliseconds != 100 {
		t.Fatalf("good command %+v", e)
	}
	if st := c.State(); st.Status != StatusListening {
		t.Errorf("state after the odd items: %v", st)
	}
	if n := strings.Count(logs.String(), oddWarning); n != 1 {
		t.Errorf("%d warnings about the odd macro, want 1:\n%s", n, logs.String())
	}
	if line := logs.String(); !strings.Contains(line, `item="macro \"3\" (\"Broken\")"`) || !strings.Contains(line, "in=currentProfile.configuration.macros[2] field=events") {
		t.Errorf("the warning does not name the macro and field:\n%s", line)
	}
}
