// Package journal owns the bridge's run journal: an SQLite database
// (modernc.org/sqlite, WAL) that records every DeviceCommand the bridge
// receives, before it is acted on, with the matched rule and the decision
// taken (started, queued, dropped, ignored, refused, failed, abandoned), then
// the run it started (task and request ids, a parked run's resume token, the
// final status, errorCode, answer, finalAnswer, timings and usage). The queue
// of the `queue` busy policy is the set of commands whose decision is queued,
// so it survives a restart; Recover lists what a crash left behind, History
// serves `hubgate history`, and old rows are pruned. It decides nothing about
// runs: the bridge does.
//
// Storage and durability, the schema, boots and duplicate deliveries, the
// lifecycle of a row and retention: docs/journal.md.
package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// Errors a caller branches on.
var (
	// ErrNotFound: no command has this id.
	ErrNotFound = errors.New("journal: no such command")
	// ErrConflict: the command is not in a state that allows the change.
	ErrConflict = errors.New("journal: command state does not allow this change")
	// ErrReadOnly: a write on a journal opened with OpenReadOnly.
	ErrReadOnly = errors.New("journal: opened read-only")
	// ErrSchemaTooNew: the database was written by a newer hubgate.
	ErrSchemaTooNew = errors.New("journal: database schema is newer than this hubgate")
	// ErrSchemaMismatch: OpenReadOnly found a schema version it cannot read
	// without migrating (start the daemon once to migrate it).
	ErrSchemaMismatch = errors.New("journal: database schema version differs from this hubgate's")
	// ErrInvalid: an argument is invalid (unknown decision, macro JSON that
	// does not parse, seq out of range).
	ErrInvalid = errors.New("journal: invalid argument")
	// ErrClosed: the journal was closed.
	ErrClosed = errors.New("journal: closed")
)

// Decision is what the bridge decided to do with a command.
type Decision string

// Decisions.
const (
	DecisionReceived  Decision = "received"  // recorded, not yet decided
	DecisionStarted   Decision = "started"   // a run was (or is about to be) started for it
	DecisionQueued    Decision = "queued"    // waiting in the queue of the `queue` busy policy
	DecisionDropped   Decision = "dropped"   // not run: busy (policy `single`), queue full, too old
	DecisionIgnored   Decision = "ignored"   // not run: no rule matched, or not listening
	DecisionRefused   Decision = "refused"   // not run on purpose: the command is not for this device, or a setting forbids it now
	DecisionFailed    Decision = "failed"    // a run was attempted and the request failed (no run)
	DecisionAbandoned Decision = "abandoned" // queued or undecided, given up (restart, shutdown)
	// DecisionAnswer: not run; the command was the person's answer to the
	// question the run in flight asked (the bridge's ask_person tool) and
	// became that tool call's result. The note names the asking command.
	DecisionAnswer Decision = "answer"
)

// Valid reports whether d is one of the decisions above.
func (d Decision) Valid() bool {
	switch d {
	case DecisionReceived, DecisionStarted, DecisionQueued, DecisionDropped,
		DecisionIgnored, DecisionRefused, DecisionFailed, DecisionAbandoned, DecisionAnswer:
		return true
	}
	return false
}

// RunState is the state of the run attached to a command.
type RunState string

// Run states.
const (
	RunNone        RunState = ""            // no run attached
	RunRunning     RunState = "running"     // RunStarted: the POST was about to be sent
	RunParked      RunState = "parked"      // awaiting tool results (resume token stored)
	RunFinished    RunState = "finished"    // RunFinished: a terminal record, or a failed request
	RunInterrupted RunState = "interrupted" // MarkInterrupted: lost in a restart, reconciled
)

// Sync is the SQLite synchronous setting; see docs/journal.md (Storage).
type Sync string

// Sync settings.
const (
	SyncFull   Sync = "FULL"   // fsync the WAL at every commit: survives power loss
	SyncNormal Sync = "NORMAL" // no fsync at commit: survives process crashes only
)

// Options configures Open.
type Options struct {
	// Logger receives structured logs (never a resume token). Nil: discard.
	Logger *slog.Logger
	// Now is the clock for the times the journal stamps itself (decidedAt,
	// finishedAt, updatedAt, boots). Nil: time.Now.
	Now func() time.Time
	// Synchronous is the durability level. Zero: SyncNormal.
	Synchronous Sync
	// BusyTimeout is how long a statement waits for a lock held by another
	// connection. Zero: 5 s.
	BusyTimeout time.Duration
	// CheckpointEvery is how long after a commit the background
	// checkpointer copies the WAL into the database (commits meanwhile
	// share that checkpoint); with no commit it does not wake. Zero: 1 s.
	CheckpointEvery time.Duration
	// Keep is how long settled commands are kept: a background goroutine
	// prunes older ones (Prune) right after Open and then hourly. Queued,
	// undecided and in-flight commands are never pruned. Zero: keep
	// everything.
	Keep time.Duration
}

// Journal is an open journal. Its methods are safe for concurrent use.
type Journal struct {
	db        *sql.DB
	stmtMu    sync.Mutex
	stmts     map[string]*sql.Stmt // prepared once: parsing is a third of a write's cost
	ck        *checkpointer        // nil when read-only
	pruneStop chan struct{}        // nil unless Options.Keep
	pruneDone chan struct{}
	closeOnce sync.Once
	path      string
	readOnly  bool
	boot      int64
	now       func() time.Time
	log       *slog.Logger
}

// CurrentSchema is the schema version this package writes (the number of
// migrations).
const CurrentSchema = 2

const defaultBusyTimeout = 5 * time.Second

// Open opens (creating it when missing) the journal at path for reading and
// writing, applies pending migrations and records a new boot.
func Open(path string, opts Options) (*Journal, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: empty journal path", ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Synchronous == "" {
		opts.Synchronous = SyncNormal
	}
	if opts.Synchronous != SyncFull && opts.Synchronous != SyncNormal {
		return nil, fmt.Errorf("%w: synchronous %q", ErrInvalid, opts.Synchronous)
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = defaultBusyTimeout
	}
	if opts.CheckpointEvery <= 0 {
		opts.CheckpointEvery = defaultCheckpointEvery
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("journal: creating the directory: %w", err)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().Perm()&0o077 != 0 {
		// An existing journal readable by others: make it private (its -wal
		// and -shm files take the database file's mode).
		if err = f.Chmod(0o600); err == nil {
			opts.Logger.Info("journal: made the journal file private", "path", abs, "was", fi.Mode().Perm().String())
		}
	}
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}

	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+string(opts.Synchronous)+")")
	q.Add("_pragma", "wal_autocheckpoint(0)") // the checkpointer does it, off the write path
	q.Set("_txlock", "immediate")
	dsn := fileURI(abs) + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	// One connection: SQLite has a single writer anyway, and a single
	// connection serializes this process's writers without SQLITE_BUSY.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)

	j := &Journal{db: db, path: abs, now: opts.Now, log: opts.Logger}
	ctx := context.Background()
	if err := j.checkMode(ctx); err != nil {
		db.Close()
		return nil, err
	}
	from, err := migrate(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	if from != CurrentSchema {
		j.log.Info("journal schema migrated", "path", abs, "from", from, "to", CurrentSchema)
	}
	now := j.now()
	res, err := db.ExecContext(ctx, `INSERT INTO boots(started_at, pid) VALUES (?, ?)`, toDB(now), os.Getpid())
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("journal: recording the boot: %w", err)
	}
	if j.boot, err = res.LastInsertId(); err != nil {
		db.Close()
		return nil, fmt.Errorf("journal: recording the boot: %w", err)
	}
	if err := j.startCheckpointer(dsn, opts.CheckpointEvery); err != nil {
		db.Close()
		return nil, err
	}
	if opts.Keep > 0 {
		j.pruneStop, j.pruneDone = make(chan struct{}), make(chan struct{})
		go j.pruneLoop(opts.Keep, j.pruneStop, j.pruneDone)
	}
	j.log.Debug("journal opened", "path", abs, "boot", j.boot, "synchronous", string(opts.Synchronous))
	return j, nil
}

// OpenReadOnly opens an existing journal for reading, while the daemon runs
// or when it is stopped. A missing file is an error wrapping fs.ErrNotExist.
// Write methods return ErrReadOnly; Boot returns 0.
func OpenReadOnly(path string) (*Journal, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(defaultBusyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "query_only(1)")
	db, err := sql.Open("sqlite", fileURI(abs)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	db.SetMaxOpenConns(2)
	j := &Journal{db: db, path: abs, readOnly: true, now: time.Now,
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("journal: reading the schema version: %w", err)
	}
	if v != CurrentSchema {
		db.Close()
		if v > CurrentSchema {
			return nil, fmt.Errorf("%w: %s has version %d, this hubgate knows %d", ErrSchemaTooNew, abs, v, CurrentSchema)
		}
		return nil, fmt.Errorf("%w: %s has version %d, this hubgate reads %d", ErrSchemaMismatch, abs, v, CurrentSchema)
	}
	return j, nil
}

// fileURI is the SQLite URI of an absolute path (so that '?' and '#' in a
// directory name cannot be read as URI syntax).
func fileURI(abs string) string {
	u := url.URL{Path: filepath.ToSlash(abs)}
	return "file:" + u.EscapedPath()
}

// checkMode verifies that WAL mode took effect (it cannot on some file
// systems, and the concurrent-reader guarantee depends on it).
func (j *Journal) checkMode(ctx context.Context) error {
	var mode string
	if err := j.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		return fmt.Errorf("journal: opening %s: %w", j.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("journal: %s: WAL mode not available (journal_mode=%s)", j.path, mode)
	}
	return nil
}

// stmt returns the prepared statement for q, preparing it once.
func (j *Journal) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	j.stmtMu.Lock()
	defer j.stmtMu.Unlock()
	if st, ok := j.stmts[q]; ok {
		return st, nil
	}
	st, err := j.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if j.stmts == nil {
		j.stmts = map[string]*sql.Stmt{}
	}
	j.stmts[q] = st
	return st, nil
}

// Close closes the journal. A clean close checkpoints the WAL.
func (j *Journal) Close() error {
	if j.pruneStop != nil {
		j.closeOnce.Do(func() { close(j.pruneStop) })
		<-j.pruneDone
	}
	j.stopCheckpointer()
	j.stmtMu.Lock()
	for _, st := range j.stmts {
		st.Close()
	}
	j.stmts = nil
	j.stmtMu.Unlock()
	if err := j.db.Close(); err != nil {
		return fmt.Errorf("journal: closing: %w", err)
	}
	return nil
}

// Path is the absolute path of the database file.
func (j *Journal) Path() string { return j.path }

// Boot is the id of the boot this Open recorded (0 when read-only).
func (j *Journal) Boot() int64 { return j.boot }

// IntegrityCheck runs PRAGMA integrity_check and returns nil when the
// database is intact.
func (j *Journal) IntegrityCheck(ctx context.Context) error {
	rows, err := j.db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("journal: integrity check: %w", err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fmt.Errorf("journal: integrity check: %w", err)
		}
		msgs = append(msgs, s)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("journal: integrity check: %w", err)
	}
	if len(msgs) == 1 && msgs[0] == "ok" {
		return nil
	}
	return fmt.Errorf("journal: integrity check failed: %v", msgs)
}

// toDB stores a time as Unix nanoseconds; 0 is the zero time.
func toDB(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromDB(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func seqToDB(name string, v uint64) (int64, error) {
	if v > math.MaxInt64 {
		return 0, fmt.Errorf("%w: %s %d out of range", ErrInvalid, name, v)
	}
	return int64(v), nil
}

func jsonOrNil(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}
