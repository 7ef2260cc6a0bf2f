package bridge_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub"
)

// catalogueRules route the macros of the two profiles below by name.
const catalogueRules = `
rules:
  - name: water
    match: {macro_name: Water Plants}
    run:
      prompt: "water\n#!answer watered {{.Macro.ID}}"
  - name: feed
    match: {macro_name: Feed The Cat}
    run:
      prompt: "feed\n#!answer fed {{.Macro.ID}}"
`

// The profiles as the service sends them: a macro's name is what the app
// sends, its commands are the phrases a person says.
const (
	gardenProfile = `{"id":"p-garden","name":"Garden","configuration":{"macros":[{"id":"7","name":"Water Plants","commands":["water the plants"],"events":[]}]}}`
	petsProfile   = `{"id":"p-pets","name":"Pets","configuration":{"macros":[{"id":"9","name":"Feed The Cat","commands":["feed the cat"],"events":[]}]}}`
)

// deviceJSON decodes a device record as the hub client does (leniently).
func deviceJSON(t *testing.T, profile string) *deviceapi.UserDevice {
	t.Helper()
	d := new(deviceapi.UserDevice)
	if err := json.Unmarshal([]byte(`{"id":"d","isVerified":true,"currentProfile":`+profile+`}`), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// record delivers a device record the hub answered (VerifySelf,
// GetLatestDevice) as hub.Client does.
func (f *fakeHub) record(method string, d *deviceapi.UserDevice) {
	f.push(hub.Event{Kind: hub.KindDeviceRecord, Target: method, Device: d})
}

// catalogueEvents returns the catalogue events published before the
// command "end" was received (pushed by the caller last): every event up
// to it, in order, with nothing left to chance.
func catalogueEvents(t *testing.T, e *env) []bridge.Event {
	t.Helper()
	e.hub.command("end", nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out []bridge.Event
	for ev := range e.bridge.Subscribe(ctx, bridge.SubscribeOptions{History: bridge.DefaultEventHistory}) {
		switch {
		case ev.Kind == bridge.EventCatalogue:
			out = append(out, ev)
		case ev.Kind == bridge.EventReceived && ev.Command == "end":
			return out
		}
	}
	t.Fatal("the event stream ended before the command \"end\"")
	return nil
}

// ran checks that the journal's entry of command ran rule with answer.
func ran(t *testing.T, h []journal.Entry, command, rule, answer string) {
	t.Helper()
	for _, e := range h {
		if e.Command == command {
			if e.Rule != rule || e.Status != automate.StatusCompleted || e.Answer != answer {
				t.Errorf("%q: rule %q status %q answer %q, want rule %q answered %q\n%s", command, e.Rule, e.Status, e.Answer, rule, answer, describe(h))
			}
			return
		}
	}
	t.Errorf("%q not in the journal:\n%s", command, describe(h))
}

// ignored checks that the journal's entry of command was ignored.
func ignored(t *testing.T, h []journal.Entry, command string) {
	t.Helper()
	for _, e := range h {
		if e.Command == command {
			if e.Decision != journal.DecisionIgnored || e.Rule != "" {
				t.Errorf("%q: decision %q rule %q, want ignored\n%s", command, e.Decision, e.Rule, describe(h))
			}
			return
		}
	}
	t.Errorf("%q not in the journal:\n%s", command, describe(h))
}

// A profile only in the answer to VerifySelf (no DeviceProfileUpdate)
// completes commands that name their macro by its name or by a phrase,
// with no macro attached; a GetLatestDevice record without a profile keeps
// it; one with another profile replaces it.
func TestCatalogueFromVerifySelfAndGetLatestDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: catalogueRules})
		e.hub.record("VerifySelf", deviceJSON(t, gardenProfile))
		e.hub.record("GetLatestDevice", deviceJSON(t, "null"))
		e.hub.command("Water Plants", nil)
		e.waitFor("the run by name", finished(1))
		e.hub.command("water the plants", nil)
		e.waitFor("the run by phrase", finished(2))
		e.hub.record("GetLatestDevice", deviceJSON(t, petsProfile))
		e.hub.command("FEED THE CAT", nil)
		h := e.waitFor("the run from GetLatestDevice's profile", finished(3))
		ran(t, h, "Water Plants", "water", "watered 7")
		ran(t, h, "water the plants", "water", "watered 7")
		ran(t, h, "FEED THE CAT", "feed", "fed 9")

		evs := catalogueEvents(t, e)
		if len(evs) != 2 || evs[0].From != "VerifySelf" || evs[0].Profile != "Garden" || evs[0].Macros != 1 ||
			evs[1].From != "GetLatestDevice" || evs[1].Profile != "Pets" || evs[1].Macros != 1 {
			t.Fatalf("catalogue events %+v, want VerifySelf's Garden then GetLatestDevice's Pets", evs)
		}
		if got := evs[0].Describe(); got != `macro catalogue from VerifySelf: profile "Garden", 1 macros` {
			t.Errorf("the catalogue event reads %q", got)
		}
	})
}

// Every (re)connect's VerifySelf refreshes the catalogue: a profile the
// person changed while the device was offline is used at once; an
// unchanged one is not announced again.
func TestCatalogueRefreshedOnReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: catalogueRules})
		connect := func(profile string) {
			e.hub.record("VerifySelf", deviceJSON(t, profile))
			e.hub.record("GetLatestDevice", deviceJSON(t, profile))
		}
		connect(gardenProfile)
		e.hub.command("Water Plants", nil)
		e.waitFor("the first connection's run", finished(1))
		connect(gardenProfile) // a reconnect, nothing changed
		connect(petsProfile)   // the profile changed between connections
		e.hub.command("Feed the cat", nil)
		e.hub.command("water plants", nil)
		h := e.waitFor("the second profile's commands", finished(3))
		ran(t, h, "Water Plants", "water", "watered 7")
		ran(t, h, "Feed the cat", "feed", "fed 9")
		ignored(t, h, "water plants") // no longer in the profile
		connect(petsProfile)

		evs := catalogueEvents(t, e)
		if len(evs) != 2 || evs[0].Profile != "Garden" || evs[1].Profile != "Pets" || evs[1].From != "VerifySelf" {
			t.Errorf("catalogue events %+v, want one per change: Garden, then Pets, both from VerifySelf", evs)
		}
	})
}

// A device record without a macro list (no profile, a null one, or any
// part of unexpected shape), and a DeviceProfileUpdate whose device is
// null, keep the catalogue; an empty macro list is a profile without
// macros and empties it.
func TestCatalogueKeptOnARecordWithoutMacros(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: catalogueRules})
		e.hub.record("VerifySelf", deviceJSON(t, gardenProfile))
		odd := []string{`null`, `5`, `"Garden"`, `[]`, `{}`, `{"id":"p","configuration":null}`, `{"id":"p","configuration":7}`,
			`{"id":"p","configuration":{"macros":null}}`, `{"id":"p","configuration":{"macros":"x"}}`, `{"id":"p","configuration":{"macros":{"id":"1"}}}`}
		n := 0
		for _, p := range odd {
			e.hub.record("GetLatestDevice", deviceJSON(t, p))
			e.hub.command("Water Plants", nil)
			n++
			h := e.waitFor("the command after "+p, finished(n))
			if last := h[len(h)-1]; last.Rule != "water" || last.Status != automate.StatusCompleted {
				t.Errorf("after a record with the profile %s: %s", p, describe(h[len(h)-1:]))
			}
		}
		e.hub.push(hub.Event{Kind: hub.KindDeviceProfileUpdate}) // DeviceProfileUpdate(null)
		e.hub.record("GetLatestDevice", &deviceapi.UserDevice{ID: "d"})
		e.hub.record("VerifySelf", nil)
		e.hub.command("water the plants", nil)
		h := e.waitFor("the command after the null update", finished(n+1))
		ran(t, h, "water the plants", "water", "watered 7")

		e.hub.record("GetLatestDevice", deviceJSON(t, `{"id":"p-empty","name":"Empty","configuration":{"macros":[]}}`))
		e.hub.command("Water Plants again", nil)
		h = e.waitFor("the command after the empty profile", finished(n+2))
		ignored(t, h, "Water Plants again")

		evs := catalogueEvents(t, e)
		if len(evs) != 2 || evs[0].Profile != "Garden" || evs[1].Profile != "Empty" || evs[1].Macros != 0 {
			t.Errorf("catalogue events %+v, want Garden's, then the empty profile's", evs)
		}
	})
}

// The REST device record a pairing read (Options.Device) is the first
// catalogue, through the same path; VerifySelf's answer with the same
// profile changes nothing, a later one replaces it.
func TestCatalogueFromTheRESTDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: catalogueRules, opts: func(o *bridge.Options) { o.Device = deviceJSON(t, gardenProfile) }})
		e.hub.command("water the plants", nil)
		e.waitFor("the run from the REST device's profile", finished(1))
		e.hub.record("VerifySelf", deviceJSON(t, gardenProfile))
		e.hub.record("GetLatestDevice", deviceJSON(t, petsProfile))
		e.hub.command("feed the cat", nil)
		h := e.waitFor("the run from GetLatestDevice's profile", finished(2))
		ran(t, h, "water the plants", "water", "watered 7")
		ran(t, h, "feed the cat", "feed", "fed 9")
		evs := catalogueEvents(t, e)
		if len(evs) != 2 || evs[0].From != bridge.FromRESTDevice || evs[0].Profile != "Garden" || evs[1].From != "GetLatestDevice" {
			t.Errorf("catalogue events %+v, want the REST device's, then GetLatestDevice's", evs)
		}
	})
}

// `hubgate rules test --profile` and the daemon's routing are one
// decision (rules.Set.Decide): for the same configuration and profile,
// what rules.Set.Explain says (what `rules test` prints:
// cmd/hubgate/internal/rulescli's TestTestPrintsTheRulesExplanation) is
// what the bridge does with the command from the hub (its catalogue from
// VerifySelf), and what the bridge's own ExplainCommand (the status
// page's rules test) says.
func TestRulesTestAndTheBridgeDecideAlike(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.yaml")
	// The bridge section of a configuration file: catalogueRules indented.
	yaml := "bridge:\n" + strings.ReplaceAll(strings.TrimPrefix(catalogueRules, "\n"), "\n", "\n  ")
	yaml = strings.Replace(yaml, "bridge:\nrules:", "bridge:\n  rules:", 1)
	profile := `{"id":"p","name":"Both","configuration":{"macros":[` +
		`{"id":"7","name":"Water Plants","commands":["water the plants"],"events":[]},` +
		`{"id":"9","name":"Feed The Cat","commands":["feed the cat","dinner"],"events":[]},` +
		`{"id":"3","name":"Stop","commands":["stop"],"events":[{"eventType":"StopOutputs"}]}]}}`
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load(configs.LoadOptions{Path: cfgPath, Env: func(string) string { return "" },
		UserConfigDir: func() (string, error) { return dir, nil }})
	if err != nil {
		t.Fatal(err)
	}
	set, err := rules.Compile(cfg.Bridge.Rules, cfg.Bridge.CommandTools, cfg.Bridge.Unmatched)
	if err != nil {
		t.Fatal(err)
	}
	var prof deviceapi.Profile
	if err := json.Unmarshal([]byte(profile), &prof); err != nil {
		t.Fatal(err)
	}
	commands := []string{"Water Plants", "water the plants", "  WATER THE PLANTS ", "Dinner", "feed the cat", "unknown", "Stop"}

	// What `rules test --profile` says of each (its decision, as
	// rulescli.Test makes it).
	said := map[string]rules.Explanation{}
	for _, c := range commands {
		said[c] = set.WithCatalog(prof.Configuration.Macros).WithDeviceType("").Explain(
			rules.Command{Text: c, Received: time.Now()}, rules.Defaults{Notify: cfg.Bridge.Notify, Ask: cfg.Bridge.Ask})
	}
	if said["Water Plants"].Action != "run" || said["Water Plants"].Rule != "water" || said["unknown"].Action != "ignore" || said["Stop"].Action != "cancel" {
		t.Fatalf("rules test said %+v", said)
	}

	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{opts: func(o *bridge.Options) { o.Rules = set }})
		e.hub.record("VerifySelf", deviceJSON(t, profile))
		synctest.Wait() // the bridge's loop took the record
		n := 0
		for _, c := range commands {
			want := said[c]
			if ex, _ := e.bridge.ExplainCommand(c); ex.Action != want.Action || ex.Rule != want.Rule || ex.Found != want.Found {
				t.Errorf("%q: the status page's rules test says %s %q (%s), rules test %s %q (%s)", c, ex.Action, ex.Rule, ex.Found, want.Action, want.Rule, want.Found)
			}
			e.hub.command(c, nil)
			n++
			h := e.waitFor(c, finished(n))
			got := h[len(h)-1]
			if got.Command != c {
				t.Fatalf("last entry %q, want %q", got.Command, c)
			}
			macroID := ""
			if want.Macro != nil {
				macroID = want.Macro.ID
			}
			switch want.Action {
			case "run":
				if got.Rule != want.Rule || got.Status != automate.StatusCompleted || got.MacroID != macroID {
					t.Errorf("%q: rules test says run %q with macro %q; the bridge: %s (macro %q)", c, want.Rule, macroID, describe(h[len(h)-1:]), got.MacroID)
				}
			case "ignore":
				if got.Decision != journal.DecisionIgnored || got.MacroID != macroID {
					t.Errorf("%q: rules test says ignore; the bridge: %s", c, describe(h[len(h)-1:]))
				}
			case "cancel":
				if !strings.HasPrefix(got.Note, "StopOutputs") || got.Rule != "" || got.MacroID != macroID {
					t.Errorf("%q: rules test says cancel (macro %q); the bridge: %s (macro %q)", c, macroID, describe(h[len(h)-1:]), got.MacroID)
				}
			default:
				t.Errorf("%q: unexpected action %q", c, want.Action)
			}
		}
	})
}

// After a new pairing the hub answers for another device: when its record
// has no macro list, the old device's macros are not kept for it.
func TestCatalogueOfAnotherDeviceIsNotKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: catalogueRules})
		e.hub.record("VerifySelf", deviceJSON(t, gardenProfile))
		e.hub.record("VerifySelf", &deviceapi.UserDevice{ID: "another"})
		e.hub.record("GetLatestDevice", &deviceapi.UserDevice{ID: "another"})
		e.hub.command("Water Plants", nil)
		h := e.waitFor("the command for the new device", finished(1))
		ignored(t, h, "Water Plants")
		evs := catalogueEvents(t, e)
		if len(evs) != 2 || evs[0].Profile != "Garden" || evs[1].Macros != 0 || evs[1].Profile != "" {
			t.Errorf("catalogue events %+v, want Garden's, then an empty one", evs)
		}
	})
}
