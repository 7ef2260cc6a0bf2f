//go:build !linux

package loopbackpeer

import (
	"errors"
	"net/netip"
)

// Supported reports whether UID can answer on this system.
const Supported = false

// UID answers errors.ErrUnsupported: this system does not tell.
func UID(local, remote netip.AddrPort) (int, error) { return -1, errors.ErrUnsupported }
