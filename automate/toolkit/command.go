package toolkit

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/hubgate/hubgate/internal/proc"
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

// RunCommand runs command with the shell in the confinement root, else the
// workspace, else the current directory. See docs/toolkit.md for the
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
		env = proc.RunEnviron(nil)
	}
	cmd := proc.Shell(command)
	cmd.Dir, cmd.Env = dir, env
	res, err := proc.Run(ctx, cmd, t.cfg.MaxOutputBytes)
	out := Outcome{
		Path:      "",
		Content:   res.Output,
		ExitCode:  res.ExitCode,
		Truncated: res.Truncated,
	}
	if errors.As(err, new(*exec.ExitError)) {
		err = nil // reported by the exit code
	}
	if err != nil {
		out.Summary = err.Error()
		return out, fmt.Errorf("run_command: %w", err)
	}
	trunc := ""
	if res.Truncated {
		trunc = fmt.Sprintf(" (output truncated to %d bytes)", t.cfg.MaxOutputBytes)
	}
	out.Summary = fmt.Sprintf("exit code %d%s; output: %s", res.ExitCode, trunc, Preview(res.Output, summaryPreview))
	t.log.Debug("toolkit: command ran", "dir", dir, "exitCode", res.ExitCode, "outputBytes", len(res.Output))
	if res.ExitCode != 0 {
		return out, &ExitError{Code: res.ExitCode, Output: res.Output}
	}
	return out, nil
}
