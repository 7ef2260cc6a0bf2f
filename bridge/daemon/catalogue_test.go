package daemon

import (
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// The REST device a pairing read (Options.Device) is the first macro
// catalogue; the hub's VerifySelf answer, with the profile the person
// changed since, replaces it before any command: a command naming its
// macro by name, with no macro attached, runs that macro's rule.
func TestTheRESTDeviceAndVerifySelfFeedOneCatalogue(t *testing.T) {
	f := newFixture(t)
	f.opts.Rules = compile(t, `
rules:
  - name: water
    match: {macro_name: Water Plants}
    run: {prompt: "water {{.Macro.ID}}"}
  - name: feed
    match: {macro_name: Feed The Cat}
    run: {prompt: "feed {{.Macro.ID}}"}
`)
	macro := func(id, name, phrase string) deviceapi.Profile {
		return deviceapi.Profile{ID: "p-" + id, Name: name, Configuration: deviceapi.Configuration{
			Macros: []deviceapi.Macro{{ID: id, Name: name, Commands: []string{phrase}, Events: []deviceapi.MacroEvent{}}}}}
	}
	if _, err := f.mock.PushProfile(f.device, macro("7", "Water Plants", "water the plants")); err != nil {
		t.Fatal(err)
	}
	rest, ok := f.mock.Device(f.device) // what GET /api/Device/userDevices/{id} answered the pairing
	if !ok {
		t.Fatal("no device")
	}
	f.opts.Device = &rest
	if _, err := f.mock.PushProfile(f.device, macro("9", "Feed The Cat", "feed the cat")); err != nil {
		t.Fatal(err)
	}

	d := f.start(t)
	waitListening(t, f, d, f.device)
	b := d.Info().Bridge
	admin := &mockhub.AdminClient{BaseURL: f.url + "/"}
	if _, err := admin.Send(t.Context(), f.device, mockhub.CommandRequest{Command: "Feed The Cat", NoMacro: true}); err != nil {
		t.Fatal(err)
	}
	es := waitEntries(t, b, 1)
	if es[0].Rule != "feed" || es[0].MacroID != "9" || es[0].Status != automate.StatusCompleted || es[0].Answer != "Done: feed 9" {
		t.Errorf("the command named by its macro: %+v", es[0])
	}
	var got []bridge.Event
	for ev := range b.Subscribe(t.Context(), bridge.SubscribeOptions{History: bridge.DefaultEventHistory}) {
		if ev.Kind == bridge.EventCatalogue {
			got = append(got, ev)
		}
		if ev.Kind == bridge.EventFinished {
			break
		}
	}
	if len(got) != 2 || got[0].From != bridge.FromRESTDevice || got[0].Profile != "Water Plants" ||
		got[1].From != "VerifySelf" || got[1].Profile != "Feed The Cat" {
		t.Errorf("catalogue events %+v, want the REST device's, then VerifySelf's", got)
	}
}
