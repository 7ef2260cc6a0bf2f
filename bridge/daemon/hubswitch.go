package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub"
)

// hubClient is what the switch uses of a hub client (*hub.Client).
type hubClient interface {
	Run(ctx context.Context) error
	Events() <-chan hub.Event
	Listening() bool
	State() hub.State
	Device() *deviceapi.UserDevice
	Subscribe(ctx context.Context) <-chan hub.State
}

// hubSwitch is the bridge's hub: the current hub client, which a reconnect
// replaces (a new pairing, a new token) without the bridge noticing. Events
// of a replaced client are forwarded until its stream ends, then those of
// the client that replaced it, in the order the clients were run however
// quickly they replace each other; the stream closes only when the
// current client stops on its own (the bridge then stops, as it did with
// one client).
type hubSwitch struct {
	log    *slog.Logger
	events chan hub.Event
	quit   chan struct{}

	mu  sync.Mutex
	cur hubClient
	// line holds the clients run, in order, whose streams are not
	// forwarded to their end yet (line[0] is being forwarded): a client
	// replaced while an older one still drains is not skipped.
	line    []hubClient
	stopCur func() // stops cur's Run and waits for it
	stopped bool   // stop was called: a client run later is stopped at once
	// retiring counts replaced clients still sending their
	// DeviceStoppedListening.
	retiring   sync.WaitGroup
	forwarding bool // forward runs
}

// newHubSwitch makes c the current client; run starts it.
func newHubSwitch(log *slog.Logger, c hubClient) *hubSwitch {
	return &hubSwitch{log: log, events: make(chan hub.Event), quit: make(chan struct{}), cur: c}
}

// run starts c (Run on a context of its own) as the current client and,
// the first time, the forwarder. The previous client is stopped after c is
// current (its DeviceStoppedListening is sent, its queued events still
// reach the bridge).
func (h *hubSwitch) run(c hubClient) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := c.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			h.log.Warn("hub client stopped", "err", err)
		}
	}()
	stopC := func() {
		cancel()
		<-done
	}
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		stopC()
		return
	}
	first := !h.forwarding
	h.forwarding = true
	prevStop := h.stopCur
	h.cur, h.stopCur = c, stopC
	h.line = append(h.line, c)
	if prevStop != nil {
		// Its DeviceStoppedListening may take up to the hub client's
		// ShutdownTimeout; the new connection does not wait for it.
		h.retiring.Add(1)
		go func() {
			defer h.retiring.Done()
			prevStop()
		}()
	}
	h.mu.Unlock()
	if first {
		go h.forward()
	}
}

// stop stops the current client and the forwarder.
func (h *hubSwitch) stop() {
	h.mu.Lock()
	stop := h.stopCur
	h.stopCur, h.stopped = nil, true
	h.mu.Unlock()
	close(h.quit)
	if stop != nil {
		stop()
	}
	h.retiring.Wait()
}

// forward sends each client's events on h.events, in order, client after
// client in the order they were run.
func (h *hubSwitch) forward() {
	for {
		h.mu.Lock()
		c := h.line[0]
		h.mu.Unlock()
		for ev := range c.Events() {
			select {
			case h.events <- ev:
			case <-h.quit:
				// The daemon stops: the clients' streams are drained so
				// that no dispatcher stays blocked on its channel.
				h.mu.Lock()
				rest := h.line
				h.line = nil
				h.mu.Unlock()
				for _, c := range rest {
					go func() {
						for range c.Events() {
						}
					}()
				}
				return
			}
		}
		h.mu.Lock()
		h.line = h.line[1:]
		last := len(h.line) == 0
		h.mu.Unlock()
		if last {
			// The current client stopped on its own (or the daemon
			// stops): the bridge's stream ends with it.
			close(h.events)
			return
		}
	}
}

func (h *hubSwitch) current() hubClient {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur
}

// bridge.Hub.
func (h *hubSwitch) Events() <-chan hub.Event      { return h.events }
func (h *hubSwitch) Listening() bool               { return h.current().Listening() }
func (h *hubSwitch) State() hub.State              { return h.current().State() }
func (h *hubSwitch) Device() *deviceapi.UserDevice { return h.current().Device() }

// Subscribe follows the hub connection's states across reconnects (the
// bridge publishes them on its event stream): the current client's, then,
// once a reconnect stopped it, its replacement's. The channel closes when
// ctx ends or the current client stopped for good.
func (h *hubSwitch) Subscribe(ctx context.Context) <-chan hub.State {
	out := make(chan hub.State, 16)
	go func() {
		defer close(out)
		var last hubClient
		for {
			c := h.current()
			if c == last {
				return // it stopped and nothing replaced it
			}
			last = c
			for st := range c.Subscribe(ctx) {
				select {
				case out <- st:
				case <-ctx.Done():
					return
				}
			}
			if ctx.Err() != nil {
				return
			}
		}
	}()
	return out
}
