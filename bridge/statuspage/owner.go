package statuspage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
)

// The page belongs to the user who runs the daemon (see "Who can reach
// it" in the package comment): every request's TCP peer must be a socket
// of that user, which the kernel tells (internal/loopbackpeer).

// peerKey is the context key of a connection's peer slot.
type peerKey struct{}

// peerSlot holds a connection's ends and, once asked, the user at its
// other end: asked at the connection's first request (not in the accept
// loop, which a slow answer would hold up), then kept for the
// connection's life.
type peerSlot struct {
	local, remote netip.AddrPort
	once          sync.Once
	uid           int
	err           error
}

// connContext gives every accepted connection its peer slot: the page's
// Server sets it as http.Server.ConnContext.
func (h *Handler) connContext(ctx context.Context, c net.Conn) context.Context {
	if h.peerUID == nil {
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

// errNoAddress: the request's connection has no TCP addresses to ask about.
var errNoAddress = errors.New("the connection has no TCP address")

// peer returns the user id at the other end of r's connection: the
// connection's answer, or, for a handler served by a server without
// connContext, one asked for this request.
func (h *Handler) peer(r *http.Request) (int, error) {
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
			slot.uid, slot.err = -1, errNoAddress
			return
		}
		slot.uid, slot.err = h.peerUID(slot.local, slot.remote)
	})
	return slot.uid, slot.err
}

// fromOwner reports whether r comes from a socket of the page's owner,
// answering 403 when it does not (or when the kernel cannot tell). It
// lets every request through where the system cannot tell (peerUID nil).
func (h *Handler) fromOwner(w http.ResponseWriter, r *http.Request) bool {
	if h.peerUID == nil {
		return true
	}
	uid, err := h.peer(r)
	switch {
	case err != nil:
		h.log.Warn("statuspage: refused a request: cannot tell which user connected", "remote", r.RemoteAddr, "err", err)
		http.Error(w, "forbidden: cannot tell which user connected; the status page answers only its owner", http.StatusForbidden)
		return false
	case uid != h.owner:
		h.log.Info("statuspage: refused a request of another user", "uid", uid, "remote", r.RemoteAddr)
		http.Error(w, fmt.Sprintf("forbidden: this status page belongs to uid %d, not to uid %d", h.owner, uid), http.StatusForbidden)
		return false
	}
	return true
}
