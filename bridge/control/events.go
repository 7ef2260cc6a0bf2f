package control

import (
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
)

// EventKind names one step of the bridge's event stream.
type EventKind string

// Event kinds, in the order a command's life goes through them.
const (
	// EventReceived: a DeviceCommand was journaled; Rule is the rule it
	// matched ("" when none did).
	EventReceived EventKind = "received"
	// EventDecided: the command's decision (Decision, with Note saying
	// why): started, queued, dropped, ignored, refused, failed or abandoned.
	EventDecided EventKind = "decided"
	// EventUnrecorded: a DeviceCommand arrived but the journal could not
	// record it, so it was not run (Note says why; CommandID is 0).
	EventUnrecorded EventKind = "unrecorded"
	// EventStarted: its run was sent to the Automate server.
	EventStarted EventKind = "started"
	// EventParked: the run awaits the results of client tools hubgate runs.
	EventParked EventKind = "parked"
	// EventResumed: the tool results were sent; the run goes on.
	EventResumed EventKind = "resumed"
	// EventCancelRequested: hubgate asked the server to cancel the run
	// (Note says who asked).
	EventCancelRequested EventKind = "cancel-requested"
	// EventFinished: the run ended: Status, Answer, FinalAnswer,
	// ErrorCode, DurationMs; Error for a request that failed without a run
	// record; or Status "interrupted" for a run lost to a restart.
	EventFinished EventKind = "finished"
	// EventStopOutputs: a StopOutputs macro arrived: whatever speaks or
	// shows output should stop.
	EventStopOutputs EventKind = "stop-outputs"
	// EventNotify: the notify tool reported Message (Level) during the
	// run of CommandID.
	EventNotify EventKind = "notify"
	// EventHub: the hub connection changed state (Hub, with its reason).
	EventHub EventKind = "hub"
	// EventListening: the hub asked to start or stop listening
	// (Listening); Note says what that does to commands.
	EventListening EventKind = "listening"
	// EventLost: this subscriber fell behind and Lost events were dropped
	// for it just before this one.
	EventLost EventKind = "lost"
)

// Event is one step of the bridge's event stream. Seq numbers the events
// of one daemon from 1, without gaps, in the order they happened; fields
// that do not apply to the Kind are empty.
type Event struct {
	Seq  uint64    `json:"seq"`
	At   time.Time `json:"at"`
	Kind EventKind `json:"kind"`

	CommandID int64  `json:"commandId,omitempty"`
	Command   string `json:"command,omitempty"`
	Rule      string `json:"rule,omitempty"`
	MacroName string `json:"macroName,omitempty"`

	Decision journal.Decision `json:"decision,omitempty"`
	Note     string           `json:"note,omitempty"`

	TaskID      string             `json:"taskId,omitempty"`
	RequestID   string             `json:"requestId,omitempty"`
	Status      automate.RunStatus `json:"status,omitempty"`
	Answer      string             `json:"answer,omitempty"`
	FinalAnswer *string            `json:"finalAnswer,omitempty"`
	ErrorCode   string             `json:"errorCode,omitempty"`
	Error       string             `json:"error,omitempty"`
	DurationMs  int64              `json:"durationMs,omitempty"`

	Level   string `json:"level,omitempty"`   // EventNotify
	Message string `json:"message,omitempty"` // EventNotify

	Hub       *HubStatus `json:"hub,omitempty"`       // EventHub
	Listening *bool      `json:"listening,omitempty"` // EventListening
	Lost      uint64     `json:"lost,omitempty"`      // EventLost
}

// Text is what a person should read of a finished run: the final answer
// when the run had an answer contract, else the answer.
func (e Event) Text() string {
	if e.FinalAnswer != nil && *e.FinalAnswer != "" {
		return *e.FinalAnswer
	}
	return e.Answer
}

// Failed reports whether a finished event is a failure a person should
// hear about: a run that failed or was terminated, a request that failed,
// a run lost to a restart. A cancelled run is not (someone asked for it).
func (e Event) Failed() bool {
	if e.Kind != EventFinished {
		return false
	}
	switch e.Status {
	case automate.StatusCompleted, automate.StatusCanceled:
		return false
	}
	return true
}
