//go:build windows

package proc

import "os/exec"

const (
	shellPath = "cmd.exe"
	shellFlag = "/C"
)

// setAttrs does nothing on Windows: no process groups to kill here.
func setAttrs(*exec.Cmd, bool) {}

// leadsGroup is false on Windows: no process groups here.
func leadsGroup(*exec.Cmd) bool { return false }

// checkAttrs accepts every SysProcAttr on Windows.
func checkAttrs(*exec.Cmd) error { return nil }

// killGroup kills the command's process (its children may survive).
func killGroup(cmd *exec.Cmd, _ int) {
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// GroupAlive is always false on Windows (no process groups here).
func GroupAlive(int) bool { return false }
