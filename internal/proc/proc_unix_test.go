//go:build unix

package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
)

// gone waits until pid has exited (SIGKILL is delivered asynchronously,
// and a grandchild's exit reaches no event of ours: a bounded poll); it
// reports whether it did.
func gone(pid int) bool {
	return testutil.Wait(context.Background(), "the process to exit", testutil.NoEvent, func() bool { return !alive(pid) }) == nil
}

// alive: pid exists and is not a zombie (Linux reads its state; elsewhere
// a signal 0 answer).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		i := strings.LastIndexByte(string(b), ')')
		return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
	}
	return syscall.Kill(pid, 0) == nil
}

// TestRunKillsTheWholeGroup: a background process that holds the output
// pipe neither outlives Run nor keeps it waiting, when the shell exits and
// when ctx ends, also when the caller set a SysProcAttr of its own (Run
// gives it the new group all the same).
func TestRunKillsTheWholeGroup(t *testing.T) {
	unixOnly(t)
	for _, tc := range []struct{ cancelled, callerAttr bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		cancelled := tc.cancelled
		dir := t.TempDir()
		pidFile := filepath.Join(dir, "pid")
		// "started" is written before the pid file appears: the cancel,
		// which waits for the file, must not come before it.
		script := "sleep 300 & echo $! > " + pidFile + ".tmp; echo started; mv " + pidFile + ".tmp " + pidFile
		if cancelled {
			script += "; sleep 300"
		}
		cmd := Shell(script)
		if tc.callerAttr {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		var res Result
		go func() {
			var err error
			res, err = Run(ctx, cmd, 0)
			done <- err
		}()
		if cancelled {
			waitFile(t, pidFile)
			cancel()
		}
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%+v: Run did not return: the background process kept it waiting", tc)
		}
		cancel()
		if cancelled != errors.Is(err, context.Canceled) || !strings.Contains(res.Output, "started") {
			t.Errorf("%+v: err %v output %q", tc, err, res.Output)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(waitFile(t, pidFile))))
		if !gone(pid) {
			t.Errorf("%+v: the background sleep %d survived Run", tc, pid)
		}
	}
}

func waitFile(t *testing.T, path string) []byte {
	t.Helper()
	var b []byte
	// A file a child writes sends no event: a bounded poll.
	testutil.Until(t, path+" to appear", testutil.NoEvent, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil
	})
	return b
}

// A SysProcAttr that joins an existing process group is refused: the
// child would lead no group of its own for Run to kill.
func TestRunRefusesACallerGroup(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := Shell("echo ran > " + marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: syscall.Getpgrp()}
	_, err := Run(context.Background(), cmd, 0)
	if err == nil || !strings.Contains(err.Error(), "joins an existing process group") {
		t.Fatalf("Run with Pgid %d: %v", syscall.Getpgrp(), err)
	}
	// Run returns after its child ended: a child it started has written
	// the marker by now.
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused command ran (%v)", err)
	}
}

// A child started by someone else without Prepare leads no group: Kill and
// Group.Kill end the child itself (kill(-pid) would reach nothing, or
// another program's group).
func TestKillEndsAChildThatLeadsNoGroup(t *testing.T) {
	for _, name := range []string{"Kill", "Group.Kill"} {
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		if name == "Kill" {
			Kill(cmd)
		} else {
			Started(cmd).Kill()
		}
		select {
		case <-waited:
		case <-time.After(testutil.DefaultTimeout):
			cmd.Process.Kill()
			t.Fatalf("%s left the child %d running", name, cmd.Process.Pid)
		}
	}
}
