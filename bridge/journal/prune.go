package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// pruneBatch bounds one pruning transaction, so that a command arriving
// meanwhile does not wait for a whole pass (see docs/journal.md, Retention).
const pruneBatch = 500

// pruneEvery is how often the background pruning runs after the first
// (right after Open).
const pruneEvery = time.Hour

// settled is the condition of a row nothing will change any more: its run
// ended (finished, or interrupted and reconciled), or it never had one and
// its decision is final. Queued, undecided and in-flight rows never are.
const settled = `(run IN ('finished', 'interrupted') OR (run = '' AND decision IN ('dropped', 'ignored', 'refused', 'failed', 'abandoned', 'answer')))`

// Prune deletes the settled commands received before before, in batches,
// and returns how many it deleted. Ids are never reused (AUTOINCREMENT).
func (j *Journal) Prune(ctx context.Context, before time.Time) (int64, error) {
	if j.readOnly {
		return 0, ErrReadOnly
	}
	// Most passes find nothing old enough. The oldest row says so (ids
	// follow arrival), through the simplest read there is: a query over
	// the settled condition, like the DELETE itself, runs SQLite code the
	// daemon otherwise never touches (it maps more of the binary in an idle
	// daemon; docs/performance.md).
	first, err := j.stmt(ctx, `SELECT received_at FROM commands ORDER BY id LIMIT 1`)
	if err != nil {
		return 0, fmt.Errorf("journal: pruning: %w", err)
	}
	var oldest int64
	switch err := first.QueryRowContext(ctx).Scan(&oldest); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("journal: pruning: %w", err)
	case oldest >= toDB(before) && oldest <= toDB(j.now()):
		// A head row dated in the future (a clock set back since) proves
		// nothing about the rows after it: they are checked.
		return 0, nil
	}
	st, err := j.stmt(ctx, `DELETE FROM commands WHERE id IN (
		SELECT id FROM commands WHERE received_at < ? AND `+settled+` ORDER BY id LIMIT ?)`)
	if err != nil {
		return 0, fmt.Errorf("journal: pruning: %w", err)
	}
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		res, err := st.ExecContext(ctx, toDB(before), pruneBatch)
		if err != nil {
			return total, fmt.Errorf("journal: pruning: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("journal: pruning: %w", err)
		}
		total += n
		if n > 0 {
			j.wrote()
		}
		if n < pruneBatch {
			return total, nil
		}
	}
}

// pruneLoop prunes what is older than keep right away, then every
// pruneEvery, until stop closes.
func (j *Journal) pruneLoop(keep time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	// Close stops a pass between batches.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		before := j.now().Add(-keep)
		n, err := j.Prune(ctx, before)
		switch {
		case ctx.Err() != nil:
			j.log.Info("journal: pruning stopped by close", "deleted", n)
			return
		case err != nil:
			j.log.Warn("journal: pruning failed", "err", err)
		case n > 0:
			j.log.Info("journal: pruned settled commands", "deleted", n, "received_before", before.Format(time.RFC3339))
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}
