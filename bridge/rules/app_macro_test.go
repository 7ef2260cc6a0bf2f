package rules

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/deviceapi"
)

// Macros as the vendor's app sends them (see docs/deviceapi.md): a
// Type event's text in typedPhrase, custom actions with their content,
// JoystickMove next to JoysticksMove, KeyPress events with every other
// field null.

func macroJSON(t testing.TB, s string) *deviceapi.Macro {
	t.Helper()
	m := new(deviceapi.Macro)
	if err := json.Unmarshal([]byte(s), m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

const (
	appTypeMacro   = `{"id":"1","name":"Water","commands":["water"],"events":[{"eventType":"Type","typedPhrase":"water the plants"}]}`
	appCustomMacro = `{"id":"2","name":"Ask","commands":["ask"],"events":[{"eventType":"DeviceTypeCustomAction","keys":null,"typedPhrase":null,` +
		`"deviceTypeCustomActionId":"ask-agent","deviceTypeId":"dt-7","additionalInputContent":"summarise my inbox","isCustomToggle":false,"isCustomRelease":null}]}`
	appKeyPressMacro = `{"id":"3","name":"Space","commands":["space"],"events":[{"eventType":"KeyPress","keys":["space"],"holdTimeMilliseconds":0,"isKeyLatch":false,` +
		`"typedPhrase":null,"outputSpeech":null,"deviceTypeCustomActionId":null,"deviceTypeId":null,"additionalInputContent":null}]}`
	appJoystickMacro  = `{"id":"4","name":"Run","commands":["run forward"],"events":[{"eventType":"JoystickMove","joystickLeftMoveY":100}]}`
	appJoysticksMacro = `{"id":"5","name":"Turn","commands":["turn"],"events":[{"eventType":"JoysticksMove","joystickLeftMoveX":-100}]}`
	appSpeechMacro    = `{"id":"6","name":"Talk","commands":[],"events":[{"eventType":"PlayAudio","audioFileUrl":"https://x/a.mp3","outputSpeech":"Starting"},` +
		`{"eventType":"Pause","holdTimeMilliseconds":100,"outputSpeech":""},{"eventType":"KeyPress","keys":["a"],"outputSpeech":"now"}]}`
)

func TestMatchRealAppMacros(t *testing.T) {
	s := mustCompile(t, []Spec{
		rule("ask", MatchSpec{CustomAction: "ask-agent"}),
		rule("lights-custom", MatchSpec{CustomAction: "lights", Command: "lights"}),
		rule("legacy-joystick", MatchSpec{EventType: deviceapi.EventJoystickMove}),
		rule("typed", MatchSpec{EventType: deviceapi.EventType}),
	}, nil, UnmatchedSpec{})
	specJoystick := mustCompile(t, []Spec{rule("spec-joystick", MatchSpec{EventType: deviceapi.EventJoysticksMove})}, nil, UnmatchedSpec{})
	lights := strings.Replace(appCustomMacro, "ask-agent", "lights", 1)
	for _, tc := range []struct {
		name string
		set  *Set
		cmd  Command
		want string
	}{
		{"custom action id", s, Command{Text: "ask", Macro: macroJSON(t, appCustomMacro)}, "ask"},
		{"custom action id and command", s, Command{Text: "lights", Macro: macroJSON(t, lights)}, "lights-custom"},
		{"custom action id, other command", s, Command{Text: "lamp", Macro: macroJSON(t, lights)}, ""},
		{"custom action id is exact", s, Command{Text: "ask", Macro: macroJSON(t, strings.Replace(appCustomMacro, "ask-agent", "Ask-Agent", 1))}, ""},
		{"custom action without a macro", s, Command{Text: "ask"}, ""},
		{"null custom action fields are no custom action", mustCompile(t, []Spec{rule("any", MatchSpec{CustomAction: "x"})}, nil, UnmatchedSpec{}),
			Command{Text: "space", Macro: macroJSON(t, appKeyPressMacro)}, ""},
		{"Type with typedPhrase", s, Command{Text: "water", Macro: macroJSON(t, appTypeMacro)}, "typed"},
		{"JoystickMove rule, JoystickMove event", s, Command{Text: "run forward", Macro: macroJSON(t, appJoystickMacro)}, "legacy-joystick"},
		{"JoystickMove rule, JoysticksMove event", s, Command{Text: "turn", Macro: macroJSON(t, appJoysticksMacro)}, "legacy-joystick"},
		{"JoysticksMove rule, JoystickMove event", specJoystick, Command{Text: "run forward", Macro: macroJSON(t, appJoystickMacro)}, "spec-joystick"},
		{"JoysticksMove rule, JoysticksMove event", specJoystick, Command{Text: "turn", Macro: macroJSON(t, appJoysticksMacro)}, "spec-joystick"},
		{"JoysticksMove rule, MouseMove event", specJoystick, Command{Text: "m", Macro: macroJSON(t, `{"id":"7","events":[{"eventType":"MouseMove","mouseMoveX":3}]}`)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if r, ok := tc.set.Match(tc.cmd); ok {
				got = r.Name()
			}
			if got != tc.want {
				t.Fatalf("Match = %q, want %q", got, tc.want)
			}
		})
	}
}

// The vendor's own sample data, as the hub would deliver it (the macro of
// each step with its first command), routed by a JoystickMove rule.
func TestVendorSampleDataRoutes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "deviceapi", "testdata", "vendor", "fps_controller_complex.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Steps []deviceapi.Macro }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	file, err := parseFile([]byte(`
rules:
  - name: move
    match: {event_type: JoystickMove}
    run: {prompt: "move {{range .Events}}{{.JoystickLeftMoveX}}/{{.JoystickLeftMoveY}}{{end}}"}
  - name: press
    match: {event_type: KeyPress}
    run: {prompt: "press {{range .Events}}{{join \"+\" .Keys}}{{end}}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := file.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range f.Steps {
		text := ""
		if len(m.Commands) > 0 {
			text = m.Commands[0]
		}
		r, ok := s.Match(Command{Text: text, Macro: &m})
		if !ok {
			got = append(got, "-")
			continue
		}
		req, err := r.Render(Command{Text: text, Macro: &m}, Catalog{})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, req.Prompt)
	}
	want := "move <nil>/100|-|press gamepad_button_1|-|press gamepad_button_2gamepad_button_3|move -100/<nil>|move <nil>/0"
	if strings.Join(got, "|") != want {
		t.Errorf("routes\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
}

func TestRenderRealAppMacros(t *testing.T) {
	two := `{"id":"8","events":[{"eventType":"DeviceTypeCustomAction","deviceTypeCustomActionId":"a","additionalInputContent":"first"},` +
		`{"eventType":"KeyPress","keys":["x"]},{"eventType":"DeviceTypeCustomAction","deviceTypeCustomActionId":"b","additionalInputContent":"second","isCustomRelease":true}]}`
	for _, tc := range []struct {
		prompt string
		macro  string
		want   string
	}{
		{"{{.TypedText}}", appTypeMacro, "water the plants"},
		{"{{.TypedText}}", `{"id":"1","events":[{"eventType":"Type","typedPhrase":"new ","text":"old"},{"eventType":"Type","text":"legacy"}]}`, "new legacy"},
		{"[{{.TypedText}}]", appCustomMacro, "[]"},
		{"{{.CustomAction.ID}}|{{.CustomAction.DeviceTypeID}}|{{.CustomAction.Content}}|{{.CustomAction.Toggle}}|{{.CustomAction.Release}}", appCustomMacro,
			"ask-agent|dt-7|summarise my inbox|false|false"},
		{"{{.CustomAction.Content}}; {{range .CustomActions}}{{.ID}}={{.Content}}/{{.Release}} {{end}}", two, "first; a=first/false b=second/true "},
		{"[{{.CustomAction.ID}}][{{.CustomAction.Content}}][{{len .CustomActions}}][{{.OutputSpeech}}]", appKeyPressMacro, "[][][0][]"},
		{"{{.OutputSpeech}}", appSpeechMacro, "Starting now"},
		{"{{if .CustomAction.ID}}custom{{else}}{{.TypedText | default .Command}}{{end}}", appTypeMacro, "water the plants"},
		{"{{range .Events}}{{.TypedPhrase}}{{.AudioFileURL}}{{end}}", appSpeechMacro, "<nil>https://x/a.mp3<nil><nil><nil><nil>"},
	} {
		t.Run(tc.prompt, func(t *testing.T) {
			s := mustCompile(t, []Spec{{Name: "r", Match: MatchSpec{CommandGlob: "*"}, Run: RunTemplate{Prompt: tc.prompt}}}, nil, UnmatchedSpec{})
			r, _ := s.Rule("r")
			req, err := r.Render(Command{Text: "cmd", Macro: macroJSON(t, tc.macro)}, Catalog{})
			if err != nil {
				t.Fatal(err)
			}
			if req.Prompt != tc.want {
				t.Fatalf("got %q, want %q", req.Prompt, tc.want)
			}
		})
	}
}

func TestCompileRealAppCriteria(t *testing.T) {
	// Before, a rule naming JoystickMove did not compile.
	for _, et := range []string{deviceapi.EventJoystickMove, deviceapi.EventJoysticksMove} {
		s, err := Compile([]Spec{rule("j", MatchSpec{EventType: et})}, nil, UnmatchedSpec{})
		if err != nil {
			t.Fatalf("event_type %s: %v", et, err)
		}
		r, _ := s.Rule("j")
		if r.Spec().Match.EventType != et {
			t.Errorf("Spec keeps the spelling as written: %q", r.Spec().Match.EventType)
		}
	}
	// custom_action alone is a criterion.
	if _, err := Compile([]Spec{rule("c", MatchSpec{CustomAction: "x"})}, nil, UnmatchedSpec{}); err != nil {
		t.Fatal(err)
	}
	// A method a template cannot call is refused at load, not at the first
	// command.
	_, err := Compile([]Spec{{Name: "m", Match: MatchSpec{Command: "x"}, Run: RunTemplate{Prompt: "{{range .Events}}{{.CustomAction}}{{end}}"}}}, nil, UnmatchedSpec{})
	if err == nil || !strings.Contains(err.Error(), "can't evaluate field CustomAction") {
		t.Fatalf("compile error %v", err)
	}
	// YAML spelling of the new key.
	f, err := parseFile([]byte("rules:\n  - name: c\n    match: {custom_action: ask-agent}\n    run: {prompt: \"{{.CustomAction.Content}}\"}\n"))
	if err != nil || len(f.Rules) != 1 || f.Rules[0].Match.CustomAction != "ask-agent" {
		t.Fatalf("yaml %+v %v", f, err)
	}
}

// The manual's two patterns (docs/guide.md, moved there from README)
// compile, and each turns its macro into the prompt it promises.
func TestGuidePatterns(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```yaml\nrules:\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("docs/guide.md has no ```yaml rules: block")
	}
	f, err := parseFile([]byte("rules:\n" + block))
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ command, macro, rule, prompt string }{
		{"water", appTypeMacro, "typed", "water the plants"},
		{"ask", appCustomMacro, "ask", "summarise my inbox"},
		{"ask", strings.Replace(appCustomMacro, `"summarise my inbox"`, "null", 1), "ask", "ask"},
	} {
		cmd := Command{Text: c.command, Macro: macroJSON(t, c.macro)}
		r, ok := s.Match(cmd)
		if !ok || r.Name() != c.rule {
			t.Errorf("%s routes to %v", c.macro, r)
			continue
		}
		if req, err := r.Render(cmd, Catalog{}); err != nil || req.Prompt != c.prompt {
			t.Errorf("%s renders %q (%v), want %q", c.macro, req.Prompt, err, c.prompt)
		}
	}
}
