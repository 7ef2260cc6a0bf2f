package bridge

import (
	"maps"

	"github.com/hubgate/hubgate/bridge/journal"
)

// Counter names of Counters.Last (their JSON names).
const (
	countStarted    = "started"
	countDuplicates = "duplicates"
	countUnrecorded = "unrecorded"
	countCanceled   = "canceled"
)

// reasonLocked records the latest reason behind a count (b.mu held).
func (b *Bridge) reasonLocked(count string, id int64, command, reason string) {
	if b.counters.Last == nil {
		b.counters.Last = map[string]LastReason{}
	}
	b.counters.Last[count] = LastReason{At: b.now(), CommandID: id, Command: command, Reason: reason}
}

// countersLocked is a copy of the counters (b.mu held).
func (b *Bridge) countersLocked() Counters {
	c := b.counters
	c.Last = maps.Clone(b.counters.Last)
	return c
}

// countDecisionLocked counts a decision and keeps its note (b.mu held).
func (b *Bridge) countDecisionLocked(d journal.Decision, id int64, command, note string) {
	var n *uint64
	switch d {
	case journal.DecisionQueued:
		n = &b.counters.Queued
	case journal.DecisionDropped:
		n = &b.counters.Dropped
	case journal.DecisionIgnored:
		n = &b.counters.Ignored
	case journal.DecisionRefused:
		n = &b.counters.Refused
	case journal.DecisionFailed:
		n = &b.counters.Failed
	case journal.DecisionAbandoned:
		n = &b.counters.Abandoned
	default:
		return
	}
	*n++
	b.reasonLocked(string(d), id, command, note)
}

// duplicate counts a repeated delivery of a recorded hub invocation: it
// is not run again and makes no row.
func (b *Bridge) duplicate(rec journal.Command, id int64) {
	b.mu.Lock()
	b.counters.Duplicates++
	b.reasonLocked(countDuplicates, id, rec.Text, "hub invocation "+rec.InvocationID+" delivered again on the same connection; recorded once as command")
	b.mu.Unlock()
	b.log.Info("command already journaled (the hub delivered its invocation twice); not run again", "seq", rec.Seq, "id", id,
		"invocation_id", rec.InvocationID)
}

// unrecorded handles a command the journal could not record: it is not
// run (nothing runs unrecorded), it is counted, and the person is told
// through the event stream (the notifier shows EventUnrecorded).
func (b *Bridge) unrecorded(rec journal.Command, err error) {
	note := "not run: the journal could not record it (" + err.Error() + ")"
	b.log.Error("journal: command not recorded; not running it", "seq", rec.Seq, "err", err)
	b.mu.Lock()
	b.counters.Unrecorded++
	b.reasonLocked(countUnrecorded, 0, rec.Text, note)
	b.mu.Unlock()
	b.emit(Event{Kind: EventUnrecorded, Command: rec.Text, Rule: rec.Rule, MacroName: rec.MacroName, Note: note})
}
