package server

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"syscall"

	"github.com/hubgate/hubgate/automate"
)

// Loopback is the only address the server binds: the literal IPv4
// loopback, because localhost may resolve to IPv6 first.
const Loopback = "127.0.0.1"

// PortWindowError reports that every port of the window was taken.
type PortWindowError struct {
	// Ports is the window tried, in order.
	Ports []int
}

func (e *PortWindowError) Error() string {
	return fmt.Sprintf("no free port in the Automate port window %s: every port is in use", automate.DescribePorts(Loopback, e.Ports))
}

// ListenOptions configures ListenWith. Zero values are documented per
// field.
type ListenOptions struct {
	// Port > 0 forces that port; 0 takes the first free port of Window;
	// < 0 lets the OS choose any free port (for tests).
	Port int
	// Window is the ports tried in order when Port is 0; the first is the
	// preferred one. Zero: the contract's window 4317..4328
	// (automate.PortWindow). Tests pass ports the OS chose, so none
	// depends on the machine's window being free.
	Window []int
}

// ListenWith binds the loopback address. moved reports that the window's
// preferred port (4317 by default) was taken and another port of the
// window was used. When every port of the window is taken the error is a
// *PortWindowError.
func ListenWith(opts ListenOptions) (ln net.Listener, moved bool, err error) {
	switch {
	case opts.Port > 0:
		ln, err = net.Listen("tcp4", net.JoinHostPort(Loopback, strconv.Itoa(opts.Port)))
		if err != nil {
			return nil, false, fmt.Errorf("bind %s:%d: %w", Loopback, opts.Port, err)
		}
		return ln, false, nil
	case opts.Port < 0:
		ln, err = net.Listen("tcp4", Loopback+":0")
		return ln, false, err
	}
	window := slices.Clone(opts.Window)
	if len(window) == 0 {
		window = automate.PortWindow()
	}
	for i, p := range window {
		ln, err = net.Listen("tcp4", net.JoinHostPort(Loopback, strconv.Itoa(p)))
		if err == nil {
			return ln, i != 0, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, false, fmt.Errorf("bind %s:%d: %w", Loopback, p, err)
		}
	}
	return nil, false, &PortWindowError{Ports: window}
}
