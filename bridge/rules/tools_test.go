package rules

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/deviceapi"
)

func TestToolArgv(t *testing.T) {
	s := mustCompile(t, nil, []CommandToolSpec{
		{Name: "grep", Enabled: true, Description: "search", Argv: []string{"/usr/bin/grep", "-n", "--", "{{.pattern}}", "{{.file}}"}},
		{Name: "count", Enabled: true, Description: "n", Argv: []string{"/usr/bin/seq", "{{.n}}", "{{if .verbose}}-w{{else}}{{.n}}{{end}}", "{{json .obj}}"}},
		{Name: "fixed", Enabled: true, Description: "no args", Argv: []string{"/bin/date"}},
		{Name: "off", Description: "disabled", Argv: []string{"/bin/true"}},
	}, UnmatchedSpec{})
	tests := []struct {
		tool string
		args string
		want []string
		err  string
	}{
		{"grep", `{"pattern":"a b; rm -rf /","file":"$(x) *.go"}`, []string{"/usr/bin/grep", "-n", "--", "a b; rm -rf /", "$(x) *.go"}, ""},
		{"grep", `{"pattern":"x"}`, nil, `tool "grep": argv[4]: template: argv[4]:1:2: executing "argv[4]" at <.file>: map has no entry for key "file"`},
		{"count", `{"n": 12345678901234567890, "verbose": false, "obj": {"a":[1,2]}}`, []string{"/usr/bin/seq", "12345678901234567890", "12345678901234567890", `{"a":[1,2]}`}, ""},
		{"count", `{"n": 1.5e3, "verbose": true, "obj": null}`, []string{"/usr/bin/seq", "1.5e3", "-w", "null"}, ""},
		{"fixed", ``, []string{"/bin/date"}, ""},
		{"fixed", `null`, []string{"/bin/date"}, ""},
		{"fixed", `{}`, []string{"/bin/date"}, ""},
		{"fixed", `[1]`, nil, `tool "fixed": arguments must be a JSON object`},
		{"fixed", `{} {}`, nil, `tool "fixed": arguments must be one JSON object`},
		{"fixed", `{"a":`, nil, `tool "fixed": arguments must be a JSON object`},
		{"grep", `{"pattern":"a\u0000b","file":"f"}`, nil, `tool "grep": argv[3]: an argument must not contain a NUL byte`},
		{"off", `{}`, nil, `tool "off": no such enabled command tool`},
		{"notify", `{}`, nil, `tool "notify": no such enabled command tool`},
		{"missing", `{}`, nil, `tool "missing": no such enabled command tool`},
	}
	for _, tc := range tests {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			argv, err := s.ToolArgv(tc.tool, json.RawMessage(tc.args))
			if tc.err != "" {
				var terr *ToolError
				if !errors.As(err, &terr) || terr.Tool != tc.tool || err.Error() != tc.err {
					t.Fatalf("err %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(argv, tc.want) {
				t.Fatalf("argv %q err %v, want %q", argv, err, tc.want)
			}
		})
	}
}

func TestNotify(t *testing.T) {
	def := NotifyTool()
	var schema map[string]any
	if def.Name != "notify" || def.Description == "" || json.Unmarshal(def.Parameters, &schema) != nil || schema["type"] != "object" {
		t.Fatalf("definition %+v", def)
	}
	if req, _ := schema["required"].([]any); len(req) != 1 || req[0] != "message" {
		t.Fatalf("required %v", schema["required"])
	}
	tests := []struct {
		args string
		want Notification
		err  string
	}{
		{`{"message":"hi"}`, Notification{Message: "hi", Level: NotifyInfo}, ""},
		{`{"message":"careful","level":"warning"}`, Notification{Message: "careful", Level: NotifyWarning}, ""},
		{`{"message":"x","level":"info"}`, Notification{Message: "x", Level: NotifyInfo}, ""},
		{`{"message":"x","level":"error"}`, Notification{}, `tool "notify": level must be info or warning; got "error"`},
		{`{"message":"  "}`, Notification{}, `tool "notify": message is required`},
		{`{}`, Notification{}, `tool "notify": message is required`},
		{``, Notification{}, `tool "notify": message is required`},
		{`{"message":3}`, Notification{}, `tool "notify": arguments must be an object`},
		{`{"message":"x","extra":1}`, Notification{}, `tool "notify": arguments must be an object`},
		{`"x"`, Notification{}, `tool "notify": arguments must be an object`},
		{`{"message":"` + strings.Repeat("é", MaxNotifyMessage+1) + `"}`, Notification{}, `tool "notify": message must be at most 4000 characters`},
	}
	for _, tc := range tests {
		n, err := ParseNotify(json.RawMessage(tc.args))
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %s", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || n != tc.want {
			t.Errorf("%s: %+v %v", tc.args, n, err)
		}
	}
}

func TestDemo(t *testing.T) {
	f, err := parseFile(demoYAML)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if string(DemoYAML()) != string(demoYAML) || len(f.Rules) < 4 {
		t.Fatal("demo file")
	}
	render := func(cmd Command) (string, automate.RunRequest) {
		t.Helper()
		r, matched, ok := s.Route(cmd)
		if !ok {
			t.Fatalf("%q not routed", cmd.Text)
		}
		_ = matched
		req, err := r.Render(cmd, s.Catalog())
		if err != nil {
			t.Fatal(err)
		}
		return r.Name(), req
	}

	name, req := render(Command{Text: "hello", Seq: 3})
	if name != "hello" || !strings.Contains(req.Prompt, "\n#!answer Hello from hubgate") || req.TaskID != "demo-3" {
		t.Fatalf("hello: %s %+v", name, req)
	}
	name, req = render(Command{Text: "write", Macro: &deviceapi.Macro{Name: "Writer", Events: []deviceapi.MacroEvent{typeEvent(t, "dear diary")}}})
	if name != "typed-text" || !strings.Contains(req.Prompt, "#!answer You typed: dear diary") {
		t.Fatalf("typed: %s %q", name, req.Prompt)
	}
	r, _ := s.Rule("slow")
	if r.Busy() != BusyQueue || r.QueueLimit() != 3 {
		t.Fatal("slow is not a queue rule")
	}
	if r, _ := s.Rule("long"); r.Busy() != BusyRestart {
		t.Fatal("long is not a restart rule")
	}
	name, req = render(Command{Text: `Notify the "tea" is ready`})
	if name != "notify" || len(req.ClientTools) != 1 || req.ClientTools[0].Name != NotifyToolName {
		t.Fatalf("notify: %s %+v", name, req)
	}
	// The directive line carries valid JSON that ParseNotify accepts.
	var line string
	for _, l := range strings.Split(req.Prompt, "\n") {
		if rest, ok := strings.CutPrefix(l, "#!tool notify "); ok {
			line = rest
		}
	}
	n, err := ParseNotify(json.RawMessage(line))
	if err != nil || n.Message != `the "tea" is ready` {
		t.Fatalf("notify directive %q: %+v %v", line, n, err)
	}
	name, req = render(Command{Text: "something else"})
	if name != UnmatchedRuleName || req.Prompt != "something else" {
		t.Fatalf("unmatched: %s %q", name, req.Prompt)
	}
}
