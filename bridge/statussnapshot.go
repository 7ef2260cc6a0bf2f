package bridge

import (
	"context"

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
	e := Event{Kind: EventNotify, Level: n.Level, Message: n.Message}
	if r := b.current; r != nil {
		e = commandEvent(EventNotify, r.pending)
		e.Level, e.Message = n.Level, n.Message
	}
	b.mu.Unlock()
	b.emit(e)
}

// Status returns the bridge's state now (the control endpoint's status).
func (b *Bridge) Status(ctx context.Context) (Status, error) {
	hs := b.opts.Hub.State()
	st := Status{
		DeviceID:  b.opts.DeviceID,
		Hub:       hubStatus(hs),
		Listening: b.accepting(),
		Automate:  b.opts.Target,
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st.ListeningPolicy = string(b.opts.Listening)
	if b.listenWish != nil {
		st.HubAsked = &ListenRequest{Listen: *b.listenWish, At: b.listenAsked}
	}
	st.StartedAt = b.started
	if !b.started.IsZero() {
		st.UptimeMs = b.now().Sub(b.started).Milliseconds()
	}
	st.Counters = b.countersLocked()
	st.WaitingForServer = b.waitingReady
	st.Notifications = append([]Notification{}, b.notifications...)
	st.Queue = []QueuedCommand{}
	for _, p := range b.queue {
		st.Queue = append(st.Queue, QueuedCommand{CommandID: p.id, Rule: p.rule.Name(), Command: p.cmd.Text, QueuedAt: p.queuedAt})
	}
	if r := b.current; r != nil {
		status := RunRunning
		if r.parked {
			status = RunParked
		}
		st.Current = &CurrentRun{CommandID: r.id, Rule: r.rule.Name(), Command: r.cmd.Text, RequestID: r.requestID,
			Status: status, StartedAt: r.startedAt, WorkflowStatus: r.workflowStatus, Steps: append([]StepInfo{}, r.steps...)}
		if r.cancelRequested {
			st.Current.Cancel = &CancelState{By: r.stoppedBy, At: r.cancelAt, GraceMs: r.grace.Milliseconds(),
				ForceAt: r.cancelAt.Add(r.grace), Forced: r.forced}
		}
		if q := b.asking; q != nil && q.commandID == r.id {
			st.Current.Question = &PendingQuestion{Question: q.asked.Question, Choices: q.asked.Choices, Deadline: q.deadline}
		}
	}
	st.Recent = append([]RecentRun{}, b.recent...)
	return st, nil
}

// keepRecentLocked keeps r, finished as fin, first among the recent runs
// status shows with their steps: the steps live only in memory (the run
// record holds them on the server; the journal keeps the outcome), for
// the last MaxRecentRuns runs of this daemon's life (b.mu is held).
func (b *Bridge) keepRecentLocked(r *runState, fin Event) {
	rr := RecentRun{CommandID: r.id, Rule: r.rule.Name(), Command: r.cmd.Text, RequestID: fin.RequestID,
		StartedAt: r.startedAt, FinishedAt: b.now(), Outcome: fin.Outcome(), StoppedBy: fin.StoppedBy, ForcedBy: fin.ForcedBy,
		Steps: append([]StepInfo{}, r.steps...)}
	b.recent = append([]RecentRun{rr}, b.recent...)
	if len(b.recent) > MaxRecentRuns {
		b.recent = b.recent[:MaxRecentRuns]
	}
}

func hubStatus(s hub.State) HubStatus {
	return HubStatus{Status: string(s.Status), Cause: string(s.Cause), Reason: s.Reason, Since: s.Since,
		Attempt: s.Attempt, RetryAt: s.RetryAt, NeedsRepair: s.NeedsRepair() || s.Cause == hub.CauseWrongDevice}
}

// History returns the newest journal entries.
func (b *Bridge) History(ctx context.Context, limit int) ([]journal.Entry, error) {
	return b.opts.Journal.History(ctx, journal.HistoryQuery{Limit: limit})
}
