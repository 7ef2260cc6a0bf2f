package server_test

// An inline MCP server of the official Go SDK (automate/toolkit's
// testdata/mcpasker, over stdio) elicits during a run: the question parks
// the run as an ask_person call, the caller's answer returns as the
// elicitation result; without ask_person the elicitation is declined at
// once. Its progress notifications reach the run's step events.

import (
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/testenv"
)

func askerServer(t *testing.T) map[string]any {
	t.Helper()
	bin := testenv.GoBuild(t, "./automate/toolkit/testdata/mcpasker")
	return map[string]any{"name": "asker", "description": "asks the person", "transport": "stdio", "command": bin}
}

var askPersonTool = map[string]any{"name": automate.AskPersonToolName, "description": "Ask the person",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"question": map[string]any{"type": "string"}}}}

func TestInlineMcpElicitationAsksThroughAskPerson(t *testing.T) {
	h := newHarness(t)
	srv := askerServer(t)
	for _, tc := range []struct {
		name, answer, want string
	}{
		{"accepted", "Ada", "hello Ada"},
		{"declined", "decline", "declined"},
		{"not answered", automate.AskPersonNoAnswer + "the person did not answer within 100 s.", "cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, rec := h.run(map[string]any{
				"prompt":      "#!mcp asker ask\n#!answer asked",
				"mcpServers":  []any{srv},
				"clientTools": []any{askPersonTool},
			})
			if r.status != 200 || rec.Status != automate.StatusAwaitingToolResults || len(rec.ToolCalls) != 1 {
				t.Fatalf("first outcome %d %s", r.status, r.body)
			}
			call := rec.ToolCalls[0]
			if call.Name != automate.AskPersonToolName || !strings.Contains(string(call.Arguments), "The MCP server asker asks: What is your name?") {
				t.Fatalf("call %+v", call)
			}
			r, rec = h.resume(rec.ResumeToken, automate.TextResult(call.ID, tc.answer))
			if r.status != 200 || rec.Status != automate.StatusCompleted || len(rec.Steps) == 0 {
				t.Fatalf("final outcome %d %s", r.status, r.body)
			}
			if st := rec.Steps[0]; st.Status != automate.StepSuccess || st.ResultSummary != tc.want {
				t.Fatalf("MCP step %+v, want %q", st, tc.want)
			}
		})
	}
	t.Run("no person", func(t *testing.T) {
		r, rec := h.run(map[string]any{"prompt": "#!mcp asker ask\n#!answer asked", "mcpServers": []any{srv}})
		if r.status != 200 || rec.Status != automate.StatusCompleted || rec.Steps[0].ResultSummary != "declined" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestInlineMcpProgressBecomesStepEvents(t *testing.T) {
	h := newHarness(t)
	a := h.stream("/v1/runs", map[string]any{
		"prompt":     "#!mcp asker steps\n#!answer stepped",
		"mcpServers": []any{askerServer(t)},
	})
	var progress []string
	for _, ev := range a.rest() {
		for _, p := range []string{"Progress: 1/3 step 1", "Progress: 2/3 step 2", "Progress: 3/3 step 3"} {
			if strings.Contains(string(ev.Data), p) && !strings.Contains(strings.Join(progress, "|"), p) {
				progress = append(progress, p)
			}
		}
	}
	if len(progress) != 3 {
		t.Fatalf("progress seen in the step events: %q", progress)
	}
}
