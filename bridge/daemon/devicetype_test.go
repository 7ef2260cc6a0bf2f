package daemon

import (
	"testing"

	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/deviceapi"
)

// Options.DeviceTypeID reaches the routing decision, and a configuration
// reload keeps it: a custom action for another device type is refused
// before and after a Reload.
func TestDeviceTypeRefusesOtherTypesAcrossAReload(t *testing.T) {
	f := newFixture(t)
	f.opts.DeviceTypeID = "hubgate-agent"
	d := f.start(t)
	waitListening(t, f, d, f.device)
	b := d.Info().Bridge
	id, other := "ask-agent", "game-pad"
	macro := &deviceapi.Macro{ID: "2", Name: "Ask", Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventDeviceTypeCustomAction,
		DeviceTypeCustomActionID: &id, DeviceTypeID: &other}}}
	refusedAt := func(n int) journal.Entry {
		t.Helper()
		var es []journal.Entry
		onEvents(t, b, "the refusal", func() bool {
			es, _ = b.History(t.Context(), 10)
			return len(es) == n && es[0].Decision == journal.DecisionRefused
		})
		return es[0]
	}
	const reason = `custom action "ask-agent" is for device type "game-pad"; this device is of type "hubgate-agent"; not run`
	if err := f.mock.PushCommand(f.device, "ask", macro); err != nil {
		t.Fatal(err)
	}
	if e := refusedAt(1); e.Note != reason {
		t.Fatalf("before the reload: %+v", e)
	}

	o := f.opts
	o.Rules = compile(t, "rules:\n  - {name: ask, match: {custom_action: ask-agent}, run: {prompt: ask}}\n")
	if changed, _, err := d.Reload(o); err != nil || len(changed) == 0 {
		t.Fatalf("reload: %q %v", changed, err)
	}
	if err := f.mock.PushCommand(f.device, "ask", macro); err != nil {
		t.Fatal(err)
	}
	if e := refusedAt(2); e.Note != reason {
		t.Fatalf("after the reload: %+v", e)
	}
}
