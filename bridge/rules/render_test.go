package rules

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/deviceapi"
)

func ptr[T any](v T) *T { return &v }

func TestRenderEveryOption(t *testing.T) {
	tools := []CommandToolSpec{{
		Name: "list_dir", Enabled: true, Description: "List a directory",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}},
		Argv:       []string{"/bin/ls", "-la", "{{.path}}"},
	}}
	spec := Spec{
		Name:  "everything",
		Match: MatchSpec{CommandRegex: `(?i)set (?P<what>\w+) to (\d+)`},
		Run: RunTemplate{
			Prompt:                   "Set {{.Named.what}} to {{index .Groups 2}} (rule {{.Rule}}, seq {{.Seq}})",
			TaskID:                   "task-{{.Seq}}-{{.Received.Format \"150405\"}}",
			AdditionalWorkflowPrompt: "Macro {{.Macro.Name}} ({{.Macro.ID}}); events:{{range .Events}} {{.EventType}}{{end}}",
			AnswerContract:           "Reply with FINAL ANSWER: {{.Named.what | upper}}",
			TimeoutMs:                60000,
			ThinkingLevel:            "high",
			RestrictToWorkspace:      ptr(false),
			AllowDestructiveTools:    true,
			Continuation:             true,
			Include:                  &IncludeSpec{Steps: ptr(true), Trace: ptr(false)},
			SelectedSkillIDs:         []string{"skill-a"},
			SelectedMcpServerIDs:     []string{"fs", "git"},
			McpServers: []McpServerSpec{
				{Name: "everything", Description: "test server", Transport: "stdio", Command: "npx", Args: []string{"-y", "srv"}, Env: map[string]string{"A": "1"}, RequireApproval: true, DisabledTools: []string{"rm"}},
				{Name: "web", Description: "web", Transport: "http", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"X-Team": "blue"}},
			},
			HITLAnswers: map[string]any{"color": "{{.Named.what}}", "sizes": []any{"S", "{{index .Groups 2}}"}},
			ClientTools: []string{"list_dir", "notify"},
		},
	}
	s := mustCompile(t, []Spec{spec}, tools, UnmatchedSpec{})
	received := time.Date(2026, 3, 4, 10, 11, 12, 0, time.UTC)
	macro := &deviceapi.Macro{ID: "m-7", Name: "Setter", Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventKeyPress}, typeEvent(t, "typed")}}
	cmd := Command{Text: "Set Volume to 11", Macro: macro, Received: received, Seq: 42}
	r, ok := s.Match(cmd)
	if !ok {
		t.Fatal("no match")
	}
	got, err := r.Render(cmd, Catalog{})
	if err != nil {
		t.Fatal(err)
	}
	contract := "Reply with FINAL ANSWER: VOLUME"
	want := automate.RunRequest{
		Prompt:                   "Set Volume to 11 (rule everything, seq 42)",
		TaskID:                   "task-42-101112",
		AdditionalWorkflowPrompt: "Macro Setter (m-7); events: KeyPress Type",
		AnswerContract:           &contract,
		TimeoutMs:                60000,
		ThinkingLevel:            "high",
		RestrictToWorkspace:      false, // the rule opts out
		AllowDestructiveTools:    true,
		Continuation:             true,
		Include:                  &automate.Include{Steps: ptr(true), Trace: ptr(false), Events: ptr(false)}, // an absent key is off
		SelectedSkillIDs:         []string{"skill-a"},
		SelectedMcpServerIDs:     []string{"fs", "git"},
		McpServers: []automate.InlineMcpServer{
			{Name: "everything", Description: "test server", Transport: "stdio", Command: "npx", Args: []string{"-y", "srv"}, Env: map[string]string{"A": "1"}, RequireApproval: true, DisabledTools: []string{"rm"}},
			{Name: "web", Description: "web", Transport: "http", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"X-Team": "blue"}},
		},
		HITLAnswers: map[string]any{"color": "Volume", "sizes": []string{"S", "11"}},
		ClientTools: []automate.ClientTool{
			{Name: "list_dir", Description: "List a directory", Parameters: json.RawMessage(`{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}`)},
			NotifyTool(),
		},
	}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("request\n got %s\nwant %s", gj, wj)
	}

	// The request is the caller's: changing it changes nothing later.
	got.McpServers[0].Env["A"] = "changed"
	got.ClientTools[0].Parameters[0] = 'X'
	got.SelectedSkillIDs[0] = "changed"
	*got.Include.Steps = false
	again, err := r.Render(cmd, Catalog{})
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("a second rendering differs after the first was modified: %v", err)
	}
}

func TestTemplateData(t *testing.T) {
	received := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	macro := &deviceapi.Macro{ID: "m", Name: "Writer", Commands: []string{"write"},
		Events: []deviceapi.MacroEvent{typeEvent(t, "Hello, "), {EventType: deviceapi.EventPause}, typeEvent(t, "world")}}
	tests := []struct {
		prompt string
		cmd    Command
		want   string
	}{
		{"{{.Command}}", Command{Text: "write"}, "write"},
		{"{{.TypedText}}", Command{Text: "write", Macro: macro}, "Hello, world"},
		{"[{{.TypedText}}]{{.HasMacro}}", Command{Text: "write"}, "[]false"},
		{"{{.HasMacro}} {{.Macro.Name}} {{index .Macro.Commands 0}}", Command{Text: "write", Macro: macro}, "true Writer write"},
		{"{{len .Events}}{{range $i, $e := .Events}} {{$i}}:{{$e.EventType}}={{.Text}}{{end}}", Command{Text: "w", Macro: macro}, "3 0:Type=Hello,  1:Pause= 2:Type=world"},
		{"{{.Received.Format \"2006-01-02T15:04\"}} {{.Seq}}", Command{Text: "w", Received: received, Seq: 9}, "2026-01-02T03:04 9"},
		{"{{.Rule}}", Command{Text: "w"}, "data"},
		{"{{.Groups}} {{.Named}}", Command{Text: "w"}, "[] map[]"},
		{"{{json .Command}}", Command{Text: `say "hi"`}, `"say \"hi\""`},
		{"{{.Command | lower}} {{.Command | upper}} [{{trim \"  a \"}}]", Command{Text: "MiXed"}, "mixed MIXED [a]"},
		{"{{split \" \" .Command | join \",\"}}", Command{Text: "a b c"}, "a,b,c"},
		{"{{replace \"a\" \"o\" .Command}} {{contains \"an\" .Command}} {{hasPrefix \"b\" .Command}} {{hasSuffix \"na\" .Command}}", Command{Text: "banana"}, "bonono true true true"},
		{"{{.Macro.Name | default \"no macro\"}}", Command{Text: "w"}, "no macro"},
		{"{{with .Macro}}{{.Name}}{{else}}none{{end}}", Command{Text: "w", Macro: macro}, "Writer"},
		{"{{$.Command}}{{range .Events}}{{$.Seq}}{{end}}", Command{Text: "w", Seq: 1, Macro: macro}, "w111"},
	}
	for _, tc := range tests {
		t.Run(tc.prompt, func(t *testing.T) {
			s := mustCompile(t, []Spec{{Name: "data", Match: MatchSpec{CommandGlob: "*"}, Run: RunTemplate{Prompt: tc.prompt}}}, nil, UnmatchedSpec{})
			r, _ := s.Rule("data")
			req, err := r.Render(tc.cmd, Catalog{})
			if err != nil {
				t.Fatal(err)
			}
			if req.Prompt != tc.want {
				t.Fatalf("got %q, want %q", req.Prompt, tc.want)
			}
		})
	}

	t.Run("documented functions", func(t *testing.T) {
		want := []string{"contains", "default", "hasPrefix", "hasSuffix", "join", "json", "lower", "replace", "split", "trim", "upper"}
		got := slices.Sorted(maps.Keys(funcs))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("template functions %v, want %v", got, want)
		}
	})
	t.Run("regex groups", func(t *testing.T) {
		s := mustCompile(t, []Spec{{Name: "re", Match: MatchSpec{CommandRegex: `(?P<verb>\w+) (\w+)`}, Run: RunTemplate{Prompt: "{{.Groups}} {{.Named}}"}}}, nil, UnmatchedSpec{})
		r, _ := s.Rule("re")
		d := r.Data(Command{Text: "open door"}, Catalog{})
		if !reflect.DeepEqual(d.Groups, []string{"open door", "open", "door"}) || !reflect.DeepEqual(d.Named, map[string]string{"verb": "open"}) {
			t.Fatalf("groups %q named %v", d.Groups, d.Named)
		}
		req, err := r.Render(Command{Text: "open door"}, Catalog{})
		if err != nil || req.Prompt != "[open door open door] map[verb:open]" {
			t.Fatalf("%q %v", req.Prompt, err)
		}
	})
}

func TestRenderDefaults(t *testing.T) {
	t.Run("options absent", func(t *testing.T) {
		s := mustCompile(t, []Spec{rule("min", MatchSpec{Command: "x"})}, nil, UnmatchedSpec{})
		r, _ := s.Rule("min")
		req, err := r.Render(Command{Text: "x"}, Catalog{})
		if err != nil {
			t.Fatal(err)
		}
		// Every large block of the record is off: hubgate reads none. The
		// run is confined to the workspace.
		off := automate.Include{Steps: ptr(false), Trace: ptr(false), Events: ptr(false)}
		if !reflect.DeepEqual(req, automate.RunRequest{Prompt: "do min", Include: &off, RestrictToWorkspace: true}) {
			t.Fatalf("%+v", req)
		}
		b, _ := json.Marshal(req)
		if string(b) != `{"prompt":"do min","include":{"steps":false,"trace":false,"events":false},"restrictToWorkspace":true}` {
			t.Fatalf("wire form %s", b)
		}
	})
	t.Run("confined unless the rule opts out", func(t *testing.T) {
		optOut := Spec{Name: "free", Match: MatchSpec{Command: "free"}, Run: RunTemplate{Prompt: "p", RestrictToWorkspace: ptr(false)}}
		explicit := Spec{Name: "kept", Match: MatchSpec{Command: "kept"}, Run: RunTemplate{Prompt: "p", RestrictToWorkspace: ptr(true)}}
		for _, u := range []UnmatchedSpec{{Action: UnmatchedRun}, {Action: UnmatchedRun, Run: &RunTemplate{TimeoutMs: 5000}}} {
			s := mustCompile(t, []Spec{rule("min", MatchSpec{Command: "x"}), optOut, explicit}, nil, u)
			um, _ := s.Unmatched(Command{})
			for _, c := range []struct {
				r    *Rule
				want bool
			}{{s.Rules()[0], true}, {s.Rules()[1], false}, {s.Rules()[2], true}, {um, true}} {
				req, err := c.r.Render(Command{Text: "x"}, Catalog{})
				if err != nil || req.RestrictToWorkspace != c.want {
					t.Errorf("rule %s (unmatched run %+v): restrictToWorkspace %v (%v), want %v", c.r.Name(), u.Run, req.RestrictToWorkspace, err, c.want)
				}
			}
			if s.Rules()[1].Spec().Run.Confined() || !s.Rules()[0].Spec().Run.Confined() {
				t.Errorf("Spec().Run.Confined() does not say what the rule sends")
			}
		}
		s := mustCompile(t, nil, nil, UnmatchedSpec{Action: UnmatchedRun, Run: &RunTemplate{RestrictToWorkspace: ptr(false)}})
		um, _ := s.Unmatched(Command{})
		if req, _ := um.Render(Command{Text: "x"}, Catalog{}); req.RestrictToWorkspace {
			t.Errorf("unmatched.run.restrict_to_workspace false is ignored")
		}
	})
	t.Run("empty answer contract is not sent", func(t *testing.T) {
		s := mustCompile(t, []Spec{{Name: "c", Match: MatchSpec{Command: "x"},
			Run: RunTemplate{Prompt: "p", AnswerContract: "{{if .HasMacro}}macro{{end}}"}}}, nil, UnmatchedSpec{})
		r, _ := s.Rule("c")
		req, _ := r.Render(Command{Text: "x"}, Catalog{})
		if req.AnswerContract != nil {
			t.Fatalf("contract %q", *req.AnswerContract)
		}
		req, _ = r.Render(Command{Text: "x", Macro: &deviceapi.Macro{Name: "m"}}, Catalog{})
		if req.AnswerContract == nil || *req.AnswerContract != "macro" {
			t.Fatal("contract missing")
		}
	})
	t.Run("unmatched prompt is the command text", func(t *testing.T) {
		s := mustCompile(t, nil, nil, UnmatchedSpec{Action: UnmatchedRun})
		r, _ := s.Unmatched(Command{})
		req, err := r.Render(Command{Text: "free text"}, Catalog{})
		if err != nil || req.Prompt != "free text" {
			t.Fatalf("%q %v", req.Prompt, err)
		}
		if r.Spec().Run.Prompt != "{{.Command}}" {
			t.Fatalf("spec prompt %q", r.Spec().Run.Prompt)
		}
	})
	t.Run("unmatched with a template", func(t *testing.T) {
		s := mustCompile(t, []Spec{rule("a", MatchSpec{Command: "a"})}, []CommandToolSpec{}, UnmatchedSpec{Action: UnmatchedRun,
			Run: &RunTemplate{Prompt: "Unknown command: {{.Command}}", ThinkingLevel: "low", ClientTools: []string{"notify"}}})
		r, _ := s.Unmatched(Command{})
		req, err := r.Render(Command{Text: "zz"}, Catalog{})
		if err != nil || req.Prompt != "Unknown command: zz" || req.ThinkingLevel != "low" || len(req.ClientTools) != 1 || req.ClientTools[0].Name != "notify" {
			t.Fatalf("%+v %v", req, err)
		}
	})
	t.Run("unmatched with a template but no prompt", func(t *testing.T) {
		s := mustCompile(t, nil, nil, UnmatchedSpec{Action: UnmatchedRun, Run: &RunTemplate{TimeoutMs: 5000}})
		r, _ := s.Unmatched(Command{})
		req, err := r.Render(Command{Text: "zz"}, Catalog{})
		if err != nil || req.Prompt != "zz" || req.TimeoutMs != 5000 {
			t.Fatalf("%+v %v", req, err)
		}
	})
	t.Run("busy defaults and accessors", func(t *testing.T) {
		s := mustCompile(t, []Spec{
			rule("single", MatchSpec{Command: "a"}),
			{Name: "queue", Match: MatchSpec{Command: "b"}, Busy: BusyQueue, QueueLimit: 2, MaxAge: time.Minute, RunOnRecovery: true, Run: RunTemplate{Prompt: "p"}},
			{Name: "restart", Match: MatchSpec{Command: "c"}, Busy: BusyRestart, Run: RunTemplate{Prompt: "p"}},
		}, nil, UnmatchedSpec{})
		single, _ := s.Rule("single")
		queue, _ := s.Rule("queue")
		restart, _ := s.Rule("restart")
		if single.Busy() != BusySingle || single.QueueLimit() != DefaultQueueLimit || single.MaxAge() != DefaultMaxAge || single.RunOnRecovery() {
			t.Fatal("single defaults")
		}
		if queue.Busy() != BusyQueue || queue.QueueLimit() != 2 || queue.MaxAge() != time.Minute || !queue.RunOnRecovery() {
			t.Fatal("queue settings")
		}
		if restart.Busy() != BusyRestart || restart.Spec().Busy != BusyRestart {
			t.Fatal("restart")
		}
		now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
		if !queue.Recoverable(now.Add(-30*time.Second), now) || queue.Recoverable(now.Add(-2*time.Minute), now) {
			t.Fatal("Recoverable by age")
		}
		if single.Recoverable(now, now) {
			t.Fatal("Recoverable without run_on_recovery")
		}
		if !single.Expired(now.Add(-11*time.Minute), now) || single.Expired(now.Add(-9*time.Minute), now) {
			t.Fatal("Expired")
		}
		if len(s.Rules()) != 3 || s.Rules()[2] != restart {
			t.Fatal("Rules()")
		}
	})
}

func TestRenderErrors(t *testing.T) {
	big := strings.Repeat("x", 600<<10)
	tests := []struct {
		name  string
		run   RunTemplate
		cmd   Command
		field string
		want  string // substring of the error
		is    error
	}{
		{"blank prompt", RunTemplate{Prompt: "{{if .HasMacro}}x{{end}}  "}, Command{Text: "a"}, "run.prompt", "rendered a blank prompt", ErrBlankPrompt},
		{"execution error", RunTemplate{Prompt: "{{index .Groups 3}}"}, Command{Text: "a"}, "run.prompt", "index out of range", nil},
		{"task id error", RunTemplate{Prompt: "p", TaskID: "{{index .Events 0}}"}, Command{Text: "a"}, "run.task_id", "index out of range", nil},
		{"awp error", RunTemplate{Prompt: "p", AdditionalWorkflowPrompt: "{{index .Macro.Commands 1}}"}, Command{Text: "a"}, "run.additional_workflow_prompt", "index out of range", nil},
		{"contract error", RunTemplate{Prompt: "p", AnswerContract: "{{index .Events 2}}"}, Command{Text: "a"}, "run.answer_contract", "index out of range", nil},
		{"hitl list error", RunTemplate{Prompt: "p", HITLAnswers: map[string]any{"f": []any{"ok", "{{index .Groups 9}}"}}}, Command{Text: "a"}, "run.hitl_answers.f[1]", "index out of range", nil},
		{"hitl error", RunTemplate{Prompt: "p", HITLAnswers: map[string]any{"g": "{{index .Groups 9}}"}}, Command{Text: "a"}, "run.hitl_answers.g", "index out of range", nil},
		{"rendering too large", RunTemplate{Prompt: "{{.Command}}{{.Command}}"}, Command{Text: big}, "run.prompt", "larger than 1048576 bytes", nil},
		{"request too large", RunTemplate{Prompt: "{{.Command}}", AdditionalWorkflowPrompt: "{{.Command}}"}, Command{Text: big}, "", "the Automate server accepts at most 1048576", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, []Spec{{Name: "r", Match: MatchSpec{CommandGlob: "*"}, Run: tc.run}}, nil, UnmatchedSpec{})
			r, _ := s.Rule("r")
			_, err := r.Render(tc.cmd, Catalog{})
			var rerr *RenderError
			if !errors.As(err, &rerr) {
				t.Fatalf("want *RenderError, got %T %v", err, err)
			}
			if rerr.Rule != "r" || rerr.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("rule %q field %q err %v", rerr.Rule, rerr.Field, err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("errors.Is(%v) false", tc.is)
			}
			wantPrefix := `rule "r": `
			if tc.field != "" {
				wantPrefix += tc.field + ": "
			}
			if !strings.HasPrefix(err.Error(), wantPrefix) {
				t.Fatalf("message %q", err.Error())
			}
		})
	}
}
