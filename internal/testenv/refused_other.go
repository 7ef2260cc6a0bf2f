//go:build !unix

package testenv

import (
	"net"
	"testing"
)

// RefusedAddr returns a loopback address where a TCP connection is
// refused. Off Unix it is a port that was free a moment ago (a listener
// on port 0, closed): another program could take it meanwhile.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}
