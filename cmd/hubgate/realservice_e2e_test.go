package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
)

// TestRealServiceShapeFromPairToATypedPhrase is issue 10's acceptance path
// against a mock that answers as the real service does (docs/ and the
// vendor's sample clients): `pair` with flags, no client secret anywhere
// and BROWSER="curl -fsSL" under the private keyring; `config init`; `run`
// connects through the negotiate redirect (the mock's second listener, with
// its own access token); a Type macro as the app sends it, and a custom
// action, run with their text as the prompt, seen in `history --json`.
func TestRealServiceShapeFromPairToATypedPhrase(t *testing.T) {
	m, apiURL, private := newUserSetup(t)
	// Only the keyring, the browser and private dirs come from the
	// environment: the api url, client id and device type are flags.
	e := env(t, append([]string{"BROWSER=curl -fsSL"}, private...)...)
	for _, kv := range e {
		if strings.Contains(kv, "SECRET") {
			t.Fatalf("the environment carries a secret: %s", strings.SplitN(kv, "=", 2)[0])
		}
	}

	r := runCmd(t, e, "", "pair", "--api-url", apiURL, "--client-id", mockhub.DefaultClientID,
		"--device-type", mockhub.DefaultDeviceTypeID, "--timeout", "50s")
	if r.code != 0 {
		t.Fatalf("pair: %d\n%s", r.code, r.stderr)
	}
	st, err := pairing.LoadState(statePathOf(e))
	if err != nil {
		t.Fatal(err)
	}
	if r := runCmd(t, e, "", "config", "init"); r.code != 0 {
		t.Fatalf("config init: %d %s", r.code, r.stderr)
	}
	since := m.Events(0)
	mark := int64(0)
	if len(since) > 0 {
		mark = since[len(since)-1].Seq
	}
	d := startRunProc(t, e, "run")
	mockhubtest.WaitEvent(t, m, mark, "the device listening", func(ev mockhub.Event) bool {
		return ev.Action == "DeviceStartedListening" && ev.DeviceID == st.DeviceID
	})
	// The daemon came through the redirect: the app's negotiate answered
	// it, the service's negotiate took the redirect's token, then the hub.
	var order []string
	for _, ev := range m.Events(mark) {
		if ev.DeviceID == st.DeviceID && (ev.Action == "negotiate-redirect" || ev.Action == "service-negotiate" || ev.Action == "connected") {
			order = append(order, ev.Action)
		}
	}
	if len(order) < 3 || order[0] != "negotiate-redirect" || order[1] != "service-negotiate" || order[2] != "connected" {
		t.Fatalf("the daemon's connection did not go through the redirect: %v", order)
	}

	macros := []struct {
		command, rule, answer string
		macro                 string
	}{
		{"water", "typed-text", "Done: water the plants",
			`{"id":"1","name":"Water","commands":["water"],"events":[{"eventType":"Type","typedPhrase":"water the plants"}]}`},
		{"ask", "custom-action", "Done: summarise my inbox",
			`{"id":"2","name":"Ask","commands":[],"events":[{"eventType":"DeviceTypeCustomAction","deviceTypeCustomActionId":"ask-agent","additionalInputContent":"summarise my inbox"}]}`},
	}
	for _, mc := range macros {
		var macro deviceapi.Macro
		if err := json.Unmarshal([]byte(mc.macro), &macro); err != nil {
			t.Fatal(err)
		}
		if err := m.PushCommand(st.DeviceID, mc.command, &macro); err != nil {
			t.Fatal(err)
		}
	}
	var entries []journal.Entry
	if !onDaemonEvents(defaultSocketOf(e), func() bool {
		r := runCmd(t, e, "", "history", "--json")
		entries = nil
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &entries) != nil || len(entries) != len(macros) {
			return false
		}
		for _, en := range entries {
			if en.Status == "" {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the macros did not settle in the history: %s\n%s", e2eDump(entries), d.Stderr())
	}
	for _, mc := range macros {
		en := e2eEntry(t, entries, mc.command)
		if en.Rule != mc.rule || en.Status != automate.StatusCompleted || en.Answer != mc.answer {
			t.Errorf("%s: %s", mc.command, e2eDump([]journal.Entry{en}))
		}
	}
}
