package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/internal/proc"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

// TestRunChildrenDieWithAKilledDaemon (issue 14, D4): a run_command child
// and its own children must not outlive a daemon killed with SIGKILL. The
// shell gets Pdeathsig; the sleep it started is killed by the next start
// (the reaper), before that start reports the run interrupted.
func TestRunChildrenDieWithAKilledDaemon(t *testing.T) {
	h := startHub(t)
	marks := t.TempDir()
	pgidFile := filepath.Join(marks, "pgid")
	s := newDaemonSetup(t, h, daemonConfig{Bridge: fmt.Sprintf(`rules:
  - name: sleeper
    match: {command_glob: "sleep *"}
    run:
      allow_destructive_tools: true
      prompt: |
        Sleep
        #!run echo $$ > %[1]s.tmp; mv %[1]s.tmp %[1]s; sleep 300 & sleep 300
`, pgidFile)})
	s.ownProcess = true // killed by SIGKILL: a process of its own
	d := startListening(t, s)
	h.push("sleep 1", nil)
	waitRunning(t, s, d, "sleep 1")
	pgid := waitRunGroup(t, pgidFile)

	killLeavingTheRun(t, d.cmd, d.done, pgid, "daemon")

	s.ownProcess = false // the second life runs in this process
	d2 := startListening(t, s)
	// Start reaped before it listened: nothing of the group is left.
	if m := proc.LiveMembers(pgid); len(m) != 0 {
		t.Fatalf("processes %v of the killed daemon's run survived the restart", m)
	}
	found := false
	for _, r := range d2.logRecords("killed a process group left by a previous run of hubgate") {
		if r["pgid"] == float64(pgid) {
			found = true
		}
	}
	if !found {
		t.Errorf("the restart did not say it killed group %d", pgid)
	}
	es := waitJournalState(t, s, "recovered", func(es []journal.Entry) bool { return len(es) == 1 && e2eSettledAll(es) })
	if es[0].Run != journal.RunInterrupted {
		t.Errorf("the run in flight: %s", e2eDump(es))
	}
}

// waitRunGroup waits for a run's command to write its process group id to
// pgidFile and for the group to hold the command and its two sleeps. A
// failing test leaves nothing behind: the group is killed at the test's
// end while it still has members (its id is not reused while it does).
func waitRunGroup(t *testing.T, pgidFile string) int {
	t.Helper()
	pgid := testenv.ReadPidFile(t, pgidFile)
	// /proc: no event.
	testutil.Until(t, "the command's process group to run", testutil.NoEvent, func() bool { return len(proc.LiveMembers(pgid)) >= 3 },
		func() string { return fmt.Sprintf("members of %d: %v", pgid, proc.LiveMembers(pgid)) })
	t.Cleanup(func() {
		if len(proc.LiveMembers(pgid)) > 0 {
			syscall.Kill(-pgid, syscall.SIGKILL)
		}
	})
	return pgid
}

// killLeavingTheRun kills what (the daemon or serve, cmd) with SIGKILL
// while its run's command (group pgid) runs, waits for it to exit (done),
// and checks that the run's shell, its direct child, died with it
// (Pdeathsig); the shell's own children are the reaper's.
func killLeavingTheRun(t *testing.T, cmd *exec.Cmd, done <-chan struct{}, pgid int, what string) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	testutil.Until(t, fmt.Sprintf("the run's shell %d to die with the killed %s", pgid, what), testutil.NoEvent,
		func() bool { return !slices.Contains(proc.LiveMembers(pgid), pgid) })
}
