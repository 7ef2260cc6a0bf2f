//go:build linux

package loopbackpeer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Supported reports whether UID can answer on this system.
const Supported = true

// TCP states (include/net/tcp_states.h).
const tcpListen = 10

// UID returns the user id that holds the other end of the TCP connection
// between local (this process's end) and remote. ErrNotFound when no open
// socket holds it.
func UID(local, remote netip.AddrPort) (int, error) {
	if !netlinkBroken.Load() {
		uid, err := diagUID(local, remote)
		if !errors.Is(err, errNetlink) {
			return uid, err
		}
		netlinkBroken.Store(true) // e.g. a seccomp filter: /proc from now on
	}
	return procUID(local, remote)
}

// netlinkBroken is set once sock_diag failed as a transport.
var netlinkBroken atomic.Bool

// errNetlink: sock_diag itself failed (not "no such socket").
var errNetlink = errors.New("sock_diag")

// query names a socket: its family, its local (src) and remote (dst) ends.
type query struct {
	family   uint8
	src, dst netip.AddrPort
}

// candidates are the names of the peer's socket, as the kernel names it: its local address is our
// remote one. A dual-stack client may hold an AF_INET6 socket with
// v4-mapped addresses, so an IPv4 connection is looked up in both
// families.
func candidates(local, remote netip.AddrPort) []query {
	type c = query
	l, r := netip.AddrPortFrom(local.Addr().Unmap(), local.Port()), netip.AddrPortFrom(remote.Addr().Unmap(), remote.Port())
	if l.Addr().Is4() && r.Addr().Is4() {
		m := func(a netip.AddrPort) netip.AddrPort {
			return netip.AddrPortFrom(netip.AddrFrom16(a.Addr().As16()), a.Port())
		}
		return []c{{unix.AF_INET, r, l}, {unix.AF_INET6, m(r), m(l)}}
	}
	return []c{{unix.AF_INET6, r, l}}
}

// Wire layout (linux/inet_diag.h): inet_diag_sockid is sport, dport
// (big-endian), src[16], dst[16], if, cookie[2] (48 bytes);
// inet_diag_req_v2 is family, protocol, ext, pad, states, sockid (56);
// inet_diag_msg is family, state, timer, retrans, sockid, expires, rqueue,
// wqueue, uid, inode (72).
const (
	sockIDLen  = 48
	reqLen     = 8 + sockIDLen
	diagMsgLen = 4 + sockIDLen + 20
)

func putSockID(b []byte, src, dst netip.AddrPort) {
	binary.BigEndian.PutUint16(b[0:], src.Port())
	binary.BigEndian.PutUint16(b[2:], dst.Port())
	copy(b[4:20], src.Addr().AsSlice())
	copy(b[20:36], dst.Addr().AsSlice())
	// if = 0; cookie = INET_DIAG_NOCOOKIE (all ones): any socket.
	binary.NativeEndian.PutUint32(b[40:], ^uint32(0))
	binary.NativeEndian.PutUint32(b[44:], ^uint32(0))
}

// diagUID asks sock_diag for the exact socket.
func diagUID(local, remote netip.AddrPort) (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return -1, fmt.Errorf("%w: socket: %v", errNetlink, err)
	}
	defer unix.Close(fd)
	// The kernel answers an exact lookup at once; the bound only guards
	// against a kernel that never does.
	tv := unix.Timeval{Sec: 2}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return -1, fmt.Errorf("%w: %v", errNetlink, err)
	}
	buf := make([]byte, 8192)
	for i, c := range candidates(local, remote) {
		req := make([]byte, unix.SizeofNlMsghdr+reqLen)
		binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
		binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
		binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST)
		binary.NativeEndian.PutUint32(req[8:], uint32(i+1))
		p := req[unix.SizeofNlMsghdr:]
		p[0], p[1] = c.family, unix.IPPROTO_TCP
		binary.NativeEndian.PutUint32(p[4:], ^uint32(0)) // every state
		putSockID(p[8:], c.src, c.dst)
		if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return -1, fmt.Errorf("%w: send: %v", errNetlink, err)
		}
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return -1, fmt.Errorf("%w: receive: %v", errNetlink, err)
		}
		uid, err := parseDiagAnswer(buf[:n], c.src, c.dst)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		return uid, err
	}
	return -1, ErrNotFound
}

// parseDiagAnswer reads one answer to an exact lookup: the socket's
// inet_diag_msg, or an error message (ENOENT: no such socket).
func parseDiagAnswer(b []byte, src, dst netip.AddrPort) (int, error) {
	if len(b) < unix.SizeofNlMsghdr {
		return -1, fmt.Errorf("%w: a short answer (%d bytes)", errNetlink, len(b))
	}
	typ := binary.NativeEndian.Uint16(b[4:])
	body := b[unix.SizeofNlMsghdr:]
	switch typ {
	case unix.NLMSG_ERROR:
		if len(body) < 4 {
			return -1, fmt.Errorf("%w: a short error answer", errNetlink)
		}
		errno := unix.Errno(-int32(binary.NativeEndian.Uint32(body)))
		if errno == unix.ENOENT {
			return -1, ErrNotFound
		}
		return -1, fmt.Errorf("%w: %v", errNetlink, errno)
	case unix.SOCK_DIAG_BY_FAMILY:
	default:
		return -1, fmt.Errorf("%w: an answer of type %d", errNetlink, typ)
	}
	if len(body) < diagMsgLen {
		return -1, fmt.Errorf("%w: a short socket answer (%d bytes)", errNetlink, len(body))
	}
	var want [sockIDLen]byte
	putSockID(want[:], src, dst)
	// The kernel's lookup also falls back on listeners: only the exact
	// connection counts (the interface and the cookie aside).
	if string(body[4:4+36]) != string(want[:36]) || body[1] == tcpListen {
		return -1, ErrNotFound
	}
	tail := body[4+sockIDLen:]
	uid, inode := binary.NativeEndian.Uint32(tail[12:]), binary.NativeEndian.Uint32(tail[16:])
	if inode == 0 {
		return -1, ErrNotFound // closed: no process holds it (its uid reads 0)
	}
	return int(uid), nil
}

// procUID scans /proc/net/tcp (IPv4) and /proc/net/tcp6 for the socket.
func procUID(local, remote netip.AddrPort) (int, error) {
	for _, c := range candidates(local, remote) {
		file := "/proc/net/tcp"
		if c.family == unix.AF_INET6 {
			file = "/proc/net/tcp6"
		}
		uid, err := scanProc(file, procAddr(c.src), procAddr(c.dst))
		if errors.Is(err, ErrNotFound) {
			continue
		}
		return uid, err
	}
	return -1, ErrNotFound
}

// procAddr is a's spelling in /proc/net/tcp*: the address as 32-bit words
// in host order, then the port, in hex.
func procAddr(a netip.AddrPort) string {
	var sb strings.Builder
	b := a.Addr().AsSlice()
	for i := 0; i < len(b); i += 4 {
		fmt.Fprintf(&sb, "%08X", binary.NativeEndian.Uint32(b[i:]))
	}
	fmt.Fprintf(&sb, ":%04X", a.Port())
	return sb.String()
}

func scanProc(file, local, remote string) (int, error) {
	f, err := os.Open(file)
	if err != nil {
		return -1, fmt.Errorf("loopbackpeer: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[1] != local || fields[2] != remote {
			continue
		}
		if fields[3] == "0A" || fields[9] == "0" {
			return -1, ErrNotFound // listening, or closed (no process holds it)
		}
		uid, err := strconv.Atoi(fields[7])
		if err != nil {
			return -1, fmt.Errorf("loopbackpeer: %s: uid %q", file, fields[7])
		}
		return uid, nil
	}
	if err := sc.Err(); err != nil {
		return -1, fmt.Errorf("loopbackpeer: %s: %w", file, err)
	}
	return -1, ErrNotFound
}
