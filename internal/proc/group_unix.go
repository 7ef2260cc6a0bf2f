//go:build unix

package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
)

const (
	shellPath = "/bin/sh"
	shellFlag = "-c"
)

// setAttrs makes cmd the leader of a new process group and, with
// dieWithParent, gives it Pdeathsig where the platform has it. It merges
// into a SysProcAttr the caller set: a Setsid child already leads a new
// group (and may not call setpgid), a Pdeathsig the caller chose is kept,
// and a Pgid the caller chose (joining another group) is kept, so the
// child leads no group of its own (leadsGroup; Run refuses it).
func setAttrs(cmd *exec.Cmd, dieWithParent bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !cmd.SysProcAttr.Setsid {
		cmd.SysProcAttr.Setpgid = true
	}
	if dieWithParent {
		setPdeathsig(cmd.SysProcAttr)
	}
}

// leadsGroup reports whether cmd's child is started as the leader of a
// new process group (its pid is the group id), the only group this
// package kills.
func leadsGroup(cmd *exec.Cmd) bool {
	a := cmd.SysProcAttr
	return a != nil && (a.Setsid || a.Setpgid && a.Pgid == 0)
}

// checkAttrs refuses a SysProcAttr under which the child would not lead a
// group of its own.
func checkAttrs(cmd *exec.Cmd) error {
	if a := cmd.SysProcAttr; a != nil && a.Pgid != 0 && !a.Setsid {
		return fmt.Errorf("SysProcAttr.Pgid %d joins an existing process group; the child must lead its own so that its group can be killed", a.Pgid)
	}
	return nil
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
