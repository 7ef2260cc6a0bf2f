package journal

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations[i] takes the schema from version i to version i+1. Append
// only; never edit a migration that has shipped.
var migrations = []string{
	// 1: boots and commands.
	`
CREATE TABLE boots (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	started_at INTEGER NOT NULL,
	pid        INTEGER NOT NULL
);
CREATE TABLE commands (
	id             INTEGER PRIMARY KEY AUTOINCREMENT,
	boot           INTEGER NOT NULL REFERENCES boots(id),
	touched_boot   INTEGER NOT NULL,
	session        INTEGER NOT NULL DEFAULT 0,
	seq            INTEGER NOT NULL DEFAULT 0,
	received_at    INTEGER NOT NULL DEFAULT 0,
	text           TEXT    NOT NULL DEFAULT '',
	macro_id       TEXT    NOT NULL DEFAULT '',
	macro_name     TEXT    NOT NULL DEFAULT '',
	macro_json     TEXT,
	rule           TEXT    NOT NULL DEFAULT '',
	decision       TEXT    NOT NULL,
	note           TEXT    NOT NULL DEFAULT '',
	decided_at     INTEGER NOT NULL DEFAULT 0,
	queued_at      INTEGER NOT NULL DEFAULT 0,
	dequeued_at    INTEGER NOT NULL DEFAULT 0,
	run            TEXT    NOT NULL DEFAULT '',
	task_id        TEXT    NOT NULL DEFAULT '',
	run_started_at INTEGER NOT NULL DEFAULT 0,
	parked_at      INTEGER NOT NULL DEFAULT 0,
	request_id     TEXT    NOT NULL DEFAULT '',
	resume_token   TEXT    NOT NULL DEFAULT '',
	status         TEXT    NOT NULL DEFAULT '',
	error_code     TEXT    NOT NULL DEFAULT '',
	answer         TEXT    NOT NULL DEFAULT '',
	final_answer   TEXT,
	started_at     INTEGER NOT NULL DEFAULT 0,
	completed_at   INTEGER NOT NULL DEFAULT 0,
	duration_ms    INTEGER NOT NULL DEFAULT 0,
	usage          TEXT,
	error          TEXT    NOT NULL DEFAULT '',
	finished_at    INTEGER NOT NULL DEFAULT 0,
	updated_at     INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX commands_delivery ON commands(boot, session, seq) WHERE seq > 0;
CREATE INDEX commands_open ON commands(decision, run, touched_boot);
`,
	// 2: a duplicate delivery is the same invocation (invocation_id) on the
	// same connection (boot, session), no longer the same arrival number:
	// arrival numbers restart with a new hub client and two different
	// commands collided. Old rows keep their values and stay readable;
	// their invocation_id is '' (never a duplicate).
	`
ALTER TABLE commands ADD COLUMN invocation_id TEXT NOT NULL DEFAULT '';
DROP INDEX commands_delivery;
CREATE UNIQUE INDEX commands_invocation ON commands(boot, session, invocation_id) WHERE invocation_id != '';
`,
}

// migrate applies the pending migrations in one IMMEDIATE transaction and
// returns the version it found.
func migrate(ctx context.Context, db *sql.DB) (from int, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("journal: migrating: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&from); err != nil {
		return 0, fmt.Errorf("journal: reading the schema version: %w", err)
	}
	if from > len(migrations) {
		return from, fmt.Errorf("%w: version %d, this hubgate knows %d", ErrSchemaTooNew, from, len(migrations))
	}
	if from == len(migrations) {
		return from, tx.Commit()
	}
	for v := from; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return from, fmt.Errorf("journal: migration %d: %w", v+1, err)
		}
	}
	// PRAGMA does not take parameters; the value is a constant.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, len(migrations))); err != nil {
		return from, fmt.Errorf("journal: setting the schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return from, fmt.Errorf("journal: migrating: %w", err)
	}
	return from, nil
}
