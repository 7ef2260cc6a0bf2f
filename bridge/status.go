package bridge

import (
	"context"
	"time"

	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/hub"
)

// Status is what `hubgate status` shows of the running daemon.
type Status struct {
	DeviceID      string          `json:"deviceId,omitempty"`
	Hub           HubStatus       `json:"hub"`
	Listening     bool            `json:"listening"`
	Target        Target          `json:"automate"`
	Current       *CurrentRun     `json:"currentRun"`
	Queue         []QueuedCommand `json:"queue"`
	WaitingReady  bool            `json:"waitingForServer"` // a run started elsewhere holds the slot
	Counters      Counters        `json:"counters"`
	Notifications []Notification  `json:"notifications"`
	StartedAt     time.Time       `json:"startedAt"`
	UptimeSeconds int64           `json:"uptimeSeconds"`
}

// HubStatus is the hub connection state with its reason.
type HubStatus struct {
	Status      string    `json:"status"`
	Cause       string    `json:"cause,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	Since       time.Time `json:"since"`
	Attempt     int       `json:"attempt,omitempty"`
	RetryAt     time.Time `json:"retryAt,omitzero"`
	NeedsRepair bool      `json:"needsRepair,omitempty"`
}

// CurrentRun is the run in flight.
type CurrentRun struct {
	CommandID       int64     `json:"commandId"`
	Rule            string    `json:"rule"`
	Command         string    `json:"command"`
	RequestID       string    `json:"requestId,omitempty"`
	Status          string    `json:"status"` // running or parked
	StartedAt       time.Time `json:"startedAt"`
	CancelRequested bool      `json:"cancelRequested,omitempty"`
}

// QueuedCommand is a command waiting for the slot.
type QueuedCommand struct {
	CommandID int64     `json:"commandId"`
	Rule      string    `json:"rule"`
	Command   string    `json:"command"`
	QueuedAt  time.Time `json:"queuedAt"`
}

// maxNotifications is how many notify messages status keeps.
const maxNotifications = 20

func (b *Bridge) addNotification(n Notification) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.notifications = append(b.notifications, n)
	if len(b.notifications) > maxNotifications {
		b.notifications = b.notifications[len(b.notifications)-maxNotifications:]
	}
}

// Status returns the bridge's state now.
func (b *Bridge) Status(ctx context.Context) (Status, error) {
	hs := b.opts.Hub.State()
	st := Status{
		DeviceID:  b.opts.DeviceID,
		Hub:       hubStatus(hs),
		Listening: b.opts.Hub.Listening(),
		Target:    b.opts.Target,
		StartedAt: b.started,
	}
	if !b.started.IsZero() {
		st.UptimeSeconds = int64(b.now().Sub(b.started).Seconds())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st.Counters = b.counters
	st.WaitingReady = b.waitingReady
	st.Notifications = append([]Notification{}, b.notifications...)
	st.Queue = []QueuedCommand{}
	for _, p := range b.queue {
		st.Queue = append(st.Queue, QueuedCommand{CommandID: p.id, Rule: p.rule.Name(), Command: p.cmd.Text, QueuedAt: p.queuedAt})
	}
	if r := b.current; r != nil {
		status := "running"
		if r.parked {
			status = "parked"
		}
		st.Current = &CurrentRun{CommandID: r.id, Rule: r.rule.Name(), Command: r.cmd.Text, RequestID: r.requestID,
			Status: status, StartedAt: r.startedAt, CancelRequested: r.cancelRequested}
	}
	return st, nil
}

func hubStatus(s hub.State) HubStatus {
	return HubStatus{Status: string(s.Status), Cause: string(s.Cause), Reason: s.Reason, Since: s.Since,
		Attempt: s.Attempt, RetryAt: s.RetryAt, NeedsRepair: s.NeedsRepair()}
}

// History returns the newest journal entries.
func (b *Bridge) History(ctx context.Context, limit int) ([]journal.Entry, error) {
	return b.opts.Journal.History(ctx, journal.HistoryQuery{Limit: limit})
}
