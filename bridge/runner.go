package bridge

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
)

// execute runs r on the Automate server through the client's tool loop
// (one POST, then a resume per round; hubgate's tools answer the calls),
// journals and publishes each park and resume, and journals the outcome.
// It runs on its own goroutine; the loop learns of its end through
// runDone.
func (b *Bridge) execute(r *runState) runDone {
	ctx := r.ctx
	if r.leave {
		// When the daemon stops it stops waiting; the run stays on the
		// server unless someone cancels it explicitly.
		ctx = automate.LeaveRunning(ctx)
	}
	log := b.log.With("command_id", r.id, "rule", r.rule.Name())
	rec, err := b.opts.Automate.RunWithTools(ctx, b.withAskTool(r), automate.ToolLoop{
		Progress: b.progress(r),
		Execute: func(ctx context.Context, calls []automate.ToolCall) ([]automate.ToolResult, error) {
			// A tool that fails answers the agent with an error; the
			// round itself fails only when a cancel withdrew a question.
			return b.executeCalls(ctx, r, calls)
		},
		OnParked: func(parked *automate.RunRecord) {
			b.mu.Lock()
			r.requestID, r.parked = parked.RequestID, true
			b.mu.Unlock()
			r.markKnown()
			if jerr := b.opts.Journal.RunParked(context.WithoutCancel(ctx), r.id, parked.RequestID, parked.ResumeToken); jerr != nil {
				log.Error("journal: parked run not recorded", "err", jerr)
			}
			ev := commandEvent(EventParked, r.pending)
			ev.RequestID = parked.RequestID
			names := make([]string, len(parked.ToolCalls))
			for i, c := range parked.ToolCalls {
				names[i] = c.Name
			}
			ev.Note = strings.Join(names, " ")
			b.emit(ev)
		},
		OnResumed: func(parked *automate.RunRecord, _ []automate.ToolResult) {
			b.mu.Lock()
			r.parked = false
			b.mu.Unlock()
			if jerr := b.opts.Journal.RunResumed(context.WithoutCancel(ctx), r.id); jerr != nil {
				log.Error("journal: resume not recorded", "err", jerr)
			}
			ev := commandEvent(EventResumed, r.pending)
			ev.RequestID = parked.RequestID
			b.emit(ev)
		},
	})
	if errors.Is(err, automate.ErrBusy) {
		// 409: no run started; the loop applies the busy policy.
		log.Info("the assistant is busy with a run hubgate did not start")
		return runDone{run: r, busy: true}
	}
	out := outcome(rec, err, b.now())
	if out.RequestID != "" {
		b.mu.Lock()
		r.requestID = out.RequestID
		b.mu.Unlock()
	}
	b.mu.Lock()
	out.StoppedBy, out.ForcedBy = r.stoppedBy, r.forcedBy
	if r.cancelRequested {
		out = canceledOutcome(out)
	}
	switch out.Status {
	case automate.StatusCompleted:
		b.counters.Completed++
	case automate.StatusCanceled:
		b.counters.Canceled++
		b.reasonLocked(countCanceled, r.id, r.cmd.Text, journal.StopNote(out.StoppedBy, out.ForcedBy))
	default:
		b.counters.Failed++
		b.reasonLocked(string(journal.DecisionFailed), r.id, r.cmd.Text, failureReason(out))
	}
	b.mu.Unlock()
	log.Info("run finished", "request_id", out.RequestID, "status", out.Status, "error_code", out.ErrorCode,
		"duration_ms", out.DurationMs, "err", out.Err)
	fin := finishedEvent(r, out)
	b.mu.Lock()
	b.keepRecentLocked(r, fin)
	b.mu.Unlock()
	return runDone{run: r, finished: &fin, outcome: &out}
}

// progress follows r's steps and workflow status: each step change and
// each status change is kept on r (status shows them) and published
// (EventStep, EventRunStatus). The client calls these one at a time, in
// order, never after RunWithTools returned.
func (b *Bridge) progress(r *runState) *automate.Progress {
	return &automate.Progress{
		OnStarted: func(s automate.RunStarted) {
			b.mu.Lock()
			if r.requestID == "" {
				r.requestID = s.RequestID
			}
			b.mu.Unlock()
			if s.RequestID != "" {
				r.markKnown()
			}
		},
		OnStep: func(s automate.Step) {
			info := StepOf(s)
			b.mu.Lock()
			r.steps = upsertStep(r.steps, info)
			b.mu.Unlock()
			ev := commandEvent(EventStep, r.pending)
			ev.Step = &info
			b.emit(ev)
		},
		OnStatus: func(status string) {
			b.mu.Lock()
			r.workflowStatus = status
			b.mu.Unlock()
			ev := commandEvent(EventRunStatus, r.pending)
			ev.Note = status
			b.emit(ev)
		},
	}
}

// upsertStep puts s in steps, ordered by index, replacing the step of the
// same index.
func upsertStep(steps []StepInfo, s StepInfo) []StepInfo {
	i, found := slices.BinarySearchFunc(steps, s.Index, func(x StepInfo, idx int) int { return x.Index - idx })
	if found {
		steps[i] = s
		return steps
	}
	return slices.Insert(steps, i, s)
}

// canceledOutcome is the outcome of a run someone asked to stop: a run
// the server ended canceled or terminated (a forced stop kills the
// worker), or whose request ended without a record (a cancel while it
// waited for the person's answer withdraws the question), is canceled:
// stopped on purpose, not a failure; the journal's note says who stopped
// it and whether it was forced (journal.StopNote), and a request's error
// stays in the error. A run that completed or failed before the cancel
// landed keeps its status.
func canceledOutcome(o journal.Outcome) journal.Outcome {
	if o.Status == automate.StatusTerminated || o.Status == "" {
		o.Status = automate.StatusCanceled
	}
	return o
}

// failureReason says why a run or its request failed, for status.
func failureReason(o journal.Outcome) string {
	switch {
	case o.Err != "":
		return "request failed: " + o.Err
	case o.ErrorCode != "":
		return "run " + string(o.Status) + " (" + o.ErrorCode + ")"
	}
	return "run " + string(o.Status)
}

// outcome turns the last answer into the journal's outcome. A failed run
// (HTTP 500 with a record) carries its record; a failed request carries
// only the error.
func outcome(rec *automate.RunRecord, err error, now time.Time) journal.Outcome {
	var re *automate.RunError
	if rec == nil && errors.As(err, &re) {
		rec = re.Record
	}
	if rec != nil {
		return journal.OutcomeOf(rec)
	}
	o := journal.Outcome{CompletedAt: now}
	if err != nil {
		o.Err = err.Error()
	}
	return o
}
