package automate

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ToolExecutor executes the pending client-tool calls of a parked run and
// returns one result per call, matched by ToolCall.ID (TextResult builds a
// text result; set ToolResult.Error to report a failed call to the agent).
// A returned error means the caller gives up on the run: the tool loop then
// cancels the run explicitly. ctx carries the run's deadline.
type ToolExecutor func(ctx context.Context, calls []ToolCall) ([]ToolResult, error)

// RunWithTools drives the caller-executed tool loop on the native contract:
// it starts req (which declares ClientTools), and while the run is parked
// (awaiting_tool_results) hands the pending calls to exec and posts its
// results to the run's resume token, until the run completes or fails.
// Outcomes are those of Run.
//
// The whole loop, every resume round included, is bounded by the run's
// timeoutMs plus the margin, as the server's own timeout covers the whole
// task; ctx may shorten it. When exec fails, ctx ends or that deadline
// passes, the run is cancelled explicitly if /health still reports it as
// the active run, and the error is an *AbandonedError wrapping the cause
// (errors.Is finds the executor's error or the context error).
func (c *Client) RunWithTools(ctx context.Context, req RunRequest, exec ToolExecutor) (*RunRecord, error) {
	if exec == nil {
		return nil, errors.New("automate: run with tools: nil ToolExecutor")
	}
	deadline := time.Now().Add(req.EffectiveTimeout() + c.margin)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	rec, err := c.postRun(ctx, "/v1/runs", req, "")
	for round := 1; err == nil && rec.Status == StatusAwaitingToolResults; round++ {
		if rec.ResumeToken == "" || len(rec.ToolCalls) == 0 {
			// The run holds the slot and cannot be resumed: release it.
			return nil, c.abandon(ctx, "tool loop", rec.RequestID,
				fmt.Errorf("automate: parked record without resume token or tool calls"))
		}
		c.log.Debug("automate tool loop: executing calls", "requestId", rec.RequestID,
			"round", round, "calls", len(rec.ToolCalls))
		results, xerr := exec(ctx, rec.ToolCalls)
		if xerr == nil {
			xerr = ctx.Err()
		}
		if xerr != nil {
			return nil, c.abandon(ctx, "tool executor", rec.RequestID, xerr)
		}
		rec, err = c.resume(ctx, rec.ResumeToken, rec.RequestID, results)
	}
	return rec, err
}
