package configs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/bridge/rules/rulestest"
	"github.com/hubgate/hubgate/deviceapi"
)

const fullBridge = `
automate:
  target: external
bridge:
  rules:
    - name: lights
      match:
        command_regex: '(?i)lights (?P<state>on|off)'
        macro_name: Lights
      busy: queue
      queue_limit: 3
      max_age: 2m
      run_on_recovery: true
      run:
        prompt: |
          Turn the lights {{.Named.state}}
        task_id: "lights-{{.Seq}}"
        additional_workflow_prompt: Be brief.
        answer_contract: "End with FINAL ANSWER: done"
        timeout_ms: 60000
        thinking_level: low
        restrict_to_workspace: true
        allow_destructive_tools: true
        continuation: true
        include: {steps: true, trace: false}
        selected_skill_ids: [home]
        selected_mcp_server_ids: [hass]
        mcp_servers:
          - name: files
            description: my files
            transport: stdio
            command: npx
            args: ["-y", "server-filesystem"]
            env: {ROOT: /tmp}
            require_approval: true
            disabled_tools: [delete]
        hitl_answers:
          room: "{{.Macro.Name}}"
          lamps: [desk, "ceiling"]
        client_tools: [notify, list_notes]
    - name: typed
      match: {event_type: Type}
      busy: restart
      run: {prompt: "{{.TypedText}}"}
    - name: ask
      match: {custom_action: ask-agent, event_type: JoystickMove}
      run: {prompt: "{{.CustomAction.Content}} {{.OutputSpeech}}"}
  command_tools:
    - name: list_notes
      enabled: true
      description: List my notes
      parameters:
        type: object
        properties:
          sub: {type: string, maxLength: 64}
          depth: {type: integer, minimum: 1}
        required: [sub]
      argv: ["/usr/bin/ls", "-1", "--", "{{.sub}}"]
      timeout: 5s
      workdir: ~/notes
      max_output: 1000
    - name: off
      description: not enabled
      argv: [/bin/true]
  unmatched:
    action: run
    run:
      prompt: "Unknown command: {{.Command}}"
      thinking_level: medium
    busy: queue
    queue_limit: 2
  cancel_grace: 3s
  stop_listening_cancels: true
  on_shutdown: leave
  journal: ~/hubgate/journal.db
  control_socket: /run/user/1000/hg.sock
`

func TestBridgeSectionLoads(t *testing.T) {
	f := newFixture(t)
	p := f.writeDefault(t, fullBridge)
	cfg, err := Load(f.opts(LoadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Bridge
	if cfg.Automate.Target != "external" || b.CancelGrace != 3*time.Second || !b.StopListeningCancels || b.OnShutdown != "leave" ||
		b.Journal != filepath.Join(f.home, "hubgate", "journal.db") || b.ControlSocket != "/run/user/1000/hg.sock" {
		t.Fatalf("scalars: target %q %+v", cfg.Automate.Target, b)
	}
	wantTool := rules.CommandToolSpec{
		Name: "list_notes", Enabled: true, Description: "List my notes",
		Parameters: map[string]any{"type": "object", "required": []any{"sub"}, "properties": map[string]any{
			"sub": map[string]any{"type": "string", "maxLength": 64}, "depth": map[string]any{"type": "integer", "minimum": 1}}},
		Argv: []string{"/usr/bin/ls", "-1", "--", "{{.sub}}"}, Timeout: 5 * time.Second,
		Workdir: filepath.Join(f.home, "notes"), MaxOutput: 1000,
	}
	if len(b.CommandTools) != 2 || !reflect.DeepEqual(b.CommandTools[0], wantTool) || b.CommandTools[1].Enabled {
		t.Fatalf("command tools:\n got %#v\nwant %#v", b.CommandTools, wantTool)
	}
	tr := true
	fa := false
	wantRule := rules.Spec{
		Name:  "lights",
		Match: rules.MatchSpec{CommandRegex: "(?i)lights (?P<state>on|off)", MacroName: "Lights"},
		Busy:  rules.BusyQueue, QueueLimit: 3, MaxAge: 2 * time.Minute, RunOnRecovery: true,
		Run: rules.RunTemplate{
			Prompt: "Turn the lights {{.Named.state}}\n", TaskID: "lights-{{.Seq}}", AdditionalWorkflowPrompt: "Be brief.",
			AnswerContract: "End with FINAL ANSWER: done", TimeoutMs: 60000, ThinkingLevel: "low",
			RestrictToWorkspace: &tr, AllowDestructiveTools: true, Continuation: true,
			Include:          &rules.IncludeSpec{Steps: &tr, Trace: &fa},
			SelectedSkillIDs: []string{"home"}, SelectedMcpServerIDs: []string{"hass"},
			McpServers: []rules.McpServerSpec{{Name: "files", Description: "my files", Transport: "stdio", Command: "npx",
				Args: []string{"-y", "server-filesystem"}, Env: map[string]string{"ROOT": "/tmp"}, RequireApproval: true, DisabledTools: []string{"delete"}}},
			HITLAnswers: map[string]any{"room": "{{.Macro.Name}}", "lamps": []any{"desk", "ceiling"}},
			ClientTools: []string{"notify", "list_notes"},
		},
	}
	if len(b.Rules) != 3 || !reflect.DeepEqual(b.Rules[0], wantRule) {
		t.Fatalf("rules[0]:\n got %#v\nwant %#v", b.Rules[0], wantRule)
	}
	if b.Rules[1].Busy != rules.BusyRestart || b.Rules[1].Match.EventType != "Type" {
		t.Fatalf("rules[1] %+v", b.Rules[1])
	}
	if m := b.Rules[2].Match; m.CustomAction != "ask-agent" || m.EventType != "JoystickMove" {
		t.Fatalf("rules[2] %+v", b.Rules[2])
	}
	if u := b.Unmatched; u.Action != "run" || u.Run == nil || u.Run.Prompt != "Unknown command: {{.Command}}" || u.Run.ThinkingLevel != "medium" ||
		u.Busy != rules.BusyQueue || u.QueueLimit != 2 || u.MaxAge != 10*time.Minute {
		t.Fatalf("unmatched %+v run %+v", u, u.Run)
	}
	if s := cfg.Source("bridge.rules[0].match.command_regex"); s != p+":8" {
		t.Fatalf("source of a rule field: %q", s)
	}
	if s := cfg.Source("bridge.rules[0].run.hitl_answers.lamps"); s != p+":39" {
		t.Fatalf("source of a hitl answer: %q", s)
	}

	// The compiled set renders what the file says.
	set, err := rules.Compile(b.Rules, b.CommandTools, b.Unmatched)
	if err != nil {
		t.Fatal(err)
	}
	macro := &deviceapi.Macro{ID: "m", Name: "Lights"}
	cmd := rules.Command{Text: "Lights ON", Macro: macro, Seq: 5}
	r, ok := set.Match(cmd)
	if !ok || r.Name() != "lights" || r.QueueLimit() != 3 || !r.RunOnRecovery() {
		t.Fatalf("match %v %v", r, ok)
	}
	req, err := r.Render(cmd, set.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	if req.Prompt != "Turn the lights ON\n" || req.TaskID != "lights-5" || req.TimeoutMs != 60000 ||
		!reflect.DeepEqual(req.HITLAnswers, map[string]any{"room": "Lights", "lamps": []string{"desk", "ceiling"}}) ||
		len(req.ClientTools) != 2 || req.ClientTools[1].Name != "list_notes" {
		t.Fatalf("request %+v", req)
	}
	var schema map[string]any
	if err := json.Unmarshal(req.ClientTools[1].Parameters, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("parameters %s", req.ClientTools[1].Parameters)
	}
	if _, ok := set.CommandTool("off"); ok {
		t.Fatal("disabled tool available")
	}
	ur, matched, ok := set.Route(rules.Command{Text: "what"})
	if matched || !ok || ur.Busy() != rules.BusyQueue {
		t.Fatal("unmatched route")
	}
	ureq, err := ur.Render(rules.Command{Text: "what"}, rules.Catalog{})
	if err != nil || ureq.Prompt != "Unknown command: what" || ureq.ThinkingLevel != "medium" {
		t.Fatalf("unmatched %+v %v", ureq, err)
	}
	_ = automate.RunRequest{}
}

func TestBridgeDefaults(t *testing.T) {
	t.Run("xdg dirs", func(t *testing.T) {
		f := newFixture(t)
		cfg, err := Load(f.opts(LoadOptions{Env: env(map[string]string{"XDG_DATA_HOME": "/data", "XDG_RUNTIME_DIR": "/run/user/7"})}))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Bridge.Journal != "/data/hubgate/journal.db" || cfg.Bridge.ControlSocket != "/run/user/7/hubgate/control.sock" {
			t.Fatalf("%q %q", cfg.Bridge.Journal, cfg.Bridge.ControlSocket)
		}
		if cfg.Source("bridge.journal") != "default (user data dir)" || cfg.Source("bridge.control_socket") != "default ($XDG_RUNTIME_DIR)" {
			t.Fatalf("sources %q %q", cfg.Source("bridge.journal"), cfg.Source("bridge.control_socket"))
		}
	})
	t.Run("relative xdg dirs are ignored", func(t *testing.T) {
		f := newFixture(t)
		cfg, err := Load(f.opts(LoadOptions{Env: env(map[string]string{"XDG_DATA_HOME": "data", "XDG_RUNTIME_DIR": "run"})}))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Bridge.Journal != filepath.Join(f.home, ".local", "share", "hubgate", "journal.db") ||
			cfg.Bridge.ControlSocket != filepath.Join(f.configDir, "hubgate", "control.sock") {
			t.Fatalf("%q %q", cfg.Bridge.Journal, cfg.Bridge.ControlSocket)
		}
	})
	t.Run("no home, no runtime dir, no config dir", func(t *testing.T) {
		f := newFixture(t)
		o := f.opts(LoadOptions{Env: env(map[string]string{"HUBGATE_AUTOMATE_WORKSPACE": "/w"})})
		o.HomeDir = func() (string, error) { return "", errTest }
		o.UserConfigDir = func() (string, error) { return "", errTest }
		_, err := Load(o)
		verr := mustValidationError(t, err)
		var paths []string
		for _, p := range verr.Problems {
			paths = append(paths, p.Path)
		}
		if !slices.Equal(paths, []string{"bridge.journal", "bridge.control_socket"}) {
			t.Fatalf("%v", err)
		}
		// Given explicitly, they need nothing.
		o.Env = env(map[string]string{"HUBGATE_AUTOMATE_WORKSPACE": "/w", "HUBGATE_JOURNAL": "/j.db", "HUBGATE_CONTROL_SOCKET": "/s.sock"})
		if cfg, err := Load(o); err != nil || cfg.Bridge.Journal != "/j.db" || cfg.Source("bridge.control_socket") != "HUBGATE_CONTROL_SOCKET" {
			t.Fatalf("%v", err)
		}
	})
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("no such directory")

func TestBridgeValidation(t *testing.T) {
	tests := []struct {
		name string
		ov   []Override
		want string
	}{
		{"target", []Override{{Path: "automate.target", Value: "remote"}}, `automate.target: must be one of cohosted, external; got "remote"`},
		{"notify policy", []Override{{Path: "bridge.notify", Value: "always"}}, `bridge.notify: must be one of answers, failures, none; got "always"`},
		{"status page port", []Override{{Path: "bridge.status_page.port", Value: "70000"}}, `bridge.status_page.port: must be 0 (any free port) to 65535; got 70000`},
		{"cancel grace zero", []Override{{Path: "bridge.cancel_grace", Value: "0s"}}, `bridge.cancel_grace: must be a positive duration up to 10m0s; got 0s`},
		{"cancel grace long", []Override{{Path: "bridge.cancel_grace", Value: "1h"}}, `bridge.cancel_grace: must be a positive duration up to 10m0s; got 1h0m0s`},
		{"journal keep negative", []Override{{Path: "bridge.journal_keep_days", Value: "-1"}}, `bridge.journal_keep_days: must be 0 (keep everything) to 36500 days; got -1`},
		{"journal keep too long", []Override{{Path: "bridge.journal_keep_days", Value: "40000"}}, `bridge.journal_keep_days: must be 0 (keep everything) to 36500 days; got 40000`},
		{"on shutdown", []Override{{Path: "bridge.on_shutdown", Value: "wait"}}, `bridge.on_shutdown: must be one of cancel, leave; got "wait"`},
		{"listening", []Override{{Path: "bridge.listening", Value: "ignore"}}, `bridge.listening: must be one of follow-vendor, obey; got "ignore"`},
		{"journal relative", []Override{{Path: "bridge.journal", Value: "j.db"}}, `bridge.journal: must be an absolute path; got "j.db"`},
		{"socket relative", []Override{{Path: "bridge.control_socket", Value: "s.sock"}}, `bridge.control_socket: must be an absolute path; got "s.sock"`},
		{"socket too long", []Override{{Path: "bridge.control_socket", Value: "/" + strings.Repeat("s", 110)}}, `bridge.control_socket: is 111 bytes long; a Unix socket path must be at most 103`},
		{"unmatched action", []Override{{Path: "bridge.unmatched.action", Value: "drop"}}, `bridge.unmatched.action: must be ignore or run; got "drop"`},
		{"unmatched busy", []Override{{Path: "bridge.unmatched.busy", Value: "queue"}, {Path: "bridge.unmatched.queue_limit", Value: "-2"}},
			`bridge.unmatched.queue_limit: must be 1..1000 (0 means 5); got -2`},
		{"rules by flag", []Override{{Path: "bridge.rules", Value: "x"}}, `bridge.rules: can only be set in the config file`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			for i := range tc.ov {
				tc.ov[i].Origin = "test"
			}
			_, err := Load(f.opts(LoadOptions{Overrides: tc.ov}))
			verr := mustValidationError(t, err)
			if len(verr.Problems) != 1 {
				t.Fatalf("problems %v", verr.Problems)
			}
			p := verr.Problems[0]
			if p.Source != "test" {
				t.Fatalf("source %q", p.Source)
			}
			p.Source = ""
			if p.String() != tc.want {
				t.Fatalf("got  %q\nwant %q", p.String(), tc.want)
			}
		})
	}
}

// TestBadRulesRejectedAtLoad: every rule problem names the field path, the
// rule and the line of the file.
func TestBadRulesRejectedAtLoad(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // FieldError.String(); FILE stands for the file
	}{
		{"regex, template, busy, tool", `bridge:
  rules:
    - name: ok
      match: {command: hello}
      run: {prompt: hi}
    - name: lights
      match:
        command_regex: "lights (on|off"
      busy: sometimes
      run:
        prompt: "{{foo .Command}}"
        client_tools: [notify, rm, ls]
  command_tools:
    - name: rm
      description: remove
      argv: [/bin/rm, "{{.path}}"]
`, []string{
			"bridge.rules[1].match.command_regex: rule \"lights\": error parsing regexp: missing closing ): `lights (on|off` (FILE:8)",
			`bridge.rules[1].busy: rule "lights": must be one of single, queue, restart; got "sometimes" (FILE:9)`,
			`bridge.rules[1].run.prompt: rule "lights": template: run.prompt:1: function "foo" not defined (FILE:11)`,
			`bridge.rules[1].run.client_tools[1]: rule "lights": command tool "rm" is disabled (set enabled: true in its command_tools entry to allow it) (FILE:12)`,
			`bridge.rules[1].run.client_tools[2]: rule "lights": unknown client tool "ls"; a rule can list notify and the enabled command tools (notify) (FILE:12)`,
		}},
		{"missing fields take the entry's line", `bridge:
  rules:
    - name: a
      match: {command: x}
      run: {prompt: p}
    - name: a
      run:
        task_id: t
`, []string{
			`bridge.rules[1].name: rule "a": duplicate rule name (first used by rules[0]) (FILE:6)`,
			`bridge.rules[1].match: rule "a": needs at least one criterion (command, command_glob, command_regex, macro_name, macro_id, event_type or custom_action) (FILE:6)`,
			`bridge.rules[1].run.prompt: rule "a": is required (a template of the task text) (FILE:6)`,
		}},
		{"a misspelt key is reported once", `bridge:
  rules:
    - name: a
      mtch: {command: x}
      run: {prompt: p}
    - name: b
      run: {prompt: p}
`, []string{
			`bridge.rules[0].mtch: unknown key; known keys of bridge.rules[0]: name, match, busy, queue_limit, max_age, run_on_recovery, notify, speak, ask, answers, run (FILE:4)`,
			`bridge.rules[1].match: rule "b": needs at least one criterion (command, command_glob, command_regex, macro_name, macro_id, event_type or custom_action) (FILE:6)`,
		}},
		{"shapes", `bridge:
  rules:
    - name: a
      match: {command: [x]}
      run:
        prompt: p
        include: yes
        hitl_answers: {ok: "{{.Command}}", flag: true}
        timeout_ms: soon
  unmatched:
    run: [prompt]
`, []string{
			`bridge.rules[0].match.command: must be a single value, not a list (FILE:4)`,
			`bridge.rules[0].run.include: must be a mapping of keys (steps, trace, events), not a single value (FILE:7)`,
			`bridge.rules[0].run.timeout_ms: must be an integer; got "soon" (FILE:9)`,
			`bridge.unmatched.run: must be a mapping of keys (prompt, task_id, additional_workflow_prompt, answer_contract, timeout_ms, thinking_level, restrict_to_workspace, allow_destructive_tools, continuation, include, selected_skill_ids, selected_mcp_server_ids, mcp_servers, hitl_answers, client_tools), not a list (FILE:11)`,
		}},
		{"hitl and tool problems with lines", `bridge:
  rules:
    - name: h
      match: {command: x}
      run:
        prompt: p
        hitl_answers:
          ok: "{{.Command}}"
          flag: true
  command_tools:
    - name: bad tool
      enabled: true
      description: d
      parameters: {type: array}
      argv: ["{{.prog}}"]
      workdir: rel
`, []string{
			`bridge.rules[0].run.hitl_answers.flag: rule "h": must be a string or a list of strings; got true (quote it) (FILE:9)`,
			`bridge.command_tools[0].name: command tool "bad tool": must contain only letters, numbers, underscores and hyphens (FILE:11)`,
			`bridge.command_tools[0].parameters.type: command tool "bad tool": must be "object" (a call's arguments are a JSON object); got a string (FILE:14)`,
			`bridge.command_tools[0].argv[0]: command tool "bad tool": the program must be fixed text, not a template (FILE:15)`,
			`bridge.command_tools[0].workdir: command tool "bad tool": must be an absolute path; got "rel" (FILE:16)`,
		}},
		{"free-form values", `bridge:
  command_tools:
    - name: t
      description: d
      argv: [/bin/true]
      parameters:
        type: object
        type: object
`, []string{
			`bridge.command_tools[0].parameters.type: duplicate key (first set at line 7) (FILE:8)`,
		}},
		{"alias expansion is bounded", `x: &a [1,2,3,4,5,6,7,8,9,10]
`, nil}, // replaced below
	}
	for _, tc := range tests {
		if tc.want == nil {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.writeDefault(t, tc.file)
			_, err := Load(f.opts(LoadOptions{}))
			verr := mustValidationError(t, err)
			var got []string
			for _, pr := range verr.Problems {
				got = append(got, pr.String())
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, strings.ReplaceAll(w, "FILE", p))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("problems:\n got %q\nwant %q", got, want)
			}
		})
	}

	t.Run("alias expansion is bounded", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("bridge:\n  command_tools:\n    - name: t\n      description: d\n      argv: [/bin/true]\n      parameters:\n")
		b.WriteString("        a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
		for i := 1; i < 8; i++ {
			b.WriteString("        a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
			for j := 0; j < 10; j++ {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString("*a" + string(rune('0'+i-1)))
			}
			b.WriteString("]\n")
		}
		f := newFixture(t)
		f.writeDefault(t, b.String())
		_, err := Load(f.opts(LoadOptions{}))
		verr := mustValidationError(t, err)
		if len(verr.Problems) != 1 || !strings.Contains(verr.Problems[0].Message, "is too large (more than 10000 values)") ||
			!strings.HasPrefix(verr.Problems[0].Path, "bridge.command_tools[0].parameters") {
			t.Fatalf("%v", err)
		}
	})
}

// TestDemoRulesLoadThroughConfigs: the embedded demo rule set, put under
// bridge: in a config file, decodes through the strict decoder exactly as
// rulestest.Parse decodes it, and compiles.
func TestDemoRulesLoadThroughConfigs(t *testing.T) {
	demo, err := rulestest.Demo()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("bridge:\n")
	for _, line := range strings.Split(string(rules.DemoYAML()), "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
		b.WriteString("\n")
	}
	f := newFixture(t)
	f.writeDefault(t, b.String())
	cfg, err := Load(f.opts(LoadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Bridge.Rules, demo.Rules) {
		t.Fatalf("rules differ:\nconfigs %#v\nrules   %#v", cfg.Bridge.Rules, demo.Rules)
	}
	if cfg.Bridge.Unmatched.Action != demo.Unmatched.Action || len(cfg.Bridge.CommandTools) != len(demo.CommandTools) {
		t.Fatalf("unmatched %+v vs %+v", cfg.Bridge.Unmatched, demo.Unmatched)
	}
	if _, err := rules.Compile(cfg.Bridge.Rules, cfg.Bridge.CommandTools, cfg.Bridge.Unmatched); err != nil {
		t.Fatal(err)
	}
}

// TestStarterConfigLoads: the file `hubgate config init` writes loads and
// runs every command (a rule or the unmatched action).
func TestStarterConfigLoads(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, StarterYAML(), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadOptions{Path: p, Env: func(string) string { return "" }, CheckRules: compileRules})
	if err != nil {
		t.Fatal(err)
	}
	set, err := rules.Compile(cfg.Bridge.Rules, cfg.Bridge.CommandTools, cfg.Bridge.Unmatched)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Rules()) != 3 {
		t.Fatalf("starter rules: %d, want 3", len(set.Rules()))
	}
	for _, text := range []string{"ask what time is it", "anything"} {
		if _, _, ok := set.Route(rules.Command{Text: text}); !ok {
			t.Errorf("%q is not routed", text)
		}
	}
	r, matched, _ := set.Route(rules.Command{Text: "hey turn on the lights"})
	if !matched || r.Name() != "ask" {
		t.Fatalf("hey ... routes to %v (matched %v)", r, matched)
	}
	req, err := r.Render(rules.Command{Text: "hey turn on the lights"}, set.Catalog())
	if err != nil || req.Prompt != "turn on the lights" {
		t.Fatalf("rendered %+v, %v", req, err)
	}
}
