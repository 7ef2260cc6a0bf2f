package toolkit

import (
	"os/exec"

	"github.com/hubgate/hubgate/internal/proc"
)

// SetProcessGroup makes cmd, before it starts, the leader of a new process
// group (Unix), so that KillProcessGroup ends it with every child it starts.
//
// Deprecated: use proc.Prepare (or proc.Command); kept for callers being
// moved onto internal/proc.
func SetProcessGroup(cmd *exec.Cmd) { proc.Prepare(cmd) }

// KillProcessGroup kills a started cmd's process group (on Windows, the
// process itself).
//
// Deprecated: use proc.Kill, or proc.Started and Group.Kill.
func KillProcessGroup(cmd *exec.Cmd) { proc.Kill(cmd) }

// ChildEnviron is this process's environment without hubgate's secrets.
//
// Deprecated: use proc.Environ.
func ChildEnviron() []string { return proc.Environ() }
