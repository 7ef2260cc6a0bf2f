//go:build linux

package loopbackpeer

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// connected returns both ends of a TCP connection on network ("tcp4",
// "tcp6"): the server's end first.
func connected(t testing.TB, network, addr string) (server, client net.Conn) {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("no %s loopback: %v", network, err)
	}
	defer l.Close()
	client, err = net.Dial(network, l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

func ends(c net.Conn) (local, remote netip.AddrPort) {
	return c.LocalAddr().(*net.TCPAddr).AddrPort(), c.RemoteAddr().(*net.TCPAddr).AddrPort()
}

// Both ways of asking find this process's user at the other end of a
// connection, over IPv4 and IPv6, and nothing once the peer closed.
func TestUIDOfThePeer(t *testing.T) {
	for _, n := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
		server, client := connected(t, n.network, n.addr)
		local, remote := ends(server)
		for name, lookup := range map[string]func(l, r netip.AddrPort) (int, error){"sock_diag": diagUID, "proc": procUID, "UID": UID} {
			if uid, err := lookup(local, remote); err != nil || uid != os.Geteuid() {
				t.Errorf("%s %s: uid %d, %v; want %d", n.network, name, uid, err, os.Geteuid())
			}
			// Asked from the wrong side (the server's own socket is not
			// the peer's), or for a port nobody holds: nothing.
			if uid, err := lookup(remote, local); n.network == "tcp4" && (err != nil || uid != os.Geteuid()) {
				t.Errorf("%s %s from the client's side: %d %v", n.network, name, uid, err)
			}
			other := netip.AddrPortFrom(remote.Addr(), 1)
			if _, err := lookup(local, other); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s %s for an unheld port: %v, want ErrNotFound", n.network, name, err)
			}
		}
		client.Close()
		for name, lookup := range map[string]func(l, r netip.AddrPort) (int, error){"sock_diag": diagUID, "proc": procUID} {
			if uid, err := lookup(local, remote); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s %s after the peer closed: %d %v, want ErrNotFound", n.network, name, uid, err)
			}
		}
	}
}

// A listener on the peer's port is not the peer (the kernel's exact
// lookup falls back on listeners).
func TestAListenerIsNotAPeer(t *testing.T) {
	// The listener holds the client's port from the start: both bind it
	// with SO_REUSEPORT (same user), so no other program can take the
	// port between the client's close and the lookup, and nothing skips.
	reuse := func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}
	l, err := (&net.ListenConfig{Control: reuse}).Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	d := net.Dialer{LocalAddr: l.Addr(), Control: reuse}
	client, err := d.Dial("tcp4", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := srv.Accept()
	if err != nil {
		t.Fatal(err)
	}
	local, remote := ends(server)
	client.Close()
	server.Close()
	for name, lookup := range map[string]func(l, r netip.AddrPort) (int, error){"sock_diag": diagUID, "proc": procUID} {
		if uid, err := lookup(local, remote); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: a listener on the peer's port answered %d %v, want ErrNotFound", name, uid, err)
		}
	}
}

// A dual-stack client (an AF_INET6 socket reaching 127.0.0.1 through a
// v4-mapped address) is found too.
func TestUIDOfADualStackPeer(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no IPv6 sockets: %v", err)
	}
	defer unix.Close(fd)
	sa := &unix.SockaddrInet6{Port: l.Addr().(*net.TCPAddr).Port, Addr: netip.MustParseAddr("::ffff:127.0.0.1").As16()}
	if err := unix.Connect(fd, sa); err != nil {
		t.Skipf("no dual-stack connect: %v", err)
	}
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	local, remote := ends(server)
	for name, lookup := range map[string]func(l, r netip.AddrPort) (int, error){"sock_diag": diagUID, "proc": procUID} {
		if uid, err := lookup(local, remote); err != nil || uid != os.Geteuid() {
			t.Errorf("%s: uid %d, %v; want %d", name, uid, err, os.Geteuid())
		}
	}
}

func benchmarkLookup(b *testing.B, lookup func(l, r netip.AddrPort) (int, error)) {
	server, _ := connected(b, "tcp4", "127.0.0.1:0")
	local, remote := ends(server)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lookup(local, remote); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSockDiag(b *testing.B)   { benchmarkLookup(b, diagUID) }
func BenchmarkProcNetTCP(b *testing.B) { benchmarkLookup(b, procUID) }
