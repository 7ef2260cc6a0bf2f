//go:build !unix

package control

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
)

// listen is not supported here: the directory and peer checks this package
// promises need Unix permissions.
func listen(string, *InstanceLock, *slog.Logger) (net.Listener, *InstanceLock, error) {
	return nil, nil, errUnsupported
}

func prepareDir(string) error { return errUnsupported }

func acquire(string) (*InstanceLock, error) { return nil, errUnsupported }

var errUnsupported = fmt.Errorf("control: the control socket is not supported on this platform: %w", errors.ErrUnsupported)
