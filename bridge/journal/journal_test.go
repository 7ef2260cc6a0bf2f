package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/testutil"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2026, 11, 21, 19, 49, 38, 123456789, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

func openTest(t testing.TB, path string, clk *clock) *Journal {
	t.Helper()
	opts := Options{}
	if clk != nil {
		opts.Now = clk.Now
	}
	j, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func mustGet(t testing.TB, j *Journal, id int64) Entry {
	t.Helper()
	e, err := j.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get(%d): %v", id, err)
	}
	return e
}

func mustRecord(t testing.TB, j *Journal, c Command) int64 {
	t.Helper()
	id, dup, err := j.RecordCommand(context.Background(), c)
	if err != nil {
		t.Fatalf("RecordCommand: %v", err)
	}
	if dup {
		t.Fatalf("RecordCommand(%+v): unexpected duplicate (id %d)", c, id)
	}
	return id
}

func pragma(t testing.TB, j *Journal, name string) string {
	t.Helper()
	var v string
	if err := j.db.QueryRow(`PRAGMA ` + name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestSchemaVersionMatchesMigrations(t *testing.T) {
	if CurrentSchema != len(migrations) {
		t.Fatalf("CurrentSchema = %d, but there are %d migrations", CurrentSchema, len(migrations))
	}
}

func TestOpenCreatesPrivateFilesAndSettings(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "state", "hubgate", "journal.db")
	j := openTest(t, path, nil)
	mustRecord(t, j, Command{Text: "x"}) // makes SQLite create the -wal file

	for _, dir := range []string{filepath.Join(base, "state"), filepath.Join(base, "state", "hubgate")} {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o700 {
			t.Errorf("%s: mode %o, want 0700", dir, got)
		}
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s: mode %o, want 0600", f, got)
		}
	}
	if got := pragma(t, j, "journal_mode"); got != "wal" {
		t.Errorf("journal_mode = %q, want wal", got)
	}
	if got := pragma(t, j, "synchronous"); got != "1" { // NORMAL
		t.Errorf("synchronous = %s, want 1 (NORMAL, the default)", got)
	}
	if got := pragma(t, j, "busy_timeout"); got != "5000" {
		t.Errorf("busy_timeout = %s, want 5000", got)
	}
	if got := pragma(t, j, "user_version"); got != strconv.Itoa(CurrentSchema) {
		t.Errorf("user_version = %s, want %d", got, CurrentSchema)
	}
	if j.Path() != path || j.Boot() != 1 {
		t.Errorf("Path %q Boot %d, want %q and 1", j.Path(), j.Boot(), path)
	}

	full, err := Open(filepath.Join(base, "n.db"), Options{Synchronous: SyncFull, BusyTimeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	if got := pragma(t, full, "synchronous"); got != "2" {
		t.Errorf("synchronous = %s, want 2 (FULL)", got)
	}
	if got := pragma(t, full, "busy_timeout"); got != "1500" {
		t.Errorf("busy_timeout = %s, want 1500", got)
	}
	loose := filepath.Join(base, "loose.db")
	if err := os.WriteFile(loose, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(loose, 0o644)
	lj, err := Open(loose, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lj.Close()
	if fi, err := os.Stat(loose); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("an existing 0644 journal was not made private: %v %v", fi.Mode(), err)
	}
	if _, err := Open(filepath.Join(base, "x.db"), Options{Synchronous: "OFF"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Open with synchronous OFF: %v, want ErrInvalid", err)
	}
}

func TestOpenPathWithURISyntax(t *testing.T) {
	path := filepath.Join(t.TempDir(), "we?ird #dir", "j.db")
	j := openTest(t, path, nil)
	mustRecord(t, j, Command{Text: "x"})
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is not at the literal path: %v", err)
	}
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h, err := r.History(context.Background(), HistoryQuery{})
	if err != nil || len(h) != 1 {
		t.Fatalf("History = %d entries, %v", len(h), err)
	}
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	j := openTest(t, filepath.Join(t.TempDir(), "j.db"), clk)

	received := clk.Now().Add(-time.Second)
	macro := []byte(`{"id":"m1","name":"Summarize","commands":["sum"],"events":[{"type":"Type","text":"hello"}]}`)
	id := mustRecord(t, j, Command{Seq: 7, Session: 2, ReceivedAt: received, Text: "sum",
		MacroID: "m1", MacroName: "Summarize", MacroJSON: macro, Rule: "summarize"})
	e := mustGet(t, j, id)
	if e.Decision != DecisionReceived || !e.DecidedAt.IsZero() || e.Run != RunNone {
		t.Fatalf("after RecordCommand: %+v", e)
	}
	if !e.ReceivedAt.Equal(received) || e.Seq != 7 || e.Session != 2 || e.Boot != j.Boot() ||
		e.Command != "sum" || e.MacroID != "m1" || e.MacroName != "Summarize" || string(e.Macro) != string(macro) || e.Rule != "summarize" {
		t.Fatalf("recorded fields: %+v", e)
	}

	t1 := clk.Advance(time.Second)
	if err := j.SetDecision(ctx, id, DecisionQueued, "busy: queued behind 3"); err != nil {
		t.Fatal(err)
	}
	e = mustGet(t, j, id)
	if e.Decision != DecisionQueued || !e.QueuedAt.Equal(t1) || !e.DecidedAt.Equal(t1) || e.Note != "busy: queued behind 3" {
		t.Fatalf("after SetDecision(queued): %+v", e)
	}

	t2 := clk.Advance(time.Second)
	if err := j.Dequeued(ctx, id); err != nil {
		t.Fatal(err)
	}
	e = mustGet(t, j, id)
	if e.Decision != DecisionStarted || !e.DequeuedAt.Equal(t2) || !e.QueuedAt.Equal(t1) {
		t.Fatalf("after Dequeued: %+v", e)
	}

	t3 := clk.Advance(time.Second)
	postAt := t3.Add(-time.Millisecond)
	if err := j.RunStarted(ctx, id, "task-1", postAt); err != nil {
		t.Fatal(err)
	}
	e = mustGet(t, j, id)
	if e.Run != RunRunning || e.TaskID != "task-1" || !e.RunStartedAt.Equal(postAt) || !e.DecidedAt.Equal(t2) || !e.UpdatedAt.Equal(t3) {
		t.Fatalf("after RunStarted: %+v", e)
	}

	t4 := clk.Advance(time.Second)
	if err := j.RunParked(ctx, id, "req-1", "resume-secret-1"); err != nil {
		t.Fatal(err)
	}
	e = mustGet(t, j, id)
	if e.Run != RunParked || e.RequestID != "req-1" || e.ResumeToken != "resume-secret-1" ||
		e.Status != automate.StatusAwaitingToolResults || !e.ParkedAt.Equal(t4) {
		t.Fatalf("after RunParked: %+v", e)
	}
	if err := j.RunResumed(ctx, id); err != nil {
		t.Fatal(err)
	}
	e = mustGet(t, j, id)
	if e.Run != RunRunning || e.ResumeToken != "" || e.Status != "" {
		t.Fatalf("after RunResumed: %+v", e)
	}
	if err := j.RunParked(ctx, id, "req-1", "resume-secret-2"); err != nil {
		t.Fatal(err)
	}

	t5 := clk.Advance(time.Second)
	final := "The summary."
	srvStart, srvEnd := t3.Add(2*time.Millisecond), t5.Add(-time.Millisecond)
	usage := &automate.Usage{InputTokens: 120, OutputTokens: 45, GenerationMs: 900, TTFTMs: 80, TPS: 50.5}
	if err := j.RunFinished(ctx, id, Outcome{Status: automate.StatusCompleted, Answer: "Done: the summary.",
		FinalAnswer: &final, StartedAt: srvStart, CompletedAt: srvEnd, DurationMs: 1997, Usage: usage}); err != nil {
		t.Fatal(err)
	}
	e = mustGet(t, j, id)
	if e.Run != RunFinished || e.Decision != DecisionStarted || e.RequestID != "req-1" || e.ResumeToken != "" ||
		e.Status != automate.StatusCompleted || e.Answer != "Done: the summary." || e.FinalAnswer == nil || *e.FinalAnswer != final ||
		!e.StartedAt.Equal(srvStart) || !e.CompletedAt.Equal(srvEnd) || e.DurationMs != 1997 ||
		!reflect.DeepEqual(e.Usage, usage) || e.Error != "" || !e.FinishedAt.Equal(t5) || e.ErrorCode != "" {
		t.Fatalf("after RunFinished: %+v", e)
	}
}

func TestRunStartedDirectlyAndOutcomeOf(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	j := openTest(t, filepath.Join(t.TempDir(), "j.db"), clk)

	// received -> RunStarted (no SetDecision in between), zero time = now.
	id := mustRecord(t, j, Command{Text: "go"})
	now := clk.Advance(time.Minute)
	if err := j.RunStarted(ctx, id, "", time.Time{}); err != nil {
		t.Fatal(err)
	}
	e := mustGet(t, j, id)
	if e.Decision != DecisionStarted || !e.DecidedAt.Equal(now) || !e.RunStartedAt.Equal(now) || !e.DequeuedAt.IsZero() {
		t.Fatalf("after RunStarted from received: %+v", e)
	}
	rec := &automate.RunRecord{SchemaVersion: 1, RequestID: "req-9", Status: automate.StatusFailed,
		ErrorCode: automate.ErrorExecutionTimeout, Answer: "timed out",
		StartedAt: automate.Timestamp{Time: now}, CompletedAt: automate.Timestamp{Time: now.Add(time.Second)}, DurationMs: 1000}
	if err := j.RunFinished(ctx, id, OutcomeOf(rec)); err != nil {
		t.Fatal(err)
	}
	e = mustGet(t, j, id)
	if e.Status != automate.StatusFailed || e.ErrorCode != automate.ErrorExecutionTimeout || e.RequestID != "req-9" ||
		e.FinalAnswer != nil || e.Usage != nil || e.Decision != DecisionStarted {
		t.Fatalf("after RunFinished(failed run): %+v", e)
	}

	// queued -> RunStarted dequeues.
	id2 := mustRecord(t, j, Command{Text: "later", Decision: DecisionQueued})
	e = mustGet(t, j, id2)
	if e.QueuedAt.IsZero() || e.DecidedAt.IsZero() {
		t.Fatalf("recorded as queued: %+v", e)
	}
	if err := j.RunStarted(ctx, id2, "t2", time.Time{}); err != nil {
		t.Fatal(err)
	}
	e = mustGet(t, j, id2)
	if e.Decision != DecisionStarted || e.DequeuedAt.IsZero() {
		t.Fatalf("RunStarted on a queued command: %+v", e)
	}
}

func TestFailedRequest(t *testing.T) {
	ctx := context.Background()
	j := openTest(t, filepath.Join(t.TempDir(), "j.db"), newClock())
	id := mustRecord(t, j, Command{Text: "go"})
	if err := j.RunStarted(ctx, id, "t", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := j.RunFinished(ctx, id, Outcome{Err: "POST /v1/runs: connection refused"}); err != nil {
		t.Fatal(err)
	}
	e := mustGet(t, j, id)
	if e.Decision != DecisionFailed || e.Run != RunFinished || e.Error != "POST /v1/runs: connection refused" || e.Status != "" {
		t.Fatalf("failed request: %+v", e)
	}
}

func TestInvalidArguments(t *testing.T) {
	ctx := context.Background()
	j := openTest(t, filepath.Join(t.TempDir(), "j.db"), nil)
	id := mustRecord(t, j, Command{Text: "x"})
	if err := j.RunStarted(ctx, id, "t", time.Time{}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		err  error
	}{
		{"unknown decision", func() error { _, _, err := j.RecordCommand(ctx, Command{Decision: "maybe"}); return err }()},
		{"bad macro JSON", func() error { _, _, err := j.RecordCommand(ctx, Command{MacroJSON: []byte(`{"id":`)}); return err }()},
		{"seq out of range", func() error { _, _, err := j.RecordCommand(ctx, Command{Seq: 1 << 63}); return err }()},
		{"SetDecision unknown", j.SetDecision(ctx, id, "later", "")},
		{"RunFinished empty outcome", j.RunFinished(ctx, id, Outcome{})},
		{"RunFinished parked status", j.RunFinished(ctx, id, Outcome{Status: automate.StatusAwaitingToolResults})},
		{"History negative limit", func() error { _, err := j.History(ctx, HistoryQuery{Limit: -1}); return err }()},
	}
	for _, c := range cases {
		if !errors.Is(c.err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", c.name, c.err)
		}
	}
	if e := mustGet(t, j, id); e.Run != RunRunning {
		t.Errorf("a rejected RunFinished changed the row: %+v", e)
	}
	var n int
	if err := j.db.QueryRow(`SELECT count(*) FROM commands`).Scan(&n); err != nil || n != 1 {
		t.Errorf("rows = %d (%v), want 1: rejected commands must not be written", n, err)
	}
}

func TestTransitionsRefused(t *testing.T) {
	ctx := context.Background()
	j := openTest(t, filepath.Join(t.TempDir(), "j.db"), nil)

	mk := func(steps ...func(id int64) error) int64 {
		id := mustRecord(t, j, Command{Text: "x"})
		for _, s := range steps {
			if err := s(id); err != nil {
				t.Fatalf("setting up: %v", err)
			}
		}
		return id
	}
	start := func(id int64) error { return j.RunStarted(ctx, id, "t", time.Time{}) }
	park := func(id int64) error { return j.RunParked(ctx, id, "r", "tok") }
	finish := func(id int64) error { return j.RunFinished(ctx, id, Outcome{Status: automate.StatusCompleted}) }
	drop := func(id int64) error { return j.SetDecision(ctx, id, DecisionDropped, "busy") }
	abandon := func(id int64) error { return j.Abandon(ctx, id, "gone") }
	interrupt := func(id int64) error { return j.MarkInterrupted(ctx, id, "lost") }

	received := mk()
	running := mk(start)
	parked := mk(start, park)
	finished := mk(start, finish)
	dropped := mk(drop)
	abandoned := mk(abandon)
	interrupted := mk(start, interrupt)

	refused := []struct {
		name string
		id   int64
		op   func(id int64) error
	}{
		{"Dequeued on received", received, func(id int64) error { return j.Dequeued(ctx, id) }},
		{"Dequeued on running", running, func(id int64) error { return j.Dequeued(ctx, id) }},
		{"RunParked on received", received, park},
		{"RunResumed on running", running, func(id int64) error { return j.RunResumed(ctx, id) }},
		{"RunFinished on received", received, finish},
		{"RunFinished twice", finished, finish},
		{"RunFinished on interrupted", interrupted, finish},
		{"RunStarted twice", running, start},
		{"RunStarted on dropped", dropped, start},
		{"RunStarted on abandoned", abandoned, start},
		{"RunStarted on finished", finished, start},
		{"SetDecision with a run", running, drop},
		{"SetDecision on parked", parked, drop},
		{"Abandon a running run", running, abandon},
		{"Abandon dropped", dropped, abandon},
		{"MarkInterrupted finished", finished, interrupt},
		{"MarkInterrupted received", received, interrupt},
	}
	for _, c := range refused {
		before := mustGet(t, j, c.id)
		err := c.op(c.id)
		if !errors.Is(err, ErrConflict) {
			t.Errorf("%s: err = %v, want ErrConflict", c.name, err)
			continue
		}
		if after := mustGet(t, j, c.id); !reflect.DeepEqual(before, after) {
			t.Errorf("%s: refused change modified the row:\n%+v\n%+v", c.name, before, after)
		}
	}
	for name, err := range map[string]error{
		"SetDecision":     j.SetDecision(ctx, 999, DecisionDropped, ""),
		"Dequeued":        j.Dequeued(ctx, 999),
		"Abandon":         j.Abandon(ctx, 999, ""),
		"RunStarted":      j.RunStarted(ctx, 999, "", time.Time{}),
		"RunParked":       j.RunParked(ctx, 999, "", ""),
		"RunResumed":      j.RunResumed(ctx, 999),
		"RunFinished":     j.RunFinished(ctx, 999, Outcome{Err: "x"}),
		"MarkInterrupted": j.MarkInterrupted(ctx, 999, ""),
		"Get":             func() error { _, err := j.Get(ctx, 999); return err }(),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s(999): err = %v, want ErrNotFound", name, err)
		}
	}

	// The allowed ones, for contrast.
	if err := j.Abandon(ctx, received, "shutdown"); err != nil {
		t.Errorf("Abandon(received): %v", err)
	}
	if e := mustGet(t, j, received); e.Decision != DecisionAbandoned || e.Note != "shutdown" {
		t.Errorf("after Abandon: %+v", e)
	}
	if err := j.MarkInterrupted(ctx, parked, "server restarted"); err != nil {
		t.Errorf("MarkInterrupted(parked): %v", err)
	}
	if e := mustGet(t, j, parked); e.Run != RunInterrupted || e.ResumeToken != "" || e.Note != "server restarted" || e.FinishedAt.IsZero() {
		t.Errorf("after MarkInterrupted: %+v", e)
	}
	if err := j.SetDecision(ctx, dropped, DecisionIgnored, "not listening"); err != nil {
		t.Errorf("SetDecision on a decided command without a run: %v", err)
	}
}

// A duplicate delivery is one hub invocation (its invocation id) twice on
// one connection; nothing else is.
func TestDuplicateDelivery(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	j, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := mustRecord(t, j, Command{Seq: 5, Session: 1, InvocationID: "7", Text: "a", Rule: "r1"})
	id, dup, err := j.RecordCommand(ctx, Command{Seq: 6, Session: 1, InvocationID: "7", Text: "a (again)", Rule: "r2"})
	if err != nil || !dup || id != first {
		t.Fatalf("second delivery: id %d dup %v err %v, want %d true nil", id, dup, err, first)
	}
	if e := mustGet(t, j, first); e.Command != "a" || e.Rule != "r1" || e.InvocationID != "7" {
		t.Errorf("the duplicate overwrote the row: %+v", e)
	}
	// RecordStarted keys the same way.
	id, taskID, dup, err := j.RecordStarted(ctx, Command{Seq: 7, Session: 1, InvocationID: "7", Text: "a (third)"}, RunStart{})
	if err != nil || !dup || id != first || taskID != "" {
		t.Fatalf("third delivery (started): id %d task %q dup %v err %v", id, taskID, dup, err)
	}
	// The same invocation id on another connection, the same seq and
	// session without an invocation id (what a new hub client numbers
	// from 1 again), and local commands are all distinct commands.
	distinct := []int64{first,
		mustRecord(t, j, Command{Seq: 5, Session: 2, InvocationID: "7", Text: "b"}),
		mustRecord(t, j, Command{Seq: 5, Session: 1, Text: "c"}),
		mustRecord(t, j, Command{Seq: 5, Session: 1, Text: "c"}),
		mustRecord(t, j, Command{Text: "local 1"}),
		mustRecord(t, j, Command{Text: "local 1"}),
	}
	seen := map[int64]bool{}
	for _, id := range distinct {
		if seen[id] {
			t.Fatalf("distinct commands share an id: %v", distinct)
		}
		seen[id] = true
	}
	j.Close()

	// After a restart, the same session number and invocation id in a new
	// boot is a new command.
	j2 := openTest(t, path, nil)
	again, dup, err := j2.RecordCommand(ctx, Command{Seq: 5, Session: 1, InvocationID: "7", Text: "new boot"})
	if err != nil || dup || again == first {
		t.Fatalf("after restart: id %d dup %v err %v", again, dup, err)
	}
	h, err := j2.History(ctx, HistoryQuery{})
	if err != nil || len(h) != len(distinct)+1 {
		t.Fatalf("History: %d entries, %v; want %d", len(h), err, len(distinct)+1)
	}
}

func TestDuplicateDeliveryConcurrent(t *testing.T) {
	ctx := context.Background()
	j := openTest(t, filepath.Join(t.TempDir(), "j.db"), nil)
	const n = 16
	ids := make([]int64, n)
	dups := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, dup, err := j.RecordCommand(ctx, Command{Seq: uint64(i + 1), Session: 3, InvocationID: "inv-42", Text: "same"})
			if err != nil {
				t.Error(err)
			}
			ids[i], dups[i] = id, dup
		}()
	}
	wg.Wait()
	fresh := 0
	for i := range n {
		if ids[i] != ids[0] {
			t.Fatalf("ids differ: %v", ids)
		}
		if !dups[i] {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d callers saw a fresh insert, want exactly 1 (%v)", fresh, dups)
	}
}

// A journal of schema version 1 migrates: its rows stay readable as they
// were, and the (boot, session, seq) pairs its commands used no longer
// make a new command a duplicate.
func TestMigrationFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	db, err := sql.Open("sqlite", fileURI(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{migrations[0], `PRAGMA user_version = 1`,
		`INSERT INTO boots(started_at, pid) VALUES (1, 1)`,
		`INSERT INTO commands(boot, touched_boot, session, seq, received_at, text, rule, decision, note, run, task_id, status, answer, updated_at)
		 VALUES (1, 1, 1, 1, 1000, 'old one', 'r', 'started', '', 'finished', 'hubgate-1', 'completed', 'done', 2000)`,
		`INSERT INTO commands(boot, touched_boot, session, seq, received_at, text, decision, note, updated_at)
		 VALUES (1, 1, 1, 2, 1500, 'old two', 'ignored', 'no rule matches', 2000)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	if _, err := OpenReadOnly(path); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("OpenReadOnly of a version 1 journal: %v", err)
	}

	j := openTest(t, path, nil)
	if got := pragma(t, j, "user_version"); got != strconv.Itoa(CurrentSchema) {
		t.Fatalf("user_version after Open = %s", got)
	}
	h, err := j.History(ctx, HistoryQuery{})
	if err != nil || len(h) != 2 {
		t.Fatalf("History after the migration: %d, %v", len(h), err)
	}
	if h[1].Command != "old one" || h[1].Session != 1 || h[1].Seq != 1 || h[1].Status != automate.StatusCompleted ||
		h[1].Answer != "done" || h[1].InvocationID != "" || h[0].Command != "old two" || h[0].Note != "no rule matches" {
		t.Fatalf("old rows after the migration: %+v", h)
	}
	// The old key (boot, session, seq) is gone: a row with an old row's
	// numbers is accepted (a new boot never collides anyway).
	id, dup, err := j.RecordCommand(ctx, Command{Seq: 1, Session: 1, Text: "new"})
	if err != nil || dup || id <= h[0].ID {
		t.Fatalf("a new command after the migration: id %d dup %v err %v", id, dup, err)
	}
	if _, err := j.db.Exec(`INSERT INTO commands(boot, touched_boot, session, seq, text, decision) VALUES (1, 1, 1, 1, 'same key as old one', 'received')`); err != nil {
		t.Fatalf("the old (boot, session, seq) key still constrains: %v", err)
	}
	j.Close()
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if h, err := ro.History(ctx, HistoryQuery{}); err != nil || len(h) != 4 {
		t.Fatalf("read-only History after the migration: %d, %v", len(h), err)
	}
}

func TestHistory(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	j := openTest(t, filepath.Join(t.TempDir(), "j.db"), clk)
	var ids []int64
	for i := range 7 {
		clk.Advance(time.Second)
		ids = append(ids, mustRecord(t, j, Command{Seq: uint64(i + 1), Session: 1, Text: "c" + string(rune('0'+i))}))
	}
	if err := j.RunStarted(ctx, ids[6], "t", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := j.RunParked(ctx, ids[6], "req", "very-secret-resume-token"); err != nil {
		t.Fatal(err)
	}

	page1, err := j.History(ctx, HistoryQuery{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := entryIDs(page1); !reflect.DeepEqual(got, []int64{ids[6], ids[5], ids[4]}) {
		t.Fatalf("page 1 = %v", got)
	}
	page2, err := j.History(ctx, HistoryQuery{Limit: 3, BeforeID: page1[2].ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := entryIDs(page2); !reflect.DeepEqual(got, []int64{ids[3], ids[2], ids[1]}) {
		t.Fatalf("page 2 = %v", got)
	}
	page3, err := j.History(ctx, HistoryQuery{Limit: 3, BeforeID: page2[2].ID})
	if err != nil || !reflect.DeepEqual(entryIDs(page3), []int64{ids[0]}) {
		t.Fatalf("page 3 = %v, %v", entryIDs(page3), err)
	}
	all, err := j.History(ctx, HistoryQuery{})
	if err != nil || len(all) != 7 {
		t.Fatalf("default limit: %d entries, %v", len(all), err)
	}

	parked := page1[0]
	if parked.ResumeToken != "" {
		t.Fatal("History returned the resume token")
	}
	if parked.Run != RunParked || parked.RequestID != "req" {
		t.Fatalf("parked entry: %+v", parked)
	}
	if g := mustGet(t, j, ids[6]); g.ResumeToken != "very-secret-resume-token" {
		t.Fatalf("Get lost the resume token: %q", g.ResumeToken)
	}
	full := mustGet(t, j, ids[6])
	b, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "very-secret-resume-token") {
		t.Fatalf("the resume token is in the JSON encoding: %s", b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "boot", "seq", "session", "receivedAt", "command", "decision", "run", "taskId", "runStartedAt", "parkedAt", "requestId", "status", "updatedAt"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	for _, k := range []string{"finishedAt", "completedAt", "queuedAt", "finalAnswer", "usage"} {
		if _, ok := m[k]; ok {
			t.Errorf("JSON has unset %q: %s", k, b)
		}
	}
}

func entryIDs(es []Entry) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func TestEntryJSONRoundTrip(t *testing.T) {
	final := "f"
	e := Entry{ID: 3, Boot: 1, Session: 2, Seq: 9, ReceivedAt: time.Unix(1700000000, 5).UTC(), Command: "c",
		Macro: json.RawMessage(`{"id":"m"}`), Decision: DecisionStarted, Run: RunFinished, Status: automate.StatusCompleted,
		Answer: "a", FinalAnswer: &final, Usage: &automate.Usage{InputTokens: 1}, UpdatedAt: time.Unix(1700000001, 0).UTC(),
		ResumeToken: "tok"}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back Entry
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	e.ResumeToken = ""
	if !reflect.DeepEqual(e, back) {
		t.Fatalf("round trip:\n%+v\n%+v", e, back)
	}
}

// fill writes one command in each state and returns their ids.
func fill(t testing.TB, j *Journal, clk *clock, tag string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	ids := map[string]int64{}
	rec := func(name string, d Decision) int64 {
		clk.Advance(time.Second)
		id := mustRecord(t, j, Command{Text: tag + " " + name, Rule: "rule-" + name, Decision: d,
			MacroJSON: []byte(`{"name":"` + name + `"}`), MacroName: name})
		ids[name] = id
		return id
	}
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	rec("undecided", "")
	check(j.SetDecision(ctx, rec("queued", ""), DecisionQueued, "busy"))
	rec("queued2", DecisionQueued)
	check(j.Dequeued(ctx, rec("dequeued", DecisionQueued)))
	check(j.RunStarted(ctx, rec("running", ""), "task-running", time.Time{}))
	id := rec("parked", "")
	check(j.RunStarted(ctx, id, "task-parked", time.Time{}))
	check(j.RunParked(ctx, id, "req-parked", "tok-"+tag))
	id = rec("finished", "")
	check(j.RunStarted(ctx, id, "task-finished", time.Time{}))
	final := "final " + tag
	check(j.RunFinished(ctx, id, Outcome{RequestID: "req-finished", Status: automate.StatusCompleted, Answer: "answer " + tag,
		FinalAnswer: &final, StartedAt: clk.Now(), CompletedAt: clk.Advance(time.Second), DurationMs: 1000,
		Usage: &automate.Usage{InputTokens: 10, OutputTokens: 20, TPS: 1.5}}))
	check(j.SetDecision(ctx, rec("dropped", ""), DecisionDropped, "busy"))
	check(j.SetDecision(ctx, rec("ignored", ""), DecisionIgnored, "no rule"))
	check(j.SetDecision(ctx, rec("refused", ""), DecisionRefused, "not for this device"))
	id = rec("interrupted", "")
	check(j.RunStarted(ctx, id, "task-int", time.Time{}))
	check(j.MarkInterrupted(ctx, id, "lost"))
	check(j.Abandon(ctx, rec("abandoned", DecisionQueued), "too old"))
	return ids
}

func TestReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	clk := newClock()
	j, err := Open(path, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, j, clk, "first")
	before, err := j.History(ctx, HistoryQuery{Limit: MaxHistoryLimit})
	if err != nil {
		t.Fatal(err)
	}
	var beforeFull []Entry
	for _, e := range before {
		beforeFull = append(beforeFull, mustGet(t, j, e.ID))
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a clean close should checkpoint and remove the -wal file: %v", err)
	}

	j2 := openTest(t, path, clk)
	if j2.Boot() != 2 {
		t.Errorf("second boot id = %d, want 2", j2.Boot())
	}
	after, err := j2.History(ctx, HistoryQuery{Limit: MaxHistoryLimit})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("history changed across reopen:\n%+v\n%+v", before, after)
	}
	for _, e := range beforeFull {
		if got := mustGet(t, j2, e.ID); !reflect.DeepEqual(got, e) {
			t.Fatalf("entry %d changed across reopen:\n%+v\n%+v", e.ID, e, got)
		}
	}
	if err := j2.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRecover(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	clk := newClock()
	j, err := Open(path, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ids := fill(t, j, clk, "old")
	j.Close()

	j2 := openTest(t, path, clk)
	fill(t, j2, clk, "current") // this boot's own rows are never "left behind"
	now := clk.Advance(time.Hour)
	r, err := j2.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := entryIDs(r.Undecided), []int64{ids["undecided"]}; !reflect.DeepEqual(got, want) {
		t.Errorf("Undecided = %v, want %v", got, want)
	}
	if got, want := entryIDs(r.Queued), []int64{ids["queued"], ids["queued2"], ids["dequeued"]}; !reflect.DeepEqual(got, want) {
		t.Errorf("Queued = %v, want %v (oldest first)", got, want)
	}
	if got, want := entryIDs(r.InFlight), []int64{ids["running"], ids["parked"]}; !reflect.DeepEqual(got, want) {
		t.Errorf("InFlight = %v, want %v", got, want)
	}
	if len(r.InFlight) == 2 {
		if p := r.InFlight[1]; p.ResumeToken != "tok-old" || p.RequestID != "req-parked" || p.Run != RunParked {
			t.Errorf("parked in-flight entry: %+v", p)
		}
		if p := r.InFlight[0]; p.TaskID != "task-running" || p.Run != RunRunning {
			t.Errorf("running in-flight entry: %+v", p)
		}
	}
	if len(r.Queued) > 0 {
		q := r.Queued[0]
		if age := now.Sub(q.ReceivedAt); age < time.Hour {
			t.Errorf("the queued entry's receipt %v is %v before the recovery, want its original time (over an hour)", q.ReceivedAt, age)
		}
	}
	if r.Empty() {
		t.Error("Empty() on a non-empty recovery")
	}

	// Settle everything; a second Recover finds nothing.
	for _, e := range r.Undecided {
		if err := j2.Abandon(ctx, e.ID, "daemon restarted before deciding"); err != nil {
			t.Fatal(err)
		}
	}
	if err := j2.RunStarted(ctx, r.Queued[0].ID, "resumed-after-restart", time.Time{}); err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Queued[1:] {
		if err := j2.Abandon(ctx, e.ID, "too old"); err != nil {
			t.Fatal(err)
		}
	}
	if err := j2.MarkInterrupted(ctx, r.InFlight[0].ID, "unknown to the server"); err != nil {
		t.Fatal(err)
	}
	if err := j2.RunFinished(ctx, r.InFlight[1].ID, Outcome{Status: automate.StatusCanceled, ErrorCode: automate.ErrorCanceled}); err != nil {
		t.Fatal(err)
	}
	r2, err := j2.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !r2.Empty() {
		t.Fatalf("after settling: %+v", r2)
	}
}

func TestSchemaVersions(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	if _, err := OpenReadOnly(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenReadOnly(missing): %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenReadOnly created the file")
	}

	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenReadOnly(empty); !errors.Is(err, ErrSchemaMismatch) {
		t.Errorf("OpenReadOnly(empty file): %v, want ErrSchemaMismatch", err)
	}

	newer := filepath.Join(dir, "newer.db")
	j, err := Open(newer, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if _, err := Open(newer, Options{}); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("Open(newer): %v, want ErrSchemaTooNew", err)
	}
	if _, err := OpenReadOnly(newer); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("OpenReadOnly(newer): %v, want ErrSchemaTooNew", err)
	}

	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(garbage, Options{}); err == nil {
		t.Error("Open(garbage) succeeded")
	}
}

func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	clk := newClock()
	j := openTest(t, path, clk)
	ids := fill(t, j, clk, "x")

	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Boot() != 0 {
		t.Errorf("read-only Boot = %d", r.Boot())
	}
	want, _ := j.History(ctx, HistoryQuery{})
	got, err := r.History(ctx, HistoryQuery{})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read-only History differs (%v)", err)
	}
	for name, err := range map[string]error{
		"RecordCommand":   func() error { _, _, err := r.RecordCommand(ctx, Command{}); return err }(),
		"SetDecision":     r.SetDecision(ctx, ids["undecided"], DecisionDropped, ""),
		"Dequeued":        r.Dequeued(ctx, ids["queued"]),
		"Abandon":         r.Abandon(ctx, ids["queued"], ""),
		"RunStarted":      r.RunStarted(ctx, ids["undecided"], "", time.Time{}),
		"RunParked":       r.RunParked(ctx, ids["running"], "", ""),
		"RunResumed":      r.RunResumed(ctx, ids["parked"]),
		"RunFinished":     r.RunFinished(ctx, ids["running"], Outcome{Err: "x"}),
		"MarkInterrupted": r.MarkInterrupted(ctx, ids["running"], ""),
		"Recover":         func() error { _, err := r.Recover(ctx); return err }(),
	} {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("read-only %s: %v, want ErrReadOnly", name, err)
		}
	}
	// The database refuses writes too, not only the Go guard.
	if _, err := r.db.Exec(`DELETE FROM commands`); err == nil {
		t.Error("a read-only connection deleted rows")
	}
	if n, _ := j.History(ctx, HistoryQuery{}); len(n) != len(want) {
		t.Error("rows vanished")
	}
	// Works on a stopped daemon's journal as well.
	j.Close()
	r2, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	got2, err := r2.History(ctx, HistoryQuery{})
	if err != nil || !reflect.DeepEqual(got2, want) {
		t.Fatalf("History after the writer closed differs (%v)", err)
	}
	if err := r2.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRunRefusedDetachesTheRun(t *testing.T) {
	j, err := Open(filepath.Join(t.TempDir(), "j.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	ctx := context.Background()
	id, _, err := j.RecordCommand(ctx, Command{Text: "hello", Rule: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.RunStarted(ctx, id, "task", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := j.RunRefused(ctx, id, "409"); err != nil {
		t.Fatal(err)
	}
	if err := j.SetDecision(ctx, id, DecisionQueued, "waiting"); err != nil {
		t.Fatalf("decide after a refused run: %v", err)
	}
	e, err := j.Get(ctx, id)
	if err != nil || e.Run != RunNone || e.Decision != DecisionQueued || e.TaskID != "" {
		t.Fatalf("entry %+v %v", e, err)
	}
	// A parked run (request id known) is never "refused".
	id2, _, _ := j.RecordCommand(ctx, Command{Text: "x"})
	j.RunStarted(ctx, id2, "t", time.Time{})
	j.RunParked(ctx, id2, "automate-run-1", "rt_x")
	if err := j.RunRefused(ctx, id2, "409"); err == nil {
		t.Error("refused a run that exists")
	}
	// The next boot sees the refused command as queued, not in flight.
	path := j.Path()
	j.Close()
	j2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	rec, err := j2.Recover(ctx)
	if err != nil || len(rec.Queued) != 1 || rec.Queued[0].ID != id || len(rec.InFlight) != 1 || rec.InFlight[0].ID != id2 {
		t.Fatalf("recovery %+v %v", rec, err)
	}
}

func TestBackgroundCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	j, err := Open(path, Options{CheckpointEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if got := pragma(t, j, "wal_autocheckpoint"); got != "0" {
		t.Errorf("wal_autocheckpoint = %s, want 0 (the checkpointer does it)", got)
	}
	if j.ck.runs.Load() != 0 {
		t.Fatal("a checkpoint ran before any write")
	}
	for i := range 50 {
		mustRecord(t, j, Command{Seq: uint64(i + 1), Session: 1, Text: "x"})
	}
	// The checkpointer runs on its own goroutine and announces nothing: a
	// bounded poll of its counter.
	testutil.WaitFor(t, "a background checkpoint after the writes", func() bool { return j.ck.runs.Load() > 0 })
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j.Close() // a second Close must not panic (the checkpointer stops once)
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("-wal left after Close: %v", err)
	}
}

func TestRunRefused(t *testing.T) {
	ctx := context.Background()
	j := openTest(t, filepath.Join(t.TempDir(), "j.db"), newClock())
	id := mustRecord(t, j, Command{Text: "go", Rule: "r"})
	if err := j.RunStarted(ctx, id, "task", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := j.RunRefused(ctx, id, "409: a run started elsewhere holds the slot"); err != nil {
		t.Fatal(err)
	}
	e := mustGet(t, j, id)
	if e.Run != RunNone || e.Decision != DecisionReceived || e.TaskID != "" || !e.RunStartedAt.IsZero() || e.Note != "409: a run started elsewhere holds the slot" {
		t.Fatalf("after RunRefused: %+v", e)
	}
	// The bridge can now queue it and start it later.
	if err := j.SetDecision(ctx, id, DecisionQueued, "waiting for the slot"); err != nil {
		t.Fatal(err)
	}
	if err := j.RunStarted(ctx, id, "task-2", time.Time{}); err != nil {
		t.Fatal(err)
	}
	// Refused only while no request id is known (the server never took it).
	if err := j.RunParked(ctx, id, "req", "tok"); err != nil {
		t.Fatal(err)
	}
	if err := j.RunRefused(ctx, id, "x"); !errors.Is(err, ErrConflict) {
		t.Fatalf("RunRefused on a parked run: %v, want ErrConflict", err)
	}
	if err := j.RunRefused(ctx, 999, "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("RunRefused(999): %v, want ErrNotFound", err)
	}
}

// RecordStarted writes what RecordCommand + RunStarted write, in one
// statement: the row, its decision and its run, with the default taskId
// naming the id AUTOINCREMENT gave it, interleaved with RecordCommand and
// across a reopen; duplicates write nothing.
func TestRecordStarted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	clk := newClock()
	j := openTest(t, path, clk) // closed before the reopen below, and again at cleanup
	macro := []byte(`{"id":"m1","name":"Sum","events":[{"type":"Type","text":"hi"}]}`)
	now := clk.Advance(time.Second)
	at := now.Add(-time.Millisecond)
	first, task, dup, err := j.RecordStarted(ctx, Command{Seq: 1, Session: 1, InvocationID: "i1", ReceivedAt: at, Text: "go",
		MacroID: "m1", MacroName: "Sum", MacroJSON: macro, Rule: "r", Decision: DecisionDropped}, RunStart{})
	if err != nil || dup || task != DefaultTaskID(first) || task != "hubgate-1" {
		t.Fatalf("RecordStarted = %d %q %v %v, want 1 hubgate-1 false nil", first, task, dup, err)
	}
	e := mustGet(t, j, first)
	if e.Decision != DecisionStarted || e.Run != RunRunning || e.TaskID != task || !e.RunStartedAt.Equal(now) ||
		!e.DecidedAt.Equal(now) || !e.ReceivedAt.Equal(at) || e.Command != "go" || e.Rule != "r" ||
		e.MacroID != "m1" || e.MacroName != "Sum" || string(e.Macro) != string(macro) || !e.QueuedAt.IsZero() {
		t.Fatalf("after RecordStarted: %+v", e)
	}

	// The ids RecordCommand and RecordStarted take are one sequence, and a
	// given taskId is kept.
	mid := mustRecord(t, j, Command{Seq: 2, Session: 1, InvocationID: "i2", Text: "queued", Decision: DecisionQueued})
	started := clk.Now().Add(time.Minute)
	third, task3, _, err := j.RecordStarted(ctx, Command{Seq: 3, Session: 1, InvocationID: "i3", Text: "own"}, RunStart{TaskID: "mine", At: started})
	if err != nil || mid != first+1 || third != mid+1 || task3 != "mine" {
		t.Fatalf("ids %d %d %d, task %q, err %v", first, mid, third, task3, err)
	}
	if e := mustGet(t, j, third); e.TaskID != "mine" || !e.RunStartedAt.Equal(started) {
		t.Fatalf("given taskId and time: %+v", e)
	}

	// A second delivery of the same event (either way) writes nothing.
	id, task, dup, err := j.RecordStarted(ctx, Command{Seq: 4, Session: 1, InvocationID: "i1", Text: "again"}, RunStart{})
	if err != nil || !dup || id != first || task != "" {
		t.Fatalf("duplicate RecordStarted = %d %q %v %v", id, task, dup, err)
	}
	id, dup, err = j.RecordCommand(ctx, Command{Seq: 5, Session: 1, InvocationID: "i3", Text: "again"})
	if err != nil || !dup || id != third {
		t.Fatalf("RecordCommand after RecordStarted = %d %v %v", id, dup, err)
	}
	id, _, dup, err = j.RecordStarted(ctx, Command{Seq: 6, Session: 1, InvocationID: "i2", Text: "again"}, RunStart{})
	if err != nil || !dup || id != mid || mustGet(t, j, mid).Decision != DecisionQueued {
		t.Fatalf("RecordStarted after RecordCommand = %d %v %v", id, dup, err)
	}
	// The run goes on as any other.
	if err := j.RunFinished(ctx, first, Outcome{RequestID: "req", Status: automate.StatusCompleted}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := j.RecordStarted(ctx, Command{Seq: 9, MacroJSON: []byte("{")}, RunStart{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad macro JSON: %v", err)
	}
	j.Close()

	// After a reopen the sequence goes on (the ignored duplicates used up
	// ids, as AUTOINCREMENT does for RecordCommand too), and a started row
	// left behind is in flight for Recover.
	j2 := openTest(t, path, clk)
	next, task, _, err := j2.RecordStarted(ctx, Command{Seq: 1, Session: 1, InvocationID: "i1", Text: "new boot"}, RunStart{})
	if err != nil || next <= third || task != DefaultTaskID(next) {
		t.Fatalf("after reopen: %d %q %v, want an id above %d", next, task, err, third)
	}
	if after := mustRecord(t, j2, Command{Text: "after"}); after != next+1 {
		t.Fatalf("RecordCommand after RecordStarted: id %d, want %d", after, next+1)
	}
	// A high-water mark lowered by hand (a repair) cannot make it reuse an id.
	if _, err := j2.db.ExecContext(ctx, `UPDATE sqlite_sequence SET seq = 1 WHERE name = 'commands'`); err != nil {
		t.Fatal(err)
	}
	if id, task, _, err := j2.RecordStarted(ctx, Command{Seq: 2, Session: 1, Text: "after repair"}, RunStart{}); err != nil || id != next+2 || task != DefaultTaskID(id) {
		t.Fatalf("after lowering the sequence: %d %q %v, want id %d", id, task, err, next+2)
	}
	r, err := j2.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := entryIDs(r.InFlight); !reflect.DeepEqual(got, []int64{third}) {
		t.Fatalf("InFlight = %v, want [%d]", got, third)
	}

	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, _, _, err := ro.RecordStarted(ctx, Command{Text: "x"}, RunStart{}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only RecordStarted: %v", err)
	}
}

// Concurrent RecordStarted calls for one hub event: exactly one writes;
// for distinct events: distinct ids, each run named after its own id.
func TestRecordStartedConcurrent(t *testing.T) {
	ctx := context.Background()
	j := openTest(t, filepath.Join(t.TempDir(), "j.db"), nil)
	const n = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	fresh, tasks := 0, map[int64]string{}
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := Command{Seq: uint64(i + 1), Session: 3, InvocationID: "shared", Text: "same"}
			if i >= n {
				c = Command{Seq: uint64(100 + i), Session: 3, Text: "own"}
			}
			id, task, dup, err := j.RecordStarted(ctx, c, RunStart{})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if !dup {
				if _, seen := tasks[id]; seen {
					t.Errorf("id %d given twice", id)
				}
				tasks[id] = task
				if i < n {
					fresh++
				}
			}
		}()
	}
	wg.Wait()
	if fresh != 1 || len(tasks) != n+1 {
		t.Fatalf("%d fresh inserts of the shared event (want 1), %d rows (want %d)", fresh, len(tasks), n+1)
	}
	for id, task := range tasks {
		if e := mustGet(t, j, id); task != DefaultTaskID(id) || e.TaskID != task || e.Run != RunRunning {
			t.Errorf("row %d: returned task %q, stored %+v", id, task, e)
		}
	}
}

// Prune deletes settled rows received before the cut, in batches, and
// never a queued, undecided or in-flight one; Options.Keep runs it at Open.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	clk := newClock()
	j := openTest(t, path, clk)
	old := fill(t, j, clk, "old") // every state there is
	// More settled rows than one batch holds.
	for i := range pruneBatch + 20 {
		id := mustRecord(t, j, Command{Text: "bulk " + strconv.Itoa(i), Decision: DecisionIgnored, Note: "no rule matches"})
		if i == 0 {
			old["bulk"] = id
		}
	}
	cut := clk.Advance(48 * time.Hour)
	clk.Advance(time.Hour)
	recent := mustRecord(t, j, Command{Text: "recent", Decision: DecisionDropped})

	keep := map[string]bool{"undecided": true, "queued": true, "queued2": true, "dequeued": true, "running": true, "parked": true}
	// Entry.Settled says what the pruning's SQL condition says.
	for tag, id := range old {
		if e := mustGet(t, j, id); e.Settled() == keep[tag] {
			t.Errorf("%s: Settled() = %v (decision %s, run %q)", tag, e.Settled(), e.Decision, e.Run)
		}
	}
	before, err := j.History(ctx, HistoryQuery{Limit: MaxHistoryLimit})
	if err != nil {
		t.Fatal(err)
	}
	n, err := j.Prune(ctx, cut)
	if err != nil {
		t.Fatal(err)
	}
	after, err := j.History(ctx, HistoryQuery{Limit: MaxHistoryLimit})
	if err != nil {
		t.Fatal(err)
	}
	if int(n) != len(before)-len(after) || len(after) != len(keep)+1 {
		t.Fatalf("Prune deleted %d of %d rows, %d left; want all but the %d unsettled and the recent one", n, len(before), len(after), len(keep))
	}
	for tag, id := range old {
		_, err := j.Get(ctx, id)
		if gone := errors.Is(err, ErrNotFound); gone == keep[tag] {
			t.Errorf("%s (id %d): Get = %v after pruning", tag, id, err)
		}
	}
	if _, err := j.Get(ctx, recent); err != nil {
		t.Errorf("a recent settled row was pruned: %v", err)
	}
	if n, err := j.Prune(ctx, cut); err != nil || n != 0 {
		t.Errorf("second Prune = %d, %v", n, err)
	}
	// The pruned rows' ids are not given again.
	if id := mustRecord(t, j, Command{Text: "next"}); id <= recent {
		t.Errorf("new id %d after pruning, last was %d", id, recent)
	}
	j.Close()

	// Options.Keep prunes at Open: an hour later, "recent" is older than
	// the minute kept.
	clk.Advance(time.Hour)
	j2, err := Open(path, Options{Now: clk.Now, Keep: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	poll := func() int {
		h, err := j2.History(ctx, HistoryQuery{Limit: MaxHistoryLimit})
		if err != nil {
			t.Fatal(err)
		}
		return len(h)
	}
	// The unsettled ones and "next" (undecided) stay.
	// The prune at Open runs on the journal's own goroutine and announces
	// nothing: a bounded poll of another handle's history.
	testutil.Until(t, "Keep to prune at Open", testutil.NoEvent, func() bool { return poll() == len(keep)+1 },
		func() string { return fmt.Sprintf("%d rows", poll()) })
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Prune(ctx, cut); !errors.Is(err, ErrReadOnly) {
		t.Errorf("read-only Prune: %v", err)
	}
}

// A head row dated in the future (the clock was set back since) does not
// stop pruning; a failed command without a run is settled; a cancelled
// context stops a pass.
func TestPruneEdges(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	j := openTest(t, filepath.Join(t.TempDir(), "j.db"), clk)
	future := mustRecord(t, j, Command{Text: "from the future", Decision: DecisionIgnored, ReceivedAt: clk.Now().Add(365 * 24 * time.Hour)})
	failed := mustRecord(t, j, Command{Text: "failed", Decision: DecisionFailed, Note: "journal: disk full"})
	clk.Advance(48 * time.Hour)
	cut := clk.Now().Add(-time.Hour)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := j.Prune(cancelled, cut); !errors.Is(err, context.Canceled) {
		t.Fatalf("Prune with a cancelled context: %v", err)
	}
	if _, err := j.Get(ctx, failed); err != nil {
		t.Fatalf("a cancelled pass deleted a row: %v", err)
	}
	if n, err := j.Prune(ctx, cut); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want the failed command only", n, err)
	}
	if _, err := j.Get(ctx, failed); !errors.Is(err, ErrNotFound) {
		t.Errorf("the failed command survived: %v", err)
	}
	if _, err := j.Get(ctx, future); err != nil {
		t.Errorf("the future-dated row was pruned: %v", err)
	}
}
