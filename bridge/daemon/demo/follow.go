package demo

import (
	"encoding/json"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
)

// outcome is how the first command ended (for Once).
type outcome struct {
	ID        int64
	Decision  journal.Decision
	Status    automate.RunStatus
	ErrorCode string
	Reason    string
}

// follower narrates the bridge's event stream in its text form, tells
// when the hub first listens and how the first command ended. It is used
// from one goroutine.
type follower struct {
	r *run
	// listening is closed when the hub first reports listening.
	listening chan struct{}
	// first receives how the first command ended (buffered: sent once).
	first chan outcome

	heard     bool                       // listening was closed
	decisions map[int64]journal.Decision // the last decision per command
	firstID   int64                      // the first command seen; 0 before any
	settled   bool                       // the first command is settled (reported)
}

func newFollower(r *run) *follower {
	return &follower{r: r, listening: make(chan struct{}), first: make(chan outcome, 1),
		decisions: map[int64]journal.Decision{}}
}

// follow narrates events until the channel closes.
func (f *follower) follow(events <-chan bridge.Event) {
	for e := range events {
		f.observe(e)
	}
}

// observe narrates one event and notes the hub listening and the first
// command settled.
func (f *follower) observe(e bridge.Event) {
	indent := ""
	if !f.heard {
		indent = "   " // the daemon's start, under its heading
	}
	fields := eventFields(e)
	for _, l := range e.Lines() {
		f.r.say(l.Step, fields, "%s%s", indent, l.Text)
	}
	switch e.Kind {
	case bridge.EventHub:
		if !f.heard && e.Hub != nil && e.Hub.Status == "listening" {
			f.heard = true
			close(f.listening)
		}
	case bridge.EventReceived:
		if f.firstID == 0 {
			f.firstID = e.CommandID
		}
	case bridge.EventDecided:
		f.decisions[e.CommandID] = e.Decision
		if e.Decision != journal.DecisionStarted && e.Decision != journal.DecisionQueued {
			f.settle(e, e.Note)
		}
	case bridge.EventFinished:
		f.settle(e, e.Error)
	}
}

// settle reports the first command's outcome, once.
func (f *follower) settle(e bridge.Event, reason string) {
	if f.settled || e.CommandID != f.firstID || f.firstID == 0 {
		return
	}
	f.settled = true
	f.first <- outcome{ID: e.CommandID, Decision: f.decisions[e.CommandID], Status: e.Status, ErrorCode: e.ErrorCode, Reason: reason}
}

// eventFields are an event's values for machine readers: its JSON fields
// (ids, status, answer, ...), without the stream's own bookkeeping.
func eventFields(e bridge.Event) map[string]any {
	b, err := json.Marshal(e)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	delete(m, "seq")
	delete(m, "at")
	return m
}
