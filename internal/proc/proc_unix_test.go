//go:build unix

package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
)

// gone waits (bounded: SIGKILL is delivered asynchronously) until pid
// has exited; it reports whether it did.
func gone(pid int) bool {
	return testutil.Eventually(0, func() bool { return !alive(pid) })
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
// when ctx ends.
func TestRunKillsTheWholeGroup(t *testing.T) {
	unixOnly(t)
	for _, cancelled := range []bool{false, true} {
		dir := t.TempDir()
		pidFile := filepath.Join(dir, "pid")
		// "started" is written before the pid file appears: the cancel,
		// which waits for the file, must not come before it.
		script := "sleep 300 & echo $! > " + pidFile + ".tmp; echo started; mv " + pidFile + ".tmp " + pidFile
		if cancelled {
			script += "; sleep 300"
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		var res Result
		go func() {
			var err error
			res, err = Run(ctx, Shell(script), 0)
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
			t.Fatal("Run did not return: the background process kept it waiting")
		}
		cancel()
		if cancelled != errors.Is(err, context.Canceled) || !strings.Contains(res.Output, "started") {
			t.Errorf("cancelled %v: err %v output %q", cancelled, err, res.Output)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(waitFile(t, pidFile))))
		if !gone(pid) {
			t.Errorf("cancelled %v: the background sleep %d survived Run", cancelled, pid)
		}
	}
}

func waitFile(t *testing.T, path string) []byte {
	t.Helper()
	var b []byte
	testutil.WaitFor(t, path+" to appear", func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil
	})
	return b
}
