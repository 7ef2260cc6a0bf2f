package control

import (
	"fmt"
	"net"
	"syscall"
)

// peerUID is the uid of the process at the other end of c (SO_PEERCRED:
// the credentials it had when it connected).
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("control: peer credentials: %w", err)
	}
	var (
		cred *syscall.Ucred
		cerr error
	)
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return -1, fmt.Errorf("control: peer credentials: %w", err)
	}
	if cerr != nil {
		return -1, fmt.Errorf("control: peer credentials: %w", cerr)
	}
	return int(cred.Uid), nil
}
