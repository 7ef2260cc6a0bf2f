// Package journal owns the bridge's run journal: an SQLite database that
// records every DeviceCommand the bridge receives, before it is acted on,
// with the matched rule and the decision taken (started, queued, dropped,
// ignored, refused, failed, abandoned), then the run it started: the task id, the
// request id, a parked run's resume token, the final status, errorCode,
// answer, finalAnswer, timings and usage. The queue of the `queue` busy
// policy is the set of commands whose decision is queued, so it survives a
// restart; Recover lists what a crash left behind, and History serves
// `hubgate history`.
//
// # Storage
//
// The driver is modernc.org/sqlite (pure Go, no cgo). The database runs in
// WAL mode with busy_timeout (Options.BusyTimeout, 5 s by default) so that
// `hubgate history` (OpenReadOnly) can read while the daemon writes, and
// every write transaction begins IMMEDIATE so that a writer never has to
// upgrade a read lock (the classic SQLITE_BUSY deadlock).
//
// Durability: every method is one transaction and returns only after its
// COMMIT. In WAL mode with synchronous=NORMAL a commit is a write() into the
// -wal file without an fsync: it survives the process being killed
// (SIGKILL, a panic, the OOM killer), because the data is in the kernel's
// page cache (TestCrashSIGKILL checks exactly that), but the last
// transactions before a power loss or kernel crash may be lost; the
// database stays consistent either way. synchronous=FULL fsyncs the WAL at
// every commit and survives power loss too, at several times the cost per
// commit (BenchmarkBeforePost, BenchmarkCommandLifecycle; figures in
// docs/performance.md). Between a hub event and the run's POST, a command
// that starts at once costs one commit (RecordStarted); one recorded first
// and started later (RecordCommand, then RunStarted) two. The push-to-POST
// target (cmd/hubgate BenchmarkHubPushToRunRequest) is met with NORMAL by a
// small margin (the hub and the POST take the rest) and FULL's extra fsync
// would exceed it, so the default is SyncNormal; SyncFull is one option
// away for a machine where power loss is the worry.
//
// Checkpoints: SQLite's automatic checkpoint runs inside the COMMIT that
// crosses 1000 WAL pages and fsyncs there, which shows in the write path's
// p99; it is turned off (wal_autocheckpoint=0) and a background
// goroutine with its own connection runs a PASSIVE checkpoint every
// Options.CheckpointEvery when there were writes. PASSIVE never blocks the
// writer or readers. Close stops it; the last connection's close then
// checkpoints fully and removes the -wal file.
//
// Files: Open creates the parent directory with mode 0700 when it is missing
// (an existing directory is left as it is) and the database with mode 0600
// (an existing database readable by others is chmod 0600); SQLite gives its
// -wal and -shm files the database file's mode.
//
// # Schema
//
// Migrations are numbered; PRAGMA user_version holds the number applied.
// Open applies the missing ones in one transaction; a database newer than
// this package is refused (ErrSchemaTooNew) rather than guessed at.
// OpenReadOnly never migrates: it refuses a database whose version differs
// from this package's.
//
// # Boots and duplicate deliveries
//
// Every read-write Open records a boot (a row in the boots table); each
// command carries the boot it was received in, the hub connection it
// arrived on (Session: the hub package numbers connections for the whole
// process, so (boot, session) names one connection for the journal's whole
// life, across reconnects, hub-client swaps and restarts) and the hub's
// invocation id when the hub sent one.
//
// What can truly arrive twice is decided here: SignalR never redelivers an
// invocation on a new connection (stateful reconnect is not negotiated),
// and hubgate hands each invocation it reads to the bridge once; only a
// hub repeating one invocation (the same invocationId) on one connection
// delivers the same command twice. So the duplicate-delivery key is
// (boot, session, invocation_id) for a non-empty invocation_id: RecordCommand
// called again for it returns the first row's id and duplicate=true and
// writes nothing. A command without an invocation id (the hub's usual
// send) is never a duplicate: two presses of one button are two commands.
// Seq (the hub client's arrival number) is kept for reading only: it
// restarts with every hub client, and schema version 1 keyed duplicates on
// it, which lost the commands of a re-paired device (migration 2).
//
// # Lifecycle of a row
//
//	RecordCommand (decision received, or the decision given)
//	RecordStarted (RecordCommand + RunStarted in one commit: a command started at once)
//	  -> SetDecision: any decision, as long as no run is attached
//	  queued -> Dequeued -> started      queued|received -> Abandon -> abandoned
//	  started|received|queued -> RunStarted (run = running; written before the POST)
//	  running|parked -> RunParked (parked, with the resume token) -> RunResumed (running)
//	  running|parked -> RunFinished (finished; decision failed when only the request failed)
//	  running|parked -> MarkInterrupted (interrupted: reconciled after a restart)
//
// A method called on a row in the wrong state returns an error wrapping
// ErrConflict (the row is not changed); an unknown id, ErrNotFound.
//
// # Retention
//
// With Options.Keep set, settled rows (a finished or interrupted run, or
// a final decision without one: dropped, ignored, refused, failed,
// abandoned, answer) older
// than Keep are deleted right after Open and then hourly, in batches of
// 500. A pass whose oldest row is recent ends after reading that row;
// otherwise each batch scans from the oldest row, holding the connection
// (a command arriving meanwhile waits; docs/performance.md has a figure).
// Close stops a pass between batches. Queued,
// undecided and in-flight rows are never pruned, whatever their age. The
// file does not shrink; SQLite reuses the freed pages.
//
// The resume token is stored (a parked run cannot be resumed after a
// restart without it) but it is treated as sensitive: it is never logged,
// Entry.ResumeToken has no JSON encoding, and History leaves it empty (only
// Get and Recover return it).
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

// Sync is the SQLite synchronous setting; see the package comment.
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
	// CheckpointEvery is how often the background checkpointer copies the
	// WAL into the database when there were writes. Zero: 1 s.
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
