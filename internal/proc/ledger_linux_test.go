package proc

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hubgate/hubgate/internal/testutil"
)

// startGroup starts `sleep 300 & sleep 300` in its own group, not tracked
// and not killed by this package (the stand-in for a killed daemon's run).
func startGroup(t *testing.T) int {
	t.Helper()
	cmd := Shell("sleep 300 & sleep 300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		syscall.Kill(-pgid, syscall.SIGKILL)
		cmd.Wait()
	})
	// The shell starts its two children on its own: a bounded poll of /proc.
	testutil.Until(t, fmt.Sprintf("group %d to have its three processes", pgid), testutil.NoEvent,
		func() bool { return len(LiveMembers(pgid)) >= 3 },
		func() string { return fmt.Sprintf("members: %v", LiveMembers(pgid)) })
	return pgid
}

func writeLedger(t *testing.T, path string, f ledgerFile) {
	t.Helper()
	b, _ := json.Marshal(f)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReapKillsOnlyTheGroupsRecorded(t *testing.T) {
	boot, err := bootID()
	if err != nil {
		t.Fatal(err)
	}
	ours, reused, otherBoot := startGroup(t), startGroup(t), startGroup(t)
	start := func(pgid int) uint64 {
		s, err := startTime(pgid)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	path := filepath.Join(t.TempDir(), "children")
	writeLedger(t, path, ledgerFile{Boot: boot, Groups: []record{
		{PGID: ours, Start: start(ours)},
		{PGID: reused, Start: start(reused) - 1}, // the id now belongs to a later process
	}})
	killed, err := reap(path)
	if err != nil || len(killed) != 1 || killed[0] != ours {
		t.Fatalf("reap: %v %v", killed, err)
	}
	if m := LiveMembers(ours); len(m) != 0 {
		t.Errorf("the recorded group survived: %v", m)
	}
	if m := LiveMembers(reused); len(m) != 3 {
		t.Errorf("a group whose id was reused was killed: %v", m)
	}

	writeLedger(t, path, ledgerFile{Boot: "another-boot", Groups: []record{{PGID: otherBoot, Start: start(otherBoot)}}})
	if killed, err := reap(path); err != nil || len(killed) != 0 || len(LiveMembers(otherBoot)) != 3 {
		t.Errorf("a group of another boot: %v %v", killed, err)
	}
	os.WriteFile(path, []byte(`{"boot":`), 0o600)
	if killed, err := reap(path); err == nil || len(killed) != 0 {
		t.Errorf("a torn file: %v %v", killed, err)
	}
	if killed, err := reap(filepath.Join(t.TempDir(), "none")); err != nil || killed != nil {
		t.Errorf("no file: %v %v", killed, err)
	}
}

// TestTrackGroupsRecordsUntilKilled: a group is in the file from Started
// to Kill, and stop removes the file.
func TestTrackGroupsRecordsUntilKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "children")
	stop, reaped, err := TrackGroups(path, nil)
	if err != nil || len(reaped) != 0 {
		t.Fatal(reaped, err)
	}
	read := func() []record {
		var f ledgerFile
		b, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(b, &f) != nil {
			t.Fatalf("the file: %v %s", err, b)
		}
		return f.Groups
	}
	cmd := Shell("sleep 300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := Started(cmd)
	if rs := read(); len(rs) != 1 || rs[0].PGID != g.ID() || rs[0].Start == 0 {
		t.Errorf("recorded %+v, want group %d", rs, g.ID())
	}
	g.Kill()
	cmd.Wait()
	if rs := read(); len(rs) != 0 {
		t.Errorf("still recorded after Kill: %+v", rs)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the file is left after stop: %v", err)
	}
}
