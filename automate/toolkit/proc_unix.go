//go:build unix

package toolkit

import (
	"errors"
	"os/exec"
	"syscall"
)

const (
	shellPath = "/bin/sh"
	shellFlag = "-c"
)

// setProcessGroup makes the command the leader of a new process group.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killProcessGroup sends SIGKILL to every process of the group pgid.
func killProcessGroup(_ *exec.Cmd, pgid int) {
	if pgid <= 1 {
		return
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return
	}
}

// processGroupAlive reports whether any process of the group pgid exists.
func processGroupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
