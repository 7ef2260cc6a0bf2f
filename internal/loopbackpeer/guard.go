package loopbackpeer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
)

// Guard is the one check that an HTTP request comes from a socket of one
// user, the owner (this process's effective user): the status page and
// the mock's admin API use it. The kernel's answer (UID) is asked once
// per connection, at its first request (not in the accept loop, which a
// slow answer would hold up), then kept for the connection's life; a
// server that does not set ConnContext has it asked per request.
type Guard struct {
	uid   func(local, remote netip.AddrPort) (int, error)
	owner int
}

// NewGuard returns the guard of the process's effective user. peerUID
// tells which user holds the other end of a connection (local is the
// server's end); nil: UID where the system tells (Supported), elsewhere
// nothing is checked (Checks reports false and every request passes).
func NewGuard(peerUID func(local, remote netip.AddrPort) (int, error)) *Guard {
	if peerUID == nil && Supported {
		peerUID = UID
	}
	return &Guard{uid: peerUID, owner: os.Geteuid()}
}

// Checks reports whether the guard checks anything (the system tells
// peers' users, or a peerUID was given).
func (g *Guard) Checks() bool { return g.uid != nil }

// Owner is the user the guard lets through.
func (g *Guard) Owner() int { return g.owner }

// NotOwnerError: the request came from another user's socket.
type NotOwnerError struct{ UID, Owner int }

func (e *NotOwnerError) Error() string {
	return fmt.Sprintf("the connection is uid %d's, not the owner's (uid %d)", e.UID, e.Owner)
}

// ErrNoAddress: the request's connection has no TCP addresses to ask about.
var ErrNoAddress = errors.New("the connection has no TCP address")

// peerKey is the context key of a connection's peer slot.
type peerKey struct{}

// peerSlot holds a connection's ends and, once asked, the user at its
// other end.
type peerSlot struct {
	local, remote netip.AddrPort
	once          sync.Once
	uid           int
	err           error
}

// ConnContext gives every accepted connection its slot: set it as the
// server's http.Server.ConnContext.
func (g *Guard) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if g.uid == nil {
		return ctx
	}
	slot := &peerSlot{}
	if l, ok := c.LocalAddr().(*net.TCPAddr); ok {
		slot.local = l.AddrPort()
	}
	if r, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		slot.remote = r.AddrPort()
	}
	return context.WithValue(ctx, peerKey{}, slot)
}

// Peer returns the user id at the other end of r's connection: the
// connection's answer (ConnContext), or one asked for this request.
// Without a check (Checks false) it answers errors.ErrUnsupported.
func (g *Guard) Peer(r *http.Request) (int, error) {
	if g.uid == nil {
		return -1, errors.ErrUnsupported
	}
	slot, ok := r.Context().Value(peerKey{}).(*peerSlot)
	if !ok {
		slot = &peerSlot{}
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			slot.local, _ = netip.ParseAddrPort(a.String())
		}
		slot.remote, _ = netip.ParseAddrPort(r.RemoteAddr)
	}
	slot.once.Do(func() {
		if !slot.local.IsValid() || !slot.remote.IsValid() {
			slot.uid, slot.err = -1, ErrNoAddress
			return
		}
		slot.uid, slot.err = g.uid(slot.local, slot.remote)
	})
	return slot.uid, slot.err
}

// Check answers nil when r comes from a socket of the owner, or when
// the guard checks nothing; a *NotOwnerError for another user's socket;
// another error when the kernel cannot tell (the peer closed meanwhile,
// the connection has no TCP address): a caller refuses then too.
func (g *Guard) Check(r *http.Request) error {
	if g.uid == nil {
		return nil
	}
	uid, err := g.Peer(r)
	switch {
	case err != nil:
		return fmt.Errorf("cannot tell which user connected: %w", err)
	case uid != g.owner:
		return &NotOwnerError{UID: uid, Owner: g.owner}
	}
	return nil
}
