package rules

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
)

// FuzzCompileMatchRender compiles rules built from arbitrary strings, then
// matches and renders arbitrary commands: nothing panics, a compile error
// is always an *Error with problems, a render error always a *RenderError.
func FuzzCompileMatchRender(f *testing.F) {
	f.Add("hello", "play *", `(?i)vol (\d+)`, "Say {{.Command}}", "{{index .Groups 1}}", "vol 3", "typed", `{"path":"x"}`)
	f.Add("", "[!a-", "(", "{{.Comand}}", "{{range 5}}", "", "", "")
	f.Add("x", `\`, "a|b", "{{json .Macro}} {{.TypedText}}", "{{.Named.x | default \"d\"}}", "a", "t", `[1]`)
	f.Add("k", "[]]*", "(?P<n>.*)", "{{define \"a\"}}{{template \"a\"}}{{end}}{{template \"a\"}}", "{{with .Macro}}{{.Name}}{{end}}", "]x", "", "{}")
	f.Add("k", "*?*", ".*", "{{range .Events}}{{.Text}}{{end}}", "{{$.Seq}}", "\xff\xfe", "\x00", "null")
	f.Add("ask", "*", ".*", "{{.CustomAction.Content}} {{.OutputSpeech}}", "{{range .CustomActions}}{{.ID}}{{end}}", "ask", "water the plants", "{}")
	f.Fuzz(func(t *testing.T, command, glob, regex, prompt, other, text, typed, args string) {
		specs := []Spec{
			{Name: "a", Match: MatchSpec{Command: command}, Run: RunTemplate{Prompt: prompt, TaskID: other}},
			{Name: "b", Match: MatchSpec{CommandGlob: glob}, Busy: BusyQueue, Run: RunTemplate{Prompt: other, AnswerContract: prompt,
				HITLAnswers: map[string]any{"f": prompt, "g": []any{other}}}},
			{Name: "c", Match: MatchSpec{CommandRegex: regex, EventType: deviceapi.EventType}, Run: RunTemplate{Prompt: prompt, ClientTools: []string{"notify", "t"}}},
			{Name: "d", Match: MatchSpec{CustomAction: command, EventType: deviceapi.EventJoystickMove}, Run: RunTemplate{Prompt: other}},
		}
		tools := []CommandToolSpec{{Name: "t", Enabled: true, Description: "d", Argv: []string{"/bin/echo", other, prompt}}}
		unmatched := UnmatchedSpec{Action: UnmatchedRun, Run: &RunTemplate{Prompt: other}}
		s, err := Compile(specs, tools, unmatched)
		if err != nil {
			var cerr *Error
			if !errors.As(err, &cerr) || len(cerr.Problems) == 0 {
				t.Fatalf("compile error %T %v", err, err)
			}
			for _, p := range cerr.Problems {
				if p.Message == "" || p.String() == "" {
					t.Fatalf("empty problem %+v", p)
				}
			}
			// Each rule alone, so that valid ones are exercised too.
			for _, sp := range specs {
				if one, err := Compile([]Spec{sp}, tools, UnmatchedSpec{}); err == nil {
					s = one
					break
				}
			}
			if s == nil {
				return
			}
		}
		var events []deviceapi.MacroEvent
		for _, ev := range []map[string]any{
			{"eventType": deviceapi.EventType, "typedPhrase": typed},
			{"eventType": deviceapi.EventType, "typedPhrase": nil, "text": typed},
			{"eventType": deviceapi.EventDeviceTypeCustomAction, "deviceTypeCustomActionId": command, "additionalInputContent": typed, "outputSpeech": text},
			{"eventType": deviceapi.EventDeviceTypeCustomAction, "deviceTypeCustomActionId": command, "deviceTypeId": glob},
			{"eventType": deviceapi.EventJoysticksMove, "joystickLeftMoveX": len(typed)},
		} {
			b, _ := json.Marshal(ev)
			var e deviceapi.MacroEvent
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			events = append(events, e)
		}
		macro := &deviceapi.Macro{ID: command, Name: glob, Commands: []string{text}, Events: events}
		foreign := &deviceapi.Macro{Name: typed, Events: events[len(events)-1:]}
		s = s.WithCatalog([]deviceapi.Macro{*macro, *foreign, {ID: text, Name: command}})
		for _, set := range []*Set{s, s.WithDeviceType(typed)} {
			for _, cmd := range []Command{
				{Text: text, Received: time.Unix(1, 0), Seq: 1},
				{Text: text, Macro: macro, Seq: 2},
				{Text: command, Macro: &deviceapi.Macro{ID: command}},
				{Text: typed, Macro: foreign},
				{Text: glob},
			} {
				checkDecision(t, set, cmd)
			}
		}
		if _, ok := s.CommandTool("t"); ok {
			_, err := s.ToolArgv("t", json.RawMessage(args))
			var terr *ToolError
			if err != nil && !errors.As(err, &terr) {
				t.Fatalf("argv error %T %v", err, err)
			}
		}
	})
}

// checkDecision checks what Decide promises: the action's rule, request
// and error agree, Route and Render say the same.
func checkDecision(t *testing.T, s *Set, cmd Command) {
	t.Helper()
	d := s.Decide(cmd)
	var rerr *RenderError
	var oerr *OtherDeviceTypeError
	switch d.Action {
	case ActionRun:
		if d.Rule == nil || d.Err != nil || strings.TrimSpace(d.Request.Prompt) == "" {
			t.Fatalf("run: %+v", d)
		}
	case ActionError:
		if d.Rule == nil || !errors.As(d.Err, &rerr) || d.Reason() == "" {
			t.Fatalf("error: %T %v", d.Err, d.Err)
		}
	case ActionRefuse:
		if d.Rule != nil || !errors.As(d.Err, &oerr) || len(oerr.Actions) == 0 || s.DeviceType() == "" || d.Reason() == "" {
			t.Fatalf("refuse: %+v", d)
		}
	case ActionIgnore, ActionCancel:
		if d.Rule != nil || d.Err != nil {
			t.Fatalf("%s: %+v", d.Action, d)
		}
	default:
		t.Fatalf("action %q", d.Action)
	}
	if again := s.Decide(d.Command); again.Action != d.Action || again.Rule != d.Rule {
		t.Fatalf("Decide of the completed command differs: %+v then %+v", d, again)
	}
	// Without custom actions for another type, Route is Decide's match.
	var events []deviceapi.MacroEvent
	if d.Command.Macro != nil {
		events = d.Command.Macro.Events
	}
	if (d.Action == ActionRun || d.Action == ActionError) && !slices.ContainsFunc(events, isForeign(s)) {
		if r, matched, ok := s.Route(cmd); !ok || r != d.Rule || matched != d.Matched {
			t.Fatalf("Route %v %v %v, Decide %+v", r, matched, ok, d)
		}
	}
}

// isForeign reports custom actions for another type than s's.
func isForeign(s *Set) func(deviceapi.MacroEvent) bool {
	return func(e deviceapi.MacroEvent) bool {
		a, ok := e.CustomAction()
		dt := strings.TrimSpace(a.DeviceTypeID)
		return ok && s.DeviceType() != "" && dt != "" && !strings.EqualFold(dt, s.DeviceType())
	}
}
