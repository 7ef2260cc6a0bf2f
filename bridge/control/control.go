// Package control owns the local control endpoint of the running hubgate
// daemon: a small HTTP/JSON API over a Unix domain socket, reachable only
// by the user the daemon runs as, that `hubgate status`, `history`,
// `cancel`, `watch`, `open` and `pair` use, the client they use it with,
// and the one-daemon-per-socket lock. It serves the bridge's types
// (package bridge) through the small Backend interface it declares.
//
// Who can reach it, the lock, and the API (version 1): docs/control.md.
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

// Answerer is what a Backend may also do: answer the question the run in
// flight asked the person (the bridge's ask_person tool), from the status
// page's answer box.
type Answerer interface {
	Answer(ctx context.Context, text, via string) (bridge.AnswerResult, error)
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
