//go:build windows

package toolkit

import "os/exec"

const (
	shellPath = "cmd.exe"
	shellFlag = "/C"
)

// setProcessGroup is a no-op on Windows (no process groups to kill).
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills the command's process (its children may survive).
func killProcessGroup(cmd *exec.Cmd, _ int) {
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Kill()
	}
}

func processGroupAlive(int) bool { return false }
