package toolkit

import "os/exec"

// SetProcessGroup makes cmd, before it starts, the leader of a new process
// group (Unix), so that KillProcessGroup ends it with every child it starts.
func SetProcessGroup(cmd *exec.Cmd) { setProcessGroup(cmd) }

// KillProcessGroup kills a started cmd's process group (on Windows, the
// process itself).
func KillProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		killProcessGroup(cmd, cmd.Process.Pid)
	}
}
