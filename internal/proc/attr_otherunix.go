//go:build unix && !linux

package proc

import "syscall"

// setPdeathsig: no parent-death signal on this platform.
func setPdeathsig(*syscall.SysProcAttr) {}
