package toolkit

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// ExitError is the error of run_command when the command exits with a
// non-zero status (Code -1: killed by a signal).
type ExitError struct {
	Code   int
	Output string // the output kept (see Config.MaxOutputBytes)
}

func (e *ExitError) Error() string {
	if e.Output == "" {
		return fmt.Sprintf("command exited with code %d", e.Code)
	}
	return fmt.Sprintf("command exited with code %d: %s", e.Code, Preview(e.Output, summaryPreview))
}

// pipeDrainWait bounds the wait for the output pipe to close once the
// process group is killed (a process that left the group can hold it).
const pipeDrainWait = 2 * time.Second

// RunCommand runs command with the shell in the confinement root, else the
// workspace, else the current directory. See the package comment for the
// process-group and output rules. When ctx ends first the error wraps
// ctx's error.
func (t *Toolbox) RunCommand(ctx context.Context, command string) (Outcome, error) {
	dir := t.cfg.Confine
	if dir == "" {
		dir = t.cfg.Workspace
	}
	if dir != "" {
		real, err := resolveRoot(dir)
		if err != nil {
			return Outcome{}, err
		}
		dir = real
	}
	env := t.cfg.Env
	if env == nil {
		env = ChildEnviron()
	}
	res, err := runShell(ctx, dir, env, command, t.cfg.MaxOutputBytes)
	out := Outcome{
		Path:      "",
		Content:   res.output,
		ExitCode:  res.code,
		Truncated: res.truncated,
	}
	if err != nil {
		out.Summary = err.Error()
		return out, fmt.Errorf("run_command: %w", err)
	}
	trunc := ""
	if res.truncated {
		trunc = fmt.Sprintf(" (output truncated to %d bytes)", t.cfg.MaxOutputBytes)
	}
	out.Summary = fmt.Sprintf("exit code %d%s; output: %s", res.code, trunc, Preview(res.output, summaryPreview))
	t.log.Debug("toolkit: command ran", "dir", dir, "exitCode", res.code, "outputBytes", len(res.output))
	if res.code != 0 {
		return out, &ExitError{Code: res.code, Output: res.output}
	}
	return out, nil
}

type shellResult struct {
	output    string
	truncated bool
	code      int
}

func runShell(ctx context.Context, dir string, env []string, command string, maxOutput int) (shellResult, error) {
	if err := ctx.Err(); err != nil {
		return shellResult{code: -1}, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return shellResult{code: -1}, err
	}
	cmd := exec.Command(shellPath, shellFlag, command)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = pw
	cmd.Stderr = pw
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return shellResult{code: -1}, fmt.Errorf("start shell: %w", err)
	}
	pw.Close()
	pgid := cmd.Process.Pid

	buf := &cappedBuffer{max: maxOutput}
	readDone := make(chan struct{})
	go func() {
		io.Copy(buf, pr)
		close(readDone)
	}()

	var waitErr error
	if canWaitNoReap {
		// Wait for the shell to exit without reaping it, so that its
		// process group id cannot be reused before the group is killed.
		exited := make(chan struct{})
		go func() {
			waitExitNoReap(cmd)
			close(exited)
		}()
		select {
		case <-exited:
		case <-ctx.Done():
		}
		killProcessGroup(cmd, pgid)
		waitErr = cmd.Wait()
	} else {
		waitDone := make(chan error, 1)
		go func() { waitDone <- cmd.Wait() }()
		select {
		case waitErr = <-waitDone:
		case <-ctx.Done():
			killProcessGroup(cmd, pgid)
			waitErr = <-waitDone
		}
		killProcessGroup(cmd, pgid) // background leftovers (a tiny pid-reuse window remains here)
	}

	select {
	case <-readDone:
	case <-time.After(pipeDrainWait):
		pr.Close()
		<-readDone
	}
	pr.Close()

	res := shellResult{output: buf.String(), truncated: buf.truncated, code: -1}
	if cmd.ProcessState != nil {
		res.code = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if waitErr != nil {
		if _, ok := waitErr.(*exec.ExitError); !ok {
			return res, waitErr
		}
	}
	return res, nil
}

// cappedBuffer keeps the first max bytes written and drops (but accepts)
// the rest, so the writer is never blocked.
type cappedBuffer struct {
	mu        sync.Mutex
	max       int
	buf       []byte
	truncated bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.max - len(b.buf)
	if room < len(p) {
		b.truncated = true
		if room > 0 {
			b.buf = append(b.buf, p[:room]...)
		}
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
