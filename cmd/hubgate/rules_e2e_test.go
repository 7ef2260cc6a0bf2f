package main

// Acceptance tests of issue 17's routing items with the real binaries: a
// command naming its macro by name, a custom action of another device type,
// a template naming a key that does not exist, and `rules test` with the
// event JSON of `mock send` and a whole macro.

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// pairedWithType records the device type in s's pairing state, as `hubgate
// pair` does.
func pairedWithType(t *testing.T, s *daemonSetup, deviceType string) {
	t.Helper()
	path := filepath.Join(s.xdg, "hubgate", "state.json")
	st, err := pairing.LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	st.DeviceTypeID = deviceType
	if err := pairing.SaveState(path, *st); err != nil {
		t.Fatal(err)
	}
}

// The vendor's app may send a macro's name where the profile's commands
// hold other phrases, with no macro attached: the daemon finds the macro
// in the profile by its name (case-insensitive) and runs that macro's
// rule; two macros of one name are told apart by profile order, with a
// warning.
func TestACommandNamingItsMacroByNameRunsThatMacro(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: `rules:
  - name: water
    match: {macro_name: Water Plants}
    run: {prompt: "water {{.Macro.ID}}"}
`})
	d := startListening(t, s)

	profile := `{"id":"p1","name":"Garden","configuration":{"macros":[` +
		`{"id":"7","name":"Water Plants","commands":["water the plants"],"events":[]},` +
		`{"id":"8","name":"water plants","commands":[],"events":[]}]}}`
	var res mockhub.ProfileResult
	if st, raw := h.admin("POST", "/mock/devices/"+h.id()+"/profile", json.RawMessage(profile), &res); st != http.StatusOK || res.Delivered != 1 {
		t.Fatalf("profile: %d %s", st, raw)
	}
	// No macro attached: the mock sends what it is given ({}), where it
	// would otherwise make one from the command.
	h.push("water plants", json.RawMessage(`{}`))
	e := waitSettled(t, s, "water plants")
	if e.Rule != "water" || e.MacroID != "7" || e.MacroName != "Water Plants" || e.Status != automate.StatusCompleted || e.Answer != "Done: water 7" {
		t.Fatalf("the command naming its macro: %s", e2eDump([]journal.Entry{e}))
	}
	// The phrase in another case and with blanks finds it too.
	h.push("  Water The Plants ", json.RawMessage(`{}`))
	if e := waitSettled(t, s, "  Water The Plants "); e.Rule != "water" || e.MacroID != "7" || e.Status != automate.StatusCompleted {
		t.Fatalf("a phrase in another case: %s", e2eDump([]journal.Entry{e}))
	}
	warning := `macro catalogue: 2 macros of the profile share the name "Water Plants": "Water Plants" (id 7), "water plants" (id 8); the first, "Water Plants" (id 7), is used`
	if recs := d.bridgeLogs(warning); len(recs) != 1 || recs[0]["level"] != "WARN" {
		t.Errorf("the ambiguity warning: %v\n%s", recs, d.Stderr())
	}
}

// A custom action for another device type than the paired one is not
// run: `hubgate history --json` shows it refused with the reason, and the
// person is told; one of the paired type runs.
func TestACustomActionForAnotherDeviceTypeIsRefused(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: `rules:
  - name: ask
    match: {custom_action: ask-agent}
    run: {prompt: "{{.CustomAction.Content}}"}
unmatched: {action: run}
`})
	pairedWithType(t, s, mockhub.DefaultDeviceTypeID)
	d := startListening(t, s)

	custom := func(deviceType string) json.RawMessage {
		return json.RawMessage(`{"id":"2","name":"Ask","commands":["ask"],"events":[{"eventType":"DeviceTypeCustomAction",` +
			`"deviceTypeCustomActionId":"ask-agent","deviceTypeId":"` + deviceType + `","additionalInputContent":"summarise my inbox"}]}`)
	}
	h.push("ask the game", custom("game-pad"))
	waitSettled(t, s, "ask the game")
	h.push("ask me", custom(strings.ToUpper(mockhub.DefaultDeviceTypeID)))
	if e := waitSettled(t, s, "ask me"); e.Rule != "ask" || e.Status != automate.StatusCompleted || e.Answer != "Done: summarise my inbox" {
		t.Fatalf("the paired type's custom action: %s", e2eDump([]journal.Entry{e}))
	}

	r := runCmd(t, s.environ(), "", "--config", s.configPath, "history", "--json", "--limit", "10")
	var hist []journal.Entry
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &hist) != nil {
		t.Fatalf("hubgate history --json: %+v", r)
	}
	reason := `custom action "ask-agent" is for device type "game-pad"; this device is of type "` + mockhub.DefaultDeviceTypeID + `"; not run`
	e := e2eEntry(t, hist, "ask the game")
	if e.Decision != journal.DecisionRefused || e.Note != reason || e.Run != journal.RunNone || e.Rule != "" || e.MacroName != "Ask" {
		t.Fatalf("the refused command in history: %s", e2eDump([]journal.Entry{e}))
	}
	// The person is told (the notifier logs every notification it shows;
	// it shows what was published before a stop: the log is whole once the
	// daemon ended).
	if code := d.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	told := false
	for _, rec := range d.logRecords("notification") {
		told = told || rec["summary"] == "hubgate · Ask: not run (refused)" && rec["body"] == reason
	}
	if !told {
		t.Errorf("no notification of the refusal:\n%s", d.Stderr())
	}
}

// A template naming a key that does not exist fails `hubgate config check`
// (exit 3) with a message naming the rule, the template and the key; the
// starter config still passes.
func TestConfigCheckFailsOnAMissingKey(t *testing.T) {
	e := env(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(`bridge:
  rules:
    - name: lights
      match: {command_regex: '(?i)lights (?P<state>on|off)'}
      run:
        prompt: "Switch the lights {{.Named.colour}}"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, e, "", "--config", cfg, "config", "check")
	for _, want := range []string{`bridge.rules[0].run.prompt`, `rule "lights"`, `.Named has no key "colour"`, "named groups of match.command_regex are state"} {
		if r.code != ExitConfig || !strings.Contains(r.stderr, want) {
			t.Errorf("config check: exit %d, stderr %q lacks %q", r.code, r.stderr, want)
		}
	}
	// The daemon refuses it too, before it pairs or connects anything.
	if r := runCmd(t, e, "", "--config", cfg, "run"); r.code != ExitConfig || !strings.Contains(r.stderr, `.Named has no key "colour"`) {
		t.Errorf("run: %d %q", r.code, r.stderr)
	}

	starter := filepath.Join(t.TempDir(), "starter.yaml")
	if r := runCmd(t, e, "", "--config", starter, "config", "init"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := runCmd(t, e, "", "--config", starter, "config", "check"); r.code != 0 {
		t.Errorf("the starter config: %d %q", r.code, r.stderr)
	}
}

// `hubgate rules test` takes the event JSON of `hubgate mock send --event`
// and a whole macro (--macro), and shows the matched rule's speak and
// notify, a refusal (another device type) and a render error.
func TestRulesTestTakesEventsAndAMacro(t *testing.T) {
	dir := t.TempDir()
	e := env(t)
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(`bridge:
  notify: failures
  rules:
    - name: typed
      match: {event_type: Type}
      speak: true
      ask: true
      run: {prompt: "{{.TypedText}}", client_tools: [notify]}
    - name: ask
      match: {custom_action: ask-agent}
      notify: answers
      run: {prompt: "{{.CustomAction.Content}}"}
    - name: coloured
      match: {command: paint}
      run: {prompt: "paint it {{.Macro.Extra.colour}}"}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	rulesTest := func(stdin string, args ...string) rulesTestResult {
		t.Helper()
		r := runCmd(t, e, stdin, append([]string{"--config", cfg, "rules", "test", "--json"}, args...)...)
		var res rulesTestResult
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil {
			t.Fatalf("rules test %q: %d %q %q", args, r.code, r.stdout, r.stderr)
		}
		return res
	}

	// The event JSON of `mock send --event`.
	res := rulesTest("", "--event", `{"eventType":"Type","typedPhrase":"water the plants"}`, "water")
	if res.Action != "run" || res.Rule != "typed" || !res.Speak || res.Notify != "failures" || res.NotifyFrom != "bridge.notify" ||
		res.Request == nil || res.Request.Prompt != "water the plants" || res.Macro == nil || res.Macro.Name != "water" ||
		len(res.Request.ClientTools) != 2 || res.Request.ClientTools[1].Name != "ask_person" {
		t.Errorf("--event: %+v", res)
	}

	// A whole macro: a custom action of another device type is refused;
	// of the given type it runs, with the rule's notify.
	macro := filepath.Join(dir, "macro.json")
	if err := os.WriteFile(macro, []byte(`{"id":"2","name":"Ask","commands":[],"events":[{"eventType":"DeviceTypeCustomAction",`+
		`"deviceTypeCustomActionId":"ask-agent","deviceTypeId":"game-pad","additionalInputContent":"summarise my inbox"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res = rulesTest("", "--macro", macro, "--device-type", "hubgate-agent", "ask")
	reason := `custom action "ask-agent" is for device type "game-pad"; this device is of type "hubgate-agent"; not run`
	if res.Action != "refuse" || res.Reason != reason || res.Request != nil || res.Rule != "" || res.DeviceType != "hubgate-agent" {
		t.Errorf("--macro of another device type: %+v", res)
	}
	res = rulesTest("", "--macro", macro, "--device-type", "game-pad", "ask")
	if res.Action != "run" || res.Rule != "ask" || res.Speak || res.Notify != "answers" || res.NotifyFrom != "rule" ||
		res.Request == nil || res.Request.Prompt != "summarise my inbox" {
		t.Errorf("--macro of the given device type: %+v", res)
	}
	// Without --device-type, the paired device's type (state.json).
	xdg := e2eXDG(t, e)
	if err := pairing.SaveState(filepath.Join(xdg, "hubgate", "state.json"), pairing.State{DeviceID: "d", APIURL: "http://127.0.0.1:1",
		DeviceTypeID: "hubgate-agent", PairedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if res := rulesTest("", "--macro", macro, "ask"); res.Action != "refuse" || res.DeviceType != "hubgate-agent" {
		t.Errorf("the paired device's type: %+v", res)
	}
	r := runCmd(t, e, "", "--config", cfg, "rules", "test", "--macro", macro, "ask")
	if r.code != 0 || !strings.Contains(r.stdout, "action   refused: "+reason) || !strings.Contains(r.stdout, "notify   failures (bridge.notify): the person is told") {
		t.Errorf("rules test (text) of a refusal: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A key missing when the command arrives: the render error, exit 3,
	// the rule named once.
	r = runCmd(t, e, "", "--config", cfg, "rules", "test", "--json", "--event", `{"eventType":"KeyPress","keys":["p"]}`, "paint")
	res = rulesTestResult{}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != ExitConfig || r.stderr != "" {
		t.Fatalf("rules test --json of a render error: exit %d %q %q, want 3 and the JSON", r.code, r.stdout, r.stderr)
	}
	if res.Action != "error" || res.Rule != "coloured" || !strings.HasPrefix(res.Error, "run.prompt: ") ||
		!strings.Contains(res.Error, `map has no entry for key "colour"`) || res.Request != nil {
		t.Errorf("a render error: %+v", res)
	}
	r = runCmd(t, e, "", "--config", cfg, "rules", "test", "paint")
	if r.code != ExitConfig || strings.Count(r.stdout+r.stderr, "coloured") != 1 || !strings.Contains(r.stdout, `map has no entry for key "colour"`) {
		t.Errorf("rules test (text) of a render error: exit %d, want 3 and the rule named once:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The request is the one the daemon sends: the rule's client tools
	// and ask_person.
	r = runCmd(t, e, "", "--config", cfg, "rules", "test", "--event", `{"eventType":"Type","typedPhrase":"hi"}`, "hello")
	for _, want := range []string{"rule     typed", "notify   failures (bridge.notify)", "speak    yes: the answer is spoken", `"prompt": "hi"`,
		`"name": "notify"`, `"name": "ask_person"`} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("rules test (text) lacks %q: %d\n%s%s", want, r.code, r.stdout, r.stderr)
		}
	}

	// A profile: a command naming its macro by name finds it.
	profile := filepath.Join(dir, "profile.json")
	if err := os.WriteFile(profile, []byte(`{"id":"p","name":"Default","configuration":{"macros":[`+
		`{"id":"5","name":"Dictate","commands":["take a note"],"events":[{"eventType":"Type","typedPhrase":"note this"}]}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res = rulesTest("", "--profile", profile, "dictate")
	if res.Action != "run" || res.Rule != "typed" || res.Found != "name" || res.Macro == nil || res.Macro.ID != "5" || res.Request.Prompt != "note this" {
		t.Errorf("--profile: %+v", res)
	}
	if r := runCmd(t, e, "", "--config", cfg, "rules", "test", "--event", "not json", "x"); r.code != ExitUsage || !strings.Contains(r.stderr, "--event #1") {
		t.Errorf("a bad --event: %d %q", r.code, r.stderr)
	}
}

// e2eXDG is the config dir of environment e.
func e2eXDG(t *testing.T, e []string) string {
	t.Helper()
	for _, kv := range e {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			return v
		}
	}
	t.Fatal("no XDG_CONFIG_HOME")
	return ""
}
