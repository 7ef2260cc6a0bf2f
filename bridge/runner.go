package bridge

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
)

// execute runs r on the Automate server: one POST, then the tool loop, and
// journals the outcome. It runs on its own goroutine; the loop learns of
// its end through runDone.
func (b *Bridge) execute(r *runState) runDone {
	ctx := r.ctx
	if b.opts.OnShutdown == ShutdownLeave {
		// When the daemon stops it stops waiting; the run stays on the
		// server unless someone cancels it explicitly.
		ctx = automate.LeaveRunning(ctx)
	}
	log := b.log.With("command_id", r.id, "rule", r.rule.Name())
	rec, err := b.opts.Automate.Run(ctx, r.req)
	if errors.Is(err, automate.ErrBusy) {
		// 409: no run started; the loop applies the busy policy.
		log.Info("the assistant is busy with a run hubgate did not start")
		return runDone{run: r, busy: true}
	}
	for err == nil && rec != nil && rec.Status == automate.StatusAwaitingToolResults {
		b.mu.Lock()
		r.requestID, r.parked = rec.RequestID, true
		b.mu.Unlock()
		if jerr := b.opts.Journal.RunParked(context.WithoutCancel(ctx), r.id, rec.RequestID, rec.ResumeToken); jerr != nil {
			log.Error("journal: parked run not recorded", "err", jerr)
		}
		parked := commandEvent(control.EventParked, r.pending)
		parked.RequestID = rec.RequestID
		for _, c := range rec.ToolCalls {
			parked.Note += c.Name + " "
		}
		parked.Note = strings.TrimSpace(parked.Note)
		b.emit(parked)
		results := b.tools.Execute(ctx, rec.ToolCalls)
		b.mu.Lock()
		r.parked = false
		b.mu.Unlock()
		if jerr := b.opts.Journal.RunResumed(context.WithoutCancel(ctx), r.id); jerr != nil {
			log.Error("journal: resume not recorded", "err", jerr)
		}
		resumed := commandEvent(control.EventResumed, r.pending)
		resumed.RequestID = rec.RequestID
		b.emit(resumed)
		rec, err = b.opts.Automate.ResumeRun(ctx, rec, results)
	}
	out := outcome(rec, err, b.now())
	if out.RequestID != "" {
		b.mu.Lock()
		r.requestID = out.RequestID
		b.mu.Unlock()
	}
	if jerr := b.opts.Journal.RunFinished(context.WithoutCancel(ctx), r.id, out); jerr != nil {
		log.Error("journal: run outcome not recorded", "err", jerr)
	}
	b.mu.Lock()
	if out.Status == automate.StatusCompleted {
		b.counters.Completed++
	} else {
		b.counters.Failed++
	}
	b.mu.Unlock()
	log.Info("run finished", "request_id", out.RequestID, "status", out.Status, "error_code", out.ErrorCode,
		"duration_ms", out.DurationMs, "err", out.Err)
	fin := finishedEvent(r, out)
	return runDone{run: r, finished: &fin}
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
