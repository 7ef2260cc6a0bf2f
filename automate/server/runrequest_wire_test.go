package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"sync"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/server"
)

// capturingEngine is an engine that records the Task it is given and
// completes at once.
type capturingEngine struct {
	mu     sync.Mutex
	tasks  []assistant.Task
	models []assistant.ModelRequest
}

func (e *capturingEngine) Run(_ context.Context, task *assistant.Task, _ assistant.Env) (*assistant.Result, error) {
	e.mu.Lock()
	e.tasks = append(e.tasks, *task)
	e.mu.Unlock()
	return &assistant.Result{Answer: "done. FINAL ANSWER: 42", Model: "capture.gguf"}, nil
}

func (e *capturingEngine) Catalog(context.Context) (assistant.Catalog, error) {
	return assistant.Catalog{Ready: true}, nil
}
func (e *capturingEngine) ActivateModel(context.Context, string) error { return nil }
func (e *capturingEngine) Runtime() assistant.Runtime {
	return assistant.Runtime{ModelName: "capture.gguf"}
}
func (e *capturingEngine) Terminate() {}

// ModelChat makes capturingEngine a model-mode engine: it records the
// request and answers "ok".
func (e *capturingEngine) ModelChat(_ context.Context, req *assistant.ModelRequest, out assistant.ModelSink) (*assistant.ModelResult, error) {
	e.mu.Lock()
	e.models = append(e.models, *req)
	e.mu.Unlock()
	return &assistant.ModelResult{}, out.Content("ok")
}

// startedRuns keeps the attributes of the server's "run started" log
// records: the decoded timeoutMs reaches no engine (the server arms the
// timer), and this record is where the server reports it.
type startedRuns struct {
	mu    sync.Mutex
	attrs []map[string]slog.Value
}

func (h *startedRuns) Enabled(context.Context, slog.Level) bool { return true }
func (h *startedRuns) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *startedRuns) WithGroup(string) slog.Handler            { return h }
func (h *startedRuns) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "run started" {
		return nil
	}
	m := map[string]slog.Value{}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.Resolve(); return true })
	h.mu.Lock()
	h.attrs = append(h.attrs, m)
	h.mu.Unlock()
	return nil
}

// unsetFields lists the fields of v (a struct) left at their zero value.
// A pointer counts as set when it is not nil (a *bool pointing to false is
// a value the caller chose); a pointed-to struct is checked field by
// field. A slice or map must be non-empty; in a slice of structs each
// field must be set in at least one element (an inline MCP server cannot
// carry the fields of both transports at once).
func unsetFields(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return []string{path}
		}
		if v.Elem().Kind() == reflect.Struct {
			return unsetFields(v.Elem(), path)
		}
		return nil
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			out = append(out, unsetFields(v.Field(i), path+"."+v.Type().Field(i).Name)...)
		}
		return out
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{path}
		}
		if v.Type().Elem().Kind() != reflect.Struct {
			return nil
		}
		var out []string
		for i := range v.Type().Elem().NumField() {
			set := false
			for j := range v.Len() {
				if len(unsetFields(v.Index(j).Field(i), "")) == 0 {
					set = true
					break
				}
			}
			if !set {
				out = append(out, path+"[*]."+v.Type().Elem().Field(i).Name)
			}
		}
		return out
	case reflect.Map:
		if v.Len() == 0 {
			return []string{path}
		}
		return nil
	default:
		if v.IsZero() {
			return []string{path}
		}
		return nil
	}
}

// TestEveryRunRequestFieldSurvivesTheWire sends a RunRequest with every
// field set through the Go client to the real server and compares what
// the engine (or, for the fields the server keeps itself, the record and
// the server) received, field by field. A field added to RunRequest later
// fails it until the request here sets it and a comparison covers it.
func TestEveryRunRequestFieldSurvivesTheWire(t *testing.T) {
	contract := "Close with FINAL ANSWER: <n>."
	req := automate.RunRequest{
		Prompt:                   "sum the numbers in notes.txt",
		TaskID:                   "task-wire-1",
		TimeoutMs:                123456,
		ThinkingLevel:            "high",
		AdditionalWorkflowPrompt: "Prefer short answers.",
		AnswerContract:           &contract,
		// steps and events off, trace on: each switch distinguishable from
		// the default (every key true) and from the others.
		Include:              &automate.Include{Steps: new(false), Trace: new(true), Events: new(false)},
		RestrictToWorkspace:  true,
		Continuation:         true,
		SelectedSkillIDs:     []string{"skill-a", "skill-b"},
		SelectedMcpServerIDs: []string{"mcp-configured-1"},
		McpServers: []automate.InlineMcpServer{
			{Name: "files", Description: "local files", Transport: "stdio", Command: "/usr/bin/mcp-files",
				Args: []string{"--root", "/tmp"}, Env: map[string]string{"MCP_LEVEL": "2"},
				RequireApproval: true, DisabledTools: []string{"delete"}},
			{Name: "web", Description: "web search", Transport: "http", URL: "https://mcp.example.com/v1",
				Headers: map[string]string{"Authorization": "Bearer caller-token"}},
		},
		ClientTools: []automate.ClientTool{
			{Name: "get_time", Description: "current time"},
			{Name: "add", Description: "adds two numbers",
				Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`)},
		},
		HITLAnswers:           map[string]any{"name": "Ada", "colors": []string{"red", "blue"}},
		AllowDestructiveTools: true,
		BuiltInTools:          &automate.BuiltInTools{Allow: []string{"@observe", "write_file"}, Deny: []string{"list_dir"}},
		Stream:                true,
		Mode:                  automate.ModeAssistant,
	}
	// Messages belong to a run in model mode, sent second (modelReq).
	if unset := unsetFields(reflect.ValueOf(req), "RunRequest"); !reflect.DeepEqual(unset, []string{"RunRequest.Messages"}) {
		t.Fatalf("the request leaves fields unset, so their way over the wire is not tested: %v", unset)
	}
	modelReq := automate.RunRequest{Mode: automate.ModeModel, Messages: []json.RawMessage{
		json.RawMessage(`{"role":"system","content":"Be brief."}`), json.RawMessage(`{"role":"user","content":"hi"}`)}}

	eng := &capturingEngine{}
	logs := &startedRuns{}
	h := newHarness(t,
		withWrap(func(assistant.Assistant) assistant.Assistant { return eng }),
		withServerConfig(func(c *server.Config) { c.Logger = slog.New(logs) }))
	c, err := automate.NewClient(automate.ClientOptions{BaseURL: h.url, Key: h.key, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var streamed bool
	rec, err := c.RunProgress(context.Background(), req, automate.Progress{OnStarted: func(automate.RunStarted) { streamed = true }})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if rec.Status != automate.StatusCompleted {
		t.Fatalf("status %s", rec.Status)
	}
	modelRec, err := c.Run(context.Background(), modelReq)
	if err != nil {
		t.Fatalf("model-mode run: %v", err)
	}
	eng.mu.Lock()
	tasks, models := eng.tasks, eng.models
	eng.mu.Unlock()
	if len(models) != 1 || modelRec.Mode != automate.ModeModel {
		t.Fatalf("%d model calls, record mode %q; want one, model", len(models), modelRec.Mode)
	}
	logs.mu.Lock()
	started := logs.attrs
	logs.mu.Unlock()
	if len(tasks) != 1 || len(started) != 1 {
		t.Fatalf("%d tasks, %d run-started records; want one each", len(tasks), len(started))
	}
	task := tasks[0]

	// One check per RunRequest field, by name: a field without one fails.
	checks := map[string]func() (got, want any){
		"Prompt":    func() (any, any) { return task.Prompt, req.Prompt },
		"TaskID":    func() (any, any) { return rec.TaskID, req.TaskID },
		"TimeoutMs": func() (any, any) { return started[0]["timeout_ms"].Any(), req.TimeoutMs },
		"ThinkingLevel": func() (any, any) {
			return task.ThinkingLevel, req.ThinkingLevel
		},
		"AdditionalWorkflowPrompt": func() (any, any) {
			return task.AdditionalWorkflowPrompt, req.AdditionalWorkflowPrompt
		},
		"AnswerContract": func() (any, any) { return task.AnswerContract, req.AnswerContract },
		"Include": func() (any, any) {
			// What the record carries is what the server decoded.
			got := automate.Include{Steps: new(rec.Steps != nil), Trace: new(rec.Trace != nil), Events: new(rec.Events != nil)}
			return got, *req.Include
		},
		"RestrictToWorkspace": func() (any, any) {
			// The server confines the run to its workspace.
			return task.Confine != "" && task.Confine == h.workspace, req.RestrictToWorkspace
		},
		"Continuation":          func() (any, any) { return task.Continuation, req.Continuation },
		"SelectedSkillIDs":      func() (any, any) { return task.SelectedSkillIDs, req.SelectedSkillIDs },
		"SelectedMcpServerIDs":  func() (any, any) { return task.SelectedMcpServerIDs, req.SelectedMcpServerIDs },
		"McpServers":            func() (any, any) { return task.McpServers, req.McpServers },
		"ClientTools":           func() (any, any) { return compactTools(t, task.ClientTools), compactTools(t, req.ClientTools) },
		"HITLAnswers":           func() (any, any) { return task.HITLAnswers, req.HITLAnswers },
		"AllowDestructiveTools": func() (any, any) { return task.AllowDestructiveTools, req.AllowDestructiveTools },
		"BuiltInTools": func() (any, any) {
			// The same tools allowed as the filter the client's lists make.
			want, err := assistant.NewToolFilter(req.BuiltInTools, "builtInTools")
			if err != nil {
				t.Fatal(err)
			}
			got, exp := map[string]bool{}, map[string]bool{}
			for _, name := range assistant.BuiltInToolNames {
				got[name], exp[name] = task.BuiltInTools.Allows(name), want.Allows(name)
			}
			return got, exp
		},
		"Stream": func() (any, any) { return streamed, req.Stream },
		// The assistant request reached the assistant (a task), the model
		// one the model (a model call, above).
		"Mode": func() (any, any) { return automate.ModeAssistant, req.Mode },
		"Messages": func() (any, any) {
			return models[0].Messages, modelReq.Messages
		},
	}
	rt := reflect.TypeFor[automate.RunRequest]()
	for i := range rt.NumField() {
		name := rt.Field(i).Name
		check, ok := checks[name]
		if !ok {
			t.Errorf("RunRequest.%s: no check compares what the server received", name)
			continue
		}
		if got, want := check(); !reflect.DeepEqual(got, want) {
			t.Errorf("RunRequest.%s: the server received %#v, the client sent %#v", name, got, want)
		}
	}
	if len(checks) != rt.NumField() {
		t.Errorf("%d checks for %d fields: a check names no field", len(checks), rt.NumField())
	}
	// The answer contract took effect too, not only its text.
	if rec.FinalAnswer == nil || *rec.FinalAnswer != "42" {
		t.Errorf("finalAnswer %v", rec.FinalAnswer)
	}
}

// compactTools returns tools with their parameters compacted, so that JSON
// that differs only in white space compares equal.
func compactTools(t *testing.T, tools []automate.ClientTool) []automate.ClientTool {
	t.Helper()
	out := make([]automate.ClientTool, len(tools))
	for i, tool := range tools {
		if len(tool.Parameters) > 0 {
			var v any
			if err := json.Unmarshal(tool.Parameters, &v); err != nil {
				t.Fatalf("tool %s parameters: %v", tool.Name, err)
			}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			tool.Parameters = b
		}
		out[i] = tool
	}
	return out
}
