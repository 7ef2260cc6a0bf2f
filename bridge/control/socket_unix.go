//go:build unix

package control

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// maxSocketPath is the longest socket path bind accepts (sun_path less the
// terminating NUL).
func maxSocketPath() int {
	if runtime.GOOS == "linux" {
		return 107
	}
	return 103
}

// probeTimeout bounds the connection attempt that tells a live socket from
// a stale one.
const probeTimeout = 2 * time.Second

func listen(path string, lock *InstanceLock, log *slog.Logger) (net.Listener, *InstanceLock, error) {
	if err := prepareDir(path); err != nil {
		return nil, nil, err
	}
	owned := lock == nil
	if owned {
		var err error
		if lock, err = acquire(path); err != nil {
			return nil, nil, err
		}
	}
	ok := false
	defer func() {
		if !ok && owned {
			lock.Release()
		}
	}()
	if err := clearStale(path, log); err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, nil, fmt.Errorf("control: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, nil, fmt.Errorf("control: restricting the socket: %w", err)
	}
	ok = true
	if !owned {
		lock = nil // the caller's: it releases it
	}
	return &credListener{UnixListener: ln.(*net.UnixListener), uid: os.Geteuid(), log: log}, lock, nil
}

// prepareDir checks the socket path's length and creates or checks its
// private directory.
func prepareDir(path string) error {
	if len(path) > maxSocketPath() {
		return fmt.Errorf("control: socket path is %d bytes, longer than the %d a Unix socket allows: %s", len(path), maxSocketPath(), path)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("control: creating the socket directory: %w", err)
	}
	return checkDir(dir)
}

// acquire takes the instance lock of the socket at path (absolute, its
// directory checked).
func acquire(path string) (*InstanceLock, error) {
	lockPath := path + ".lock"
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("control: opening the lock file: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &AlreadyRunningError{PID: readPID(f), LockPath: lockPath}
		}
		return nil, fmt.Errorf("control: locking %s: %w", lockPath, err)
	}
	// The holder's PID, for the message a second daemon prints. Written
	// under the lock; a reader that races the write sees no PID.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &InstanceLock{f: f, path: lockPath}, nil
}

// readPID reads the PID a lock holder wrote; 0 when there is none.
func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// checkDir refuses a socket directory another user could write to or owns.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("control: %s is not a directory", dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("control: cannot read the owner of %s", dir)
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Errorf("%w: %s is owned by uid %d, not %d", ErrInsecureDir, dir, st.Uid, uid)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%w: %s has mode %04o (writable by group or others); use a directory with mode 0700", ErrInsecureDir, dir, perm)
	}
	return nil
}

// clearStale removes a socket nothing answers on and refuses a live one.
func clearStale(path string, log *slog.Logger) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("control: %s exists and is not a socket; refusing to replace it", path)
	}
	c, err := net.DialTimeout("unix", path, probeTimeout)
	if err == nil {
		c.Close()
		return fmt.Errorf("%w (a process answers on %s)", ErrAlreadyRunning, path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("control: probing the existing socket %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("control: removing the stale socket: %w", err)
	}
	log.Info("control: removed a stale socket", "socket", path)
	return nil
}

// credListener accepts only connections from the daemon's own uid (where
// the platform reports peer credentials).
type credListener struct {
	*net.UnixListener
	uid int
	log *slog.Logger
}

func (l *credListener) Accept() (net.Conn, error) {
	for {
		c, err := l.UnixListener.AcceptUnix()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if errors.Is(err, errors.ErrUnsupported) {
			return c, nil
		}
		if err != nil {
			l.log.Warn("control: refused a connection: peer credentials unavailable", "err", err)
			c.Close()
			continue
		}
		if uid != l.uid {
			l.log.Warn("control: refused a connection from another user", "peerUid", uid, "uid", l.uid)
			c.Close()
			continue
		}
		return c, nil
	}
}
