package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/internal/testutil"
)

// ReadPidFile waits until the file at path holds one whole line (a child
// writes its pid, then a newline, or renames a finished file into place)
// and returns the number on it. It fails the test after
// testutil.DefaultTimeout. A file another process writes sends us no
// event: a bounded poll (testutil.NoEvent).
func ReadPidFile(t testing.TB, path string) int {
	t.Helper()
	var line string
	testutil.Until(t, "a pid in "+path, testutil.NoEvent, func() bool {
		b, err := os.ReadFile(path)
		line = string(b)
		return err == nil && strings.HasSuffix(line, "\n")
	})
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("testenv: %s holds %q, not a pid", path, line)
	}
	return pid
}

// RequireProcScan skips the test where MarkedProcesses cannot look
// (it reads /proc: Linux only).
func RequireProcScan(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("process scan reads /proc (Linux only)")
	}
}

// MarkedProcesses returns the live (not zombie) processes whose
// environment holds the entry marker ("NAME=value"). A test gives the
// processes it starts a unique marker; every descendant inherits it, so
// the scan finds grandchildren too. It skips the test off Linux.
func MarkedProcesses(t testing.TB, marker string) []int {
	t.Helper()
	RequireProcScan(t)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("testenv: scan /proc: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone meanwhile, or not ours
		}
		found := false
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == marker {
				found = true
				break
			}
		}
		if !found {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue // a zombie has exited
		}
		pids = append(pids, pid)
	}
	return pids
}

// WaitNoMarked waits until no live process carries marker (see
// MarkedProcesses); after testutil.DefaultTimeout it fails the test,
// listing the command lines of the ones left. It scans /proc, which sends
// no event: a bounded poll (testutil.NoEvent).
func WaitNoMarked(t testing.TB, marker string) {
	t.Helper()
	var pids []int
	testutil.Until(t, "no process marked "+marker+" (they outlived their owner)", testutil.NoEvent,
		func() bool { pids = MarkedProcesses(t, marker); return len(pids) == 0 },
		func() string {
			var cmds []string
			for _, p := range pids {
				b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
				cmds = append(cmds, strconv.Itoa(p)+": "+strings.ReplaceAll(string(b), "\x00", " "))
			}
			return strings.Join(cmds, "\n")
		})
}
