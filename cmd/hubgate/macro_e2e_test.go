package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
)

// The two patterns of the real app through the real daemon: macros shaped
// as the vendor's app sends them (typedPhrase; a custom action with its
// content; vendor fields null) pushed through the mock hub become the
// prompt of a run (the scripted engine answers "Done: <prompt's first
// line>"), and `hubgate history --json` shows the macro as it came.
func TestRealAppMacrosBecomeThePrompt(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: `rules:
  - name: typed
    match: {event_type: Type}
    run: {prompt: "{{.TypedText}}"}
  - name: ask
    match: {custom_action: ask-agent}
    run: {prompt: "{{.CustomAction.Content | default .Command}}"}
  - name: joystick
    match: {event_type: JoysticksMove}
    run: {prompt: "move {{(index .Events 0).JoystickLeftMoveY}}"}
`})
	startListening(t, s)

	macros := []struct{ command, macro, rule, answer string }{
		{"water", `{"id":"1","name":"Water","commands":["water"],"events":[{"eventType":"Type","keys":null,"holdTimeMilliseconds":null,` +
			`"typedPhrase":"water the plants","mouseMoveX":null,"outputSpeech":null,"deviceTypeCustomActionId":null,"additionalInputContent":null}]}`,
			"typed", "Done: water the plants"},
		{"ask", `{"id":"2","name":"Ask","commands":[],"events":[{"eventType":"DeviceTypeCustomAction","deviceTypeCustomActionId":"ask-agent",` +
			`"deviceTypeId":"dt-1","additionalInputContent":"summarise my inbox","isCustomToggle":false,"isCustomRelease":null,"futureField":[1]}]}`,
			"ask", "Done: summarise my inbox"},
		{"run forward", `{"id":"3","name":"Start Running Forward","commands":["run forward"],"events":[{"eventType":"JoystickMove","joystickLeftMoveY":100}]}`,
			"joystick", "Done: move 100"},
	}
	for _, m := range macros {
		h.push(m.command, json.RawMessage(m.macro))
		e := waitSettled(t, s, m.command)
		if e.Rule != m.rule || e.Status != automate.StatusCompleted || e.Answer != m.answer {
			t.Errorf("%s: %s", m.command, e2eDump([]journal.Entry{e}))
		}
	}

	r := runCmd(t, s.environ(), "", "--config", s.configPath, "history", "--json", "--limit", "10")
	var hist []journal.Entry
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &hist) != nil || len(hist) != len(macros) {
		t.Fatalf("hubgate history --json: %+v", r)
	}
	for _, m := range macros {
		e := e2eEntry(t, hist, m.command)
		var got, want bytes.Buffer
		json.Compact(&want, []byte(m.macro))
		json.Compact(&got, e.Macro) // history --json indents it
		if got.String() != want.String() || e.Answer != m.answer {
			t.Errorf("history of %q: macro\n%s\nwant\n%s\nanswer %q", m.command, got.String(), want.String(), e.Answer)
		}
	}
}
