package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
)

// Causes of a run's context being cancelled.
var (
	causeForce    = errors.New("force cancel")
	causeSoft     = errors.New("canceled while parked")
	causeTimeout  = errors.New("run timeout")
	causeToolWait = errors.New("no tool results within the wait")
	causeShutdown = errors.New("server stopped")
	causeInit     = errors.New("initialization took too long")
)

// errRunLimit is the cause of a run stopped by the server's per-run limits
// (Config.MaxRunSteps, Config.MaxRunEventBytes); the error wrapping it
// names the limit and becomes the failed record's answer.
var errRunLimit = errors.New("run limit reached")

type phase int

const (
	phaseRunning phase = iota
	phaseParked
	phaseEnded
)

// run is the one run that holds the slot, from start until it ends. Its
// mutex guards everything below it. Lock order: Server.mu before run.mu;
// neither is ever held while calling into the engine (an engine may hold
// its own lock while it calls Env).
type run struct {
	srv       *Server
	id        string
	token     string
	spec      *runSpec
	task      *assistant.Task
	started   time.Time
	ctx       context.Context
	cancel    context.CancelCauseFunc
	timer     *time.Timer // the run timeout, armed once at start
	done      chan struct{}
	initTimer *time.Timer // armed while the engine reports initializing

	mu         sync.Mutex
	phase      phase
	softCancel bool
	steps      []automate.Step
	events     []automate.Event
	eventBytes int   // payload bytes of events
	limitErr   error // set once a per-run limit stopped the run
	round      int
	callSeq    int
	pending    []automate.ToolCall // calls of the current round
	received   map[string]automate.ToolResult
	resultsCh  chan []automate.ToolResult // the current round's; capacity 1, one send per round
	waitTimer  *time.Timer
	snapshot   *automate.RunRecord // set while parked and once ended
	endErr     error               // an error answer instead of a record (timeout, init failure)
	changed    chan struct{}       // closed and replaced on every phase change
	feeds      []*feed             // streamed answers following the run (stream.go)
	// starter is the feed of the streamed answer that started the run,
	// subscribed before the engine runs, so that it sees every step from
	// its first state (nil for a plain answer).
	starter *feed
}

func newRequestID() string { return "automate-run-" + uuid.NewString() }

func newResumeToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "rt_" + hex.EncodeToString(b)
}

// startRun takes the slot and starts spec on the engine. It returns the
// run, or the 409 error when the slot is taken.
func (s *Server) startRun(spec *runSpec) (*run, error) {
	s.mu.Lock()
	if err := s.slotRefusalLocked(); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	r := &run{
		srv:     s,
		id:      newRequestID(),
		token:   newResumeToken(),
		spec:    spec,
		started: s.now(),
		done:    make(chan struct{}),
		changed: make(chan struct{}),
	}
	task := spec.task
	task.RequestID = r.id
	task.Workspace = s.workspace
	switch {
	case s.cfg.WorkspaceRestriction != "":
		// The user's own restriction is also where relative paths land.
		task.Workspace = s.cfg.WorkspaceRestriction
		task.Confine = s.cfg.WorkspaceRestriction
	case spec.restrictToWorkspace:
		task.Confine = s.workspace
	}
	r.task = &task
	r.ctx, r.cancel = context.WithCancelCause(s.baseCtx)
	s.active = r
	if automate.WorkflowReady(s.workflowStatus) {
		// Until the engine reports its first status, the run is preparing:
		// /health and a 409 must not call a taken slot idle.
		s.workflowStatus = automate.WorkflowInitializing
	}
	s.mu.Unlock()

	timeout := time.Duration(spec.timeoutMs) * time.Millisecond
	r.timer = time.AfterFunc(timeout, func() { r.cancel(causeTimeout) })
	s.log.Info("run started", "request_id", r.id, "task_id", spec.taskID, "prompt_chars", len(task.Prompt),
		"client_tools", len(task.ClientTools), "mcp_servers", len(task.McpServers), "timeout_ms", spec.timeoutMs)
	if spec.stream {
		r.starter = r.subscribe() // before the engine reports anything
	}
	go r.execute()
	return r, nil
}

func (r *run) execute() {
	defer close(r.done)
	var (
		res *assistant.Result
		err error
	)
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("assistant panicked: %v", p)
				r.srv.log.Error("assistant panicked", "request_id", r.id, "panic", p)
			}
		}()
		res, err = r.srv.engine.Run(r.ctx, r.task, (*runEnv)(r))
	}()
	r.finish(res, err)
}

// finish turns the engine's outcome into the final record, frees the slot
// and wakes whoever waits for the outcome.
func (r *run) finish(res *assistant.Result, err error) {
	r.timer.Stop()
	cause := context.Cause(r.ctx)
	if r.ctx.Err() == nil {
		cause = nil
	}
	if res == nil {
		res = &assistant.Result{}
	}
	status, code, answer := automate.StatusCompleted, "", res.Answer
	var endErr error
	var initErr *assistant.InitError
	completedWell := err == nil && (res.Status == "" || res.Status == automate.StatusCompleted)
	switch {
	case completedWell && cause == nil:
	case errors.As(err, &initErr):
		status, code, endErr = automate.StatusFailed, automate.ErrorModelLoadFailed, invalid("%s", initErr.Message)
		answer = initErr.Message
	case errors.Is(cause, causeInit):
		status, code = automate.StatusFailed, automate.ErrorModelLoadFailed
		answer = assistant.MessageInitTimeout
		endErr = invalid("%s", assistant.MessageInitTimeout)
	case errors.Is(cause, errRunLimit):
		status, code, answer = automate.StatusFailed, automate.ErrorExecutionFailed, cause.Error()
	case errors.Is(cause, causeForce):
		status = automate.StatusTerminated
	case errors.Is(cause, causeShutdown):
		status, code = automate.StatusTerminated, automate.ErrorCanceled
	case errors.Is(cause, causeTimeout):
		status, code = automate.StatusCanceled, automate.ErrorCanceled
		endErr = runTimedOut(r.spec.timeoutMs)
	case errors.Is(cause, causeToolWait):
		status, code = automate.StatusCanceled, automate.ErrorCanceled
		answer = "Canceled: no tool results arrived within the wait for this round"
	case errors.Is(cause, causeSoft), errors.Is(err, assistant.ErrCanceled):
		status = automate.StatusCanceled
	case errors.Is(err, assistant.ErrUserInputMissing):
		status, code, answer = automate.StatusCanceled, automate.ErrorCanceled, err.Error()
	case err != nil:
		status, code, answer = automate.StatusFailed, automate.ErrorExecutionFailed, err.Error()
	case res.Status == automate.StatusCanceled:
		status = automate.StatusCanceled
		code = res.ErrorCode
	default: // failed by the engine's own account
		status, code = automate.StatusFailed, res.ErrorCode
		if code == "" {
			code = automate.ErrorExecutionFailed
		}
	}

	rt := r.srv.engine.Runtime()
	r.mu.Lock()
	if r.waitTimer != nil {
		r.waitTimer.Stop()
	}
	if r.initTimer != nil {
		r.initTimer.Stop()
	}
	r.emitLocked(automate.ChannelResult, map[string]any{"status": status, "errorCode": code})
	rec := r.recordLocked(rt, status, answer, code, res, true)
	r.mu.Unlock()

	// Free the slot before the outcome becomes visible: a caller that gets
	// its record may start the next run at once.
	s := r.srv
	s.mu.Lock()
	if s.active == r {
		s.active = nil
	}
	if status == automate.StatusTerminated || !rt.WorkerRunning {
		s.workflowStatus = automate.WorkflowTerminated
	} else {
		s.workflowStatus = automate.WorkflowIdle
	}
	s.mu.Unlock()
	r.cancel(context.Canceled) // release the context's resources

	r.mu.Lock()
	r.snapshot, r.endErr, r.phase, r.pending = rec, endErr, phaseEnded, nil
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	s.log.Info("run ended", "request_id", r.id, "status", status, "error_code", code,
		"duration_ms", rec.DurationMs, "steps", len(r.steps))
}

// wait blocks until the run is parked or has ended and returns its record,
// or the error that answers instead of a record.
func (r *run) wait(ctx context.Context) (*automate.RunRecord, error) {
	for {
		r.mu.Lock()
		if r.phase != phaseRunning {
			rec, err := r.snapshot, r.endErr
			r.mu.Unlock()
			return rec, err
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// deliver applies tool results to a parked run. Results match pending calls
// by id; unknown ids are ignored. Once every pending call has a result the
// run resumes.
func (r *run) deliver(results []automate.ToolResult) {
	rt := r.srv.engine.Runtime()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.phase != phaseParked {
		return
	}
	matched := 0
	for _, res := range results {
		for _, c := range r.pending {
			if c.ID == res.ID {
				if _, dup := r.received[res.ID]; !dup {
					r.received[res.ID] = res
					matched++
				}
			}
		}
	}
	if matched == 0 {
		return
	}
	if len(r.received) < len(r.pending) {
		// Partly answered: stay parked, the next answer lists what is
		// still pending, and the wait starts again.
		r.waitTimer.Reset(r.srv.toolWait)
		r.snapshot = r.parkedRecordLocked(rt)
		return
	}
	ordered := make([]automate.ToolResult, len(r.pending))
	for i, c := range r.pending {
		ordered[i] = r.received[c.ID]
	}
	r.waitTimer.Stop()
	r.pending, r.received, r.snapshot = nil, nil, nil
	r.phase = phaseRunning
	r.resultsCh <- ordered // never blocks: capacity 1, one send per round
	close(r.changed)
	r.changed = make(chan struct{})
}

// softStop asks the run to stop between steps; a parked run stops at once.
func (r *run) softStop() {
	r.mu.Lock()
	r.softCancel = true
	parked := r.phase == phaseParked
	r.mu.Unlock()
	if parked {
		r.cancel(causeSoft)
	}
}

// parkedRecordLocked is the record answered while the run waits for tool
// results: the still-unanswered calls and the resume token.
func (r *run) parkedRecordLocked(rt assistant.Runtime) *automate.RunRecord {
	rec := r.recordLocked(rt, automate.StatusAwaitingToolResults, "", "", nil, false)
	for _, c := range r.pending {
		if _, ok := r.received[c.ID]; !ok {
			rec.ToolCalls = append(rec.ToolCalls, c)
		}
	}
	rec.ResumeToken = r.token
	return rec
}

// recordLocked builds the run's record as of now. The final record (final
// true: nothing is appended to the run after it) shares the run's steps and
// events instead of copying them, so that a long run's end does not hold
// them twice.
func (r *run) recordLocked(rt assistant.Runtime, status automate.RunStatus, answer, code string, res *assistant.Result, final bool) *automate.RunRecord {
	s := r.srv
	now := s.now()
	rec := &automate.RunRecord{
		SchemaVersion: automate.SchemaVersion,
		RequestID:     r.id,
		TaskID:        r.spec.taskID,
		Status:        status,
		Answer:        answer,
		ErrorCode:     code,
		StartedAt:     automate.Timestamp{Time: r.started},
		CompletedAt:   automate.Timestamp{Time: now},
		DurationMs:    now.Sub(r.started).Milliseconds(),
		Model:         rt.ModelName,
		AppVersion:    s.appVersion,
		Backend:       rt.Backend,
	}
	if res != nil {
		if res.Model != "" {
			rec.Model = res.Model
		}
		if res.Backend != nil {
			rec.Backend = res.Backend
		}
		rec.Usage = res.Usage
	}
	if rec.Model == "" {
		rec.Model = "unknown"
	}
	if r.task.AnswerContract != nil {
		fa := extractFinalAnswer(answer)
		rec.FinalAnswer = &fa
	}
	inc := r.spec.include
	if inc.steps {
		rec.Steps = r.steps[:len(r.steps):len(r.steps)]
		if !final || rec.Steps == nil {
			rec.Steps = append(make([]automate.Step, 0, len(r.steps)), r.steps...)
		}
	}
	if inc.trace {
		rec.Trace = []json.RawMessage{}
		if res != nil && res.Trace != nil {
			rec.Trace = res.Trace
		}
	}
	if inc.events {
		rec.Events = r.events[:len(r.events):len(r.events)]
		if !final || rec.Events == nil {
			rec.Events = append(make([]automate.Event, 0, len(r.events)), r.events...)
		}
	}
	return rec
}

// emitLocked appends a channel event when the request wants events. An
// event that would take the recorded events past the byte limit is not
// kept and stops the run (the closing workflow-result event is always
// kept, so that the record says how the run ended).
func (r *run) emitLocked(channel string, payload any) {
	if !r.spec.include.events {
		return
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return
	}
	if r.eventBytes+len(b) > r.srv.maxEvBytes && channel != automate.ChannelResult {
		r.stopAtLimitLocked(fmt.Errorf("%w: the run's events exceeded %d bytes (the server's limit per run)", errRunLimit, r.srv.maxEvBytes))
		return
	}
	r.eventBytes += len(b)
	r.events = append(r.events, automate.Event{
		Seq: len(r.events) + 1, At: automate.Timestamp{Time: r.srv.now()}, Channel: channel, Payload: b,
	})
}

// finalMarker is matched case-insensitively (ASCII) and only the last
// occurrence counts.
const finalMarker = "final answer:"

// extractFinalAnswer returns the text after the LAST case-insensitive
// "FINAL ANSWER:", trimmed of surrounding white space; the whole answer,
// trimmed, when the marker never appears.
func extractFinalAnswer(answer string) string {
	for i := len(answer) - len(finalMarker); i >= 0; i-- {
		if asciiEqualFold(answer[i:i+len(finalMarker)], finalMarker) {
			return strings.TrimSpace(answer[i+len(finalMarker):])
		}
	}
	return strings.TrimSpace(answer)
}

func asciiEqualFold(a, b string) bool {
	for i := 0; i < len(a); i++ {
		ca, cb := a[i], b[i]
		if 'A' <= ca && ca <= 'Z' {
			ca += 'a' - 'A'
		}
		if ca != cb {
			return false
		}
	}
	return true
}

// runEnv is the engine's view of a run (assistant.Env).
type runEnv run

func (e *runEnv) SetStatus(status string) {
	r := (*run)(e)
	r.srv.mu.Lock()
	if r.srv.active == r {
		r.srv.workflowStatus = status
	}
	r.srv.mu.Unlock()
	r.mu.Lock()
	r.emitLocked(automate.ChannelStatus, map[string]string{"status": status})
	r.publishLocked(progress{status: status})
	// The initialization limit runs while the engine says it initializes.
	switch {
	case status == automate.WorkflowInitializing && r.initTimer == nil && r.phase != phaseEnded:
		r.initTimer = time.AfterFunc(r.srv.initTimeout, func() {
			r.cancel(causeInit)
			r.srv.engine.Terminate()
		})
	case status != automate.WorkflowInitializing && r.initTimer != nil:
		r.initTimer.Stop()
		r.initTimer = nil
	}
	r.mu.Unlock()
}

func (e *runEnv) Step(step automate.Step) {
	r := (*run)(e)
	if step.ID == "" {
		step.ID = "step-" + fmt.Sprint(step.Index)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.phase == phaseEnded {
		return // the final record shares r.steps; it does not change
	}
	replaced := false
	for i := len(r.steps) - 1; i >= 0; i-- {
		if r.steps[i].Index == step.Index {
			r.steps[i] = step
			replaced = true
			break
		}
	}
	if !replaced {
		if len(r.steps) >= r.srv.maxSteps {
			r.stopAtLimitLocked(fmt.Errorf("%w: the run has more than %d steps (the server's limit per run)", errRunLimit, r.srv.maxSteps))
			return
		}
		r.steps = append(r.steps, step)
	}
	// Only the step that changed: a client rebuilds the list by index, and
	// the recorded events grow with the run's work, not with its square.
	r.emitLocked(automate.ChannelSteps, step)
	if len(r.feeds) > 0 {
		st := step // a copy on the heap only when someone follows the run
		r.publishLocked(progress{step: &st})
	}
}

// stopAtLimitLocked stops the run once a per-run limit is reached: err
// (wrapping errRunLimit) becomes the cause, and finish turns it into a
// failed record. Later calls keep the first reason.
func (r *run) stopAtLimitLocked(err error) {
	if r.limitErr != nil {
		return
	}
	r.limitErr = err
	r.srv.log.Warn("run stopped at a limit", "request_id", r.id, "err", err)
	r.cancel(err)
}

func (e *runEnv) Checkpoint() error {
	r := (*run)(e)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.softCancel {
		return assistant.ErrCanceled
	}
	return nil
}

func (e *runEnv) CallClientTools(ctx context.Context, calls []assistant.ClientCall) ([]automate.ToolResult, error) {
	r := (*run)(e)
	if len(calls) == 0 {
		return nil, nil
	}
	rt := r.srv.engine.Runtime()
	r.mu.Lock()
	if r.ctx.Err() != nil || ctx.Err() != nil {
		// Stopped between the engine's last look and this call: never
		// answer a stopped run as parked.
		r.mu.Unlock()
		if r.ctx.Err() != nil {
			return nil, context.Cause(r.ctx)
		}
		return nil, context.Cause(ctx)
	}
	if r.phase != phaseRunning {
		r.mu.Unlock()
		return nil, errors.New("run is not running")
	}
	if r.softCancel {
		r.mu.Unlock()
		return nil, assistant.ErrCanceled
	}
	pending := make([]automate.ToolCall, len(calls))
	for i, c := range calls {
		if _, ok := r.task.ClientTool(c.Name); !ok {
			r.mu.Unlock()
			return nil, fmt.Errorf("client tool %q was not declared for this run", c.Name)
		}
		args := c.Arguments
		if len(args) == 0 || isNull(args) {
			args = json.RawMessage(`{}`)
		}
		r.callSeq++
		pending[i] = automate.ToolCall{ID: fmt.Sprintf("call_%d", r.callSeq), Name: c.Name, Arguments: args}
	}
	r.round++
	round := r.round
	results := make(chan []automate.ToolResult, 1)
	r.resultsCh = results
	r.pending = pending
	r.received = make(map[string]automate.ToolResult, len(pending))
	r.phase = phaseParked
	r.emitLocked(automate.ChannelToolCalls, pending)
	r.snapshot = r.parkedRecordLocked(rt)
	r.waitTimer = time.AfterFunc(r.srv.toolWait, func() {
		r.mu.Lock()
		expired := r.phase == phaseParked && r.round == round
		r.mu.Unlock()
		if expired {
			r.cancel(causeToolWait)
		}
	})
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	r.srv.log.Info("run parked for tool results", "request_id", r.id, "calls", len(pending))

	select {
	case res := <-results:
		return res, nil
	case <-ctx.Done():
		// Leave the parked state so that nobody sees a stopped run as
		// waiting; finish follows at once.
		r.mu.Lock()
		if r.phase == phaseParked && r.round == round {
			r.waitTimer.Stop()
			r.pending, r.received, r.snapshot = nil, nil, nil
			r.phase = phaseRunning
		}
		r.resultsCh = nil
		r.mu.Unlock()
		return nil, context.Cause(ctx)
	}
}
