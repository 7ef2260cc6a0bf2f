package automate

import (
	"context"
	"errors"
)

// ToolExecutor executes the pending client-tool calls of a parked run and
// returns one result per call, matched by ToolCall.ID (TextResult builds a
// text result; set ToolResult.Error to report a failed call to the agent).
// A returned error means the caller gives up on the run: the tool loop then
// cancels the run explicitly. ctx carries the run's deadline.
type ToolExecutor func(ctx context.Context, calls []ToolCall) ([]ToolResult, error)

// ToolLoop configures RunWithTools: the executor and the hooks through
// which a caller follows the rounds (a journal, an event stream). The
// hooks run on the loop's goroutine, in order, and their time counts
// against the run's deadline. Zero values are documented per field.
type ToolLoop struct {
	// Execute runs the pending calls of each round; required.
	Execute ToolExecutor
	// OnParked is called each time the run parks, before Execute, with the
	// parked record (its request id, resume token and pending calls): from
	// here the run holds the server's slot and waits for this caller.
	// Zero: nothing.
	OnParked func(parked *RunRecord)
	// OnResumed is called when Execute has answered a round, right before
	// its results are posted to the parked record's resume token. It is
	// not called for a round the loop gives up on. Zero: nothing.
	OnResumed func(parked *RunRecord, results []ToolResult)
	// Progress, when not nil, follows the run's steps and status as they
	// happen, on the run and on every resume (RunProgress). Zero: the
	// plain answers, no progress.
	Progress *Progress
}

// RunWithTools drives the caller-executed tool loop on the native contract:
// it starts req (which declares ClientTools), and while the run is parked
// (awaiting_tool_results) hands the pending calls to loop.Execute and posts
// its results to the run's resume token, until the run completes or fails.
// Outcomes are those of Run. No POST is ever sent twice: a run request or
// a resume that may have reached the server is not retried.
//
// The whole loop, every resume round included, is bounded by the run's
// timeoutMs plus the margin, as the server's own timeout covers the whole
// task; ctx may shorten it. Giving up: when Execute fails, ctx ends or that
// deadline passes, or a parked record cannot be resumed (no resume token or
// no calls), the run is cancelled explicitly if /health still reports it
// as the active run (CancelIfActive; a force cancel with
// ClientOptions.ForceCancelOnGiveUp), and the error is an *AbandonedError
// wrapping the cause (errors.Is finds the executor's error or the context
// error). Under a LeaveRunning context no cancel is sent: the run is left
// to the server.
func (c *Client) RunWithTools(ctx context.Context, req RunRequest, loop ToolLoop) (*RunRecord, error) {
	if loop.Execute == nil {
		return nil, errors.New("automate: run with tools: nil ToolLoop.Execute")
	}
	ctx, cancel := context.WithTimeout(ctx, req.EffectiveTimeout()+c.margin)
	defer cancel()
	rec, err := c.startRun(ctx, req, loop.Progress)
	return toolLoop(ctx, c, loop, "tool loop", rec, err,
		func(rec *RunRecord) (toolRound, bool) {
			if rec.Status != StatusAwaitingToolResults {
				return toolRound{}, false
			}
			r := toolRound{parked: rec, requestID: rec.RequestID, calls: rec.ToolCalls}
			if rec.ResumeToken == "" || len(rec.ToolCalls) == 0 {
				r.unresumable = errors.New("automate: parked record without resume token or tool calls")
			}
			return r, true
		},
		func(ctx context.Context, rec *RunRecord, _ toolRound, results []ToolResult) (*RunRecord, error) {
			return c.resume(ctx, rec.ResumeToken, rec.RequestID, results, loop.Progress)
		})
}

// toolRound is one parked round of the tool loop, as either contract
// answers it.
type toolRound struct {
	parked      *RunRecord // for the hooks
	requestID   string
	calls       []ToolCall
	unresumable error // why the round cannot be resumed; nil when it can
}

// toolLoop is the caller-executed tool loop of both contracts (T is the
// answer: a record or a chat completion). answer and err are the answer to
// the run-starting POST; parked says whether an answer is a parked round;
// resume posts a round's results and returns the next answer. The loop
// gives up (abandon: an explicit cancel of the round's run while it is
// active) when a round cannot be resumed, the executor fails or ctx ends.
func toolLoop[T any](ctx context.Context, c *Client, loop ToolLoop, op string, answer T, err error,
	parked func(T) (toolRound, bool),
	resume func(ctx context.Context, answer T, r toolRound, results []ToolResult) (T, error),
) (T, error) {
	var none T
	for n := 1; err == nil; n++ {
		r, ok := parked(answer)
		if !ok {
			break
		}
		if r.unresumable != nil {
			// The run holds the slot and cannot be resumed: release it.
			return none, c.abandon(ctx, op, r.requestID, r.unresumable)
		}
		if loop.OnParked != nil {
			loop.OnParked(r.parked)
		}
		c.log.Debug("automate tool loop: executing calls", "op", op, "requestId", r.requestID,
			"round", n, "calls", len(r.calls))
		results, xerr := loop.Execute(ctx, r.calls)
		if xerr == nil {
			xerr = ctx.Err()
		}
		if xerr != nil {
			return none, c.abandon(ctx, "tool executor", r.requestID, xerr)
		}
		if loop.OnResumed != nil {
			loop.OnResumed(r.parked, results)
		}
		answer, err = resume(ctx, answer, r, results)
	}
	return answer, err
}
