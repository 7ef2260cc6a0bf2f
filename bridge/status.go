package bridge

import (
	"context"

	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/hub"
)

// maxNotifications is how many notify messages status keeps.
const maxNotifications = 20

func (b *Bridge) addNotification(n Notification) {
	b.mu.Lock()
	b.notifications = append(b.notifications, n)
	if len(b.notifications) > maxNotifications {
		b.notifications = b.notifications[len(b.notifications)-maxNotifications:]
	}
	e := Event{Kind: control.EventNotify, Level: n.Level, Message: n.Message}
	if r := b.current; r != nil {
		e = commandEvent(control.EventNotify, r.pending)
		e.Level, e.Message = n.Level, n.Message
	}
	b.mu.Unlock()
	b.emit(e)
}

// Status returns the bridge's state now (the control endpoint's status).
func (b *Bridge) Status(ctx context.Context) (control.Status, error) {
	hs := b.opts.Hub.State()
	st := control.Status{
		DeviceID:  b.opts.DeviceID,
		Hub:       hubStatus(hs),
		Listening: b.accepting(),
		Automate:  b.opts.Target,
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st.ListeningPolicy = string(b.opts.Listening)
	if b.listenWish != nil {
		st.HubAsked = &control.ListenRequest{Listen: *b.listenWish, At: b.listenAsked}
	}
	st.StartedAt = b.started
	if !b.started.IsZero() {
		st.UptimeMs = b.now().Sub(b.started).Milliseconds()
	}
	st.Counters = b.countersLocked()
	st.WaitingForServer = b.waitingReady
	st.Notifications = append([]Notification{}, b.notifications...)
	st.Queue = []control.QueuedCommand{}
	for _, p := range b.queue {
		st.Queue = append(st.Queue, control.QueuedCommand{CommandID: p.id, Rule: p.rule.Name(), Command: p.cmd.Text, QueuedAt: p.queuedAt})
	}
	if r := b.current; r != nil {
		status := control.RunRunning
		if r.parked {
			status = control.RunParked
		}
		st.Current = &control.CurrentRun{CommandID: r.id, Rule: r.rule.Name(), Command: r.cmd.Text, RequestID: r.requestID,
			Status: status, StartedAt: r.startedAt}
		if q := b.asking; q != nil && q.commandID == r.id {
			st.Current.Question = &control.PendingQuestion{Question: q.asked.Question, Choices: q.asked.Choices, Deadline: q.deadline}
		}
	}
	return st, nil
}

func hubStatus(s hub.State) control.HubStatus {
	return control.HubStatus{Status: string(s.Status), Cause: string(s.Cause), Reason: s.Reason, Since: s.Since,
		Attempt: s.Attempt, RetryAt: s.RetryAt, NeedsRepair: s.NeedsRepair()}
}

// History returns the newest journal entries.
func (b *Bridge) History(ctx context.Context, limit int) ([]journal.Entry, error) {
	return b.opts.Journal.History(ctx, journal.HistoryQuery{Limit: limit})
}
