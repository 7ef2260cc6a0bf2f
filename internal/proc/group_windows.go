//go:build windows

package proc

import "os/exec"

const (
	shellPath = "cmd.exe"
	shellFlag = "/C"
)

// setAttrs does nothing on Windows: no process groups to kill here.
func setAttrs(*exec.Cmd, bool) {}

// killGroup kills the command's process (its children may survive).
func killGroup(cmd *exec.Cmd, _ int) {
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// GroupAlive is always false on Windows (no process groups here).
func GroupAlive(int) bool { return false }
