//go:build unix

package main

// The kill -9 sweep over `pair` (issue 17, item 8): its stops are named
// pipes (syscall.Mkfifo), which Windows does not have.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/internal/testutil"
)

// The kill -9 sweep: `pair --replace` waits before each of its steps
// (EnvPairStops: every remote step, every secret write, the state file,
// every delete), and is killed at each one in turn. What remains is
// the old pairing or the new one (state file and secret store agree),
// `run` connects with the state file's device, and the next pairing
// removes what the killed one left.
func TestPairKilledAtEveryStepLeavesTheOldPairingOrTheNew(t *testing.T) {
	steps := allPairSteps(t)
	for i, at := range steps {
		m, apiURL, private := newUserSetup(t)
		e := pairEnviron(t, apiURL, private...)
		if r := runCmd(t, e, "", "pair", "--name", "old"); r.code != 0 {
			t.Fatalf("first pair: %d\n%s", r.code, r.stderr)
		}
		old, _ := pairing.LoadState(statePathOf(e))
		oldTok := pairedDeviceToken(t, e)

		seen, killed := pairStoppingAt(t, e, i)
		if !killed || seen[i] != at {
			t.Fatalf("round %d did not stop before %q as the whole pairing did (%q); it saw %q", i, at, steps, seen)
		}

		st, err := pairing.LoadState(statePathOf(e))
		if err != nil {
			t.Fatalf("killed before %q: the state file: %v", at, err)
		}
		tok := lookupSecret(t, pairing.SlotAccount(configs.AccountDeviceToken, st.SecretSlot))
		state := "the old pairing"
		if st.DeviceID == old.DeviceID {
			if tok != oldTok || st.TokenID != old.TokenID {
				t.Fatalf("killed before %q: the old device with another token", at)
			}
		} else {
			state = "the new pairing"
			if tok == "" || tok == oldTok || !deviceTokenWorks(t, apiURL, tok) || !deviceOwns(m, st.DeviceID, st.TokenID) {
				t.Fatalf("killed before %q: the new device %s without its own token", at, st.DeviceID)
			}
		}
		t.Logf("killed before %q: %s remains", at, state)
		runConnectsAs(t, e, m, st.DeviceID)

		// The next pairing collects what the killed one left.
		if r := runCmd(t, e, "", "pair", "--replace"); r.code != 0 {
			t.Fatalf("killed before %q, the next pair: %d\n%s", at, r.code, r.stderr)
		}
		now, _ := pairing.LoadState(statePathOf(e))
		unused := pairing.OtherSlot(now.SecretSlot)
		for _, base := range pairedAccounts {
			if lookupSecret(t, pairing.SlotAccount(base, unused)) != "" {
				t.Errorf("killed before %q: %s still holds a secret after the next pairing", at, pairing.SlotAccount(base, unused))
			}
		}
	}
	for _, want := range []string{"sign-in", "device-token", "secret " + pairing.SlotAccount(configs.AccountDeviceToken, pairing.SlotB), "state", "delete " + configs.AccountDeviceToken} {
		if !slices.Contains(steps, want) {
			t.Errorf("the sweep never stopped before %q: %q", want, steps)
		}
	}
}

// allPairSteps runs one whole re-pairing with stops, continuing at each,
// and returns the steps it stopped at.
func allPairSteps(t *testing.T) []string {
	t.Helper()
	_, apiURL, private := newUserSetup(t)
	e := pairEnviron(t, apiURL, private...)
	if r := runCmd(t, e, "", "pair"); r.code != 0 {
		t.Fatalf("first pair: %d\n%s", r.code, r.stderr)
	}
	seen, killed := pairStoppingAt(t, e, -1)
	if killed || len(seen) < 8 {
		t.Fatalf("a whole pairing stopped at %q", seen)
	}
	return seen
}

// pairStoppingAt runs `pair --replace` with EnvPairStops; at each stop it
// lets the process go on (a line on the pipe), except at stop number
// killAt (from 0), where it kills it (SIGKILL) while it waits. It returns
// the steps seen and whether it killed.
func pairStoppingAt(t *testing.T, e []string, killAt int) ([]string, bool) {
	t.Helper()
	stops := filepath.Join(t.TempDir(), "stops")
	if err := syscall.Mkfifo(stops+".go", 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "pair", "--replace", "--name", "new", "--timeout", "50s")
	cmd.Env = append(slices.Clone(e), EnvPairStops+"="+stops)
	var stderr testutil.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	exited := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	var seen []string
	for n := 0; ; n++ {
		// The stops file is written by the child: no event.
		testutil.Until(t, fmt.Sprintf("pair to reach step %d or exit", n), testutil.NoEvent, func() bool { seen = readLines(stops); return len(seen) > n || exited() },
			func() string { return "stderr:\n" + stderr.String() })
		if len(seen) <= n { // it exited
			if code := cmd.ProcessState.ExitCode(); code != 0 {
				t.Fatalf("pair with stops exited %d:\n%s", code, stderr.String())
			}
			return seen, false
		}
		// It wrote step n and waits (or is about to) on the pipe: the step
		// has not begun.
		if n == killAt {
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			return seen[:n+1], true
		}
		var w *os.File
		// The child opening its end of the FIFO: no event.
		if testutil.Wait(context.Background(), "pair to wait at a step", testutil.NoEvent, func() bool {
			f, err := os.OpenFile(stops+".go", os.O_WRONLY|syscall.O_NONBLOCK, 0)
			w = f
			return err == nil || exited()
		}) != nil || w == nil {
			t.Fatalf("pair did not wait at step %d (%q); stderr:\n%s", n, seen[n], stderr.String())
		}
		w.WriteString("go\n")
		w.Close()
	}
}
