package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/toolkit"
)

// McpElicit is how an inline MCP server's elicitation (a question for the
// person) reaches the person in a run of t: through the run's ask_person
// client tool (automate.AskPersonToolName), parked with
// Env.CallClientTools like any client tool, so that the caller (the bridge)
// asks the person by every way it has, with its timeout, and journals the
// round; toolkit.ElicitByAsking turns the question and the answer. A run
// that does not declare ask_person has no person to ask: nil, and the pool
// declines every elicitation at once. Both engines pass it as
// toolkit.McpConfig.Elicit.
func McpElicit(t *Task, env Env) func(context.Context, toolkit.McpElicitation) (toolkit.McpElicitResult, error) {
	if _, ok := t.ClientTool(automate.AskPersonToolName); !ok {
		return nil
	}
	return toolkit.ElicitByAsking(func(ctx context.Context, args json.RawMessage) (automate.ToolResult, error) {
		res, err := env.CallClientTools(ctx, []ClientCall{{Name: automate.AskPersonToolName, Arguments: args}})
		if err != nil {
			return automate.ToolResult{}, err
		}
		if len(res) != 1 {
			return automate.ToolResult{}, fmt.Errorf("%s: %d results for one call", automate.AskPersonToolName, len(res))
		}
		return res[0], nil
	})
}

// McpProgressSteps returns ctx for an MCP tool call whose running step is
// st: each progress notification of the call replaces the step (same
// Index) with its progress in ResultSummary ("Progress: 2/3 message"), so
// that watchers see a long tool work. Progress that arrives after the
// call's result is dropped, and so is one that says nothing new (the
// same text as the one before), so that a chatty server does not flood
// the run's step events.
func McpProgressSteps(ctx context.Context, env Env, st automate.Step) context.Context {
	var mu sync.Mutex
	last := ""
	return toolkit.WithMcpProgress(ctx, func(p toolkit.McpProgress) {
		summary := "Progress: " + p.String()
		mu.Lock()
		same := summary == last
		last = summary
		mu.Unlock()
		if same {
			return
		}
		s := st
		s.Status = automate.StepRunning
		s.ResultSummary = summary
		env.Step(s)
	})
}
