package journal

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

const defaultCheckpointEvery = time.Second

// checkpointer copies the WAL into the database in the background, on its
// own connection, so that no COMMIT pays for a checkpoint's fsyncs. It is
// event-driven: a commit signals it, it waits CheckpointEvery and runs one
// checkpoint; with no commit it sleeps (no timer wakes an idle daemon).
type checkpointer struct {
	db    *sql.DB
	dirty chan struct{} // one pending signal: commits since the last checkpoint
	runs  atomic.Uint64 // checkpoints run (for tests)
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

func (j *Journal) startCheckpointer(dsn string, every time.Duration) error {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("journal: checkpointer: %w", err)
	}
	db.SetMaxOpenConns(1)
	c := &checkpointer{db: db, dirty: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	j.ck = c
	go j.checkpointLoop(c, every)
	return nil
}

// checkpointLoop sleeps until a commit signals it, waits every (so that
// the commits of one burst share a checkpoint) and checkpoints. An idle
// journal costs no wake-up: there is no ticker.
func (j *Journal) checkpointLoop(c *checkpointer, every time.Duration) {
	defer close(c.done)
	t := time.NewTimer(every)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.dirty:
		}
		t.Reset(every)
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		var busy, logFrames, done int
		err := c.db.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logFrames, &done)
		if err != nil {
			j.log.Warn("journal: checkpoint failed", "err", err)
			c.signal() // try again after the next wait
			continue
		}
		c.runs.Add(1)
		j.log.Debug("journal: checkpoint", "walFrames", logFrames, "checkpointed", done)
	}
}

// signal marks the WAL dirty; it never blocks (one pending signal covers
// any number of commits).
func (c *checkpointer) signal() {
	select {
	case c.dirty <- struct{}{}:
	default:
	}
}

// wrote tells the checkpointer of a commit.
func (j *Journal) wrote() {
	if j.ck != nil {
		j.ck.signal()
	}
}

func (j *Journal) stopCheckpointer() {
	c := j.ck
	if c == nil {
		return
	}
	c.once.Do(func() {
		close(c.stop)
		<-c.done
		c.db.Close()
	})
}
