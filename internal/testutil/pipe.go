package testutil

import (
	"context"
	"net"
	"net/http"
	"sync"
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
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// NewPipeListener returns an open listener.
func NewPipeListener() *PipeListener {
	return &PipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

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
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is a loopback address, so that URLs and Host checks look as they
// would on a socket; nothing listens there.
func (l *PipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// Dial connects to the listener whatever the address: use it as an
// http.Transport's DialContext.
func (l *PipeListener) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	client, server := net.Pipe()
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
