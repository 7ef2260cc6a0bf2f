//go:build unix

package pairing

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrBusy: another pairing of this machine is in progress.
var ErrBusy = errors.New("another 'hubgate pair' or 'hubgate unpair' is running on this machine")

// Lock takes the pairing lock, an exclusive flock on "<state file>.lock",
// so that two pairings never write the same slot (see the commit
// protocol); the kernel drops it with the process. It does not wait: a
// lock held elsewhere is ErrBusy.
func Lock(statePath string) (release func(), err error) {
	if err := os.MkdirAll(filepath.Dir(statePath), 0o700); err != nil {
		return nil, fmt.Errorf("the pairing lock: %w", err)
	}
	f, err := os.OpenFile(statePath+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the pairing lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("the pairing lock: %w", err)
	}
	return func() { f.Close() }, nil
}
