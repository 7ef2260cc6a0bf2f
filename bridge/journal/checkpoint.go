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
// own connection, so that no COMMIT pays for a checkpoint's fsyncs.
type checkpointer struct {
	db     *sql.DB
	writes atomic.Uint64 // commits so far (bumped by the writers)
	runs   atomic.Uint64 // checkpoints run (for tests)
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

func (j *Journal) startCheckpointer(dsn string, every time.Duration) error {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("journal: checkpointer: %w", err)
	}
	db.SetMaxOpenConns(1)
	c := &checkpointer{db: db, stop: make(chan struct{}), done: make(chan struct{})}
	j.ck = c
	go j.checkpointLoop(c, every)
	return nil
}

func (j *Journal) checkpointLoop(c *checkpointer, every time.Duration) {
	defer close(c.done)
	t := time.NewTicker(every)
	defer t.Stop()
	var seen uint64
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		n := c.writes.Load()
		if n == seen {
			continue
		}
		var busy, logFrames, done int
		err := c.db.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logFrames, &done)
		if err != nil {
			j.log.Warn("journal: checkpoint failed", "err", err)
			continue
		}
		seen = n
		c.runs.Add(1)
		j.log.Debug("journal: checkpoint", "walFrames", logFrames, "checkpointed", done)
	}
}

// wrote counts a commit for the checkpointer.
func (j *Journal) wrote() {
	if j.ck != nil {
		j.ck.writes.Add(1)
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
