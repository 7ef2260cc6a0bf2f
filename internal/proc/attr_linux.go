package proc

import "syscall"

// setPdeathsig: the kernel kills the child when hubgate dies.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
