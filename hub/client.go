package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/hubgate/hubgate/deviceapi"
)

// connNo numbers WebSocket connections (Event.Session, State.Session)
// for the whole process, not per Client: a Client that replaces another
// (a new pairing, a new token) never reuses a number, so a connection's
// number names it for the life of the process (the bridge's journal keys
// duplicate deliveries on it).
var connNo atomic.Uint64

type slogLevel = slog.Level

const (
	levelInfo  = slog.LevelInfo
	levelWarn  = slog.LevelWarn
	levelError = slog.LevelError
)

// Client is the device-hub client. Build it with New, then call Run once;
// read Events (one consumer) and, if wanted, Subscribe to states.
type Client struct {
	cfg Config
	url *url.URL
	log *slog.Logger

	events chan Event
	q      *queue
	seq    atomic.Uint64

	started atomic.Bool
	runDone chan struct{} // closed when Run has returned

	mu        sync.Mutex
	state     State
	watchers  map[*watcher]struct{}
	finished  bool
	sessionNo uint64   // sessions that reached the connected state
	sess      *session // the connected session, nil when none
	device    *deviceapi.UserDevice
	// lastRecord is the last device record answered (deviceAnswered):
	// the probe's answers equal to it are not queued again.
	lastRecord []byte

	// Listening: the wish (want; every request bumps wantGen and queues a
	// wish for the current connection), what the current connection
	// announced (annGen, announced), and the rule inputs.
	want          bool
	wantGen       uint64
	wishes        []wish
	annGen        uint64
	annSession    uint64
	announced     bool
	annErr        error // the hub's answer to the last announcement, if it failed
	explicitStop  bool
	listeningLost bool          // the last connection ended while listening was announced
	annChanged    chan struct{} // closed and replaced when annGen/annSession/announced change

	stats counters
	odd   oddWarner
}

type counters struct {
	attempts, sessions, reconnects, restored atomic.Uint64
	received, delivered, probeFails, revoked atomic.Uint64
	redirects, tooLarge                      atomic.Uint64
}

// Stats are counters over the life of a Client.
type Stats struct {
	Attempts          uint64 // connection attempts
	Sessions          uint64 // connections that reached the connected state
	Reconnects        uint64 // Sessions after the first
	ListeningRestored uint64 // DeviceStartedListening announced again on a new connection
	Received          uint64 // events read from the wire (invocations, and device records answered: KindDeviceRecord)
	Delivered         uint64 // events handed to the consumer
	Dropped           uint64 // events dropped because the queue was full
	Queued            int    // events waiting for the consumer
	ProbeFailures     uint64 // liveness probes that timed out
	TokenRefusals     uint64 // attempts refused with 401/403
	Redirects         uint64 // negotiate redirects followed (Azure SignalR Service)
	TooLarge          uint64 // messages over MaxMessageSize, skipped (KindTooLarge events)
}

// New checks cfg and builds a Client. Nothing happens until Run.
func New(cfg Config) (*Client, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("hub: Config.URL: %w", err)
	}
	c := &Client{
		cfg:        cfg,
		url:        u,
		log:        cfg.Logger.With("component", "hub"),
		events:     make(chan Event, 64),
		q:          newQueue(cfg.QueueLimit),
		runDone:    make(chan struct{}),
		watchers:   map[*watcher]struct{}{},
		annChanged: make(chan struct{}),
	}
	c.want = cfg.AutoListen
	c.wantGen = 1 // the initial wish
	c.state = State{Status: StatusConnecting, Reason: "not started", Since: cfg.Now()}
	return c, nil
}

// Events returns the one channel of hub events, in wire order. It is
// closed after Run has returned and every event read before has been
// delivered; the consumer must keep reading until then.
func (c *Client) Events() <-chan Event { return c.events }

// Device returns the latest device the hub reported (VerifySelf,
// GetLatestDevice, DeviceProfileUpdate), nil before the first. Treat it as
// read-only. The consumer of Events gets each of them in order with the
// commands (KindDeviceRecord, KindDeviceProfileUpdate).
func (c *Client) Device() *deviceapi.UserDevice {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.device
}

// Listening reports whether listening is announced on the current
// connection.
func (c *Client) Listening() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess != nil && c.annSession == c.sess.id && c.announced
}

// Stats returns the counters.
func (c *Client) Stats() Stats {
	c.q.mu.Lock()
	dropped, queued := c.q.dropped, len(c.q.items)
	c.q.mu.Unlock()
	return Stats{
		Attempts:          c.stats.attempts.Load(),
		Sessions:          c.stats.sessions.Load(),
		Reconnects:        c.stats.reconnects.Load(),
		ListeningRestored: c.stats.restored.Load(),
		Received:          c.stats.received.Load(),
		Delivered:         c.stats.delivered.Load(),
		Dropped:           dropped,
		Queued:            queued,
		ProbeFailures:     c.stats.probeFails.Load(),
		TokenRefusals:     c.stats.revoked.Load(),
		Redirects:         c.stats.redirects.Load(),
		TooLarge:          c.stats.tooLarge.Load(),
	}
}

// StartListening asks the client to listen: DeviceStartedListening is
// announced now if connected, and after every reconnection. It waits until
// the announcement is made or ctx ends; the wish stays recorded either way.
func (c *Client) StartListening(ctx context.Context) error { return c.listen(ctx, true, "bridge") }

// StopListening asks the client to stop listening: DeviceStoppedListening
// is announced now if connected, and auto-listen stays off until the next
// StartListening. It waits like StartListening.
func (c *Client) StopListening(ctx context.Context) error { return c.listen(ctx, false, "bridge") }

func (c *Client) listen(ctx context.Context, on bool, from string) error {
	gen := c.requestListen(on, from)
	for {
		c.mu.Lock()
		if c.finished {
			c.mu.Unlock()
			return ErrStopped
		}
		done := c.sess != nil && c.annSession == c.sess.id && c.annGen >= gen
		annErr := c.annErr
		ch := c.annChanged
		c.mu.Unlock()
		if done {
			return annErr
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("hub: listening=%v recorded, not yet announced: %w", on, ctx.Err())
		}
	}
}

// requestListen records a listening wish and wakes the current session.
func (c *Client) requestListen(on bool, from string) uint64 {
	c.mu.Lock()
	c.want = on
	c.explicitStop = !on
	c.wantGen++
	gen := c.wantGen
	s := c.sess
	if s != nil {
		c.addWishLocked(wish{gen: gen, on: on})
	}
	c.mu.Unlock()
	c.log.Debug("listening requested", "listen", on, "from", from)
	if s != nil {
		s.kickAnnouncer()
	}
	return gen
}

// wish is one listening request to announce on the current connection.
type wish struct {
	gen uint64
	on  bool
}

// maxWishes bounds the announcements waiting on a slow hub; beyond it the
// oldest are dropped (the latest wish always stays).
const maxWishes = 256

func (c *Client) addWishLocked(w wish) {
	if len(c.wishes) >= maxWishes {
		c.wishes = append(c.wishes[:0], c.wishes[len(c.wishes)-maxWishes/2:]...)
	}
	c.wishes = append(c.wishes, w)
}

func (c *Client) annChangedLocked() {
	close(c.annChanged)
	c.annChanged = make(chan struct{})
}

// received handles one hub invocation read from the wire (on the reader
// goroutine, in wire order).
func (c *Client) received(session uint64, target, invocationID string, args []json.RawMessage) {
	e := Event{
		Seq:          c.seq.Add(1),
		Kind:         kindOf(target),
		Target:       target,
		Args:         args,
		Received:     c.cfg.Now(),
		Session:      session,
		InvocationID: invocationID,
	}
	// A command's macro is decoded by the dispatcher (off the reader
	// goroutine: it is the costly part); everything else here, because
	// the device and listening side effects happen in wire order.
	if e.Kind != KindDeviceCommand {
		c.decode(&e)
	}
	c.stats.received.Add(1)
	if e.Kind == KindDeviceProfileUpdate && e.Device != nil {
		c.setDevice(e.Device, "DeviceProfileUpdate")
	}
	if !c.q.push(e) {
		c.log.Error("hub event dropped: the consumer is not keeping up", "target", target, "seq", e.Seq, "queued", c.q.len())
	}
	switch e.Kind {
	case KindStartListening:
		c.requestListen(true, "hub")
	case KindStopListening:
		c.requestListen(false, "hub")
	}
}

// tooLarge reports a message over the receive limit as a KindTooLarge
// event (on the reader goroutine for a hub invocation, in wire order).
func (c *Client) tooLarge(session uint64, target, invocationID, command string, info TooLarge) {
	info.Of = kindOf(target)
	switch target {
	case "":
		info.Of = KindOther
	case "VerifySelf", "GetLatestDevice":
		info.Of = KindDeviceProfileUpdate
	}
	e := Event{
		Seq:          c.seq.Add(1),
		Kind:         KindTooLarge,
		Target:       target,
		Received:     c.cfg.Now(),
		Session:      session,
		InvocationID: invocationID,
		TooLarge:     &info,
	}
	if info.Of == KindDeviceCommand || target == "" {
		// A record whose target could not be read may be a command
		// (its first string argument, when read, is its text).
		e.Command = command
	}
	c.stats.received.Add(1)
	c.stats.tooLarge.Add(1)
	c.log.Info("hub sent a message over the receive limit; skipped, the connection stays", "target", target, "of", info.Of,
		"bytes", info.Size, "limit", info.Limit, "unterminated", info.Unterminated, "seq", e.Seq, "session", session)
	if !c.q.push(e) {
		c.log.Error("hub event dropped: the consumer is not keeping up", "target", target, "seq", e.Seq, "queued", c.q.len())
	}
}

func (c *Client) decode(e *Event) {
	decodeEvent(e)
	if e.DecodeErr != nil {
		c.log.Warn("hub event arguments did not decode; delivered raw", "target", e.Target, "seq", e.Seq, "err", e.DecodeErr)
	}
	if e.Macro != nil {
		c.odd.warn(c.log, string(e.Kind), e.Macro.Oddities())
	}
}

// deviceAnswered records a device record the hub answered to method
// (VerifySelf, GetLatestDevice) on session and queues it for the consumer
// as a KindDeviceRecord event, in wire order with the invocations. With
// onlyChanged (the liveness probe's GetLatestDevice) an answer equal to
// the last one queued is not queued again.
func (c *Client) deviceAnswered(session uint64, method string, raw json.RawMessage, d *deviceapi.UserDevice, from string, onlyChanged bool) {
	if !c.setDevice(d, from) {
		return
	}
	c.mu.Lock()
	same := string(c.lastRecord) == string(raw)
	c.lastRecord = append(c.lastRecord[:0], raw...)
	c.mu.Unlock()
	if onlyChanged && same {
		return
	}
	e := Event{Kind: KindDeviceRecord, Target: method, Args: []json.RawMessage{raw}, Received: c.cfg.Now(), Session: session, Device: d}
	c.stats.received.Add(1)
	if !c.q.push(e) {
		c.log.Error("hub event dropped: the consumer is not keeping up", "target", method, "kind", e.Kind, "queued", c.q.len())
	}
}

// setDevice records a device the hub reported, if it is ours, and applies
// the auto-listen rule; it reports whether it recorded it.
func (c *Client) setDevice(d *deviceapi.UserDevice, from string) bool {
	if d.ID != "" && d.ID != c.cfg.DeviceID {
		c.log.Warn("hub reported another device; ignored", "from", from, "device", d.ID)
		return false
	}
	c.odd.warn(c.log, from, d.Oddities())
	c.mu.Lock()
	c.device = d
	s := c.sess
	kick := false
	if d.IsAutoListen && !c.explicitStop && !c.want {
		c.want = true
		c.wantGen++
		if s != nil {
			c.addWishLocked(wish{gen: c.wantGen, on: true})
		}
		kick = true
	}
	c.mu.Unlock()
	if kick && s != nil {
		s.kickAnnouncer()
	}
	return true
}

// Run connects and stays connected until ctx ends, then shuts down
// cleanly and returns nil. It returns early only with ErrWrongDevice, or
// ErrAlreadyRunning when called twice.
func (c *Client) Run(ctx context.Context) error {
	if !c.started.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	go c.dispatch()
	err := c.supervise(ctx)
	c.q.close()
	c.mu.Lock()
	final := State{Status: StatusStopped, Cause: CauseShutdown, Reason: "stopped: the context ended"}
	if err != nil {
		final = State{Status: StatusStopped, Cause: CauseWrongDevice, Reason: scrubText(err.Error(), ""), Err: err}
	}
	c.sess = nil
	c.setStateLocked(final)
	c.finished = true
	c.annChangedLocked()
	c.closeWatchersLocked()
	c.mu.Unlock()
	close(c.runDone)
	return err
}

// supervise is the reconnect loop.
func (c *Client) supervise(ctx context.Context) error {
	attempt := 0
	everConnected := false
	var lastRevokedHook time.Time
	for ctx.Err() == nil {
		c.stats.attempts.Add(1)
		res := c.runSession(ctx)
		if res.fatal != nil {
			return res.fatal
		}
		if ctx.Err() != nil {
			return nil
		}
		if res.connected {
			everConnected = true
			attempt = 0
		}
		attempt++
		status := StatusReconnecting
		if !everConnected {
			status = StatusConnecting
		}
		publish := func(delay time.Duration) {
			now := c.cfg.Now()
			c.setState(State{
				Status:  status,
				Cause:   res.cause,
				Reason:  res.reason,
				Err:     res.err,
				Attempt: attempt,
				Since:   now,
				RetryAt: now.Add(delay),
			})
		}
		delay := c.backoff(attempt)
		switch res.cause {
		case CauseUnauthorized:
			c.stats.revoked.Add(1)
			delay = c.jitter(c.cfg.Backoff.Revoked)
			publish(delay)
			if c.cfg.OnRevoked != nil && (lastRevokedHook.IsZero() || time.Since(lastRevokedHook) >= c.cfg.Backoff.Revoked) {
				lastRevokedHook = time.Now()
				if err := c.cfg.OnRevoked(ctx); err == nil && ctx.Err() == nil {
					c.log.Info("a new device token was provided after a refusal; retrying")
					delay = c.backoff(1)
					publish(delay)
				} else if ctx.Err() == nil {
					c.log.Warn("no new device token after a refusal", "err", err)
				}
			}
		case CauseUnavailable:
			if res.retryAfter > delay {
				delay = min(res.retryAfter, c.cfg.Backoff.Revoked)
			}
			publish(delay)
		case CauseClosed:
			if !res.allowReconnect {
				delay = c.cfg.Backoff.Max
			}
			publish(delay)
		default:
			publish(delay)
		}
		wait := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			wait.Stop()
			return nil
		case <-wait.C:
		}
	}
	return nil
}

// backoff is the jittered delay before attempt n (n >= 1): the n-th
// NextBackOff of cenkalti/backoff's ExponentialBackOff, doubling from
// Backoff.Initial up to Backoff.Max.
func (c *Client) backoff(n int) time.Duration {
	b := c.exponential(c.cfg.Backoff.Initial, c.cfg.Backoff.Max)
	d := b.NextBackOff()
	for i := 1; i < min(n, 64); i++ { // the interval stays at Max long before
		d = b.NextBackOff()
	}
	return d
}

// jitter is d, jittered as Backoff.Jitter says.
func (c *Client) jitter(d time.Duration) time.Duration {
	return c.exponential(d, d).NextBackOff()
}

// exponential is an ExponentialBackOff from first, doubling, capped at
// max, that never stops. Backoff.Jitter J only shortens a delay d (it
// comes in (d(1-J), d]) where cenkalti's RandomizationFactor spreads it
// on both sides of its interval, so the intervals are centred at
// d(1-J/2) and the factor is J/(2-J).
func (c *Client) exponential(first, max time.Duration) *backoff.ExponentialBackOff {
	j := c.cfg.Backoff.Jitter // normalised to 0..1 by New
	centre := func(d time.Duration) time.Duration { return time.Duration(float64(d) * (1 - j/2)) }
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(centre(first)),
		backoff.WithMaxInterval(centre(max)),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(j/(2-j)),
		backoff.WithMaxElapsedTime(0),
	)
}

// scrubText removes a token from a text.
func scrubText(s, token string) string {
	if token != "" && len(token) >= 4 {
		s = strings.ReplaceAll(s, token, "[redacted]")
	}
	return s
}

// scrub returns err, or a copy of its text without the token when it
// contains it (errors of this package never do).
func scrub(err error, token string) error {
	if err == nil || token == "" {
		return err
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return err
	}
	if strings.Contains(err.Error(), token) {
		return errors.New(scrubText(err.Error(), token))
	}
	return err
}
