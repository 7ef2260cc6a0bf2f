package hub

import (
	"context"
	"fmt"
	"time"
)

// Status is the coarse connection state.
type Status string

// Statuses, in the order a healthy client goes through them.
const (
	StatusConnecting   Status = "connecting"   // before the first successful connection
	StatusConnected    Status = "connected"    // connected and verified, not listening
	StatusListening    Status = "listening"    // connected and DeviceStartedListening announced
	StatusReconnecting Status = "reconnecting" // lost a connection (or failed to make one after the first); retrying
	StatusStopped      Status = "stopped"      // Run returned
)

// Cause classifies why the client is not (or no longer) connected.
type Cause string

// Causes.
const (
	CauseNone         Cause = ""
	CauseNetwork      Cause = "network"      // dial, read or write failed; the connection dropped
	CauseUnauthorized Cause = "unauthorized" // 401/403: the device token is refused; re-pair (NeedsRepair)
	CauseUnavailable  Cause = "unavailable"  // 503/429 from the hub
	CauseRefused      Cause = "refused"      // another HTTP status, a negotiate or handshake error, or the hub failed VerifySelf
	CauseClosed       Cause = "closed"       // the hub sent a close message
	CauseUnresponsive Cause = "unresponsive" // the liveness probe, an invocation, the server timeout or a step of connecting ran out
	CauseProtocol     Cause = "protocol"     // the hub broke the protocol (an unusable handshake or negotiate answer, a record the library refused)
	CauseToken        Cause = "token"        // the TokenSource failed
	CauseWrongDevice  Cause = "wrong-device" // VerifySelf answered another device: stopped
	CauseShutdown     Cause = "shutdown"     // Run's context ended
)

// State is one connection state with its reason.
type State struct {
	Status  Status
	Cause   Cause  // why not connected; CauseNone while connected
	Reason  string // human-readable, never holds a token
	Err     error  // the error behind Reason, if any (scrubbed)
	Session uint64 // the current or last WebSocket connection: numbered from 1 for the whole process, across Clients (failed handshakes count too), so never reused by a replacing Client
	Attempt int    // failed attempts since the last successful connection
	RetryAt time.Time
	Since   time.Time
}

// NeedsRepair reports whether the device token was refused: the device
// must be paired again (or given a new token).
func (s State) NeedsRepair() bool { return s.Cause == CauseUnauthorized }

// Connected reports whether a verified connection is up.
func (s State) Connected() bool { return s.Status == StatusConnected || s.Status == StatusListening }

func (s State) String() string {
	out := string(s.Status)
	if s.Cause != CauseNone {
		out += " (" + string(s.Cause) + ")"
	}
	if s.Reason != "" {
		out += ": " + s.Reason
	}
	if !s.RetryAt.IsZero() {
		out += fmt.Sprintf("; retry at %s", s.RetryAt.Format(time.RFC3339Nano))
	}
	return out
}

// watcher is one subscriber of the state stream.
type watcher struct {
	ch chan State
}

// Subscribe returns a channel that first receives the current state, then
// every change, until ctx ends or Run returns (after the final stopped
// state); then it is closed. A slow reader never blocks the client: when
// its buffer is full the oldest pending state is dropped, so the latest
// state always arrives.
func (c *Client) Subscribe(ctx context.Context) <-chan State {
	w := &watcher{ch: make(chan State, 16)}
	c.mu.Lock()
	if c.finished {
		w.ch <- c.state
		close(w.ch)
		c.mu.Unlock()
		return w.ch
	}
	c.watchers[w] = struct{}{}
	w.ch <- c.state
	c.mu.Unlock()
	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
			case <-c.runDone:
				return
			}
			c.mu.Lock()
			if _, ok := c.watchers[w]; ok {
				delete(c.watchers, w)
				close(w.ch)
			}
			c.mu.Unlock()
		}()
	}
	return w.ch
}

// State returns the current state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// setStateLocked publishes s. c.mu must be held.
func (c *Client) setStateLocked(s State) {
	if s.Since.IsZero() {
		s.Since = c.cfg.Now()
	}
	if s.Session == 0 {
		s.Session = c.sessionNo
	}
	c.state = s
	for w := range c.watchers {
		select {
		case w.ch <- s:
		default:
			select {
			case <-w.ch:
			default:
			}
			select {
			case w.ch <- s:
			default:
			}
		}
	}
	attrs := []any{"status", s.Status, "session", s.Session}
	if s.Cause != CauseNone {
		attrs = append(attrs, "cause", s.Cause)
	}
	if s.Reason != "" {
		attrs = append(attrs, "reason", s.Reason)
	}
	if !s.RetryAt.IsZero() {
		attrs = append(attrs, "retry_at", s.RetryAt, "attempt", s.Attempt)
	}
	level := c.logLevelFor(s)
	c.log.Log(context.Background(), level, "hub state", attrs...)
}

func (c *Client) logLevelFor(s State) slogLevel {
	switch {
	case s.Cause == CauseUnauthorized || s.Cause == CauseWrongDevice:
		return levelError
	case s.Status == StatusReconnecting || (s.Status == StatusConnecting && s.Cause != CauseNone):
		return levelWarn
	default:
		return levelInfo
	}
}

func (c *Client) setState(s State) {
	c.mu.Lock()
	c.setStateLocked(s)
	c.mu.Unlock()
}

// closeWatchersLocked ends every subscription. c.mu must be held.
func (c *Client) closeWatchersLocked() {
	for w := range c.watchers {
		close(w.ch)
		delete(c.watchers, w)
	}
}
