package testenv

import (
	"net"
	"sync/atomic"
)

// CountingListener counts the bytes read from the connections it accepts:
// a test of a server that must not read a request's body serves on it.
type CountingListener struct {
	net.Listener
	read atomic.Int64
}

// Read returns how many bytes were read from the accepted connections.
func (l *CountingListener) Read() int64 { return l.read.Load() }

// Accept wraps the accepted connection so that its reads are counted.
func (l *CountingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &l.read}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}
