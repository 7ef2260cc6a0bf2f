package bridge

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/deviceapi"
)

// recover settles what an earlier life of the daemon left in the journal:
// runs that were in flight are reconciled with the server (never sent
// again), and queued commands are abandoned or, when their rule opts in
// and they are young enough, queued again.
func (b *Bridge) recover(ctx context.Context) error {
	rec, err := b.opts.Journal.Recover(ctx)
	if err != nil {
		return err
	}
	for _, e := range rec.InFlight {
		b.reconcile(ctx, e)
	}
	for _, e := range rec.Undecided {
		b.abandon(ctx, b.entryEvent(e), "abandoned at restart: it was received but never decided")
	}
	b.mu.Lock()
	set, defaultNotify := b.set, b.opts.Notify
	b.mu.Unlock()
	for _, e := range rec.Queued {
		p, why := b.requeue(e, set, defaultNotify)
		if p == nil {
			b.abandon(ctx, b.entryEvent(e), "abandoned at restart: "+why)
			continue
		}
		b.mu.Lock()
		b.queue = append(b.queue, p)
		b.mu.Unlock()
		b.log.Info("queued command kept across the restart", "command_id", e.ID, "rule", p.rule.Name())
	}
	return nil
}

// requeue rebuilds a queued command from its journal entry, or says why it
// must be abandoned.
func (b *Bridge) requeue(e journal.Entry, set *rules.Set, defaultNotify string) (*pending, string) {
	rule, ok := set.Rule(e.Rule)
	switch {
	case !ok:
		return nil, fmt.Sprintf("its rule %q is no longer configured", e.Rule)
	case rule.Recoverable(e.ReceivedAt, b.now()):
	case !rule.RunOnRecovery():
		return nil, "its rule does not run queued commands after a restart"
	default:
		return nil, fmt.Sprintf("older than its rule's max age %s", rule.MaxAge())
	}
	cmd := rules.Command{Text: e.Command, Received: e.ReceivedAt, Seq: e.Seq}
	if len(e.Macro) > 0 {
		var m deviceapi.Macro
		if err := json.Unmarshal(e.Macro, &m); err == nil {
			cmd.Macro = &m
		}
	}
	req, err := rule.Render(set.Complete(cmd), set.Catalog())
	if err != nil {
		return nil, "its rule no longer renders: " + err.Error()
	}
	if req.TaskID == "" {
		req.TaskID = journal.DefaultTaskID(e.ID)
	}
	notify, speak := outputsOf(rule, defaultNotify)
	return &pending{id: e.ID, cmd: cmd, rule: rule, req: req, queuedAt: e.ReceivedAt, notify: notify, speak: speak}, ""
}

// reconcile settles a run that was in flight when the daemon stopped. Its
// record can no longer be received, so it is never sent again: it is
// marked interrupted, and cancelled when the server still runs it.
func (b *Bridge) reconcile(ctx context.Context, e journal.Entry) {
	note := "interrupted by a restart; not sent again"
	if e.RequestID != "" {
		res, err := b.opts.Automate.CancelIfActive(ctx, e.RequestID, false)
		switch {
		case err != nil && !res.Active:
			note += fmt.Sprintf(" (the Automate server could not be asked: %v)", err)
		case err != nil:
			note += fmt.Sprintf(" (still on the server; cancel failed: %v)", err)
		case res.Active:
			note += " (it was still on the server and was cancelled)"
		}
	} else if h, err := b.opts.Automate.Health(ctx); err != nil {
		note += fmt.Sprintf(" (the Automate server could not be asked: %v)", err)
	} else if h.Busy {
		// Its POST may or may not have started that run: hubgate cannot
		// tell, and the run may be someone else's.
		note += " (the server is busy with a run hubgate cannot tell apart; left alone)"
	}
	if err := b.opts.Journal.MarkInterrupted(ctx, e.ID, note); err != nil {
		b.log.Error("journal: mark interrupted", "command_id", e.ID, "err", err)
	}
	b.log.Warn("run in flight at restart", "command_id", e.ID, "request_id", e.RequestID, "note", note)
	ev := b.entryEvent(e)
	ev.Kind, ev.RequestID, ev.TaskID, ev.Error = EventFinished, e.RequestID, e.TaskID, note
	b.emit(ev)
}

// entryEvent is an event about the command of a journal entry, stamped
// (Event.Notify) with its rule's outputs as the configuration says now:
// the command arrived before this process, whose configuration is the
// one the person has.
func (b *Bridge) entryEvent(e journal.Entry) Event {
	b.mu.Lock()
	set, defaultNotify := b.set, b.opts.Notify
	b.mu.Unlock()
	rule, _ := set.Rule(e.Rule)
	notify, speak := outputsOf(rule, defaultNotify)
	return Event{CommandID: e.ID, Command: e.Command, Rule: e.Rule, MacroName: e.MacroName, Notify: notify, Speak: speak}
}
