package rules

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

var okRun = RunTemplate{Prompt: "p"}
var okMatch = MatchSpec{Command: "c"}

func enabledTool(name string) CommandToolSpec {
	return CommandToolSpec{Name: name, Enabled: true, Description: "d", Argv: []string{"/bin/true"}}
}

func TestCompileProblems(t *testing.T) {
	tests := []struct {
		name      string
		rules     []Spec
		tools     []CommandToolSpec
		unmatched UnmatchedSpec
		want      []string // every Problem.String(), in order
	}{
		{"missing name and criteria", []Spec{{Run: okRun}}, nil, UnmatchedSpec{},
			[]string{"rules[0]: name: is required",
				"rules[0]: match: needs at least one criterion (command, command_glob, command_regex, macro_name, macro_id, event_type or custom_action)"}},
		{"duplicate name", []Spec{{Name: "a", Match: okMatch, Run: okRun}, {Name: "b", Match: okMatch, Run: okRun}, {Name: "a", Match: okMatch, Run: okRun}}, nil, UnmatchedSpec{},
			[]string{`rules[2] "a": name: duplicate rule name (first used by rules[0])`}},
		{"bad names", []Spec{
			{Name: " padded", Match: okMatch, Run: okRun},
			{Name: strings.Repeat("n", 65), Match: okMatch, Run: okRun},
			{Name: "tab\there", Match: okMatch, Run: okRun},
			{Name: UnmatchedRuleName, Match: okMatch, Run: okRun},
		}, nil, UnmatchedSpec{},
			[]string{`rules[0] " padded": name: must not start or end with a blank`,
				`rules[1] "` + strings.Repeat("n", 65) + `": name: must be at most 64 characters`,
				`rules[2] "tab\there": name: must not contain control characters`,
				`rules[3] "(unmatched)": name: is reserved for the unmatched rule`}},
		{"bad regex", []Spec{{Name: "lights", Match: MatchSpec{CommandRegex: "lights (on|off"}, Run: okRun}}, nil, UnmatchedSpec{},
			[]string{"rules[0] \"lights\": match.command_regex: error parsing regexp: missing closing ): `lights (on|off`"}},
		{"bad globs", []Spec{
			{Name: "g1", Match: MatchSpec{CommandGlob: "play [a-"}, Run: okRun},
			{Name: "g2", Match: MatchSpec{CommandGlob: `trailing\`}, Run: okRun},
			{Name: "g3", Match: MatchSpec{CommandGlob: "[z-a]"}, Run: okRun},
		}, nil, UnmatchedSpec{},
			[]string{`rules[0] "g1": match.command_glob: unterminated character class starting at position 6`,
				`rules[1] "g2": match.command_glob: ends with a lone \ (write \\ for a backslash)`,
				"rules[2] \"g3\": match.command_glob: invalid character class range: `z-a`"}},
		{"notify policy", []Spec{{Name: "n", Match: okMatch, Notify: "all", Run: okRun}, {Name: "ok", Match: okMatch, Notify: NotifyFailures, Speak: true, Run: okRun}}, nil, UnmatchedSpec{},
			[]string{`rules[0] "n": notify: must be one of answers, failures, none; got "all"`}},
		{"event type", []Spec{{Name: "e", Match: MatchSpec{EventType: "type"}, Run: okRun}}, nil, UnmatchedSpec{},
			[]string{`rules[0] "e": match.event_type: must be one of KeyPress, Pause, Type, MouseMove, JoysticksMove, PlayAudio, KeyRelease, StopOutputs, KeyToggle, DeviceTypeCustomAction (or JoystickMove); got "type"`}},
		{"busy policy", []Spec{
			{Name: "b", Match: okMatch, Busy: "drop", Run: okRun},
			{Name: "q", Match: okMatch, QueueLimit: 3, Run: okRun},
			{Name: "n", Match: okMatch, Busy: BusyQueue, QueueLimit: -1, MaxAge: -time.Second, Run: okRun},
			{Name: "big", Match: okMatch, Busy: BusyQueue, QueueLimit: 1001, Run: okRun},
		}, nil, UnmatchedSpec{},
			[]string{`rules[0] "b": busy: must be one of single, queue, restart; got "drop"`,
				`rules[1] "q": queue_limit: applies only to busy: queue (this rule's policy is single)`,
				`rules[2] "n": queue_limit: must be 1..1000 (0 means 5); got -1`,
				`rules[2] "n": max_age: must be a positive duration (0 means 10m0s); got -1s`,
				`rules[3] "big": queue_limit: must be 1..1000 (0 means 5); got 1001`}},
		{"templates", []Spec{
			{Name: "x", Match: okMatch, Run: RunTemplate{Prompt: "{{foo .Command}}"}},
			{Name: "y", Match: okMatch, Run: RunTemplate{Prompt: "{{.Comand}}"}},
			{Name: "z", Match: okMatch, Run: RunTemplate{Prompt: "  \n"}},
			{Name: "w", Match: okMatch, Run: RunTemplate{Prompt: "{{with .Macro}}{{.Nmae}}{{end}}", TaskID: "{{.Command", AnswerContract: "{{range .Events}}{{.Kind}}{{end}}"}},
			{Name: "v", Match: okMatch, Run: RunTemplate{Prompt: "{{range 100000000}}{{end}}", AdditionalWorkflowPrompt: "{{range .Seq}}x{{end}}"}},
			{Name: "u", Match: okMatch, Run: RunTemplate{Prompt: "{{.Command.Length}} {{$.Sequence}}"}},
			{Name: "s", Match: okMatch, Run: RunTemplate{Prompt: "{{range .Events}}{{$.Sequence}}{{end}}",
				TaskID:                   `{{define "a"}}{{template "b"}}{{end}}{{define "b"}}{{template "a"}}{{end}}{{template "a"}}`,
				AdditionalWorkflowPrompt: `{{define "ok"}}{{.}}{{end}}{{template "ok" .Command}}{{template "ok" .Seq}}`}},
		}, nil, UnmatchedSpec{},
			[]string{`rules[0] "x": run.prompt: template: run.prompt:1: function "foo" not defined`,
				`rules[1] "y": run.prompt: template: run.prompt:1:2: field "Comand" is not in the template data (fields: Command, Macro, HasMacro, Events, TypedText, CustomAction, CustomActions, OutputSpeech, Received, Seq, Rule, Groups, Named)`,
				`rules[2] "z": run.prompt: is required (a template of the task text)`,
				`rules[3] "w": run.prompt: template: run.prompt:1:17: can't evaluate field Nmae in type deviceapi.Macro`,
				`rules[3] "w": run.task_id: template: run.task_id:1: unclosed action`,
				`rules[3] "w": run.answer_contract: template: run.answer_contract:1:19: can't evaluate field Kind in type deviceapi.MacroEvent`,
				`rules[4] "v": run.prompt: template: run.prompt:1:8: range over a number is not allowed in rule templates`,
				`rules[4] "v": run.additional_workflow_prompt: template: run.additional_workflow_prompt:1:8: range over a number is not allowed in rule templates`,
				`rules[5] "u": run.prompt: template: run.prompt:1:10: can't evaluate field Length in type string`,
				`rules[6] "s": run.prompt: template: run.prompt:1:20: field "Sequence" is not in the template data (fields: Command, Macro, HasMacro, Events, TypedText, CustomAction, CustomActions, OutputSpeech, Received, Seq, Rule, Groups, Named)`,
				`rules[6] "s": run.task_id: template: run.task_id: template "a" calls itself (recursion is not allowed in rule templates)`}},
		{"options", []Spec{{Name: "o", Match: okMatch, Run: RunTemplate{Prompt: "p", TimeoutMs: 999, ThinkingLevel: "extreme",
			SelectedSkillIDs: []string{"ok", " "}, SelectedMcpServerIDs: []string{""}}}}, nil, UnmatchedSpec{},
			[]string{`rules[0] "o": run.timeout_ms: must be 0 (the server default, 900000) or at least 1000; got 999`,
				`rules[0] "o": run.thinking_level: must be one of low, medium, high, max (or empty for the user's setting); got "extreme"`,
				`rules[0] "o": run.selected_skill_ids[1]: must not be empty`,
				`rules[0] "o": run.selected_mcp_server_ids[0]: must not be empty`}},
		{"negative timeout", []Spec{{Name: "o", Match: okMatch, Run: RunTemplate{Prompt: "p", TimeoutMs: -5}}}, nil, UnmatchedSpec{},
			[]string{`rules[0] "o": run.timeout_ms: must be 0 (the server default, 900000) or at least 1000; got -5`}},
		{"mcp servers", []Spec{{Name: "m", Match: okMatch, Run: RunTemplate{Prompt: "p", McpServers: []McpServerSpec{
			{Name: "Bad_Name", Description: "d", Transport: "stdio", Command: "x"},
			{Name: "-lead", Description: "d", Transport: "stdio", Command: "x"},
			{Name: "a--b", Description: "d", Transport: "stdio", Command: "x"},
			{Name: strings.Repeat("a", 65), Description: "d", Transport: "stdio", Command: "x"},
			{Name: "ok", Transport: "stdio"},
			{Name: "web", Description: "d", Transport: "http", URL: "ftp://x", Command: "y"},
			{Name: "t", Description: "d", Transport: "ws"},
			{Name: "u", Description: "d"},
			{Name: "s", Description: "d", Transport: "stdio", Command: "x", URL: "https://x", DisabledTools: []string{""}},
		}}}}, nil, UnmatchedSpec{},
			[]string{`rules[0] "m": run.mcp_servers: must have at most 8 entries; got 9`,
				`rules[0] "m": run.mcp_servers[0].name: must contain only lowercase letters, numbers and hyphens`,
				`rules[0] "m": run.mcp_servers[1].name: must not start or end with a hyphen`,
				`rules[0] "m": run.mcp_servers[2].name: must not contain --`,
				`rules[0] "m": run.mcp_servers[3].name: must be 1 to 64 characters`,
				`rules[0] "m": run.mcp_servers[4].description: is required`,
				`rules[0] "m": run.mcp_servers[4].command: is required for the stdio transport`,
				`rules[0] "m": run.mcp_servers[5].url: must be a valid http:// or https:// URL`,
				`rules[0] "m": run.mcp_servers[5].command: command, args and env apply only to the stdio transport`,
				`rules[0] "m": run.mcp_servers[6].transport: must be one of stdio, http, sse; got "ws"`,
				`rules[0] "m": run.mcp_servers[7].transport: is required (stdio, http or sse)`,
				`rules[0] "m": run.mcp_servers[8].url: url and headers apply only to the http and sse transports`,
				`rules[0] "m": run.mcp_servers[8].disabled_tools[0]: must not be empty`}},
		{"duplicate mcp server", []Spec{{Name: "m", Match: okMatch, Run: RunTemplate{Prompt: "p", McpServers: []McpServerSpec{
			{Name: "a", Description: "d", Transport: "sse", URL: "http://127.0.0.1:1/sse"},
			{Name: "a", Description: "d", Transport: "stdio", Command: "x"},
		}}}}, nil, UnmatchedSpec{},
			[]string{`rules[0] "m": run.mcp_servers[1].name: duplicate of mcp_servers[0]; names must be unique in the run`}},
		{"hitl answers", []Spec{{Name: "h", Match: okMatch, Run: RunTemplate{Prompt: "p", HITLAnswers: map[string]any{
			"ok": "{{.Command}}", "flag": true, "n": 3, "list": []any{"a", false}, "obj": map[string]any{"a": "b"}, "tmpl": "{{nope}}", "": "x",
		}}}}, nil, UnmatchedSpec{},
			[]string{`rules[0] "h": run.hitl_answers: a field id must not be empty`,
				`rules[0] "h": run.hitl_answers.flag: must be a string or a list of strings; got true (quote it)`,
				`rules[0] "h": run.hitl_answers.list[1]: must be a string; got false (quote it)`,
				`rules[0] "h": run.hitl_answers.n: must be a string or a list of strings; got 3 (quote it)`,
				`rules[0] "h": run.hitl_answers.obj: must be a string or a list of strings; got a mapping (quote it)`,
				`rules[0] "h": run.hitl_answers.tmpl: template: run.hitl_answers.tmpl:1: function "nope" not defined`}},
		{"client tools", []Spec{{Name: "t", Match: okMatch, Run: RunTemplate{Prompt: "p",
			ClientTools: []string{"notify", "ls", "rm", "nope", "notify"}}}},
			[]CommandToolSpec{enabledTool("ls"), {Name: "rm", Description: "remove", Argv: []string{"/bin/rm", "{{.path}}"}}, enabledTool("cat")}, UnmatchedSpec{},
			[]string{`rules[0] "t": run.client_tools[2]: command tool "rm" is disabled (set enabled: true in its command_tools entry to allow it)`,
				`rules[0] "t": run.client_tools[3]: unknown client tool "nope"; a rule can list notify and the enabled command tools (notify, cat, ls)`,
				`rules[0] "t": run.client_tools[4]: "notify" is listed twice (also client_tools[0])`}},
		{"too many client tools", []Spec{{Name: "t", Match: okMatch, Run: RunTemplate{Prompt: "p", ClientTools: slices.Repeat([]string{"notify"}, 33)[:33]}}}, nil, UnmatchedSpec{},
			nil}, // checked below: the count message comes first
		{"command tools", nil, []CommandToolSpec{
			{Name: "notify", Description: "d", Argv: []string{"x"}},
			{Name: "bad name", Argv: []string{"x"}},
			{Name: "mcp__x", Description: "d"},
			{Name: "shell", Description: "d", Argv: []string{"{{.prog}}", "-c"}},
			{Name: "tmpl", Description: "d", Argv: []string{"/bin/echo", "{{.a", "{{nope}}"}, Timeout: -time.Second, Workdir: "rel/dir", MaxOutput: -1},
			{Name: "params", Description: strings.Repeat("d", 1025), Argv: []string{" "}, Parameters: map[string]any{"type": "array"}, Timeout: 2 * time.Hour, MaxOutput: 1 << 20},
			{Name: "tmpl", Description: "again", Argv: []string{"x"}},
			{Name: "nul", Description: "d", Argv: []string{"a\x00b"}, Parameters: map[string]any{"bad": func() {}}},
		}, UnmatchedSpec{},
			[]string{`command_tools[0] "notify": name: notify is the built-in tool; choose another name`,
				`command_tools[1] "bad name": name: must contain only letters, numbers, underscores and hyphens`,
				`command_tools[1] "bad name": description: is required (the agent reads it to decide when to call the tool)`,
				`command_tools[2] "mcp__x": name: must not start with mcp__`,
				`command_tools[2] "mcp__x": argv: is required: the program and its arguments, one list element per argument (never a shell string)`,
				`command_tools[3] "shell": argv[0]: the program must be fixed text, not a template`,
				`command_tools[4] "tmpl": argv[1]: template: argv[1]:1: unclosed action`,
				`command_tools[4] "tmpl": argv[2]: template: argv[2]:1: function "nope" not defined`,
				`command_tools[4] "tmpl": timeout: must be a positive duration up to 1h0m0s (0 means 30s); got -1s`,
				`command_tools[4] "tmpl": workdir: must be an absolute path; got "rel/dir"`,
				`command_tools[4] "tmpl": max_output: must be 1..524288 bytes (0 means 65536); got -1`,
				`command_tools[5] "params": description: must be at most 1024 characters`,
				`command_tools[5] "params": parameters.type: must be "object" (a call's arguments are a JSON object); got a string`,
				`command_tools[5] "params": argv[0]: is required (the program)`,
				`command_tools[5] "params": timeout: must be a positive duration up to 1h0m0s (0 means 30s); got 2h0m0s`,
				`command_tools[5] "params": max_output: must be 1..524288 bytes (0 means 65536); got 1048576`,
				`command_tools[6] "tmpl": name: duplicate command tool name (first declared at command_tools[4])`,
				`command_tools[7] "nul": parameters: cannot be encoded as JSON: json: unsupported type: func()`,
				`command_tools[7] "nul": argv[0]: must not contain a NUL byte`}},
		{"invalid tool named by a rule adds no second problem", []Spec{{Name: "r", Match: okMatch, Run: RunTemplate{Prompt: "p", ClientTools: []string{"broken"}}}},
			[]CommandToolSpec{{Name: "broken", Enabled: true, Argv: []string{"x"}}}, UnmatchedSpec{},
			[]string{`command_tools[0] "broken": description: is required (the agent reads it to decide when to call the tool)`}},
		{"unmatched", nil, nil, UnmatchedSpec{Action: "drop", Busy: "later", QueueLimit: 4, Run: &RunTemplate{Prompt: "{{.X}}", ClientTools: []string{"ls"}}},
			[]string{`unmatched: action: must be ignore or run; got "drop"`,
				`unmatched: busy: must be one of single, queue, restart; got "later"`,
				`unmatched: queue_limit: applies only to busy: queue (this rule's policy is later)`,
				`unmatched: run.prompt: template: run.prompt:1:2: field "X" is not in the template data (fields: Command, Macro, HasMacro, Events, TypedText, CustomAction, CustomActions, OutputSpeech, Received, Seq, Rule, Groups, Named)`,
				`unmatched: run.client_tools[0]: unknown client tool "ls"; a rule can list notify and the enabled command tools (notify)`}},
		{"order: rules, command_tools, unmatched", []Spec{{Name: "r", Run: okRun}}, []CommandToolSpec{{Name: "t", Description: "d"}}, UnmatchedSpec{Action: "x"},
			[]string{`rules[0] "r": match: needs at least one criterion (command, command_glob, command_regex, macro_name, macro_id, event_type or custom_action)`,
				`command_tools[0] "t": argv: is required: the program and its arguments, one list element per argument (never a shell string)`,
				`unmatched: action: must be ignore or run; got "x"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile(tc.rules, tc.tools, tc.unmatched)
			var cerr *Error
			if !errors.As(err, &cerr) || s != nil {
				t.Fatalf("want *Error and no set, got %T %v", err, err)
			}
			var got []string
			for _, p := range cerr.Problems {
				got = append(got, p.String())
			}
			if tc.want == nil {
				if len(got) == 0 || !strings.Contains(got[0], "run.client_tools: must have at most 32 entries; got 33") {
					t.Fatalf("got %q", got)
				}
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("problems:\n got %q\nwant %q", got, tc.want)
			}
			if len(got) == 1 && err.Error() != "invalid rules: "+got[0] {
				t.Fatalf("Error() = %q", err.Error())
			}
			if len(got) > 1 && !strings.HasPrefix(err.Error(), "invalid rules (") {
				t.Fatalf("Error() = %q", err.Error())
			}
		})
	}
}

func TestProblemPaths(t *testing.T) {
	p := Problem{Section: SectionRules, Index: 2, Name: "lights", Field: "match.command_regex", Message: "m"}
	if p.Path() != "rules[2].match.command_regex" || p.Where() != `rules[2] "lights"` || p.String() != `rules[2] "lights": match.command_regex: m` {
		t.Fatalf("%s | %s | %s", p.Path(), p.Where(), p)
	}
	u := Problem{Section: SectionUnmatched, Index: -1, Field: "action", Message: "m"}
	if u.Path() != "unmatched.action" || u.String() != "unmatched: action: m" {
		t.Fatalf("%s | %s", u.Path(), u)
	}
	w := Problem{Section: SectionCommandTools, Index: 0, Message: "m"}
	if w.Path() != "command_tools[0]" || w.String() != "command_tools[0]: m" {
		t.Fatalf("%s | %s", w.Path(), w)
	}
}

func TestCompileValid(t *testing.T) {
	// Every criterion and option at once, a disabled tool nobody names,
	// unmatched run with queue: compiles.
	s, err := Compile([]Spec{{
		Name:  "all",
		Match: MatchSpec{Command: "a b", CommandGlob: "a *", CommandRegex: "a (b)", MacroName: "M", MacroID: "id", EventType: "Type"},
		Busy:  BusyQueue, QueueLimit: 1000, MaxAge: time.Hour, RunOnRecovery: true,
		Run: RunTemplate{Prompt: "{{.Command}}", TimeoutMs: 1000, ThinkingLevel: "max", ClientTools: []string{"tool"}},
	}}, []CommandToolSpec{enabledTool("tool"), {Name: "off", Description: "d", Argv: []string{"/bin/false"}}},
		UnmatchedSpec{Action: UnmatchedRun, Busy: BusyQueue, QueueLimit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if names := s.CommandToolNames(); !slices.Equal(names, []string{"tool"}) {
		t.Fatalf("CommandToolNames %v", names)
	}
	if _, ok := s.CommandTool("off"); ok {
		t.Fatal("a disabled tool is available")
	}
	if _, ok := s.CommandTool(NotifyToolName); ok {
		t.Fatal("notify is not a command tool")
	}
	spec, ok := s.CommandTool("tool")
	if !ok || spec.Timeout != DefaultToolTimeout || spec.MaxOutput != DefaultMaxOutput || !slices.Equal(spec.Argv, []string{"/bin/true"}) {
		t.Fatalf("CommandTool: %+v %v", spec, ok)
	}
	spec.Argv[0] = "changed"
	if again, _ := s.CommandTool("tool"); again.Argv[0] != "/bin/true" {
		t.Fatal("CommandTool shares its argv")
	}
	r, _ := s.Rule("all")
	if len(r.clientTools) != 1 || r.clientTools[0].Name != "tool" {
		t.Fatalf("the rule's client tools: %+v", r.clientTools)
	}
	// Empty set: nothing matches, unmatched ignored.
	s, err = Compile(nil, nil, UnmatchedSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Match(Command{Text: "x"}); ok {
		t.Fatal("empty set matched")
	}
}
