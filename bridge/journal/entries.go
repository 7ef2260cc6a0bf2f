package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hubgate/hubgate/automate"
)

// Entry is one journal row: a command, the decision about it and its run.
// Times are UTC; a zero time is omitted from JSON.
type Entry struct {
	ID      int64  `json:"id"`
	Boot    int64  `json:"boot"`
	Session uint64 `json:"session,omitempty"`
	Seq     uint64 `json:"seq,omitempty"`
	// InvocationID is the hub's invocation id, when it sent one.
	InvocationID string          `json:"invocationId,omitempty"`
	ReceivedAt   time.Time       `json:"receivedAt"`
	Command      string          `json:"command"`
	MacroID      string          `json:"macroId,omitempty"`
	MacroName    string          `json:"macroName,omitempty"`
	Macro        json.RawMessage `json:"macro,omitempty"`
	Rule         string          `json:"rule,omitempty"`
	Decision     Decision        `json:"decision"`
	Note         string          `json:"note,omitempty"`
	DecidedAt    time.Time       `json:"decidedAt,omitzero"`
	QueuedAt     time.Time       `json:"queuedAt,omitzero"`
	DequeuedAt   time.Time       `json:"dequeuedAt,omitzero"`

	Run          RunState  `json:"run,omitempty"`
	TaskID       string    `json:"taskId,omitempty"`
	RunStartedAt time.Time `json:"runStartedAt,omitzero"`
	ParkedAt     time.Time `json:"parkedAt,omitzero"`
	RequestID    string    `json:"requestId,omitempty"`
	// ResumeToken is set only by Get and Recover, for a parked run; it is
	// never encoded.
	ResumeToken string             `json:"-"`
	Status      automate.RunStatus `json:"status,omitempty"`
	ErrorCode   string             `json:"errorCode,omitempty"`
	Answer      string             `json:"answer,omitempty"`
	FinalAnswer *string            `json:"finalAnswer,omitempty"`
	StartedAt   time.Time          `json:"startedAt,omitzero"`   // the server's run start
	CompletedAt time.Time          `json:"completedAt,omitzero"` // the server's run end
	DurationMs  int64              `json:"durationMs,omitempty"`
	Usage       *automate.Usage    `json:"usage,omitempty"`
	Error       string             `json:"error,omitempty"` // a failed request
	FinishedAt  time.Time          `json:"finishedAt,omitzero"`
	UpdatedAt   time.Time          `json:"updatedAt"`
}

// Settled reports whether nothing will change the entry any more: its run
// ended (finished, or interrupted and reconciled), or it has no run and
// its decision is final (the rows Prune may delete, whatever their age).
func (e Entry) Settled() bool {
	switch e.Run {
	case RunFinished, RunInterrupted:
		return true
	case RunNone:
		switch e.Decision {
		case DecisionDropped, DecisionIgnored, DecisionRefused, DecisionFailed, DecisionAbandoned, DecisionAnswer:
			return true
		}
	}
	return false
}

const entryColumns = `id, boot, session, seq, received_at, text, macro_id, macro_name, macro_json,
	rule, decision, note, decided_at, queued_at, dequeued_at,
	run, task_id, run_started_at, parked_at, request_id, resume_token, status, error_code,
	answer, final_answer, started_at, completed_at, duration_ms, usage, error, finished_at, updated_at, invocation_id`

type scanner interface{ Scan(dest ...any) error }

func scanEntry(s scanner) (Entry, error) {
	var (
		e                                                       Entry
		session, seq                                            int64
		received, decided, queued, dequeued, runStarted, parked int64
		started, completed, finished, updated                   int64
		macro, final, usage                                     sql.NullString
		decision, run, status                                   string
	)
	err := s.Scan(&e.ID, &e.Boot, &session, &seq, &received, &e.Command, &e.MacroID, &e.MacroName, &macro,
		&e.Rule, &decision, &e.Note, &decided, &queued, &dequeued,
		&run, &e.TaskID, &runStarted, &parked, &e.RequestID, &e.ResumeToken, &status, &e.ErrorCode,
		&e.Answer, &final, &started, &completed, &e.DurationMs, &usage, &e.Error, &finished, &updated, &e.InvocationID)
	if err != nil {
		return Entry{}, err
	}
	e.Session, e.Seq = uint64(session), uint64(seq)
	e.Decision, e.Run, e.Status = Decision(decision), RunState(run), automate.RunStatus(status)
	e.ReceivedAt, e.DecidedAt, e.QueuedAt, e.DequeuedAt = fromDB(received), fromDB(decided), fromDB(queued), fromDB(dequeued)
	e.RunStartedAt, e.ParkedAt = fromDB(runStarted), fromDB(parked)
	e.StartedAt, e.CompletedAt, e.FinishedAt, e.UpdatedAt = fromDB(started), fromDB(completed), fromDB(finished), fromDB(updated)
	if macro.Valid {
		e.Macro = json.RawMessage(macro.String)
	}
	if final.Valid {
		s := final.String
		e.FinalAnswer = &s
	}
	if usage.Valid {
		u := new(automate.Usage)
		if err := json.Unmarshal([]byte(usage.String), u); err != nil {
			return Entry{}, fmt.Errorf("journal: command %d: usage: %w", e.ID, err)
		}
		e.Usage = u
	}
	return e, nil
}

func (j *Journal) query(ctx context.Context, op, q string, args ...any) ([]Entry, error) {
	rows, err := j.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("journal: %s: %w", op, err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("journal: %s: %w", op, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("journal: %s: %w", op, err)
	}
	return out, nil
}

// Get returns one entry, with its resume token.
func (j *Journal) Get(ctx context.Context, id int64) (Entry, error) {
	row := j.db.QueryRowContext(ctx, `SELECT `+entryColumns+` FROM commands WHERE id = ?`, id)
	e, err := scanEntry(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, fmt.Errorf("%w: id %d", ErrNotFound, id)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("journal: get %d: %w", id, err)
	}
	return e, nil
}

// HistoryQuery selects a page of History.
type HistoryQuery struct {
	// Limit is the page size. Zero: DefaultHistoryLimit; above
	// MaxHistoryLimit: MaxHistoryLimit.
	Limit int
	// BeforeID pages backwards: only entries with an id below it. Zero:
	// from the newest.
	BeforeID int64
}

// History page sizes.
const (
	DefaultHistoryLimit = 50
	MaxHistoryLimit     = 10000
)

// History returns entries newest first, every field but the resume token.
func (j *Journal) History(ctx context.Context, q HistoryQuery) ([]Entry, error) {
	if q.Limit < 0 || q.BeforeID < 0 {
		return nil, fmt.Errorf("%w: negative limit or beforeId", ErrInvalid)
	}
	if q.Limit == 0 {
		q.Limit = DefaultHistoryLimit
	}
	if q.Limit > MaxHistoryLimit {
		q.Limit = MaxHistoryLimit
	}
	var (
		out []Entry
		err error
	)
	if q.BeforeID > 0 {
		out, err = j.query(ctx, "history", `SELECT `+entryColumns+` FROM commands WHERE id < ? ORDER BY id DESC LIMIT ?`, q.BeforeID, q.Limit)
	} else {
		out, err = j.query(ctx, "history", `SELECT `+entryColumns+` FROM commands ORDER BY id DESC LIMIT ?`, q.Limit)
	}
	for i := range out {
		out[i].ResumeToken = ""
	}
	return out, err
}

// Recovery is what earlier boots left unfinished, for the bridge to settle
// at startup. Each list is oldest first.
type Recovery struct {
	// Undecided commands were recorded but never decided (the daemon
	// stopped between RecordCommand and SetDecision).
	Undecided []Entry
	// Queued commands never got a run: decision queued, or dequeued
	// (decision started) without RunStarted, so their POST was never sent.
	// Run them (RunStarted) or Abandon them.
	Queued []Entry
	// InFlight runs were started (RunStarted: the POST may or may not have
	// been sent) or parked, and never finished. Reconcile each with the
	// server, then RunFinished or MarkInterrupted. A parked entry carries
	// its resume token.
	InFlight []Entry
}

// Empty reports whether nothing needs settling.
func (r Recovery) Empty() bool {
	return len(r.Undecided) == 0 && len(r.Queued) == 0 && len(r.InFlight) == 0
}

// Recover lists the unfinished commands that no write of this boot has
// touched: what earlier boots left behind. It changes nothing; the bridge
// decides and calls Abandon, RunStarted, RunFinished or MarkInterrupted
// (each of which marks the row as this boot's). Call it once at startup,
// before new commands arrive; an old queued command the bridge keeps
// queued without writing to it is listed again by a later call.
func (j *Journal) Recover(ctx context.Context) (Recovery, error) {
	if j.readOnly {
		return Recovery{}, ErrReadOnly
	}
	open, err := j.query(ctx, "recover", `SELECT `+entryColumns+` FROM commands
WHERE touched_boot < ? AND (decision IN ('received', 'queued') OR (decision = 'started' AND run IN ('', 'running', 'parked')))
ORDER BY id`, j.boot)
	if err != nil {
		return Recovery{}, err
	}
	var r Recovery
	for _, e := range open {
		switch {
		case e.Run == RunRunning || e.Run == RunParked:
			r.InFlight = append(r.InFlight, e)
		case e.Decision == DecisionReceived:
			r.Undecided = append(r.Undecided, e)
		default:
			r.Queued = append(r.Queued, e)
		}
	}
	if !r.Empty() {
		j.log.Info("journal: unfinished commands from an earlier run",
			"undecided", len(r.Undecided), "queued", len(r.Queued), "inFlight", len(r.InFlight))
	}
	return r, nil
}
