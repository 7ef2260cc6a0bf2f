package server

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"

	"github.com/hubgate/hubgate/automate"
)

// Loopback is the only address the server binds: the literal IPv4
// loopback, because localhost may resolve to IPv6 first.
const Loopback = "127.0.0.1"

// PortWindowError reports that every port of the window was taken.
type PortWindowError struct{ First, Last int }

func (e *PortWindowError) Error() string {
	return fmt.Sprintf("no free port in the Automate port window %s:%d-%d: every port is in use", Loopback, e.First, e.Last)
}

// Listen binds the loopback address. port > 0 forces that port; port == 0
// takes the first free port of 4317..4328; port < 0 lets the OS choose any
// free port (for tests). moved reports that the preferred port 4317 was
// taken and another port of the window was used.
func Listen(port int) (ln net.Listener, moved bool, err error) {
	switch {
	case port > 0:
		ln, err = net.Listen("tcp4", net.JoinHostPort(Loopback, strconv.Itoa(port)))
		if err != nil {
			return nil, false, fmt.Errorf("bind %s:%d: %w", Loopback, port, err)
		}
		return ln, false, nil
	case port < 0:
		ln, err = net.Listen("tcp4", Loopback+":0")
		return ln, false, err
	}
	for p := automate.FirstPort; p <= automate.LastPort; p++ {
		ln, err = net.Listen("tcp4", net.JoinHostPort(Loopback, strconv.Itoa(p)))
		if err == nil {
			return ln, p != automate.FirstPort, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, false, fmt.Errorf("bind %s:%d: %w", Loopback, p, err)
		}
	}
	return nil, false, &PortWindowError{First: automate.FirstPort, Last: automate.LastPort}
}
