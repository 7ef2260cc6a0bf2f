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
//	GET  /v1/status             -> Status
//	GET  /v1/history?limit=N    -> {"entries": [journal.Entry, ...]} newest first
//	                               (N: 1..journal.MaxHistoryLimit, default 20)
//	POST /v1/cancel {"force":b} -> CancelResult (an empty body means force=false)
//	GET  /v1/watch?history=N    -> the event stream: one JSON Event per line
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
	"time"

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
	Status(ctx context.Context) (Status, error)
	// History returns up to limit journal entries, newest first.
	History(ctx context.Context, limit int) ([]journal.Entry, error)
	// Cancel cancels the current run (force: terminate instead of a soft
	// cancel).
	Cancel(ctx context.Context, force bool) (CancelResult, error)
}

// Answerer is what a Backend may also do: answer the question the run in
// flight asked the person (the bridge's ask_person tool), from the status
// page's answer box.
type Answerer interface {
	Answer(ctx context.Context, text, via string) (AnswerResult, error)
}

// AnswerResult is the answer to an Answer request.
type AnswerResult struct {
	// Answered: a question was pending and text became its answer.
	Answered  bool   `json:"answered"`
	CommandID int64  `json:"commandId,omitempty"` // the command whose run asked
	Message   string `json:"message"`
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

// Status is the daemon's state as `hubgate status` shows it.
type Status struct {
	PID       int       `json:"pid"` // filled by the server when zero
	Version   string    `json:"version,omitempty"`
	DeviceID  string    `json:"deviceId"`
	StartedAt time.Time `json:"startedAt,omitzero"`
	UptimeMs  int64     `json:"uptimeMs"`

	Hub HubStatus `json:"hub"`
	// Listening: a command that arrives now is acted on (with
	// ListeningPolicy follow-vendor always; with obey, not after the hub's
	// StopListening, nor before the device listens).
	Listening bool `json:"listening"`
	// HubAsked is the hub's last StartListening or StopListening: what
	// the hub asked, which is not the connection's state. Null until the
	// hub asked anything.
	HubAsked *ListenRequest `json:"hubAsked"`
	// ListeningPolicy is what StopListening does to commands
	// (bridge.listening): follow-vendor or obey.
	ListeningPolicy string          `json:"listeningPolicy"`
	Current         *CurrentRun     `json:"current"` // null when no run is in flight
	Queue           []QueuedCommand `json:"queue"`   // [] when empty, oldest first
	Automate        AutomateTarget  `json:"automate"`
	// WaitingForServer: a run hubgate did not start holds the Automate
	// server's slot; queued commands wait for it.
	WaitingForServer bool           `json:"waitingForServer"`
	Counters         Counters       `json:"counters"`
	Notifications    []Notification `json:"notifications"` // the latest notify messages, oldest first
}

// ListenRequest is one listening request of the hub.
type ListenRequest struct {
	Listen bool      `json:"listen"` // StartListening: true; StopListening: false
	At     time.Time `json:"at"`
}

// Notification is a message the notify tool reported to the user.
type Notification struct {
	At      time.Time `json:"at"`
	Level   string    `json:"level"`
	Message string    `json:"message"`
}

// HubStatus is the hub connection state with its reason (hub.State as
// plain values).
type HubStatus struct {
	Status      string    `json:"status"`           // connecting, connected, listening, reconnecting, stopped
	Cause       string    `json:"cause,omitempty"`  // why not connected (hub.Cause)
	Reason      string    `json:"reason,omitempty"` // human-readable
	Since       time.Time `json:"since,omitzero"`
	Attempt     int       `json:"attempt,omitempty"` // failed attempts since the last connection
	RetryAt     time.Time `json:"retryAt,omitzero"`
	NeedsRepair bool      `json:"needsRepair"` // the device token was refused: pair again
}

// Current run statuses.
const (
	RunRunning = "running"
	RunParked  = "parked" // awaiting results of a hubgate-executed client tool
)

// CurrentRun is the run in flight.
type CurrentRun struct {
	CommandID int64     `json:"commandId"` // journal id
	Rule      string    `json:"rule,omitempty"`
	RequestID string    `json:"requestId,omitempty"` // "" until the server answered
	Status    string    `json:"status"`              // RunRunning or RunParked
	StartedAt time.Time `json:"startedAt"`
	Command   string    `json:"command"`
	// Question is what the run asked the person (ask_person) and waits
	// for; nil when it waits for nothing.
	Question *PendingQuestion `json:"question,omitempty"`
}

// PendingQuestion is a question of the run in flight, waiting for an answer.
type PendingQuestion struct {
	Question string    `json:"question"`
	Choices  []string  `json:"choices,omitempty"`
	Deadline time.Time `json:"deadline"`
}

// QueuedCommand is one command waiting in the queue.
type QueuedCommand struct {
	CommandID int64     `json:"commandId"`
	Rule      string    `json:"rule,omitempty"`
	Command   string    `json:"command"`
	QueuedAt  time.Time `json:"queuedAt"`
}

// Automate target modes.
const (
	ModeCohosted = "cohosted" // the daemon serves the Automate server in-process
	ModeExternal = "external" // the desktop application's server
)

// AutomateTarget is where runs go.
type AutomateTarget struct {
	Mode     string `json:"mode"`               // ModeCohosted or ModeExternal
	Endpoint string `json:"endpoint,omitempty"` // base URL, e.g. http://127.0.0.1:4317
	// Product is the server's product word ("service" in the spec; the
	// desktop application's own name, as discovery found it).
	Product string `json:"product,omitempty"`
}

// Counters count commands and runs since the daemon started. Every
// command that reaches the daemon is counted once as received (or, when
// the journal could not record it, as unrecorded), and then by its
// decision; a repeated delivery of one hub invocation is counted as a
// duplicate only.
type Counters struct {
	Received   uint64 `json:"received"`
	Duplicates uint64 `json:"duplicates"` // deliveries of an invocation already recorded (not run again)
	Started    uint64 `json:"started"`
	Queued     uint64 `json:"queued"`
	Dropped    uint64 `json:"dropped"`
	Ignored    uint64 `json:"ignored"`
	Refused    uint64 `json:"refused"` // not run on purpose (not for this device; StopListening with bridge.listening: obey)
	Abandoned  uint64 `json:"abandoned"`
	Completed  uint64 `json:"completed"` // runs that ended completed
	Failed     uint64 `json:"failed"`    // runs that ended failed or terminated, failed requests, and commands decided failed
	Canceled   uint64 `json:"canceled"`
	// Answers counts commands that answered a question of the run in
	// flight (decision answer) instead of starting a run.
	Answers uint64 `json:"answers"`
	// Unrecorded counts commands the journal could not record: they were
	// not run (nothing runs unrecorded) and the person was told.
	Unrecorded uint64 `json:"unrecorded"`
	// Last is the latest reason behind each count that has one, by the
	// count's JSON name (started, queued, dropped, ignored, refused,
	// abandoned, failed, answer, duplicates, unrecorded).
	Last map[string]LastReason `json:"last,omitempty"`
}

// LastReason is the latest event behind one count.
type LastReason struct {
	At        time.Time `json:"at"`
	CommandID int64     `json:"commandId,omitempty"` // 0: no journal row (unrecorded)
	Command   string    `json:"command,omitempty"`
	Reason    string    `json:"reason"`
}

// CancelResult is the answer to a cancel request.
type CancelResult struct {
	Stopped   bool   `json:"stopped"`             // a run was (or is being) stopped
	Mode      string `json:"mode"`                // cancel, terminate or none (automate.CancelMode*)
	CommandID int64  `json:"commandId,omitempty"` // the journal id of the stopped run's command
	RequestID string `json:"requestId,omitempty"`
	Message   string `json:"message,omitempty"`
}

// DefaultHistoryLimit is the page size of /v1/history without a limit.
const DefaultHistoryLimit = 20

const maxBody = 64 << 10
