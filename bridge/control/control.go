// Package control owns the local control endpoint of the running hubgate
// daemon: a small HTTP/JSON API over a Unix domain socket that `hubgate
// status`, `hubgate history` and `hubgate cancel` use, and the client they
// use it with.
//
// # Who can reach it
//
// Only the user the daemon runs as:
//   - the socket's directory must be owned by that user and not writable by
//     group or others (Listen creates a missing directory with mode 0700 and
//     refuses an existing one that fails the check: a socket directly in
//     /tmp is refused, use a private subdirectory);
//   - the socket is chmod 0600 right after bind (connecting to a Unix socket
//     needs write permission on it; the window between bind and chmod is
//     closed by the private directory);
//   - on Linux every accepted connection's peer credentials (SO_PEERCRED)
//     must carry the daemon's uid, or it is closed before a byte is read.
//     That includes root: root can read the daemon's files anyway, but it
//     does not get the control API of another user's daemon. Other
//     platforms rely on the directory and socket modes.
//
// # One daemon per socket
//
// Listen takes an exclusive flock on "<socket>.lock" next to the socket for
// the life of the server (or uses the one a daemon took earlier with Lock,
// before it bound any port); the lock file holds the holder's PID and is
// never removed (removing it would let two daemons lock two different
// files). When the lock is held, Lock and Listen fail with an
// *AlreadyRunningError matching ErrAlreadyRunning ("another hubgate daemon
// is running (pid N holds ...)"). With
// the lock, a socket file left at the path is checked: if a process answers
// on it (a daemon that does not take the lock, or a foreign program) Listen
// refuses with ErrAlreadyRunning and leaves it alone; if nothing answers
// (connection refused) it is a stale socket from a killed daemon and is
// removed. A path that exists and is not a socket is never removed.
//
// # API (version 1)
//
//	GET  /v1/status             -> bridge.Status
//	GET  /v1/history?limit=N    -> {"entries": [journal.Entry, ...]} newest first
//	                               (N: 1..journal.MaxHistoryLimit, default 20)
//	POST /v1/cancel {"force":b} -> bridge.CancelResult (an empty body means force=false)
//	GET  /v1/watch?history=N    -> the event stream: one JSON bridge.Event per line
//	                               (application/x-ndjson), the N latest past
//	                               events first (0..MaxWatchHistory, default
//	                               0), flushed as events happen, until the
//	                               client goes away or the daemon stops; 404
//	                               when the Backend is no Watcher
//	GET  /v1/statuspage         -> StatusPage (404 when the daemon serves none);
//	                               each call mints a new one-time login address
//	POST /v1/reconnect          -> ReconnectResult (the hub reconnects now with
//	                               the paired device, re-read; see Reconnecter)
//
// Errors are {"error": "message"} with 400 (bad query or body), 404, 405,
// 500 (the Backend failed) or 501 (the Backend cannot reconnect). Bodies are limited to 64 KiB. The Host header
// is ignored (the client sends "hubgate").
package control

import (
	"context"
	"errors"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
)

// Errors a caller branches on.
var (
	// ErrNotRunning: nothing listens on the control socket (no socket file,
	// or a stale one). `hubgate history` then reads the journal directly.
	ErrNotRunning = errors.New("hubgate daemon is not running")
	// ErrAlreadyRunning: Listen found another daemon on the socket.
	ErrAlreadyRunning = errors.New("another hubgate daemon is running")
	// ErrInsecureDir: the socket's directory is writable by others or owned
	// by another user.
	ErrInsecureDir = errors.New("control socket directory is not private")
)

// Backend is what the control endpoint asks the running daemon. The bridge
// implements it. Methods may be called concurrently.
type Backend interface {
	Status(ctx context.Context) (bridge.Status, error)
	// History returns up to limit journal entries, newest first.
	History(ctx context.Context, limit int) ([]journal.Entry, error)
	// Cancel cancels the current run (force: terminate instead of a soft
	// cancel).
	Cancel(ctx context.Context, force bool) (bridge.CancelResult, error)
}

// Reconnecter is what a Backend may also do: reconnect the hub at once
// after a new pairing or an unpairing (POST /v1/reconnect). A Backend
// without it answers that request with 501.
type Reconnecter interface {
	Reconnect(ctx context.Context) (ReconnectResult, error)
}

// ReconnectResult is the answer to a reconnect request.
type ReconnectResult struct {
	// Paired: a device is paired; the hub client reconnects with it now.
	// False: no device is paired any more; the daemon stops.
	Paired   bool   `json:"paired"`
	DeviceID string `json:"deviceId,omitempty"` // the device it connects with now
	// PreviousDeviceID is the device it was connected with before.
	PreviousDeviceID string `json:"previousDeviceId,omitempty"`
	PID              int    `json:"pid"` // filled by the server when zero
	Message          string `json:"message"`
}

// DefaultHistoryLimit is the page size of /v1/history without a limit.
const DefaultHistoryLimit = 20

const maxBody = 64 << 10
