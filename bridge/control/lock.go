package control

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// InstanceLock is the one-daemon-per-socket lock: an exclusive flock on
// "<socket>.lock", which holds the holder's PID. The kernel drops a flock
// with its process, so a crashed daemon never leaves it held; the file
// itself stays (see docs/control.md).
type InstanceLock struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// AlreadyRunningError: another daemon holds the lock of the socket. It
// matches ErrAlreadyRunning.
type AlreadyRunningError struct {
	// PID is the holder's process id; 0 when it is not known (it had not
	// written it yet, or the file was emptied).
	PID      int
	LockPath string
}

func (e *AlreadyRunningError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s (pid %d holds %s)", ErrAlreadyRunning, e.PID, e.LockPath)
	}
	return fmt.Sprintf("%s (it holds %s)", ErrAlreadyRunning, e.LockPath)
}

func (e *AlreadyRunningError) Is(target error) bool { return target == ErrAlreadyRunning }

// Lock takes the instance lock of the control socket at socketPath before
// anything else of a daemon starts, so that a second daemon stops before it
// binds a port: it creates or checks the socket's private directory like
// Listen, then flocks "<socket>.lock" and writes this process's PID into
// it. When another process holds it, the error is an *AlreadyRunningError
// naming that process's PID. Pass the lock to Listen in Config.Lock; the
// caller releases it once the daemon stopped.
func Lock(socketPath string) (*InstanceLock, error) {
	if socketPath == "" {
		return nil, fmt.Errorf("control: empty socket path")
	}
	path, err := filepath.Abs(socketPath)
	if err != nil {
		return nil, fmt.Errorf("control: %w", err)
	}
	if err := prepareDir(path); err != nil {
		return nil, err
	}
	return acquire(path)
}

// Path is the lock file's path.
func (l *InstanceLock) Path() string { return l.path }

// Release drops the lock (the file stays). It is safe to call more than
// once, also from several goroutines (a stop and a forced stop).
func (l *InstanceLock) Release() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
