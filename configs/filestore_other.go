//go:build !unix

package configs

import "os"

// oNoFollow: no O_NOFOLLOW here.
const oNoFollow = 0

// checkPerm: Windows keeps no POSIX permission bits (Go reports 0666 for
// any writable file); the file lives in the user's own profile folder.
const checkPerm = false

// fileOwner: not checked on this platform.
func fileOwner(os.FileInfo) (int, bool) { return -1, true }

// lockFile: no cross-process lock on this platform; writes are still
// serialized within the process and atomic.
func lockFile(string) (func(), error) { return func() {}, nil }
