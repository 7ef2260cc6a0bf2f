package mockhub

import (
	"context"
	"sync"
	"time"
)

// Event sources.
const (
	SourceOAuth = "oauth"
	SourceREST  = "rest"
	SourceHub   = "hub"
)

// Event is one thing a client did. It never holds a token, code, verifier
// or secret.
type Event struct {
	Seq          int64          `json:"seq"`
	Time         time.Time      `json:"time"`
	Source       string         `json:"source"` // oauth, rest, hub
	Action       string         `json:"action"` // e.g. "token", "CreateUserDevice", "VerifySelf", "connected"
	DeviceID     string         `json:"deviceId,omitempty"`
	TokenID      string         `json:"tokenId,omitempty"`
	ConnectionID string         `json:"connectionId,omitempty"`
	Status       int            `json:"status,omitempty"` // HTTP status of REST and OAuth calls, 401/503 of refused hub requests
	Error        string         `json:"error,omitempty"`
	Args         map[string]any `json:"args,omitempty"`
}

type eventLog struct {
	mu     sync.Mutex
	seq    int64
	events []Event
	max    int
	now    func() time.Time
	notify chan struct{} // closed and replaced on every add
}

func newEventLog(max int, now func() time.Time) *eventLog {
	return &eventLog{max: max, now: now, notify: make(chan struct{})}
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	e.Seq = l.seq
	e.Time = l.now().UTC()
	l.events = append(l.events, e)
	if len(l.events) > l.max {
		l.events = append([]Event(nil), l.events[len(l.events)-l.max:]...)
	}
	close(l.notify)
	l.notify = make(chan struct{})
}

// since returns the events with Seq > n, the last sequence number, and a
// channel closed at the next add.
func (l *eventLog) since(n int64) ([]Event, int64, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for i := len(l.events) - 1; i >= 0 && l.events[i].Seq > n; i-- {
		out = append(out, l.events[i])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, l.seq, l.notify
}

// Events returns the logged events with a sequence number above since, in
// order (0: all that are kept).
func (s *Server) Events(since int64) []Event {
	evs, _, _ := s.events.since(since)
	return evs
}

// WaitEvents returns the events above since, waiting until there is at
// least one or ctx ends.
func (s *Server) WaitEvents(ctx context.Context, since int64) ([]Event, error) {
	for {
		evs, _, ch := s.events.since(since)
		if len(evs) > 0 {
			return evs, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// WaitEvent waits for the first event above since that match accepts,
// and returns it.
func (s *Server) WaitEvent(ctx context.Context, since int64, match func(Event) bool) (Event, error) {
	for {
		evs, err := s.WaitEvents(ctx, since)
		if err != nil {
			return Event{}, err
		}
		for _, e := range evs {
			if match(e) {
				return e, nil
			}
			since = e.Seq
		}
	}
}

func (s *Server) record(e Event) {
	s.events.add(e)
	s.log.Debug("mockhub event", "source", e.Source, "action", e.Action, "device", e.DeviceID, "status", e.Status, "error", e.Error)
}
