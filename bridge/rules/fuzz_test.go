package rules

import (
	"encoding/json"
	"errors"
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
		s = s.WithCatalog([]deviceapi.Macro{*macro})
		for _, cmd := range []Command{
			{Text: text, Received: time.Unix(1, 0), Seq: 1},
			{Text: text, Macro: macro, Seq: 2},
			{Text: command, Macro: &deviceapi.Macro{ID: command}},
		} {
			r, _, ok := s.Route(cmd)
			if !ok {
				continue
			}
			if _, err := r.Render(cmd, s.Catalog()); err != nil {
				var rerr *RenderError
				if !errors.As(err, &rerr) {
					t.Fatalf("render error %T %v", err, err)
				}
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
