package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// oddProfile is a profile as the Unity models type it: the Jump macro's
// events carry eventType as the enum's number (0, and "1" in a string)
// and holdTimeMilliseconds in a string; Broken's events are a string; the
// third entry is not a macro at all.
const oddProfile = `{"id":"prof-unity","name":"Unity","profileType":"Standard","configuration":{"profileType":"Standard","macros":[
 {"id":"jump","name":"Jump","commands":["jump"],"events":[{"eventType":0,"keys":["space"],"holdTimeMilliseconds":"100"},{"eventType":"1","holdTimeMilliseconds":"50"}]},
 {"id":"2","name":"Water Plants","commands":["water plants"],"events":[{"eventType":"Type","typedPhrase":"water the plants"}]},
 42,
 {"id":"3","name":"Broken","commands":["broken"],"events":"oops"}]}}`

// oddWarnMsg is the hub client's warning about an odd item.
const oddWarnMsg = "hub sent a value of an unexpected shape; kept as it came, its macro is not used for matching"

// TestOddMacroProfileConnectsAndGoodMacrosRun: with the real binaries, a
// device whose profile holds an enum-numbered, string-timed macro (and
// two unreadable entries) connects and listens (VerifySelf answers that
// profile); commands for the good macros run their rules, found by id in
// the catalogue or sent whole in the Unity shape, and the journal keeps
// the macro as it came. The unreadable macro is never matched, not even
// when a command carries it whole, and the daemon warns about each
// unreadable entry once.
func TestOddMacroProfileConnectsAndGoodMacrosRun(t *testing.T) {
	h := startHub(t)
	setProfile := func() int {
		t.Helper()
		var res mockhub.ProfileResult
		if st, raw := h.admin("POST", "/mock/devices/"+h.id()+"/profile", json.RawMessage(oddProfile), &res); st != http.StatusOK {
			t.Fatalf("set the profile: %d %s", st, raw)
		}
		return res.Delivered
	}
	setProfile() // before the daemon connects: VerifySelf answers it
	s := newDaemonSetup(t, h, daemonConfig{Bridge: `rules:
  - name: jump
    match: {macro_name: Jump}
    run: {prompt: "jump {{(index .Events 0).EventType}} for {{(index .Events 0).HoldTimeMilliseconds}} ms"}
  - name: water
    match: {macro_name: Water Plants}
    run: {prompt: "{{.TypedText}}"}
  - name: broken
    match: {macro_name: Broken}
    run: {prompt: "must never run"}
`})
	d := startListening(t, s)
	// Once more as an update, so that the catalogue comes from the profile
	// whatever the order of the daemon's start.
	if n := setProfile(); n != 1 {
		t.Fatalf("profile update delivered to %d connections", n)
	}
	// Two macros are used for matching; 42 and Broken are kept as they came.
	if ev := d.waitEvent("the catalogue from the profile update", func(e bridge.Event) bool { return e.Kind == bridge.EventCatalogue }); ev.Macros != 2 || ev.OddMacros != 2 {
		t.Errorf("catalogue event %+v, want 2 macros and 2 kept as they came", ev)
	}

	unityJump := `{"id":"jump","name":"Jump","commands":["jump"],"events":[{"eventType":0,"keys":["space"],"holdTimeMilliseconds":"100"},{"eventType":"1","holdTimeMilliseconds":"50"}]}`
	for _, c := range []struct{ command, macro, rule, answer string }{
		{"jump", `{"id":"jump"}`, "jump", "Done: jump KeyPress for 100 ms"},
		{"water plants", `{"id":"2"}`, "water", "Done: water the plants"},
		{"jump whole", unityJump, "jump", "Done: jump KeyPress for 100 ms"},
	} {
		h.push(c.command, json.RawMessage(c.macro))
		e := waitSettled(t, s, c.command)
		if e.Rule != c.rule || e.Status != automate.StatusCompleted || e.Answer != c.answer {
			t.Errorf("%s: %s", c.command, e2eDump([]journal.Entry{e}))
		}
	}
	// The unreadable macro is not in the catalogue: its id finds nothing,
	// no rule matches, it is journaled and not run.
	h.push("broken", json.RawMessage(`{"id":"3"}`))
	if e := waitSettled(t, s, "broken"); e.Decision != journal.DecisionIgnored || e.Rule == "broken" || e.Status != "" {
		t.Errorf("broken: %s", e2eDump([]journal.Entry{e}))
	}
	// Sent whole with the command, the odd macro matches no rule by its
	// name either; the journal keeps it as it came.
	brokenWhole := `{"id":"3","name":"Broken","commands":["broken"],"events":"oops"}`
	h.push("broken whole", json.RawMessage(brokenWhole))
	if e := waitSettled(t, s, "broken whole"); e.Decision != journal.DecisionIgnored || e.Rule == "broken" || e.Status != "" || string(e.Macro) != brokenWhole {
		t.Errorf("broken whole: %s", e2eDump([]journal.Entry{e}))
	}
	if d.status().Hub.Status != "listening" {
		t.Errorf("the daemon stopped listening:\n%s", d.Stderr())
	}

	// The journal keeps the Unity-shaped macro as it came.
	r := runCmd(t, s.environ(), "", "--config", s.configPath, "history", "--json", "--limit", "10")
	var hist []journal.Entry
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &hist) != nil {
		t.Fatalf("hubgate history --json: %+v", r)
	}
	var got, want bytes.Buffer
	json.Compact(&want, []byte(unityJump))
	json.Compact(&got, e2eEntry(t, hist, "jump whole").Macro)
	if got.String() != want.String() {
		t.Errorf("journaled macro\n%s\nwant\n%s", got.String(), want.String())
	}

	// One warning per unreadable entry (42 and Broken's events), for
	// VerifySelf, GetLatestDevice, the update and the command together.
	warned := map[string]int{}
	for _, rec := range d.logRecords(oddWarnMsg) {
		warned[rec["in"].(string)+" "+rec["field"].(string)]++
	}
	if len(warned) != 2 || warned["currentProfile.configuration.macros[2] "] != 1 || warned["currentProfile.configuration.macros[3] events"] != 1 {
		t.Errorf("odd-item warnings %v\n%s", warned, d.Stderr())
	}
}
