package bridge_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub"
)

const routeRules = `
rules:
  - name: ask
    match: {custom_action: ask-agent}
    run:
      prompt: "{{.CustomAction.Content}}\n#!answer asked {{.CustomAction.Content}}"
  - name: water
    match: {macro_name: Water Plants}
    run:
      prompt: "water\n#!answer watered"
  - name: extra
    match: {command: extra}
    run:
      prompt: "x {{.Macro.Extra.colour}}"
`

func askMacro(deviceType string) *deviceapi.Macro {
	id, content := "ask-agent", "summarise"
	return &deviceapi.Macro{ID: "2", Name: "Ask", Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventDeviceTypeCustomAction,
		DeviceTypeCustomActionID: &id, DeviceTypeID: &deviceType, AdditionalInputContent: &content}}}
}

// The bridge acts on the one routing decision (rules.Set.Decide): a custom
// action of another device type is journaled refused with its reason and
// the person is told (a decided event the notifier shows); one of this
// device's type runs; a command naming its macro by name runs that macro's
// rule; a key missing at render time fails the command with the reason.
func TestRoutingDecisionsAreJournaledAndTold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: routeRules, opts: func(o *bridge.Options) {
			o.Rules = o.Rules.WithDeviceType("hubgate-agent")
		}})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		events := e.bridge.Subscribe(ctx, bridge.SubscribeOptions{})

		e.hub.push(hub.Event{Kind: hub.KindDeviceProfileUpdate, Device: &deviceapi.UserDevice{ID: "d", CurrentProfile: &deviceapi.Profile{
			Configuration: deviceapi.Configuration{Macros: []deviceapi.Macro{{ID: "7", Name: "Water Plants", Commands: []string{"hose"}}}}}}})
		settled := func(n int) func([]journal.Entry) bool {
			return func(h []journal.Entry) bool {
				c := 0
				for _, x := range h {
					if x.Decision == journal.DecisionRefused || x.Decision == journal.DecisionFailed || !x.FinishedAt.IsZero() {
						c++
					}
				}
				return c == n
			}
		}
		// One at a time: the rules' busy policy is single.
		e.hub.command("ask", askMacro("game-pad"))
		e.hub.command("ask", askMacro("HUBGATE-AGENT"))
		e.waitFor("the two custom actions", settled(2))
		e.hub.command("water plants", nil)
		e.waitFor("the macro named by name", settled(3))
		e.hub.command("extra", nil)
		h := e.waitFor("four decisions", settled(4))
		const reason = `custom action "ask-agent" is for device type "game-pad"; this device is of type "hubgate-agent"; not run`
		if h[0].Decision != journal.DecisionRefused || h[0].Note != reason || h[0].Run != journal.RunNone || h[0].MacroName != "Ask" {
			t.Errorf("another device type's custom action:\n%s", describe(h[:1]))
		}
		if h[1].Rule != "ask" || h[1].Status != automate.StatusCompleted || h[1].Answer != "asked summarise" {
			t.Errorf("this device type's custom action:\n%s", describe(h[1:2]))
		}
		if h[2].Rule != "water" || h[2].MacroID != "7" || h[2].Status != automate.StatusCompleted {
			t.Errorf("a command naming its macro by name:\n%s", describe(h[2:3]))
		}
		if h[3].Decision != journal.DecisionFailed || h[3].Rule != "extra" || h[3].Run != journal.RunNone ||
			h[3].Note != `rule "extra": run.prompt: template: run.prompt:1:10: executing "run.prompt" at <.Macro.Extra.colour>: map has no entry for key "colour"` {
			// The rule is named once.
			t.Errorf("a key missing at render time:\n%s", describe(h[3:]))
		}

		// The stream carries the refusal with its reason: what the
		// notifier shows the person.
		for ev := range events {
			if ev.Kind == bridge.EventDecided && ev.CommandID == h[0].ID {
				if ev.Decision != journal.DecisionRefused || ev.Note != reason || !strings.Contains(ev.MacroName, "Ask") {
					t.Errorf("decided event %+v", ev)
				}
				break
			}
		}
	})
}
