package testutil

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// PipeListener is a net.Listener whose connections are in-memory pipes
// (net.Pipe): a real http.Server serves it and a real http.Transport dials
// it through Dial. Unlike a loopback socket, a goroutine blocked on a pipe
// is durably blocked for testing/synctest, so a server and its clients can
// run inside a bubble on its fake clock. Create it inside the bubble that
// uses it.
type PipeListener struct {
	addr    *net.TCPAddr
	conns   chan net.Conn
	done    chan struct{}
	once    sync.Once
	onClose func() // a PipeNet forgets the listener

	mu       sync.Mutex
	nextPort int // the client ends' ports
}

// NewPipeListener returns an open listener.
func NewPipeListener() *PipeListener {
	return newPipeListener(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80})
}

func newPipeListener(addr *net.TCPAddr) *PipeListener {
	return &PipeListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{}), nextPort: 50000}
}

// addrConn is one end of a pipe with socket addresses.
type addrConn struct {
	net.Conn
	local, remote net.Addr
}

func (c addrConn) LocalAddr() net.Addr  { return c.local }
func (c addrConn) RemoteAddr() net.Addr { return c.remote }

// Accept waits for the next Dial.
func (l *PipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and Dial; connections already made stay open.
func (l *PipeListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		if l.onClose != nil {
			l.onClose()
		}
	})
	return nil
}

// Addr is a loopback address, so that URLs and Host checks look as they
// would on a socket; nothing listens there. It is 127.0.0.1:80, or the
// address a PipeNet gave the listener.
func (l *PipeListener) Addr() net.Addr { return l.addr }

// Dial connects to the listener whatever the address: use it as an
// http.Transport's DialContext.
func (l *PipeListener) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	client, server := net.Pipe()
	// Both ends carry loopback addresses, as a socket's would (a server
	// that answers loopback peers only sees one).
	l.mu.Lock()
	l.nextPort++
	peer := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: l.nextPort}
	l.mu.Unlock()
	client, server = addrConn{client, peer, l.addr}, addrConn{server, l.addr, peer}
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		client.Close()
		server.Close()
		return nil, net.ErrClosed
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	}
}

// RawConn dials addr over TCP for a test that speaks HTTP by hand; its
// reads give up after DefaultTimeout (a bound never reached when the
// server behaves), and it is closed when the test ends.
func RawConn(tb testing.TB, addr string) net.Conn {
	tb.Helper()
	c, err := net.Dial("tcp4", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(DefaultTimeout))
	return c
}

// ServePipe serves h on a new PipeListener until the test ends and returns
// a client whose requests reach h, whatever the URL's host. Call it inside
// the bubble that uses it; cleanups registered after it run first, so a
// test can stop its own server before the connections close.
func ServePipe(tb testing.TB, h http.Handler) *http.Client {
	tb.Helper()
	l := NewPipeListener()
	hs := &http.Server{Handler: h}
	go hs.Serve(l)
	tr := &http.Transport{DialContext: l.Dial}
	tb.Cleanup(func() {
		tr.CloseIdleConnections()
		hs.Close()
	})
	return &http.Client{Transport: tr}
}

// PipeNet is an in-memory network of PipeListeners by address: Dial
// reaches the listener at the address it is given, and is refused
// (ECONNREFUSED, as a loopback socket with nothing listening) when none
// listens there. A test can so run several servers in one bubble (a hub
// and the service its negotiate redirects to), stop one and serve again at
// the same address. The zero value is ready; create it inside the bubble
// that uses it.
type PipeNet struct {
	mu        sync.Mutex
	listeners map[string]*PipeListener
	nextPort  int
}

// Listen opens a listener at address (host:port, "tcp" networks only);
// port 0 picks a free one, as net.Listen does. It fails when the address
// is in use.
func (n *PipeNet) Listen(network, address string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("pipenet: listen %s: %w", address, err)
	}
	ip := net.ParseIP(host)
	if host == "" {
		ip = net.IPv4(127, 0, 0, 1)
	}
	p, err := strconv.Atoi(port)
	if ip == nil || err != nil || p < 0 || p > 65535 {
		return nil, fmt.Errorf("pipenet: listen %s: not an IP address and port", address)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.listeners == nil {
		n.listeners = map[string]*PipeListener{}
		n.nextPort = 40000
	}
	for p == 0 {
		n.nextPort++
		if _, used := n.listeners[net.JoinHostPort(ip.String(), strconv.Itoa(n.nextPort))]; !used {
			p = n.nextPort
		}
	}
	addr := &net.TCPAddr{IP: ip, Port: p}
	key := addr.String()
	if _, used := n.listeners[key]; used {
		return nil, &net.OpError{Op: "listen", Net: network, Addr: addr, Err: syscall.EADDRINUSE}
	}
	l := newPipeListener(addr)
	l.onClose = func() {
		n.mu.Lock()
		if n.listeners[key] == l {
			delete(n.listeners, key)
		}
		n.mu.Unlock()
	}
	n.listeners[key] = l
	return l, nil
}

// Dial connects to the listener at addr: an http.Transport's DialContext.
func (n *PipeNet) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	key := addr
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); ip != nil {
			key = net.JoinHostPort(ip.String(), port)
		}
	}
	n.mu.Lock()
	l := n.listeners[key]
	n.mu.Unlock()
	if l == nil {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: pipeAddr(addr), Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	return l.Dial(ctx, network, addr)
}

// Client returns an HTTP client whose connections are dialled on the
// network; its idle connections are closed when the test ends.
func (n *PipeNet) Client(tb testing.TB) *http.Client {
	tr := &http.Transport{DialContext: n.Dial}
	tb.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// pipeAddr names an address in an error.
type pipeAddr string

func (a pipeAddr) Network() string { return "tcp" }
func (a pipeAddr) String() string  { return string(a) }
