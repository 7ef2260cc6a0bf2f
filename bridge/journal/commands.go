package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hubgate/hubgate/automate"
)

// Command is a received DeviceCommand as RecordCommand writes it.
type Command struct {
	Seq     uint64 // hub arrival sequence number (hub.Event.Seq), for reading only; 0 when not from the hub
	Session uint64 // hub connection number (hub.Event.Session: unique in the process)
	// InvocationID is the hub's invocation id (hub.Event.InvocationID); ""
	// for the usual send. With it, the same (boot, Session, InvocationID)
	// is a duplicate delivery.
	InvocationID string
	ReceivedAt   time.Time // zero: Options.Now()
	Text         string    // the command string
	MacroID      string
	MacroName    string
	MacroJSON    []byte   // the macro as received (JSON); nil when none
	Rule         string   // the matched rule's name; "" when none matched (yet)
	Decision     Decision // zero: DecisionReceived
	Note         string   // why (free text for history)
}

// Outcome is how a run ended, for RunFinished. A failed request (the POST
// or a resume failed without a run record, schemaVersion != 1) has Err set
// and Status empty; the command's decision then becomes failed.
type Outcome struct {
	RequestID   string // "" keeps the one RunParked stored
	Status      automate.RunStatus
	ErrorCode   string
	Answer      string
	FinalAnswer *string
	StartedAt   time.Time
	CompletedAt time.Time
	DurationMs  int64
	Usage       *automate.Usage
	Err         string // a failed request, not a failed run
	// StoppedBy says who or what cancelled the run ("hubgate cancel",
	// "the status page", "shutdown", ...): added to the row's note as
	// "stopped by <who>" (StopNote).
	StoppedBy string
	// ForcedBy says who or what forced the stop (the worker was
	// terminated): "hubgate cancel --force", or the cancel grace running
	// out; "" for a soft stop. The note then says "forced" (StopNote).
	ForcedBy string
}

// StopNote is how a stopped run's note (and its finished line) says who
// stopped it and whether the stop was forced: "stopped by hubgate
// cancel", "stopped by hubgate cancel --force (forced)", "stopped by the
// status page; forced by hubgate cancel --force". "" when nobody did.
func StopNote(stoppedBy, forcedBy string) string {
	switch {
	case stoppedBy == "" && forcedBy == "":
		return ""
	case forcedBy == "":
		return "stopped by " + stoppedBy
	case stoppedBy == "" || stoppedBy == forcedBy:
		return "stopped by " + forcedBy + " (forced)"
	}
	return "stopped by " + stoppedBy + "; forced by " + forcedBy
}

// OutcomeOf builds the Outcome of a terminal RunRecord.
func OutcomeOf(rec *automate.RunRecord) Outcome {
	return Outcome{
		RequestID:   rec.RequestID,
		Status:      rec.Status,
		ErrorCode:   rec.ErrorCode,
		Answer:      rec.Answer,
		FinalAnswer: rec.FinalAnswer,
		StartedAt:   rec.StartedAt.Time,
		CompletedAt: rec.CompletedAt.Time,
		DurationMs:  rec.DurationMs,
		Usage:       rec.Usage,
	}
}

// RecordCommand writes a received command, before the bridge acts on it,
// and returns its id. When the same hub invocation (same boot, session and
// a non-empty invocation id) was already recorded it writes nothing and
// returns the existing id with duplicate = true.
func (j *Journal) RecordCommand(ctx context.Context, c Command) (id int64, duplicate bool, err error) {
	row, err := j.commandRow(c, RunStart{}, false)
	if err != nil {
		return 0, false, err
	}
	ins, err := j.stmt(ctx, insertCommand)
	if err != nil {
		return 0, false, fmt.Errorf("journal: recording a command: %w", err)
	}
	err = ins.QueryRowContext(ctx, row...).Scan(&id)
	if err == nil {
		j.wrote()
		return id, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, fmt.Errorf("journal: recording a command: %w", err)
	}
	id, err = j.duplicateOf(ctx, c)
	return id, err == nil, err
}

// RunStart is how RecordStarted starts the command's run.
type RunStart struct {
	TaskID string    // the run's taskId; "" means DefaultTaskID(id)
	At     time.Time // when the POST is about to be sent; zero means now
}

// DefaultTaskID is the taskId of a command's run when its rule sets none:
// it names the journal row, so the server's runs and `hubgate history`
// point at each other.
func DefaultTaskID(id int64) string { return defaultTaskIDPrefix + strconv.FormatInt(id, 10) }

// RecordStarted is RecordCommand followed by RunStarted, in one commit: for
// a command the bridge starts at once, the usual path from a hub event to
// its POST pays for one write instead of two. The row is written with
// decision started and run running (c.Decision is ignored) and returns the
// taskId it stored. A duplicate delivery writes nothing, as in
// RecordCommand, and returns duplicate = true (taskID is then "").
func (j *Journal) RecordStarted(ctx context.Context, c Command, s RunStart) (id int64, taskID string, duplicate bool, err error) {
	row, err := j.commandRow(c, s, true)
	if err != nil {
		return 0, "", false, err
	}
	ins, err := j.stmt(ctx, insertStarted)
	if err != nil {
		return 0, "", false, fmt.Errorf("journal: recording a started command: %w", err)
	}
	err = ins.QueryRowContext(ctx, append(row, defaultTaskIDPrefix)...).Scan(&id, &taskID)
	if err == nil {
		j.wrote()
		return id, taskID, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, "", false, fmt.Errorf("journal: recording a started command: %w", err)
	}
	id, err = j.duplicateOf(ctx, c)
	return id, "", err == nil, err
}

const defaultTaskIDPrefix = "hubgate-"

// insertStarted is insertCommand for RecordStarted, in one statement (an
// explicit transaction's BEGIN and COMMIT cost more than the statement):
// the new row's id is computed as AUTOINCREMENT would choose it (one more
// than sqlite_sequence's high-water mark, or than the largest id should
// that row ever have been lowered by hand), so that an empty task_id (?17)
// can become DefaultTaskID of it (?20 is the prefix).
const insertStarted = `
WITH next(id) AS (SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'commands'), 0),
                             COALESCE((SELECT MAX(id) FROM commands), 0)) + 1)
INSERT INTO commands(id, boot, touched_boot, session, seq, received_at, text, macro_id, macro_name, macro_json,
                     rule, decision, note, decided_at, queued_at, updated_at, run, task_id, run_started_at, invocation_id)
SELECT next.id, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
       CASE WHEN ?17 = '' THEN ?20 || next.id ELSE ?17 END, ?18, ?19
FROM next WHERE true
ON CONFLICT(boot, session, invocation_id) WHERE invocation_id != '' DO NOTHING
RETURNING id, task_id`

const insertCommand = `
INSERT INTO commands(boot, touched_boot, session, seq, received_at, text, macro_id, macro_name, macro_json,
                     rule, decision, note, decided_at, queued_at, updated_at, run, task_id, run_started_at, invocation_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(boot, session, invocation_id) WHERE invocation_id != '' DO NOTHING
RETURNING id`

// commandRow validates c and returns the arguments of insertCommand; with
// started, the row's run is started as s says.
func (j *Journal) commandRow(c Command, s RunStart, started bool) ([]any, error) {
	if j.readOnly {
		return nil, ErrReadOnly
	}
	if started {
		c.Decision = DecisionStarted
	}
	if c.Decision == "" {
		c.Decision = DecisionReceived
	}
	if !c.Decision.Valid() {
		return nil, fmt.Errorf("%w: decision %q", ErrInvalid, c.Decision)
	}
	seq, err := seqToDB("seq", c.Seq)
	if err != nil {
		return nil, err
	}
	session, err := seqToDB("session", c.Session)
	if err != nil {
		return nil, err
	}
	var macro any
	if len(c.MacroJSON) > 0 {
		if !json.Valid(c.MacroJSON) {
			return nil, fmt.Errorf("%w: macro is not valid JSON", ErrInvalid)
		}
		macro = string(c.MacroJSON)
	}
	now := j.now()
	if c.ReceivedAt.IsZero() {
		c.ReceivedAt = now
	}
	var decided, queued, runStarted int64
	if c.Decision != DecisionReceived {
		decided = toDB(now)
	}
	if c.Decision == DecisionQueued {
		queued = toDB(now)
	}
	var run RunState
	if started {
		run = RunRunning
		if s.At.IsZero() {
			s.At = now
		}
		runStarted = toDB(s.At)
	}
	return []any{j.boot, j.boot, session, seq, toDB(c.ReceivedAt), c.Text, c.MacroID, c.MacroName, macro,
		c.Rule, string(c.Decision), c.Note, decided, queued, toDB(now), string(run), s.TaskID, runStarted, c.InvocationID}, nil
}

// duplicateOf finds the row an earlier delivery of c's hub invocation wrote.
func (j *Journal) duplicateOf(ctx context.Context, c Command) (int64, error) {
	var id int64
	// c was validated: its session fits.
	err := j.db.QueryRowContext(ctx, `SELECT id FROM commands WHERE boot = ? AND session = ? AND invocation_id = ? AND invocation_id != ''`,
		j.boot, int64(c.Session), c.InvocationID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("journal: finding the row of a duplicate delivery: %w", err)
	}
	j.log.Debug("journal: duplicate delivery", "command", id, "session", c.Session, "seq", c.Seq, "invocation_id", c.InvocationID)
	return id, nil
}

// update applies set (with args) to command id when cond holds, stamping
// updated_at and touched_boot; otherwise it tells ErrNotFound from ErrConflict.
func (j *Journal) update(ctx context.Context, op string, id int64, cond, set string, args ...any) error {
	if j.readOnly {
		return ErrReadOnly
	}
	args = append(args, j.boot, toDB(j.now()), id)
	st, err := j.stmt(ctx, `UPDATE commands SET `+set+`, touched_boot = ?, updated_at = ? WHERE id = ? AND (`+cond+`)`)
	if err != nil {
		return fmt.Errorf("journal: %s: %w", op, err)
	}
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return fmt.Errorf("journal: %s: %w", op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("journal: %s: %w", op, err)
	}
	if n == 1 {
		j.wrote()
		return nil
	}
	var decision, run string
	err = j.db.QueryRowContext(ctx, `SELECT decision, run FROM commands WHERE id = ?`, id).Scan(&decision, &run)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %s: id %d", ErrNotFound, op, id)
	}
	if err != nil {
		return fmt.Errorf("journal: %s: %w", op, err)
	}
	if run == "" {
		run = "none"
	}
	return fmt.Errorf("%w: %s: command %d has decision %s, run %s", ErrConflict, op, id, decision, run)
}

// SetDecision records the bridge's decision about a command that has no
// run attached (any decision; queued also stamps queuedAt once).
func (j *Journal) SetDecision(ctx context.Context, id int64, d Decision, note string) error {
	if !d.Valid() {
		return fmt.Errorf("%w: decision %q", ErrInvalid, d)
	}
	now := toDB(j.now())
	return j.update(ctx, "set decision", id, `run = ''`,
		`decision = ?, note = ?, decided_at = ?,
		 queued_at = CASE WHEN ? = 'queued' AND queued_at = 0 THEN ? ELSE queued_at END`,
		string(d), note, now, string(d), now)
}

// Dequeued takes a queued command off the queue to start it: its decision
// becomes started (RunStarted follows).
func (j *Journal) Dequeued(ctx context.Context, id int64) error {
	now := toDB(j.now())
	return j.update(ctx, "dequeue", id, `decision = 'queued' AND run = ''`,
		`decision = 'started', dequeued_at = ?, decided_at = ?`, now, now)
}

// Abandon gives up a command that never got a run: queued, undecided, or
// dequeued but never posted. Its decision becomes abandoned.
func (j *Journal) Abandon(ctx context.Context, id int64, note string) error {
	now := toDB(j.now())
	return j.update(ctx, "abandon", id, `run = '' AND decision IN ('received', 'queued', 'started')`,
		`decision = 'abandoned', note = ?, decided_at = ?`, note, now)
}

// RunStarted records that the run's POST is about to be sent, with the
// taskId it carries; at zero means now. It is written BEFORE the POST, so
// that a crash after it leaves a row Recover reports as in flight. The
// decision becomes started (a queued command is dequeued by it).
func (j *Journal) RunStarted(ctx context.Context, id int64, taskID string, at time.Time) error {
	now := j.now()
	if at.IsZero() {
		at = now
	}
	return j.update(ctx, "run started", id, `run = '' AND decision IN ('received', 'queued', 'started')`,
		`run = 'running', task_id = ?, run_started_at = ?,
		 dequeued_at = CASE WHEN decision = 'queued' THEN ? ELSE dequeued_at END,
		 decided_at = CASE WHEN decision = 'started' THEN decided_at ELSE ? END,
		 decision = 'started'`,
		taskID, toDB(at), toDB(now), toDB(now))
}

// RunParked records that the run is awaiting tool results, with its
// request id and resume token (stored; never logged or shown in history).
func (j *Journal) RunParked(ctx context.Context, id int64, requestID, resumeToken string) error {
	return j.update(ctx, "run parked", id, `run IN ('running', 'parked')`,
		`run = 'parked', request_id = ?, resume_token = ?, parked_at = ?, status = ?`,
		requestID, resumeToken, toDB(j.now()), string(automate.StatusAwaitingToolResults))
}

// RunResumed records that tool results were posted for a parked run: it is
// running again and its resume token is spent (cleared).
func (j *Journal) RunResumed(ctx context.Context, id int64) error {
	return j.update(ctx, "run resumed", id, `run = 'parked'`, `run = 'running', resume_token = '', status = ''`)
}

// RunFinished records how a running or parked run ended.
func (j *Journal) RunFinished(ctx context.Context, id int64, o Outcome) error {
	if o.Status == "" && o.Err == "" {
		return fmt.Errorf("%w: an outcome needs a terminal status or a request error", ErrInvalid)
	}
	if o.Status != "" && !o.Status.Terminal() {
		return fmt.Errorf("%w: status %q is not terminal (use RunParked)", ErrInvalid, o.Status)
	}
	var usage, final any
	if o.Usage != nil {
		u, err := jsonOrNil(o.Usage)
		if err != nil {
			return fmt.Errorf("%w: usage: %v", ErrInvalid, err)
		}
		usage = u
	}
	if o.FinalAnswer != nil {
		final = *o.FinalAnswer
	}
	stopped := StopNote(o.StoppedBy, o.ForcedBy)
	decision := "" // unchanged
	if o.Status == "" {
		decision = string(DecisionFailed)
	}
	return j.update(ctx, "run finished", id, `run IN ('running', 'parked')`,
		`run = 'finished', resume_token = '',
		 request_id = CASE WHEN ? = '' THEN request_id ELSE ? END,
		 status = ?, error_code = ?, answer = ?, final_answer = ?,
		 started_at = ?, completed_at = ?, duration_ms = ?, usage = ?, error = ?, finished_at = ?,
		 decision = CASE WHEN ? = '' THEN decision ELSE ? END,
		 note = CASE WHEN ? = '' THEN note WHEN note = '' THEN ? ELSE note || '; ' || ? END`,
		o.RequestID, o.RequestID,
		string(o.Status), o.ErrorCode, o.Answer, final,
		toDB(o.StartedAt), toDB(o.CompletedAt), o.DurationMs, usage, o.Err, toDB(j.now()),
		decision, decision, stopped, stopped, stopped)
}

// MarkInterrupted records that a run in flight when the daemon stopped was
// reconciled as lost (the server does not know it any more, or its outcome
// cannot be had); note says why.
func (j *Journal) MarkInterrupted(ctx context.Context, id int64, note string) error {
	return j.update(ctx, "mark interrupted", id, `run IN ('running', 'parked')`,
		`run = 'interrupted', resume_token = '', note = ?, finished_at = ?`, note, toDB(j.now()))
}
