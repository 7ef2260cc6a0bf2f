package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// The reaper. Pdeathsig ends a direct child when hubgate dies, but not its
// children: `sh -c 'sleep 300'` leaves the sleep behind in the group. So
// while TrackGroups is on, every group started through this package is
// written to a small file (its id and the start time of its leader, with
// the boot id), and removed once killed. A hubgate killed by SIGKILL leaves
// its groups in the file; the next TrackGroups kills those still alive.
//
// A group id is a pid, and pids are reused. Linux never hands out a pid
// while a process group of that id has a member, so a recorded group that
// stayed alive is ours. A group id can be reused only after every member
// left (then we have nothing to kill) and the pid counter wrapped around;
// the reaper skips a group whose leader pid exists with another start
// time, or which has a member that started before our leader, or which
// was recorded in another boot. The window it leaves: the counter wrapped,
// a stranger's group took the id and its leader already exited.
// Off Linux the file is not written (no start times to check).

// ledgerFile is the file's content.
type ledgerFile struct {
	Boot   string   `json:"boot"`
	Groups []record `json:"groups"`
}

// record is one tracked group.
type record struct {
	PGID  int    `json:"pgid"`
	Start uint64 `json:"start"` // the leader's start time, clock ticks since boot
}

var ledger struct {
	mu     sync.Mutex
	path   string // "" while not tracking
	boot   string
	groups []*record
	log    *slog.Logger
}

// TrackGroups first kills the process groups a previous life of this
// program left alive in the file at path (it was killed before it could),
// then records there every group started through this package, until stop
// is called. An unreadable file is logged and replaced. One tracking per
// process: a second call reaps its file and
// returns a stop that does nothing. The file's folder is created (0700).
// Call it before anything reports the previous life's runs as interrupted.
func TrackGroups(path string, log *slog.Logger) (stop func() error, reaped []int, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reaped, err = reap(path)
	if err != nil {
		// A torn or foreign file: kill nothing, and start a new one.
		log.Warn("the record of child processes of a previous run is unreadable; nothing reaped", "err", err)
	}
	for _, pgid := range reaped {
		log.Warn("killed a process group left by a previous run of hubgate", "pgid", pgid)
	}
	if !canTrack {
		return func() error { return nil }, reaped, nil
	}
	boot, err := bootID()
	if err != nil {
		return nil, reaped, fmt.Errorf("track child processes: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, reaped, fmt.Errorf("track child processes: %w", err)
	}
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	if ledger.path != "" {
		log.Debug("child processes are already tracked", "file", ledger.path)
		return func() error { return nil }, reaped, nil
	}
	ledger.path, ledger.boot, ledger.groups, ledger.log = path, boot, nil, log
	if err := writeLedgerLocked(); err != nil {
		ledger.path = ""
		return nil, reaped, fmt.Errorf("track child processes: %w", err)
	}
	return func() error {
		ledger.mu.Lock()
		defer ledger.mu.Unlock()
		if ledger.path != path {
			return nil
		}
		ledger.path, ledger.groups = "", nil
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}, reaped, nil
}

// reap kills the process groups recorded in the file at path that are
// still alive and provably the ones recorded, and returns their ids. A
// missing file reaps nothing.
func reap(path string) ([]int, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the child process record: %w", err)
	}
	var f ledgerFile
	if err := json.Unmarshal(raw, &f); err != nil {
		// A torn or foreign file: nothing in it can be trusted to kill.
		return nil, fmt.Errorf("child process record %s: %w", path, err)
	}
	if !canTrack {
		return nil, nil
	}
	if boot, err := bootID(); err != nil || boot != f.Boot {
		return nil, nil // recorded in another boot: every group is gone
	}
	var killed []int
	for _, r := range f.Groups {
		if ours(r) {
			killGroup(nil, r.PGID)
			killed = append(killed, r.PGID)
		}
	}
	// SIGKILL is delivered asynchronously: wait (bounded) until the
	// members are gone, so that a caller's next step (recovery reporting
	// the runs interrupted) comes after their end.
	deadline := time.Now().Add(reapWait)
	for _, pgid := range killed {
		for len(LiveMembers(pgid)) > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return killed, nil
}

// reapWait bounds reap's wait for killed groups to be gone.
const reapWait = 5 * time.Second

// track records pgid while TrackGroups is on; nil otherwise.
func track(pgid int) *record {
	if !canTrack {
		return nil
	}
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	if ledger.path == "" {
		return nil
	}
	start, err := startTime(pgid)
	if err != nil {
		return nil // already gone
	}
	r := &record{PGID: pgid, Start: start}
	ledger.groups = append(ledger.groups, r)
	if err := writeLedgerLocked(); err != nil {
		ledger.log.Warn("record a child process group", "pgid", pgid, "err", err)
	}
	return r
}

// untrack drops r once its group is killed.
func untrack(r *record) {
	if r == nil {
		return
	}
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	i := slices.Index(ledger.groups, r)
	if i < 0 || ledger.path == "" {
		return
	}
	ledger.groups = slices.Delete(ledger.groups, i, i+1)
	if err := writeLedgerLocked(); err != nil {
		ledger.log.Warn("drop a child process group", "pgid", r.PGID, "err", err)
	}
}

func writeLedgerLocked() error {
	f := ledgerFile{Boot: ledger.boot, Groups: []record{}}
	for _, r := range ledger.groups {
		f.Groups = append(f.Groups, *r)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	// Replaced by a rename, so a kill mid-write leaves the old file or the
	// new one; not synced (atomicfile would cost ~3 ms a child): the file
	// matters within one boot only, and a SIGKILL loses no written page.
	tmp := ledger.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, ledger.path)
}
