// Package proc owns the one way hubgate starts a child process: run_command
// and stdio MCP servers (automate/toolkit), the bridge's command tools, and
// the browser of `pair` (oauth). Every child started through [Command] (or
// made ready with [Prepare]) gets a scrubbed environment ([Environ]: no
// HUBGATE_* secret; the children of runs start from [RunEnviron], which
// withholds the D-Bus session bus too), leads its own process group, and
// on Linux dies with hubgate (Pdeathsig). [Run] runs a command to its end
// with capped output; [Started] wraps a child started elsewhere;
// [TrackGroups] keeps the ledger of groups and kills those a previous life
// left; [StartDetached] starts a child that may outlive hubgate;
// [DenyInspection] makes this process non-dumpable.
//
// Why each piece, and what differs on Windows: docs/proc.md.
package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// DrainWait bounds the wait for an output pipe to reach EOF once the group
// is killed (a process that left the group can hold the pipe open).
const DrainWait = 2 * time.Second

// DefaultMaxOutput is the output Run keeps when maxOutput is zero.
const DefaultMaxOutput = 64 << 10

// secretMarkers are the name parts that make a HUBGATE_* variable a secret
// (HUBGATE_AUTOMATE_KEY, HUBGATE_CLIENT_SECRET, HUBGATE_DEVICE_TOKEN, ...).
var secretMarkers = []string{"KEY", "SECRET", "TOKEN", "PASSWORD"}

// Environ is the environment a child starts from: this process's
// environment without hubgate's own secrets, which a command could print
// into a run record and which a third-party program must never see.
func Environ() []string {
	return environWithout(isSecretName)
}

// environWithout is this process's environment without the variables
// whose name drop reports.
func environWithout(drop func(name string) bool) []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); drop(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// alsoSecret holds the further variable names that hold a secret of this
// process (AlsoSecret).
var alsoSecret sync.Map // name -> struct{}

// AlsoSecret makes the named environment variables secrets too, for every
// child started from now on: a variable that the configuration names for a
// secret (automate.openai.api_key_env, such as OPENAI_API_KEY) is this
// process's secret as much as its HUBGATE_ ones.
func AlsoSecret(names ...string) {
	for _, n := range names {
		if n != "" {
			alsoSecret.Store(n, struct{}{})
		}
	}
}

// isSecretName reports whether the environment variable name is one of
// hubgate's secrets (HUBGATE_ and KEY, SECRET, TOKEN or PASSWORD, or a
// name given to AlsoSecret).
func isSecretName(name string) bool {
	if _, ok := alsoSecret.Load(name); ok {
		return true
	}
	upper := strings.ToUpper(name)
	if !strings.HasPrefix(upper, "HUBGATE_") {
		return false
	}
	for _, m := range secretMarkers {
		if strings.Contains(upper, m) {
			return true
		}
	}
	return false
}

// Command returns a command for name and args with hubgate's defaults: the
// scrubbed environment, a new process group and (Linux) Pdeathsig. The
// caller may still set Dir, Env, Stdin, Stdout and Stderr.
func Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = Environ()
	Prepare(cmd)
	return cmd
}

// Shell returns Command of the platform shell running script (sh -c on
// Unix, cmd.exe /C on Windows).
func Shell(script string) *exec.Cmd { return Command(shellPath, shellFlag, script) }

// Prepare gives a command built elsewhere, before it starts, a new process
// group and (Linux) Pdeathsig. It leaves Env alone.
func Prepare(cmd *exec.Cmd) { setAttrs(cmd, true) }

// Kill kills the process group of a started command (Windows: the process).
// A command that leads no group of its own (started without Prepare, or
// with a SysProcAttr joining another group) is killed alone. It does not
// touch the record of TrackGroups; see Group.Kill.
func Kill(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		kill(cmd)
	}
}

// kill ends the group that cmd's started child leads, or the child alone
// when it leads none: its pid is then no group id of this package's, and
// kill(-pid) would reach no process, or another program's group.
func kill(cmd *exec.Cmd) {
	if leadsGroup(cmd) {
		killGroup(cmd, cmd.Process.Pid)
		return
	}
	cmd.Process.Kill()
}

// Group is the process group of a started child.
type Group struct {
	cmd  *exec.Cmd
	pgid int
	rec  *record // in the tracking file; nil when not tracked
	once sync.Once
}

// Started returns the group of cmd, started by the caller (after Prepare
// or Command), and records it for TrackGroups' reaper. The caller must
// call Kill once done with it. A child that leads no group of its own
// (started without Prepare) is not recorded, and Kill ends it alone.
func Started(cmd *exec.Cmd) *Group {
	g := &Group{cmd: cmd, pgid: cmd.Process.Pid}
	if leadsGroup(cmd) {
		g.rec = track(g.pgid)
	}
	return g
}

// ID is the process group id (the leader's pid).
func (g *Group) ID() int { return g.pgid }

// Kill kills every process of the group (Windows: the leader) and drops
// the group from the tracking file. Only the first call kills: a later one
// could hit another group that reused the id.
func (g *Group) Kill() {
	g.once.Do(func() {
		kill(g.cmd)
		untrack(g.rec)
	})
}

// Result is what Run kept of a finished command.
type Result struct {
	// Output is stdout and stderr interleaved, at most maxOutput bytes.
	Output string
	// Truncated: the command wrote more than was kept.
	Truncated bool
	// ExitCode is the exit status; -1 when killed by a signal or not run.
	ExitCode int
}

// Run starts cmd (from Command or Shell; its Stdout and Stderr are
// replaced), waits for it and kills its process group at the end, so that
// nothing it started outlives the call. A SysProcAttr the caller set is
// kept and given the new process group and Pdeathsig (as Prepare); one
// that joins an existing group (Pgid) is refused. maxOutput caps the
// output kept (zero: DefaultMaxOutput). The error is nil on exit status
// 0, an *exec.ExitError on another status, ctx's error when ctx ended
// first, or the start's error.
func Run(ctx context.Context, cmd *exec.Cmd, maxOutput int) (Result, error) {
	res := Result{ExitCode: -1}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := checkAttrs(cmd); err != nil {
		return res, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	if maxOutput <= 0 {
		maxOutput = DefaultMaxOutput
	}
	out, err := NewOutput(maxOutput, KeepHead)
	if err != nil {
		return res, err
	}
	cmd.Stdout, cmd.Stderr = out.Writer(), out.Writer()
	Prepare(cmd)
	err = cmd.Start()
	out.CloseWriter() // the child has its own copy
	if err != nil {
		out.Drain(0)
		return res, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	g := Started(cmd)

	var waitErr error
	if canWaitNoReap {
		exited := make(chan struct{})
		go func() {
			waitExitNoReap(cmd)
			close(exited)
		}()
		select {
		case <-exited:
		case <-ctx.Done():
		}
		g.Kill() // the leader is a zombie at worst: its pid, the group id, is still ours
		waitErr = cmd.Wait()
	} else {
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case waitErr = <-waited:
		case <-ctx.Done():
			kill(cmd)
			waitErr = <-waited
		}
		g.Kill() // background leftovers (a tiny pid-reuse window remains here)
	}
	out.Drain(DrainWait)

	res.Output, res.Truncated = out.String(), out.Truncated()
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, waitErr // nil, an *exec.ExitError, or Wait's own error
}

// StartDetached starts name with args as a program that may outlive
// hubgate (a browser): the scrubbed environment, its own process group
// (a Ctrl-C meant for hubgate does not reach it), no Pdeathsig, no
// output, and reaped in the background; exited, when not nil, is told
// how it ended. It returns the pid.
func StartDetached(name string, args []string, exited func(error)) (int, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = Environ()
	setAttrs(cmd, false)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	go func() {
		err := cmd.Wait()
		if exited != nil {
			exited(err)
		}
	}()
	return cmd.Process.Pid, nil
}
