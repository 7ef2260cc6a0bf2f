package proc

import "syscall"

// setPdeathsig: the kernel kills the child when hubgate dies (SIGKILL,
// unless the caller chose another signal).
func setPdeathsig(a *syscall.SysProcAttr) {
	if a.Pdeathsig == 0 {
		a.Pdeathsig = syscall.SIGKILL
	}
}
