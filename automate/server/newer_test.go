package server_test

// Contract tests of the desktop application's newer Automate server, as
// this server serves it beside the spec (docs/automate-server.md, "The
// newer vendor contract"): /v1/models modes, /v1/runs mode "model",
// GET /v1/automate/tools, GET|PATCH /v1/settings, GET /v1/speech/status
// and 405 on a wrong method there.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/server"
)

func newerClient(t *testing.T, h *harness) *automate.Client {
	t.Helper()
	c, err := automate.NewClient(automate.ClientOptions{BaseURL: h.url, Key: h.key, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewerModelsEntriesCarryMode(t *testing.T) {
	h := newHarness(t)
	list, err := newerClient(t, h).Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []automate.ModelEntry{
		{ID: "service-agent", Object: "model", OwnedBy: "service", Mode: "assistant"},
		{ID: "service-model", Object: "model", OwnedBy: "service", Mode: "model"},
	}
	if !reflect.DeepEqual(list.Data, want) {
		t.Errorf("models %+v, want %+v", list.Data, want)
	}
	// Without model mode only the assistant, still with its mode.
	plain := newHarness(t, withWrap(func(a assistant.Assistant) assistant.Assistant { return struct{ assistant.Assistant }{a} }))
	r := plain.do("GET", "/v1/models", nil)
	if got, want := strings.TrimSpace(string(r.body)),
		`{"object":"list","data":[{"id":"service-agent","object":"model","owned_by":"service","mode":"assistant"}]}`; got != want {
		t.Errorf("models %s, want %s", got, want)
	}
}

func TestNewerModelRunAnswersARecord(t *testing.T) {
	h := newHarness(t)
	r, rec := h.run(map[string]any{
		"mode": "model", "taskId": "turn-1",
		"messages": []any{msg("system", "You are terse."), msg("user", "hello there")},
	})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	checkContractHeaders(t, r)
	if r.header.Get("X-Should-Retry") != "false" {
		t.Error("no x-should-retry: false")
	}
	if rec.SchemaVersion != 1 || rec.Mode != "model" || rec.Status != automate.StatusCompleted || rec.TaskID != "turn-1" ||
		rec.Answer != "Echo: hello there" || !strings.HasPrefix(rec.RequestID, "automate-run-") {
		t.Errorf("record %+v", rec)
	}
	if rec.ResumeToken != "" || rec.ToolCalls != nil || rec.Model != "scripted-mini" || rec.Usage == nil || rec.Steps == nil {
		t.Errorf("record %+v", rec)
	}
	raw := r.raw(t)
	for _, k := range []string{"resumeToken", "toolCalls", "finalAnswer", "errorCode", "trace", "events"} {
		if _, ok := raw[k]; ok {
			t.Errorf("record carries %q: %s", k, r.body)
		}
	}
	// include works as on a run.
	r, _ = h.run(map[string]any{"mode": "model", "messages": []any{msg("user", "x")}, "include": map[string]any{"steps": false}})
	if _, ok := r.raw(t)["steps"]; ok || r.status != 200 {
		t.Errorf("include.steps false: %d %s", r.status, r.body)
	}
	if hl := h.health(); hl.Busy || hl.ActiveRequestID != nil {
		t.Errorf("slot not freed: %+v", hl)
	}
}

// TestNewerModelRunToolLoop runs the caller's own loop through the Go
// client: clientTools are the model's tools, the record's toolCalls are
// what it asked for, and the next turn carries the whole history.
func TestNewerModelRunToolLoop(t *testing.T) {
	h := newHarness(t)
	c := newerClient(t, h)
	ctx := context.Background()
	tools := []automate.ClientTool{{Name: "lookup_order", Description: "Fetch an order by id",
		Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)}}
	user := json.RawMessage(`{"role":"user","content":"#!tool lookup_order {\"id\":\"4471\"}\n#!tool lookup_order {\"id\":\"9\"}"}`)
	rec, err := c.Run(ctx, automate.RunRequest{Mode: automate.ModeModel, Messages: []json.RawMessage{user}, ClientTools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != automate.StatusCompleted || rec.Answer != "" || len(rec.ToolCalls) != 2 || rec.ResumeToken != "" {
		t.Fatalf("record %+v", rec)
	}
	for i, id := range []string{"4471", "9"} {
		tc := rec.ToolCalls[i]
		var args map[string]string
		if tc.Name != "lookup_order" || tc.ID == "" || json.Unmarshal(tc.Arguments, &args) != nil || args["id"] != id {
			t.Errorf("toolCalls[%d] = %+v (%s)", i, tc, tc.Arguments)
		}
	}
	// The next turn: the model's calls as an OpenAI assistant message,
	// the results as tool messages.
	var calls []map[string]any
	for _, tc := range rec.ToolCalls {
		calls = append(calls, map[string]any{"id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": string(tc.Arguments)}})
	}
	history := []json.RawMessage{user, mustJSON(t, map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}),
		mustJSON(t, map[string]any{"role": "tool", "tool_call_id": rec.ToolCalls[0].ID, "content": "shipped"}),
		mustJSON(t, map[string]any{"role": "tool", "tool_call_id": rec.ToolCalls[1].ID, "content": "held"})}
	rec, err = c.Run(ctx, automate.RunRequest{Mode: automate.ModeModel, Messages: history, ClientTools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Answer != "Tool results: shipped; held" || rec.ToolCalls != nil || rec.Status != automate.StatusCompleted {
		t.Errorf("record %+v", rec)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewerModelRunRefusals(t *testing.T) {
	h := newHarness(t)
	user := []any{msg("user", "hi")}
	for _, c := range []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"mode": "agent", "prompt": "x"}, "mode must be one of assistant, model"},
		{map[string]any{"mode": 1, "prompt": "x"}, "mode must be one of assistant, model"},
		{map[string]any{"mode": "model"}, "messages must be an array"},
		{map[string]any{"mode": "model", "messages": []any{}}, "messages must not be empty"},
		{map[string]any{"mode": "model", "messages": []any{msg("robot", "x")}}, "messages[0].role must be one of system, developer, user, assistant, tool"},
		{map[string]any{"mode": "model", "prompt": "do it", "messages": user}, "prompt is not used with mode model: send the conversation in messages"},
		{map[string]any{"mode": "model", "messages": user, "stream": true},
			"stream is not supported with mode model on /v1/runs: stream a model turn on /v1/chat/completions with model service-model"},
		{map[string]any{"mode": "model", "messages": user, "timeoutMs": 10}, "timeoutMs must be at least 1000"},
		{map[string]any{"mode": "model", "messages": user, "clientTools": []any{map[string]any{"name": "mcp__x", "description": "d"}}},
			"clientTools[0].name must not start with mcp__"},
	} {
		h.do("POST", "/v1/runs", c.body).envelope(t, 400, "invalid_request_error", c.msg)
	}
	// mode "assistant" is the run of the spec.
	if r, rec := h.run(map[string]any{"mode": "assistant", "prompt": "say hi"}); r.status != 200 || rec.Mode != "" || rec.Status != automate.StatusCompleted {
		t.Errorf("assistant mode: %d %s", r.status, r.body)
	}
	// An engine without model mode says so.
	plain := newHarness(t, withWrap(func(a assistant.Assistant) assistant.Assistant { return struct{ assistant.Assistant }{a} }))
	plain.do("POST", "/v1/runs", map[string]any{"mode": "model", "messages": user}).envelope(t, 400, "invalid_request_error",
		"The model service-model is not available: this assistant engine has no model mode")
}

// TestNewerModelRunHoldsTheSlot: a model-mode run is one inference like
// any other; a second one meets 409, and a cancel stops it.
func TestNewerModelRunHoldsTheSlot(t *testing.T) {
	h := newHarness(t)
	ch := h.startAsync("/v1/runs", map[string]any{"mode": "model", "messages": []any{msg("user", "#!sleep 60000")}})
	hl := h.waitFor("the model call", func(hl automate.Health) bool { return hl.Busy })
	if hl.ActiveRequestID == nil {
		t.Fatal("no active request id")
	}
	h.do("POST", "/v1/runs", map[string]any{"mode": "model", "messages": []any{msg("user", "hi")}}).
		envelope(t, 409, "conflict", "The on-device assistant is already running or preparing (thinking)")
	var cr automate.CancelResponse
	h.do("POST", "/v1/automate/cancel", map[string]any{}).json(t, &cr)
	if !cr.Stopped || cr.RequestID == nil || *cr.RequestID != *hl.ActiveRequestID {
		t.Errorf("cancel %+v", cr)
	}
	r := receive(t, ch)
	r.envelope(t, 500, "canceled", "The model call was canceled")
}

func TestNewerToolsRoute(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/v1/automate/tools", nil)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	checkContractHeaders(t, r)
	if raw := r.raw(t); raw["policy"] != nil {
		t.Errorf("policy %v, want null", raw["policy"])
	} else if _, ok := raw["policy"]; !ok {
		t.Error("no policy key")
	}
	cat, err := newerClient(t, h).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cat.Object != "list" || cat.Policy != nil || !reflect.DeepEqual(cat.Groups, assistant.BuiltInToolGroups) {
		t.Errorf("catalog %+v", cat)
	}
	var names []string
	for _, tool := range cat.Data {
		names = append(names, tool.Name)
		if tool.Destructive != assistant.DestructiveTools[tool.Name] {
			t.Errorf("%s destructive %v", tool.Name, tool.Destructive)
		}
		if !slices.Contains(tool.Groups, "@all") || !slices.IsSorted(tool.Groups) {
			t.Errorf("%s groups %v", tool.Name, tool.Groups)
		}
	}
	if !reflect.DeepEqual(names, assistant.BuiltInToolNames) {
		t.Errorf("tools %v, want %v", names, assistant.BuiltInToolNames)
	}
	var del automate.BuiltInToolInfo
	for _, tool := range cat.Data {
		if tool.Name == "delete_path" {
			del = tool
		}
	}
	if !reflect.DeepEqual(del, automate.BuiltInToolInfo{Name: "delete_path", Groups: []string{"@all", "@destructive"}, Destructive: true}) {
		t.Errorf("delete_path %+v", del)
	}
}

func TestNewerSettingsRoute(t *testing.T) {
	restricted := t.TempDir()
	h := newHarness(t, withToolWait(90*time.Second), withServerConfig(func(c *server.Config) {
		c.ConfiguredMcpServers = []string{"internal-finance"}
		c.WorkspaceRestriction = restricted
	}))
	c := newerClient(t, h)
	st, err := c.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := automate.Settings{Workspace: h.workspace, WorkspaceRestriction: &restricted, DefaultTimeoutMs: 900000,
		ToolResultWaitMs: 90000, ConfiguredMcpServers: []string{"internal-finance"},
		ReadOnly: []string{"workspace", "workspaceRestriction", "defaultTimeoutMs", "toolResultWaitMs", "configuredMcpServers"}}
	if !reflect.DeepEqual(*st, want) {
		t.Errorf("settings %+v, want %+v", *st, want)
	}
	r := h.do("GET", "/v1/settings", nil)
	checkContractHeaders(t, r)

	// Nothing can change while the server runs: PATCH says which field.
	h.do("PATCH", "/v1/settings", map[string]any{"workspace": "/tmp/elsewhere", "defaultTimeoutMs": 1000}).envelope(t, 400,
		"invalid_request_error", "Setting defaultTimeoutMs is read-only on this server: it is set when the server starts")
	h.do("PATCH", "/v1/settings", map[string]any{"theme": "dark"}).envelope(t, 400, "invalid_request_error",
		"Unknown setting theme (settings: workspace, workspaceRestriction, defaultTimeoutMs, toolResultWaitMs, configuredMcpServers)")
	h.do("PATCH", "/v1/settings", "{").envelope(t, 400, "invalid_request_error", "Malformed JSON")
	r = h.do("PATCH", "/v1/settings", map[string]any{})
	var same automate.Settings
	r.json(t, &same)
	if r.status != 200 || !reflect.DeepEqual(same, want) {
		t.Errorf("empty PATCH: %d %s", r.status, r.body)
	}
	// Defaults of a plain server: no restriction, no configured servers.
	plain := newHarness(t)
	raw := plain.do("GET", "/v1/settings", nil).raw(t)
	if raw["workspaceRestriction"] != nil || !reflect.DeepEqual(raw["configuredMcpServers"], []any{}) || raw["toolResultWaitMs"] != 120000.0 {
		t.Errorf("plain settings %v", raw)
	}
}

func TestNewerSpeechStatus(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/v1/speech/status", nil)
	checkContractHeaders(t, r)
	if got, want := strings.TrimSpace(string(r.body)),
		`{"available":false,"listening":false,"state":"unavailable","reason":"This Automate server has no speech recognizer"}`; r.status != 200 || got != want {
		t.Errorf("%d %s, want %s", r.status, got, want)
	}
	st, err := newerClient(t, h).SpeechStatus(context.Background())
	if err != nil || st.Available || st.State != "unavailable" {
		t.Errorf("%+v %v", st, err)
	}
}

// TestNewerWrongMethodIs405: a wrong method on a route of the newer
// contract answers 405 with Allow and the error envelope; on the spec's
// routes it stays 404 (TestUnknownRoutesAndWrongMethodsAre404), and the
// newer routes the server does not serve are unknown paths.
func TestNewerWrongMethodIs405(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct{ method, path, allow string }{
		{"POST", "/v1/automate/tools", "GET"},
		{"DELETE", "/v1/automate/tools", "GET"},
		{"POST", "/v1/settings", "GET, PATCH"},
		{"PUT", "/v1/settings", "GET, PATCH"},
		{"DELETE", "/v1/settings", "GET, PATCH"},
		{"POST", "/v1/speech/status", "GET"},
		{"OPTIONS", "/v1/speech/status", "GET"},
	} {
		r := h.do(c.method, c.path, nil)
		r.envelope(t, 405, "invalid_request_error", "Method "+c.method+" is not allowed on "+c.path+"; allowed: "+c.allow)
		if got := r.header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
	// HEAD: the status and Allow, no body.
	req, _ := http.NewRequest("HEAD", h.url+"/v1/settings", nil)
	req.Header.Set("Authorization", "Bearer "+h.key)
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, PATCH" {
		t.Errorf("HEAD: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	for _, rt := range []struct{ method, path string }{
		{"GET", "/v1/settings/"}, {"PUT", "/v1/automate/tools/policy"}, {"POST", "/v1/speech/start"},
		{"GET", "/v1/speech/stream"}, {"GET", "/v1/audio/inputs"},
	} {
		h.do(rt.method, rt.path, nil).envelope(t, 404, "not_found", "Not found")
	}
}

// TestNewerChatExtensionMode: the extension object's mode "model" is
// model mode on the chat route, as the model id is (the vendor's stand-in
// server); "assistant" is the spec's chat.
func TestNewerChatExtensionMode(t *testing.T) {
	h := newHarness(t)
	r := h.do("POST", "/v1/chat/completions", map[string]any{"model": "gpt-4o", "messages": []any{msg("user", "hi")},
		"service": map[string]any{"mode": "model"}})
	var comp struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	r.json(t, &comp)
	if r.status != 200 || comp.Model != "service-model" || len(comp.Choices) != 1 || comp.Choices[0].Message.Content != "Echo: hi" {
		t.Errorf("%d %s", r.status, r.body)
	}
	if _, ok := r.raw(t)["service"]; ok {
		t.Errorf("a model-mode answer without include carries the record: %s", r.body)
	}
	r = h.do("POST", "/v1/chat/completions", map[string]any{"model": "service-agent", "messages": []any{msg("user", "say hi")},
		"service": map[string]any{"mode": "assistant"}})
	if r.status != 200 || serviceOf(t, string(r.body)).SchemaVersion != 1 {
		t.Errorf("assistant mode: %d %s", r.status, r.body)
	}
	h.do("POST", "/v1/chat/completions", map[string]any{"messages": []any{msg("user", "hi")}, "service": map[string]any{"mode": "robot"}}).
		envelope(t, 400, "invalid_request_error", "service.mode must be one of assistant, model")
}
