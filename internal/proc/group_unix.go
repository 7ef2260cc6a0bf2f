//go:build unix

package proc

import (
	"errors"
	"os/exec"
	"syscall"
)

const (
	shellPath = "/bin/sh"
	shellFlag = "-c"
)

// setAttrs makes cmd the leader of a new process group and, with
// dieWithParent, gives it Pdeathsig where the platform has it.
func setAttrs(cmd *exec.Cmd, dieWithParent bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if dieWithParent {
		setPdeathsig(cmd.SysProcAttr)
	}
}

// killGroup sends SIGKILL to every process of the group pgid.
func killGroup(_ *exec.Cmd, pgid int) {
	if pgid <= 1 {
		return
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
}

// GroupAlive reports whether any process of the group pgid exists (a
// zombie counts until it is reaped).
func GroupAlive(pgid int) bool {
	if pgid <= 1 {
		return false
	}
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
