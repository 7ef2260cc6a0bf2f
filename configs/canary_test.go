package configs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/internal/proc"
)

// canaryOf names a canary of process pid started at start.
func canaryOf(pid int, start uint64) string {
	return fmt.Sprintf("%s%d-%d-%s", CanaryAccountPrefix, pid, start, randomHex(4))
}

// A check sweeps the registered canaries of processes that are gone (a
// pair killed mid-check) and of a pid now held by a later process, and
// leaves a live process's canary and a name it cannot read alone.
func TestCheckStoreSweepsOnlyDeadProcessesCanaries(t *testing.T) {
	ctx := context.Background()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skipf("no true(1): %v", err)
	}
	live := exec.Command("sleep", "300")
	if err := live.Start(); err != nil {
		t.Skipf("no sleep(1): %v", err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })
	livePid := live.Process.Pid
	liveName := canaryOf(livePid, proc.StartTime(livePid))
	deadName := canaryOf(gone.Process.Pid, 12345)
	odd := CanaryAccountPrefix + "0123456789abcdef" // an older version's: no process in it
	names := []string{deadName, liveName, odd}
	if proc.StartTime(os.Getpid()) != 0 { // start times are read here: a reused pid is told apart
		reused := canaryOf(os.Getpid(), proc.StartTime(os.Getpid())+1)
		names = append(names, reused)
	}
	m := NewMemoryStore()
	for _, n := range names {
		if err := m.Set(ctx, n, "canary-x"); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Set(ctx, CanaryRegisterAccount, strings.Join(names, "\n")); err != nil {
		t.Fatal(err)
	}
	if err := CheckStore(ctx, m); err != nil {
		t.Fatal(err)
	}
	reg, _ := m.Get(ctx, CanaryRegisterAccount)
	if got := strings.Fields(reg); len(got) != 2 || got[0] != liveName || got[1] != odd {
		t.Errorf("register after the sweep: %q, want the live process's and the unreadable name", got)
	}
	for _, n := range names {
		_, err := m.Get(ctx, n)
		if keep := n == liveName || n == odd; keep != (err == nil) {
			t.Errorf("%s: kept %v, want %v", n, err == nil, keep)
		}
	}
	// Once the live process is gone, the next check sweeps its canary.
	live.Process.Kill()
	live.Wait()
	if err := CheckStore(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctx, liveName); err == nil {
		t.Error("the canary of a process now gone stayed")
	}
	if reg, _ := m.Get(ctx, CanaryRegisterAccount); strings.TrimSpace(reg) != odd {
		t.Errorf("register: %q, want only the unreadable name", reg)
	}
	m.Delete(ctx, odd)
	m.Delete(ctx, CanaryRegisterAccount)
	if err := CheckStore(ctx, m); err != nil {
		t.Fatal(err)
	}
	if len(m.secrets) != 0 {
		t.Errorf("a clean check left %v", m.secrets)
	}
}
