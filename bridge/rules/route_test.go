package rules

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/deviceapi"
)

// The vendor's app may send a macro's name ("Water Plants") or a phrase in
// another case where the profile's commands hold lowercase phrases.
func TestCatalogLookupOrder(t *testing.T) {
	water := deviceapi.Macro{ID: "1", Name: "Water Plants", Commands: []string{"water the plants", "water"}}
	lights := deviceapi.Macro{ID: "2", Name: "Lights", Commands: []string{"lights on"}}
	// "water plants" is a phrase of this macro and the name of the first:
	// phrases come before names.
	hose := deviceapi.Macro{ID: "3", Name: "Hose", Commands: []string{"Water Plants"}}
	// "Lights" is also this macro's name: the first macro of that name wins.
	lights2 := deviceapi.Macro{ID: "4", Name: "lights ", Commands: []string{"LIGHTS ON", "dim"}}
	// An id that is another macro's phrase: ids first.
	byID := deviceapi.Macro{ID: "dim", Name: "By id"}
	cat := NewCatalog([]deviceapi.Macro{water, lights, hose, lights2, byID})

	tests := []struct {
		name   string
		cmd    Command
		wantID string // "" for no macro
		found  Found
	}{
		{"phrase exact", Command{Text: "water"}, "1", FoundByCommand},
		{"phrase in another case", Command{Text: "Water The Plants"}, "1", FoundByCommand},
		{"phrase with blanks around", Command{Text: "  water the plants\n"}, "1", FoundByCommand},
		{"inner blanks count", Command{Text: "water  the plants"}, "", FoundNone},
		{"phrases before names", Command{Text: "water plants"}, "3", FoundByCommand},
		{"name when no phrase holds it", Command{Text: "water plants!"}, "", FoundNone},
		{"name exact", Command{Text: "Hose"}, "3", FoundByName},
		{"name in another case, trimmed", Command{Text: " hOSE "}, "3", FoundByName},
		{"shared phrase: the first macro", Command{Text: "lights on"}, "2", FoundByCommand},
		{"shared name: the first macro", Command{Text: "LIGHTS"}, "2", FoundByName},
		{"id only: by id before the text", Command{Text: "water", Macro: &deviceapi.Macro{ID: "2"}}, "2", FoundByID},
		{"an id is not looked up as text", Command{Text: "dim"}, "4", FoundByCommand},
		{"unknown id: the text, then the name", Command{Text: "Water Plants", Macro: &deviceapi.Macro{ID: "9"}}, "3", FoundByCommand},
		{"unknown id, unknown text: kept", Command{Text: "nothing", Macro: &deviceapi.Macro{ID: "9"}}, "9", FoundDelivered},
		{"delivered macro kept whatever the text", Command{Text: "water", Macro: &deviceapi.Macro{ID: "x", Name: "Own"}}, "x", FoundDelivered},
		{"empty text finds nothing", Command{Text: "  "}, "", FoundNone},
		{"nothing", Command{Text: "coffee"}, "", FoundNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, found := cat.Lookup(tc.cmd)
			id := ""
			if got.Macro != nil {
				id = got.Macro.ID
			}
			if id != tc.wantID || found != tc.found {
				t.Fatalf("Lookup(%q) = macro %q by %q, want %q by %q", tc.cmd.Text, id, found, tc.wantID, tc.found)
			}
			if got.Text != tc.cmd.Text {
				t.Fatalf("the command text changed to %q", got.Text)
			}
			if again, _ := cat.Lookup(got); !reflect.DeepEqual(again, got) {
				t.Fatal("Lookup is not idempotent")
			}
		})
	}
}

func TestCatalogAmbiguities(t *testing.T) {
	cat := NewCatalog([]deviceapi.Macro{
		{ID: "1", Name: "Water Plants", Commands: []string{"water", "Water"}}, // a repeat in one macro is no ambiguity
		{ID: "2", Name: "water plants ", Commands: []string{" WATER"}},
		{ID: "1", Name: "Other", Commands: []string{"other"}},
		{ID: "4", Name: "Hose", Commands: []string{"hose"}}, // "hose" is a phrase here and a name: lookup order decides, no warning
	})
	var got []string
	for _, a := range cat.Ambiguities() {
		got = append(got, a.String())
	}
	want := []string{
		`2 macros of the profile share the id "1": "Water Plants" (id 1), "Other" (id 1); the first, "Water Plants" (id 1), is used`,
		`2 macros of the profile share the command "water": "Water Plants" (id 1), "water plants " (id 2); the first, "Water Plants" (id 1), is used`,
		`2 macros of the profile share the name "Water Plants": "Water Plants" (id 1), "water plants " (id 2); the first, "Water Plants" (id 1), is used`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ambiguities\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if a := NewCatalog([]deviceapi.Macro{{ID: "1", Name: "A", Commands: []string{"a"}}, {ID: "2", Name: "B"}}).Ambiguities(); a != nil {
		t.Fatalf("unique keys reported as ambiguous: %v", a)
	}
}

func customAction(id, deviceType string, content string) deviceapi.MacroEvent {
	e := deviceapi.MacroEvent{EventType: deviceapi.EventDeviceTypeCustomAction, DeviceTypeCustomActionID: &id, AdditionalInputContent: &content}
	if deviceType != "" {
		e.DeviceTypeID = &deviceType
	}
	return e
}

func TestDecide(t *testing.T) {
	set := mustCompile(t, []Spec{
		{Name: "ask", Match: MatchSpec{CustomAction: "ask-agent"}, Run: RunTemplate{Prompt: "{{.CustomAction.Content}}"}},
		{Name: "typed", Match: MatchSpec{EventType: deviceapi.EventType}, Run: RunTemplate{Prompt: "typed {{.TypedText}} ({{len .Events}} events)"}},
		{Name: "extra", Match: MatchSpec{Command: "extra"}, Run: RunTemplate{Prompt: "x {{.Macro.Extra.colour}}"}},
		{Name: "named", Match: MatchSpec{MacroName: "Water Plants"}, Run: RunTemplate{Prompt: "water {{.Macro.ID}}"}},
	}, nil, UnmatchedSpec{}).
		WithCatalog([]deviceapi.Macro{{ID: "7", Name: "Water Plants", Commands: []string{"water the plants"}}}).
		WithDeviceType("hubgate-agent")
	ours := func(dt string) *deviceapi.Macro {
		return &deviceapi.Macro{Name: "Ask", Events: []deviceapi.MacroEvent{customAction("ask-agent", dt, "summarise")}}
	}
	mixed := &deviceapi.Macro{Name: "Mixed", Events: []deviceapi.MacroEvent{
		customAction("ask-agent", "game-pad", "jump"), typeEvent(t, "hello"), customAction("fire", "game-pad", "")}}
	nullType := ours("")
	nullType.Events[0].DeviceTypeID = nil

	tests := []struct {
		name   string
		set    *Set
		cmd    Command
		action Action
		rule   string
		prompt string
		reason string // substring of Reason()
		found  Found
	}{
		{"own device type runs", set, Command{Text: "ask", Macro: ours("hubgate-agent")}, ActionRun, "ask", "summarise", "", FoundDelivered},
		{"type compared case-insensitive and trimmed", set, Command{Text: "ask", Macro: ours(" HubGate-Agent ")}, ActionRun, "ask", "summarise", "", FoundDelivered},
		{"empty deviceTypeId runs", set, Command{Text: "ask", Macro: ours("")}, ActionRun, "ask", "summarise", "", FoundDelivered},
		{"null deviceTypeId runs", set, Command{Text: "ask", Macro: nullType}, ActionRun, "ask", "summarise", "", FoundDelivered},
		{"another device type is refused", set, Command{Text: "ask", Macro: ours("game-pad")}, ActionRefuse, "", "",
			`custom action "ask-agent" is for device type "game-pad"; this device is of type "hubgate-agent"; not run`, FoundDelivered},
		{"without a device type nothing is refused", set.WithDeviceType(""), Command{Text: "ask", Macro: ours("game-pad")}, ActionRun, "ask", "summarise", "", FoundDelivered},
		{"other events of a mixed macro run without the foreign actions", set, Command{Text: "mixed", Macro: mixed}, ActionRun, "typed", "typed hello (1 events)", "", FoundDelivered},
		{"a name finds its macro", set, Command{Text: "water plants"}, ActionRun, "named", "water 7", "", FoundByName},
		{"stop outputs cancels, before any refusal", set, Command{Text: "stop", Macro: &deviceapi.Macro{Name: "Stop",
			Events: []deviceapi.MacroEvent{customAction("x", "game-pad", ""), {EventType: deviceapi.EventStopOutputs}}}}, ActionCancel, "", "", "", FoundDelivered},
		{"no rule", set, Command{Text: "nothing"}, ActionIgnore, "", "", "no rule matches", FoundNone},
		{"a missing key at render time fails", set, Command{Text: "extra"}, ActionError, "extra", "",
			`rule "extra": run.prompt: template: run.prompt:1:10: executing "run.prompt" at <.Macro.Extra.colour>: map has no entry for key "colour"`, FoundNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.set.Decide(tc.cmd)
			rule := ""
			if d.Rule != nil {
				rule = d.Rule.Name()
			}
			if d.Action != tc.action || rule != tc.rule || d.Request.Prompt != tc.prompt || d.Found != tc.found {
				t.Fatalf("Decide = %s rule %q prompt %q found %q (err %v), want %s %q %q %q", d.Action, rule, d.Request.Prompt, d.Found, d.Err, tc.action, tc.rule, tc.prompt, tc.found)
			}
			if tc.reason == "" && d.Reason() != "" || !strings.Contains(d.Reason(), tc.reason) {
				t.Fatalf("reason %q, want %q", d.Reason(), tc.reason)
			}
			if tc.cmd.Macro != nil && !reflect.DeepEqual(d.Command.Macro, tc.cmd.Macro) {
				t.Fatalf("the routing's command is not the macro as delivered: %+v", d.Command.Macro)
			}
		})
	}

	t.Run("refusal error", func(t *testing.T) {
		d := set.Decide(Command{Text: "two", Macro: &deviceapi.Macro{Events: []deviceapi.MacroEvent{
			customAction("", "game-pad", ""), customAction("b", "other", "")}}})
		var oe *OtherDeviceTypeError
		if !errors.As(d.Err, &oe) || oe.DeviceType != "hubgate-agent" || len(oe.Actions) != 2 {
			t.Fatalf("%T %v", d.Err, d.Err)
		}
		if want := `a custom action is for device type "game-pad"; this device is of type "hubgate-agent" (and 1 more custom action(s) for other types); not run`; d.Reason() != want {
			t.Fatalf("reason %q\nwant   %q", d.Reason(), want)
		}
	})
	t.Run("WithDeviceType keeps the receiver and the catalogue", func(t *testing.T) {
		other := set.WithDeviceType("game-pad")
		if set.DeviceType() != "hubgate-agent" || other.DeviceType() != "game-pad" || other.Catalog().Len() != 1 {
			t.Fatal("WithDeviceType")
		}
		if other.WithCatalog(nil).DeviceType() != "game-pad" {
			t.Fatal("WithCatalog dropped the device type")
		}
		if d := other.Decide(Command{Text: "ask", Macro: ours("game-pad")}); d.Action != ActionRun {
			t.Fatalf("%s %v", d.Action, d.Err)
		}
	})
}

// A template may name only keys that exist: .Named's keys are the named
// groups of the rule's command_regex, known when the rules load.
func TestNamedKeysAreChecked(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		problem string // "" when it compiles
	}{
		{"a group of the regex", Spec{Match: MatchSpec{CommandRegex: `lights (?P<colour>\w+)`}, Run: RunTemplate{Prompt: "Switch the lights {{.Named.colour}}"}}, ""},
		{"no regex", Spec{Match: MatchSpec{Command: "lights"}, Run: RunTemplate{Prompt: "Switch the lights {{.Named.colour}}"}},
			`rules[0] "r": run.prompt: template: run.prompt:1:26: .Named has no key "colour": the rule has no command_regex, so .Named is empty (it holds command_regex's named groups, (?P<name>...))`},
		{"another group", Spec{Match: MatchSpec{CommandRegex: `lights (?P<state>on|off) (?P<room>\w+)`}, Run: RunTemplate{Prompt: "{{.Named.colour}}"}},
			`rules[0] "r": run.prompt: template: run.prompt:1:8: .Named has no key "colour": the named groups of match.command_regex are state, room`},
		{"no named group", Spec{Match: MatchSpec{CommandRegex: `lights (on|off)`}, Run: RunTemplate{Prompt: "{{.Named.state}}"}},
			`rules[0] "r": run.prompt: template: run.prompt:1:8: .Named has no key "state": match.command_regex has no named groups (name one with (?P<state>...))`},
		{"index with a literal key", Spec{Match: MatchSpec{CommandRegex: `(?P<state>on|off)`}, Run: RunTemplate{Prompt: "p", TaskID: `{{index .Named "colour"}}`}},
			`rules[0] "r": run.task_id: template: run.task_id:1:2: .Named has no key "colour": the named groups of match.command_regex are state`},
		{"index with a good key", Spec{Match: MatchSpec{CommandRegex: `(?P<state>on|off)`}, Run: RunTemplate{Prompt: `{{index .Named "state"}}`}}, ""},
		{"inside with", Spec{Match: MatchSpec{CommandRegex: `(?P<state>on|off)`}, Run: RunTemplate{Prompt: "p", AnswerContract: "{{with .Named}}{{.state}} {{.colour}}{{end}}"}},
			`rules[0] "r": run.answer_contract: template: run.answer_contract:1:28: .Named has no key "colour": the named groups of match.command_regex are state`},
		{"through $", Spec{Match: MatchSpec{CommandRegex: `(?P<state>on|off)`}, Run: RunTemplate{Prompt: "{{range .Events}}{{$.Named.colour}}{{end}}"}},
			`rules[0] "r": run.prompt: template: run.prompt:1:20: .Named has no key "colour": the named groups of match.command_regex are state`},
		{"in a hitl answer", Spec{Match: MatchSpec{Command: "x"}, Run: RunTemplate{Prompt: "p", HITLAnswers: map[string]any{"f": []any{"{{.Named.a}}"}}}},
			`rules[0] "r": run.hitl_answers.f[0]: template: run.hitl_answers.f[0]:1:8: .Named has no key "a": the rule has no command_regex, so .Named is empty (it holds command_regex's named groups, (?P<name>...))`},
		{"the whole map and range are fine", Spec{Match: MatchSpec{Command: "x"}, Run: RunTemplate{Prompt: "{{.Named}}{{range $k, $v := .Named}}{{$k}}{{end}}"}}, ""},
		{"a bad regex is reported alone", Spec{Match: MatchSpec{CommandRegex: `(?P<state>on`}, Run: RunTemplate{Prompt: "{{.Named.colour}}"}},
			"rules[0] \"r\": match.command_regex: error parsing regexp: missing closing ): `(?P<state>on`"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Name = "r"
			_, err := Compile([]Spec{tc.spec}, nil, UnmatchedSpec{})
			if tc.problem == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var cerr *Error
			if !errors.As(err, &cerr) || len(cerr.Problems) != 1 || cerr.Problems[0].String() != tc.problem {
				t.Fatalf("got  %v\nwant %s", err, tc.problem)
			}
		})
	}

	t.Run("the unmatched rule has no groups", func(t *testing.T) {
		_, err := Compile(nil, nil, UnmatchedSpec{Action: UnmatchedRun, Run: &RunTemplate{Prompt: "{{.Command}} {{.Named.x}}"}})
		want := `unmatched: run.prompt: template: run.prompt:1:21: .Named has no key "x": the rule has no command_regex`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("every group is a key, even when the command does not match", func(t *testing.T) {
		s := mustCompile(t, []Spec{{Name: "r", Match: MatchSpec{CommandRegex: `lights (?P<state>on|off)( (?P<room>\w+))?`},
			Run: RunTemplate{Prompt: "[{{.Named.state}}] [{{.Named.room}}]"}}}, nil, UnmatchedSpec{})
		r, _ := s.Rule("r")
		for text, want := range map[string]string{"lights on": "[on] []", "lights off hall": "[off] [hall]", "other": "[] []"} {
			req, err := r.Render(Command{Text: text}, Catalog{})
			if err != nil || req.Prompt != want {
				t.Fatalf("%q: prompt %q err %v, want %q", text, req.Prompt, err, want)
			}
		}
	})
	t.Run("index probes an optional key", func(t *testing.T) {
		s := mustCompile(t, []Spec{{Name: "r", Match: MatchSpec{CommandGlob: "*"},
			Run: RunTemplate{Prompt: `c{{with index .Macro.Extra "colour"}} colour{{end}}{{with index .Macro.Extra "size"}} size {{printf "%s" .}}{{end}}`}}}, nil, UnmatchedSpec{})
		r, _ := s.Rule("r")
		m := macroJSON(t, `{"name":"m","size":3}`)
		req, err := r.Render(Command{Text: "x", Macro: m}, Catalog{})
		if err != nil || req.Prompt != "c size 3" {
			t.Fatalf("prompt %q err %v", req.Prompt, err)
		}
	})
	t.Run("a map key missing at render time is an error", func(t *testing.T) {
		s := mustCompile(t, []Spec{{Name: "r", Match: MatchSpec{CommandGlob: "*"}, Run: RunTemplate{Prompt: "c",
			AdditionalWorkflowPrompt: "{{range .Events}}{{.Extra.colour}}{{end}}"}}}, nil, UnmatchedSpec{})
		r, _ := s.Rule("r")
		_, err := r.Render(Command{Text: "x", Macro: &deviceapi.Macro{Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventPause}}}}, Catalog{})
		var rerr *RenderError
		if !errors.As(err, &rerr) || rerr.Field != "run.additional_workflow_prompt" || !strings.Contains(err.Error(), `map has no entry for key "colour"`) {
			t.Fatalf("%T %v", err, err)
		}
	})
}
