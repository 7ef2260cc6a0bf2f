//go:build unix && !linux

package control

import (
	"errors"
	"net"
)

// peerUID is not implemented here: the socket's mode (0600) and its private
// directory are the access control.
func peerUID(*net.UnixConn) (int, error) { return -1, errors.ErrUnsupported }
