package bridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/hub"
)

// handleTooLarge acts on a hub message over the hub's receive limit
// (hub.KindTooLarge), which the hub client skipped unread, keeping the
// connection. A command is never dropped in silence: it is journaled,
// refused with its size and counted, and the person is told (the
// notifier shows a refused command). A profile (a DeviceProfileUpdate,
// or the device VerifySelf or GetLatestDevice answered) leaves the macro
// catalogue as it was, with one warning and one notification per
// profile (profileTooLarge). Anything else is logged.
func (b *Bridge) handleTooLarge(ctx context.Context, ev hub.Event) {
	tl := ev.TooLarge
	if tl == nil {
		return
	}
	switch {
	case tl.Of == hub.KindDeviceCommand, ev.Target == "":
		// A record whose target could not be read may be a command the
		// person triggered: refused and told like one, never dropped.
		b.refuseTooLarge(ctx, ev, tl)
	case tl.Of == hub.KindDeviceProfileUpdate:
		b.profileTooLarge(ev, tl)
	default:
		b.log.Warn("the hub sent a message over the receive limit; skipped", "target", ev.Target, "bytes", tl.Size,
			"limit", tl.Limit, "setting", "hub.max_message_bytes")
	}
}

// tooLargeNote says how large a message was, against which limit.
// what, when given, is said after the size.
func tooLargeNote(tl *hub.TooLarge, what ...string) string {
	size := fmt.Sprintf("%d bytes", tl.Size)
	if tl.Unterminated {
		size = fmt.Sprintf("%d bytes, cut off", tl.Size)
	}
	for _, w := range what {
		size += "; " + w
	}
	return fmt.Sprintf("too large (%s; the hub limit is %d bytes, hub.max_message_bytes)", size, tl.Limit)
}

// refuseTooLarge journals a DeviceCommand over the limit as refused.
func (b *Bridge) refuseTooLarge(ctx context.Context, ev hub.Event, tl *hub.TooLarge) {
	b.mu.Lock()
	notify := b.opts.Notify
	b.mu.Unlock()
	note := tooLargeNote(tl)
	switch {
	case ev.Target == "":
		note = tooLargeNote(tl, "its target could not be read")
	case ev.Command == "":
		note += "; its command could not be read"
	}
	rec := journal.Command{Seq: ev.Seq, Session: ev.Session, InvocationID: ev.InvocationID, ReceivedAt: ev.Received,
		Text: ev.Command, Decision: journal.DecisionReceived}
	id, dup, err := b.opts.Journal.RecordCommand(ctx, rec)
	if err != nil {
		b.unrecorded(rec, err)
		return
	}
	if dup {
		b.duplicate(rec, id)
		return
	}
	b.mu.Lock()
	b.counters.Received++
	b.mu.Unlock()
	b.log.Warn("the hub sent a command over the receive limit; refused", "command_id", id, "bytes", tl.Size, "limit", tl.Limit)
	ce := Event{Kind: EventReceived, CommandID: id, Command: rec.Text, Notify: notify}
	b.emit(ce)
	b.decide(ctx, ce, journal.DecisionRefused, note)
}

// profileTooLarge keeps the catalogue and tells, once per profile: a
// DeviceProfileUpdate of another size is a new profile; a device that
// VerifySelf or GetLatestDevice answered after one was told is the same
// profile again (a reconnect), told only when none was.
func (b *Bridge) profileTooLarge(ev hub.Event, tl *hub.TooLarge) {
	pushed := strings.EqualFold(ev.Target, string(hub.KindDeviceProfileUpdate))
	b.mu.Lock()
	told := b.toldProfileSize != 0 && (tl.Size == b.toldProfileSize || !pushed)
	if !told {
		b.toldProfileSize = tl.Size
	}
	notify := b.opts.Notify
	macros := b.set.Catalog().Len()
	b.mu.Unlock()
	if told {
		b.log.Debug("the same profile over the receive limit again; the macro catalogue stays", "from", ev.Target, "bytes", tl.Size)
		return
	}
	note := fmt.Sprintf("the profile the hub sent (%s) is %s: not loaded; the macro catalogue stays as it was (macros: %d)",
		ev.Target, tooLargeNote(tl), macros)
	b.log.Warn("the hub sent a profile over the receive limit; the macro catalogue stays as it was", "from", ev.Target,
		"bytes", tl.Size, "limit", tl.Limit, "macros", macros, "setting", "hub.max_message_bytes")
	b.emit(Event{Kind: EventProfileTooLarge, Note: note, Notify: notify})
}
