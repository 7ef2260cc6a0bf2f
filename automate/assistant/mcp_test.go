package assistant_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/toolkit"
)

// stepEnv records steps and client calls; the rest of Env is not used.
type stepEnv struct {
	assistant.Env
	steps []automate.Step
	calls []assistant.ClientCall
	reply automate.ToolResult
}

func (e *stepEnv) Step(s automate.Step) { e.steps = append(e.steps, s) }

func (e *stepEnv) CallClientTools(_ context.Context, calls []assistant.ClientCall) ([]automate.ToolResult, error) {
	e.calls = append(e.calls, calls...)
	return []automate.ToolResult{e.reply}, nil
}

func TestMcpElicitNeedsAskPerson(t *testing.T) {
	env := &stepEnv{reply: automate.TextResult("call_1", "Ada")}
	if assistant.McpElicit(&assistant.Task{}, env) != nil {
		t.Fatal("a run without ask_person must have no elicitation handler (declined at once)")
	}
	task := &assistant.Task{ClientTools: []automate.ClientTool{{Name: automate.AskPersonToolName}}}
	elicit := assistant.McpElicit(task, env)
	res, err := elicit(context.Background(), toolkit.McpElicitation{Server: "s", Message: "Name?", Mode: "form",
		Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
	if err != nil || res.Action != toolkit.ElicitAccept || res.Content["name"] != "Ada" {
		t.Fatalf("%+v %v", res, err)
	}
	if len(env.calls) != 1 || env.calls[0].Name != automate.AskPersonToolName {
		t.Fatalf("calls %+v", env.calls)
	}
}

func TestMcpProgressStepsReplaceTheRunningStep(t *testing.T) {
	env := &stepEnv{}
	st := automate.Step{Index: 3, Title: "Call steps of MCP server s", Status: automate.StepRunning}
	ctx := assistant.McpProgressSteps(context.Background(), env, st)
	// The pool hands progress over through the context; call it as the pool does.
	report := toolkit.McpProgressFunc(ctx)
	report(toolkit.McpProgress{Progress: 1, Total: 2, Message: "half"})
	report(toolkit.McpProgress{Progress: 1, Total: 2, Message: "half"}) // nothing new: dropped
	report(toolkit.McpProgress{Progress: 2, Total: 2})
	if len(env.steps) != 2 || env.steps[0].Index != 3 || env.steps[0].ResultSummary != "Progress: 1/2 half" ||
		env.steps[1].ResultSummary != "Progress: 2/2" || env.steps[1].Status != automate.StepRunning || env.steps[1].Title != st.Title {
		t.Fatalf("steps %+v", env.steps)
	}
}
