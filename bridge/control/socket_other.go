//go:build !unix

package control

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
)

// listen is not supported here: the directory and peer checks this package
// promises need Unix permissions.
func listen(string, *slog.Logger) (net.Listener, *os.File, error) {
	return nil, nil, fmt.Errorf("control: the control socket is not supported on this platform: %w", errors.ErrUnsupported)
}
