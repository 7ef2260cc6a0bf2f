package bridge

import (
	"context"
	"sync"

	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/hub"
)

// Defaults of the event stream.
const (
	// DefaultEventBuffer is how many events a subscriber may fall behind
	// before it loses events.
	DefaultEventBuffer = 256
	// DefaultEventHistory is how many past events the bridge keeps for
	// SubscribeOptions.History.
	DefaultEventHistory = 500
)

// SubscribeOptions configures one subscription.
type SubscribeOptions struct {
	// History: the subscription first receives up to this many of the
	// latest past events (those of this daemon's life), then every new one,
	// with no gap and no duplicate between the two. Zero: new events only.
	History int
	// Buffer is how many events this subscriber may fall behind before it
	// loses events. Zero: Options.EventBuffer.
	Buffer int
}

// eventBus fans the bridge's events out to subscribers. Publishing never
// blocks: each subscriber has a bounded buffer; a subscriber whose buffer
// is full loses events, counted, and its next event that fits is preceded
// by an EventLost saying how many it lost.
type eventBus struct {
	mu     sync.Mutex
	seq    uint64
	buffer int
	ring   []Event // the latest events: a ring of keep slots
	next   int     // the ring slot the next event takes
	kept   int     // events in the ring (at most keep)
	keep   int
	subs   map[*subscriber]struct{}
	closed bool
}

type subscriber struct {
	ch   chan Event
	lost uint64
	stop func() bool // forgets the subscription's context
}

func newEventBus(buffer, keep int) *eventBus {
	if buffer <= 0 {
		buffer = DefaultEventBuffer
	}
	if keep <= 0 {
		keep = DefaultEventHistory
	}
	return &eventBus{buffer: buffer, keep: keep, subs: map[*subscriber]struct{}{}}
}

// publish numbers e and hands it to every subscriber, in order.
func (bus *eventBus) publish(e Event) {
	bus.mu.Lock()
	defer bus.mu.Unlock()
	if bus.closed {
		return
	}
	bus.seq++
	e.Seq = bus.seq
	// The ring grows to keep slots as events come (an idle daemon has a
	// handful; 500 slots of Event up front were 170 KB of its idle RSS).
	if len(bus.ring) < bus.keep {
		bus.ring = append(bus.ring, e)
	} else {
		bus.ring[bus.next] = e
	}
	bus.next = (bus.next + 1) % bus.keep
	bus.kept = min(bus.kept+1, bus.keep)
	for s := range bus.subs {
		s.send(e)
	}
}

// send delivers e without blocking (bus.mu is held).
func (s *subscriber) send(e Event) {
	if s.lost > 0 {
		select {
		case s.ch <- Event{Seq: e.Seq, At: e.At, Kind: EventLost, Lost: s.lost}:
			s.lost = 0
		default:
			s.lost++
			return
		}
	}
	select {
	case s.ch <- e:
	default:
		s.lost++
	}
}

func (bus *eventBus) subscribe(ctx context.Context, opts SubscribeOptions) <-chan Event {
	n := max(opts.History, 0)
	bus.mu.Lock()
	n = min(n, bus.kept)
	buffer := bus.buffer
	if opts.Buffer > 0 {
		buffer = opts.Buffer
	}
	s := &subscriber{ch: make(chan Event, buffer+n)}
	for i := n; i > 0; i-- {
		s.ch <- bus.ring[(bus.next-i+bus.keep)%bus.keep]
	}
	if bus.closed {
		close(s.ch)
		bus.mu.Unlock()
		return s.ch
	}
	bus.subs[s] = struct{}{}
	// No goroutine waits for ctx: a subscription whose context never ends
	// would leak one past the bus's close.
	s.stop = context.AfterFunc(ctx, func() {
		bus.mu.Lock()
		defer bus.mu.Unlock()
		if _, ok := bus.subs[s]; ok {
			delete(bus.subs, s)
			close(s.ch)
		}
	})
	bus.mu.Unlock()
	return s.ch
}

// close ends every subscription (after the events already buffered).
func (bus *eventBus) close() {
	bus.mu.Lock()
	defer bus.mu.Unlock()
	bus.closed = true
	for s := range bus.subs {
		delete(bus.subs, s)
		close(s.ch)
		s.stop()
	}
}

// Subscribe returns the bridge's event stream: every decision about every
// command (received with the rule it matched, decided with why, started,
// parked, resumed, cancel requested, finished with its outcome), the
// notify tool's messages, StopOutputs, listening requests and the hub's
// connection states, in the order they happened (Event.Seq).
//
// A subscriber never slows the bridge: it has DefaultEventBuffer events
// of room (Options.EventBuffer); when it falls further behind, the events
// that do not fit are dropped for it and it receives an EventLost with
// their count before the next event that fits. The channel is closed when
// ctx ends or when Run returns (after the events already buffered).
func (b *Bridge) Subscribe(ctx context.Context, opts SubscribeOptions) <-chan Event {
	return b.events.subscribe(ctx, opts)
}

// Watch is Subscribe in the shape the control endpoint and the status
// page ask for.
func (b *Bridge) Watch(ctx context.Context, history int) (<-chan Event, error) {
	return b.Subscribe(ctx, SubscribeOptions{History: history}), nil
}

// emit publishes an event stamped now.
func (b *Bridge) emit(e Event) {
	if e.At.IsZero() {
		e.At = b.now()
	}
	b.events.publish(e)
}

// commandEvent is an event about the command of p.
func commandEvent(kind EventKind, p *pending) Event {
	e := Event{Kind: kind, CommandID: p.id, Command: p.cmd.Text, Notify: p.notify, Speak: p.speak}
	if p.rule != nil {
		e.Rule = p.rule.Name()
	}
	if p.cmd.Macro != nil {
		e.MacroName = p.cmd.Macro.Name
	}
	return e
}

// finishedEvent is the EventFinished of r's outcome.
func finishedEvent(r *runState, out journal.Outcome) Event {
	e := commandEvent(EventFinished, r.pending)
	e.TaskID, e.RequestID = r.req.TaskID, out.RequestID
	e.Status, e.ErrorCode, e.Answer, e.FinalAnswer = out.Status, out.ErrorCode, out.Answer, out.FinalAnswer
	e.DurationMs, e.Error, e.StoppedBy, e.ForcedBy = out.DurationMs, out.Err, out.StoppedBy, out.ForcedBy
	return e
}

// hubStates is what the bridge needs to follow the hub's connection state
// (hub.Client has it; a Hub without it has no hub events in the stream).
type hubStates interface {
	Subscribe(ctx context.Context) <-chan hub.State
}

// followHub publishes the hub's state changes until ctx ends.
func (b *Bridge) followHub(ctx context.Context) {
	hs, ok := b.opts.Hub.(hubStates)
	if !ok {
		return
	}
	var last HubStatus
	for st := range hs.Subscribe(ctx) {
		s := hubStatus(st)
		if s.Status == last.Status && s.Cause == last.Cause && s.Reason == last.Reason {
			continue
		}
		last = s
		b.emit(Event{Kind: EventHub, Hub: &s})
	}
}
