//go:build unix

package configs

import (
	"os"
	"syscall"
)

// oNoFollow keeps FileStore from following a symlink planted at its path.
const oNoFollow = syscall.O_NOFOLLOW

// checkPerm: POSIX permission bits mean what they say here.
const checkPerm = true

// fileOwner returns the owner's uid and whether it is this process's
// effective user.
func fileOwner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, true
	}
	return int(st.Uid), int(st.Uid) == os.Geteuid()
}

// lockFile takes an exclusive flock on path (created 0600), waiting for
// it; the returned func releases it (the kernel drops it with the
// process too).
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
