package statuspage

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/hubgate/hubgate/internal/loopbackpeer"
)

// The page belongs to the user who runs the daemon (see "Who can reach
// it" in the package comment): every request's TCP peer must be a socket
// of that user, which the kernel tells (loopbackpeer.Guard, the one check
// the mock's admin API makes too).

// fromOwner reports whether r comes from a socket of the page's owner,
// answering 403 when it does not (or when the kernel cannot tell). It
// lets every request through where the system cannot tell.
func (h *Handler) fromOwner(w http.ResponseWriter, r *http.Request) bool {
	err := h.owner.Check(r)
	var other *loopbackpeer.NotOwnerError
	switch {
	case err == nil:
		return true
	case errors.As(err, &other):
		h.log.Info("statuspage: refused a request of another user", "uid", other.UID, "remote", r.RemoteAddr)
		http.Error(w, fmt.Sprintf("forbidden: this status page belongs to uid %d, not to uid %d", other.Owner, other.UID), http.StatusForbidden)
	default:
		h.log.Warn("statuspage: refused a request: cannot tell which user connected", "remote", r.RemoteAddr, "err", err)
		http.Error(w, "forbidden: cannot tell which user connected; the status page answers only its owner", http.StatusForbidden)
	}
	return false
}
