package bridge

import (
	"context"
	"time"
)

// The daemon's state as `hubgate status`, the control socket and the
// status page show it: plain values with their JSON names (the wire
// format of /v1/status and /v1/cancel).

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
	// Recent are the runs finished since the daemon started, newest
	// first, at most MaxRecentRuns: their steps are shown nowhere else.
	Recent []RecentRun `json:"recent"`
}

// MaxRecentRuns bounds Status.Recent.
const MaxRecentRuns = 5

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
	NeedsRepair bool      `json:"needsRepair"` // the device token was refused, or is another device's: pair again (RepairHint)
}

// RepairCommand is the command that pairs the device again with a new
// token: what the person is told when the hub refuses the device (its
// token disabled, the device deleted, a token of another device).
const RepairCommand = "hubgate pair --reuse"

// RepairHint says what to do about a hub that refuses the device; status,
// watch and the notification say it.
const RepairHint = "the device must be paired again: run '" + RepairCommand + "' (or 'hubgate pair --replace' for a new device)"

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
	// WorkflowStatus is the server's last workflow status for the run
	// ("" until one was reported).
	WorkflowStatus string `json:"workflowStatus,omitempty"`
	// Steps are the run's steps so far, by index ([] before the first).
	Steps []StepInfo `json:"steps"`
	// Cancel is set once a cancel was requested.
	Cancel *CancelState `json:"cancel,omitempty"`
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

// AnswerResult is the answer to an answer (Bridge.Answer): whether a
// question waited and took it.
type AnswerResult struct {
	Answered  bool   `json:"answered"`
	CommandID int64  `json:"commandId,omitempty"` // the command whose run asked
	Message   string `json:"message"`
}

// CancelState is a requested cancel of the current run: who asked, when,
// and when a soft cancel is escalated to a force cancel (At + Grace).
type CancelState struct {
	By      string    `json:"by"`
	At      time.Time `json:"at"`
	GraceMs int64     `json:"graceMs"`
	// ForceAt is when the bridge forces the cancel if the run still runs.
	ForceAt time.Time `json:"forceAt"`
	Forced  bool      `json:"forced,omitempty"` // a force cancel was sent
}

// RecentRun is a run that finished during this daemon's life, with its
// steps (kept in memory: the journal keeps the outcome, not each step).
type RecentRun struct {
	CommandID  int64      `json:"commandId"`
	Rule       string     `json:"rule,omitempty"`
	Command    string     `json:"command"`
	RequestID  string     `json:"requestId,omitempty"`
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt time.Time  `json:"finishedAt"`
	Outcome    string     `json:"outcome"` // Event.Outcome
	StoppedBy  string     `json:"stoppedBy,omitempty"`
	ForcedBy   string     `json:"forcedBy,omitempty"` // a forced stop: who or what forced it
	Steps      []StepInfo `json:"steps"`
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
	// Canceled counts runs someone stopped (hubgate cancel, the status
	// page, StopOutputs, a restart by the busy policy, shutdown), forced
	// or not, that ended without completing: not failures.
	Canceled uint64 `json:"canceled"`
	// Answers counts commands that answered a question of the run in
	// flight (decision answer) instead of starting a run.
	Answers uint64 `json:"answers"`
	// Unrecorded counts commands the journal could not record: they were
	// not run (nothing runs unrecorded) and the person was told.
	Unrecorded uint64 `json:"unrecorded"`
	// Last is the latest reason behind each count that has one, by the
	// count's JSON name (started, queued, dropped, ignored, refused,
	// abandoned, failed, canceled, answer, duplicates, unrecorded).
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
	// GraceMs is how long a soft cancel may take before the bridge forces
	// it (bridge.cancel_grace); ForceAt is when it will, for a soft cancel.
	GraceMs int64     `json:"graceMs,omitempty"`
	ForceAt time.Time `json:"forceAt,omitzero"`
	// Already: a cancel of this run had been asked before (by anyone);
	// with a soft cancel and no ForceAt, it was forced already.
	Already bool `json:"already,omitempty"`
}

// cancelSourceKey carries who asks a cancel (WithCancelSource).
type cancelSourceKey struct{}

// WithCancelSource says who asks the cancels made with ctx ("the status
// page"); the bridge carries it to the finished event and the journal.
func WithCancelSource(ctx context.Context, source string) context.Context {
	return context.WithValue(ctx, cancelSourceKey{}, source)
}

// CancelSource is who asks the cancels of ctx: WithCancelSource's, else
// "hubgate cancel".
func CancelSource(ctx context.Context) string {
	if s, ok := ctx.Value(cancelSourceKey{}).(string); ok && s != "" {
		return s
	}
	return "hubgate cancel"
}
