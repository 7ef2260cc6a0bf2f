package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/philippseith/signalr"

	"github.com/hubgate/hubgate/deviceapi"
)

// errNegotiate marks a negotiate answer that refuses the connection.
var errNegotiate = errors.New("hub: negotiate refused the connection")

// session is one WebSocket connection with its own library client.
type session struct {
	c           *Client
	id          uint64
	conn        *wsConn
	sc          signalr.Client
	kick        chan struct{}
	startedOnce bool // DeviceStartedListening announced on this connection (announcer only)
}

// sessionResult is how a connection attempt or a connection ended.
type sessionResult struct {
	connected      bool
	cause          Cause
	reason         string
	err            error
	retryAfter     time.Duration
	allowReconnect bool
	fatal          error
}

func failed(cause Cause, err error, reason string) sessionResult {
	if reason == "" && err != nil {
		reason = err.Error()
	}
	return sessionResult{cause: cause, err: err, reason: reason}
}

// classifyDial maps a dial error to a result.
func classifyDial(err error) sessionResult {
	var he *HTTPError
	if errors.As(err, &he) {
		switch {
		case errors.Is(he, ErrUnauthorized):
			return failed(CauseUnauthorized, fmt.Errorf("%w (%s %d)", ErrUnauthorized, he.Op, he.StatusCode),
				fmt.Sprintf("the hub refused the device token (%s: %d): the device must be paired again", he.Op, he.StatusCode))
		case he.StatusCode == 429 || he.StatusCode == 503:
			r := failed(CauseUnavailable, he, "")
			r.retryAfter = he.RetryAfter
			return r
		default:
			return failed(CauseRefused, he, "")
		}
	}
	switch {
	case errors.Is(err, ErrProtocol):
		return failed(CauseProtocol, err, "")
	case errors.Is(err, errNegotiate), errors.Is(err, ErrTooManyRedirects):
		return failed(CauseRefused, err, "")
	case errors.Is(err, context.DeadlineExceeded):
		return failed(CauseUnresponsive, err, "the hub did not complete the connection in time: "+err.Error())
	}
	return failed(CauseNetwork, err, "")
}

// runSession makes one connection and keeps it until it ends or ctx ends.
func (c *Client) runSession(ctx context.Context) sessionResult {
	tctx, cancel := context.WithTimeout(ctx, c.cfg.InvokeTimeout)
	token, err := c.cfg.TokenSource(tctx)
	cancel()
	if ctx.Err() != nil {
		return sessionResult{cause: CauseShutdown}
	}
	if err != nil {
		err = scrub(err, token)
		return failed(CauseToken, fmt.Errorf("hub: device token unavailable: %w", err), "")
	}
	if token == "" {
		return failed(CauseToken, errors.New("hub: the token source returned an empty device token"), "")
	}

	dctx, cancel := context.WithTimeout(ctx, c.cfg.HandshakeTimeout)
	ws, connID, err := c.dial(dctx, token)
	cancel()
	if ctx.Err() != nil {
		if ws != nil {
			_ = ws.CloseNow()
		}
		return sessionResult{cause: CauseShutdown}
	}
	if err != nil {
		r := classifyDial(scrub(err, token))
		r.reason = scrubText(r.reason, token)
		return r
	}

	s := &session{c: c, id: connNo.Add(1), kick: make(chan struct{}, 1)}
	s.conn = newWSConn(c, s.id, ws, connID)
	var used atomic.Bool
	sc, err := signalr.NewClient(s.conn.ctx,
		signalr.WithConnector(func() (signalr.Connection, error) {
			if used.Swap(true) {
				return nil, errors.New("hub: one connection per library client")
			}
			return s.conn, nil
		}),
		signalr.WithBackoff(func() backoff.BackOff { return &backoff.StopBackOff{} }),
		signalr.KeepAliveInterval(c.cfg.KeepAlive),
		signalr.TimeoutInterval(c.cfg.ServerTimeout),
		signalr.HandshakeTimeout(c.cfg.HandshakeTimeout),
		// Records reach the library unchanged; a margin for nothing else.
		signalr.MaximumReceiveMessageSize(uint(c.cfg.MaxMessageSize)+4096),
		signalr.Logger(kitLogger{c.log}, false),
	)
	if err != nil {
		s.conn.shutdown(err, false, 0)
		return failed(CauseProtocol, fmt.Errorf("hub: building the SignalR client: %w", err), "")
	}
	s.sc = sc
	c.log.Debug("hub connection open", "session", s.id)
	sc.Start()

	res, graceful := s.run(ctx)
	s.teardown(res, graceful)
	return res
}

// run drives a started session; graceful reports a shutdown by ctx.
func (s *session) run(ctx context.Context) (sessionResult, bool) {
	c := s.c
	// Handshake.
	hctx, cancel := context.WithTimeout(ctx, c.cfg.HandshakeTimeout+time.Second)
	err := <-s.sc.WaitForState(hctx, signalr.ClientConnected)
	cancel()
	if ctx.Err() != nil {
		return sessionResult{cause: CauseShutdown}, true
	}
	if err != nil {
		if !s.conn.answered.Load() && s.conn.cause() == nil {
			// The library's handshake timeout closes its client with
			// nothing but "backoff exceeded" to say.
			err := fmt.Errorf("%w: no answer to the SignalR handshake within %s", ErrUnresponsive, c.cfg.HandshakeTimeout)
			return failed(CauseUnresponsive, err, "the hub did not complete the connection in time: "+err.Error()), false
		}
		if r, ok := s.ended(); ok {
			return r, false
		}
		return failed(CauseRefused, fmt.Errorf("hub: SignalR handshake failed: %w", err), ""), false
	}
	// Identify, check, resync.
	raw, err := s.invoke(ctx, c.cfg.InvokeTimeout, "VerifySelf")
	var tl *answerTooLarge
	verifyTooLarge := errors.As(err, &tl)
	switch {
	case verifyTooLarge:
		// The device (with its profile) is over the receive limit: its id,
		// read from the answer's first bytes, is checked all the same; the
		// connection stays with the profile unread, and the consumer hears
		// of it. Without a readable id the token is not verified: no
		// connection.
		if tl.resultID == "" {
			err := fmt.Errorf("%w: VerifySelf's answer (%d bytes) is over the receive limit (%d bytes) and its device id could not be read", ErrProtocol, tl.size, tl.limit)
			return failed(CauseProtocol, err, fmt.Sprintf("the device record the hub sent (%d bytes) is over hub.max_message_bytes (%d bytes) and its id could not be read, so the device could not be verified; raise hub.max_message_bytes", tl.size, tl.limit)), false
		}
		if tl.resultID != c.cfg.DeviceID {
			err := fmt.Errorf("%w: the hub identified this token as device %q, paired with %q", ErrWrongDevice, tl.resultID, c.cfg.DeviceID)
			return sessionResult{cause: CauseWrongDevice, err: err, reason: err.Error(), fatal: err}, false
		}
		c.log.Warn("VerifySelf's answer is over the receive limit; the device id is checked, its profile not read", "bytes", tl.size, "limit", tl.limit)
		c.tooLarge(s.id, "VerifySelf", "", "", TooLarge{Size: tl.size, Limit: tl.limit})
	case err != nil:
		return s.invokeFailed(ctx, "VerifySelf", err), false
	default:
		var dev deviceapi.UserDevice
		if err := json.Unmarshal(raw, &dev); err != nil || len(raw) == 0 || raw[0] != '{' {
			return failed(CauseProtocol, fmt.Errorf("%w: VerifySelf did not answer a device", ErrProtocol), ""), false
		}
		if dev.ID != c.cfg.DeviceID {
			err := fmt.Errorf("%w: the hub identified this token as device %q, paired with %q", ErrWrongDevice, dev.ID, c.cfg.DeviceID)
			return sessionResult{cause: CauseWrongDevice, err: err, reason: err.Error(), fatal: err}, false
		}
		c.deviceAnswered(s.id, "VerifySelf", raw, &dev, "VerifySelf", false)
	}
	raw, err = s.invoke(ctx, c.cfg.InvokeTimeout, "GetLatestDevice")
	var he *HubError
	switch {
	case errors.As(err, &tl):
		c.log.Warn("GetLatestDevice's answer is over the receive limit; keeping the device as it was", "bytes", tl.size, "limit", tl.limit)
		if !verifyTooLarge { // the same device: told once
			c.tooLarge(s.id, "GetLatestDevice", "", "", TooLarge{Size: tl.size, Limit: tl.limit})
		}
	case errors.As(err, &he):
		c.log.Warn("GetLatestDevice failed; keeping the VerifySelf device", "err", err)
	case err != nil:
		return s.invokeFailed(ctx, "GetLatestDevice", err), false
	default:
		s.takeDevice(raw, "GetLatestDevice", false)
	}

	// Connected.
	c.mu.Lock()
	c.sess = s
	c.sessionNo = s.id
	n := c.stats.sessions.Add(1)
	if n > 1 {
		c.stats.reconnects.Add(1)
	}
	// A new connection starts not listening: announce the current wish if
	// it is to listen, forget the requests made while disconnected.
	c.announced, c.annErr, c.annSession = false, nil, s.id
	c.wishes = c.wishes[:0]
	if c.want {
		c.annGen = c.wantGen - 1
		c.wishes = append(c.wishes, wish{gen: c.wantGen, on: true})
	} else {
		c.annGen = c.wantGen
	}
	c.annChangedLocked()
	c.setStateLocked(State{Status: StatusConnected, Session: s.id, Reason: "connected; device verified"})
	c.mu.Unlock()
	go s.announcer()
	s.kickAnnouncer()

	closed := s.sc.WaitForState(context.Background(), signalr.ClientClosed)
	var probe <-chan time.Time
	if c.cfg.ProbeInterval > 0 {
		t := time.NewTicker(c.cfg.ProbeInterval / 2)
		defer t.Stop()
		probe = t.C
	}
	probing := false
	probeDone := make(chan error, 1)
	for {
		select {
		case <-ctx.Done():
			return sessionResult{connected: true, cause: CauseShutdown}, true
		case <-closed:
			return s.endedConnected(), false
		case <-s.conn.ctx.Done():
			return s.endedConnected(), false
		case <-probe:
			if !probing {
				probing = true
				go func() { probeDone <- s.probe() }()
			}
		case err := <-probeDone:
			probing = false
			if err != nil {
				c.stats.probeFails.Add(1)
				s.conn.fail(fmt.Errorf("liveness probe: %w", err))
			}
		}
	}
}

// endedConnected explains the end of a connection that was up.
func (s *session) endedConnected() sessionResult {
	r, ok := s.ended()
	if !ok {
		r = failed(CauseNetwork, errors.New("hub: the connection ended"), "")
	}
	r.connected = true
	return r
}

// takeDevice records a device from GetLatestDevice's result, if it is
// one, and queues it for the consumer (see Client.deviceAnswered).
func (s *session) takeDevice(raw json.RawMessage, from string, onlyChanged bool) {
	if len(raw) == 0 || raw[0] != '{' {
		s.c.log.Debug("hub answer is not a device; ignored", "from", from)
		return
	}
	var d deviceapi.UserDevice
	if err := json.Unmarshal(raw, &d); err != nil || d.ID == "" {
		s.c.log.Debug("hub answer is not a device; ignored", "from", from)
		return
	}
	s.c.deviceAnswered(s.id, "GetLatestDevice", raw, &d, from, onlyChanged)
}

// probe checks that the hub answers within half the probe interval.
func (s *session) probe() error {
	raw, err := s.invoke(s.conn.ctx, s.c.cfg.ProbeInterval/2, "GetLatestDevice")
	if errors.Is(err, ErrUnresponsive) {
		return err
	}
	if err == nil {
		s.takeDevice(raw, "probe", true)
	}
	return nil
}

// invokeFailed classifies a failed setup invocation.
func (s *session) invokeFailed(ctx context.Context, method string, err error) sessionResult {
	if ctx.Err() != nil {
		return sessionResult{cause: CauseShutdown}
	}
	var he *HubError
	switch {
	case errors.As(err, &he):
		return failed(CauseRefused, err, "")
	case errors.Is(err, ErrUnresponsive):
		s.conn.fail(err)
		return failed(CauseUnresponsive, err, "")
	}
	if r, ok := s.ended(); ok {
		return r
	}
	return failed(CauseNetwork, fmt.Errorf("hub: %s: %w", method, err), "")
}

// ended explains why the connection ended, if it did.
func (s *session) ended() (sessionResult, bool) {
	if ci := s.conn.closeMessage(); ci != nil {
		reason := "the hub closed the connection"
		if ci.Error != "" {
			reason += ": " + ci.Error
		}
		if !ci.AllowReconnect {
			reason += " (without allowReconnect)"
		}
		r := failed(CauseClosed, fmt.Errorf("%w: %s", ErrClosedByHub, reason), reason)
		r.allowReconnect = ci.AllowReconnect
		return r, true
	}
	if cause := s.conn.cause(); cause != nil {
		switch {
		case errors.Is(cause, ErrUnresponsive):
			return failed(CauseUnresponsive, cause, ""), true
		case errors.Is(cause, ErrMessageTooLarge), errors.Is(cause, ErrProtocol):
			return failed(CauseProtocol, cause, ""), true
		}
		return failed(CauseNetwork, cause, ""), true
	}
	if s.sc.State() == signalr.ClientClosed {
		err := s.sc.Err()
		if why := s.conn.libraryCloseReason(); why != "" {
			err = errors.New(why)
		}
		if err == nil {
			err = errors.New("hub: the SignalR client closed")
		}
		if strings.Contains(err.Error(), "timeout interval elapsed") {
			return failed(CauseUnresponsive, fmt.Errorf("%w: nothing received for %s: %v", ErrUnresponsive, s.c.cfg.ServerTimeout, err), ""), true
		}
		var ne net.Error
		if errors.As(err, &ne) {
			return failed(CauseNetwork, err, ""), true
		}
		return failed(CauseProtocol, fmt.Errorf("hub: the SignalR client ended: %w", err), ""), true
	}
	return sessionResult{}, false
}

// teardown ends the session; graceful announces DeviceStoppedListening
// first when listening was announced on it.
func (s *session) teardown(res sessionResult, graceful bool) {
	c := s.c
	c.mu.Lock()
	wasListening := c.sess == s && c.annSession == s.id && c.announced
	if c.sess == s {
		c.sess = nil
		c.listeningLost = wasListening && !graceful
		c.annChangedLocked()
	}
	c.mu.Unlock()
	if graceful && s.conn.ctx.Err() == nil && s.sc.State() == signalr.ClientConnected {
		if wasListening {
			if _, err := s.invoke(context.Background(), c.cfg.ShutdownTimeout, "DeviceStoppedListening"); err != nil {
				c.log.Warn("DeviceStoppedListening at shutdown failed", "err", err)
			} else {
				c.log.Info("announced DeviceStoppedListening at shutdown", "session", s.id)
			}
		}
		s.conn.closeGracefully()
	}
	cause := res.err
	if cause == nil {
		cause = errors.New("hub: session ended: " + string(res.cause))
	}
	s.conn.shutdown(cause, graceful, time.Second)
	s.sc.Stop()
	c.log.Debug("hub connection closed", "session", s.id, "cause", res.cause)
}

func (s *session) kickAnnouncer() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// announcer announces the queued listening wishes on this connection,
// one invocation per wish, in order.
func (s *session) announcer() {
	c := s.c
	for {
		c.mu.Lock()
		if c.sess != s {
			c.mu.Unlock()
			return
		}
		if len(c.wishes) == 0 {
			c.mu.Unlock()
			select {
			case <-s.conn.ctx.Done():
				return
			case <-s.kick:
			}
			continue
		}
		w := c.wishes[0]
		c.mu.Unlock()

		method := "DeviceStoppedListening"
		if w.on {
			method = "DeviceStartedListening"
		}
		_, err := s.invoke(s.conn.ctx, c.cfg.InvokeTimeout, method)
		var he *HubError
		if err != nil && !errors.As(err, &he) {
			if s.conn.ctx.Err() == nil {
				s.conn.fail(fmt.Errorf("hub: %s: %w", method, err))
			}
			return
		}
		if err != nil {
			c.log.Error("the hub refused a listening announcement", "method", method, "err", err)
		}
		c.mu.Lock()
		if c.sess != s {
			c.mu.Unlock()
			return
		}
		if len(c.wishes) > 0 && c.wishes[0] == w {
			c.wishes = c.wishes[1:]
		}
		c.annGen, c.annErr = w.gen, err
		if err == nil {
			c.announced = w.on
			if w.on {
				if !s.startedOnce && c.listeningLost {
					c.stats.restored.Add(1)
					c.listeningLost = false
				}
				s.startedOnce = true
			}
		}
		c.annChangedLocked()
		if c.announced {
			c.setStateLocked(State{Status: StatusListening, Session: s.id, Reason: "listening announced"})
		} else {
			c.setStateLocked(State{Status: StatusConnected, Session: s.id, Reason: "not listening"})
		}
		c.mu.Unlock()
		c.log.Debug("listening announced", "method", method, "session", s.id)
	}
}

// invoke calls a hub method with a timeout and returns its raw result
// (nil for a void method).
func (s *session) invoke(ctx context.Context, timeout time.Duration, method string) (json.RawMessage, error) {
	ch := s.sc.Invoke(method)
	t := time.NewTimer(timeout)
	defer t.Stop()
	// The library hands a result over as two items, its value and a nil
	// error, in either order (it selects over two channels): the answer
	// is whole only when the channel closes, right after the completion.
	var (
		value any
		first error // the first error delivered
	)
	for {
		select {
		case ir, ok := <-ch:
			if !ok {
				return s.result(method, value, first)
			}
			if ir.Error != nil && first == nil {
				first = ir.Error
			} else if ir.Value != nil {
				value = ir.Value
			}
		case <-t.C:
			go drainInvoke(ch)
			return nil, fmt.Errorf("%w: %s after %s", ErrUnresponsive, method, timeout)
		case <-ctx.Done():
			go drainInvoke(ch)
			return nil, ctx.Err()
		case <-s.conn.ctx.Done():
			go drainInvoke(ch)
			return nil, fmt.Errorf("hub: %s: connection lost: %w", method, context.Cause(s.conn.ctx))
		}
	}
}

// result makes an invocation's answer of what the library delivered.
func (s *session) result(method string, value any, herr error) (json.RawMessage, error) {
	if herr != nil {
		msg := herr.Error()
		if cause := s.conn.cause(); cause != nil {
			return nil, fmt.Errorf("hub: %s: connection lost: %w", method, cause)
		}
		if size, limit, id, ok := parseTooLargeAnswer(msg); ok {
			return nil, &answerTooLarge{method: method, size: size, limit: limit, resultID: id}
		}
		for _, lost := range []string{"message loop ended", "client closed", "hubConnection canceled", "client not started"} {
			if strings.HasPrefix(msg, lost) {
				return nil, fmt.Errorf("hub: %s: connection lost: %w", method, herr)
			}
		}
		return nil, &HubError{Method: method, Message: msg}
	}
	if value == nil {
		return nil, nil
	}
	b, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("%w: %s result: %v", ErrProtocol, method, err)
	}
	return b, nil
}

// answerTooLarge: the answer to an invocation was over the receive limit
// (the transport stood a completion with an error in for it). It is
// ErrMessageTooLarge.
type answerTooLarge struct {
	method      string
	size, limit int64
	resultID    string // the result's top-level "id" read from its first bytes; "" when not read
}

func (e *answerTooLarge) Error() string {
	return fmt.Sprintf("hub: %s: the answer is over the receive limit (%d bytes; the limit is %d)", e.method, e.size, e.limit)
}

func (e *answerTooLarge) Is(target error) bool { return target == ErrMessageTooLarge }

// drainInvoke reads an abandoned Invoke channel to its end, so that the
// library's goroutines behind it can finish.
func drainInvoke(ch <-chan signalr.InvokeResult) {
	for range ch {
	}
}

// kitLogger passes the library's log lines (go-kit key/values) to slog at
// debug level. The library never sees a token.
type kitLogger struct{ l *slog.Logger }

func (k kitLogger) Log(kv ...any) error {
	if k.l.Enabled(context.Background(), slog.LevelDebug) {
		k.l.Debug("signalr", kv...)
	}
	return nil
}
