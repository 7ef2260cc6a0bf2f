package proc

import "golang.org/x/sys/unix"

// DenyInspection makes this process non-dumpable (PR_SET_DUMPABLE 0): its
// /proc/<pid>/environ, mem, maps and fd become root's, and ptrace needs
// CAP_SYS_PTRACE, so a child running as the same user (a run's command)
// cannot read the secrets of hubgate's environment or memory (the
// Automate key, the device token). The trade-off: no core dump of this
// process, and tools such as gdb or strace -p need root. Root with
// CAP_SYS_PTRACE can still read everything. Children are unaffected: the
// flag is reset when they exec.
func DenyInspection() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
