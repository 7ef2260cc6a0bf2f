//go:build !linux

package proc

// DenyInspection does nothing here: there is no PR_SET_DUMPABLE (on macOS
// a same-user process can read another's arguments and environment through
// sysctl KERN_PROCARGS2 regardless).
func DenyInspection() error { return nil }
