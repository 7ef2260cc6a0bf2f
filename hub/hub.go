// Package hub owns the device-hub client: the SignalR connection of a
// paired User Device to {api_url}/device (docs/specs/device-hub.md). It
// dials the connection itself (negotiate, following Azure SignalR Service
// redirects, then the WebSocket), connects with the device token,
// identifies itself with VerifySelf, resyncs with GetLatestDevice, runs the
// listening handshake, hands every hub event to one consumer in the order it
// arrived on the wire (with the device records VerifySelf and
// GetLatestDevice answered: the real service returns the current
// UserDevice with its currentProfile there, docs/real-service.md), probes
// liveness, reconnects forever, and publishes
// one stream of connection states with reasons. It starts no runs (the
// bridge consumes its events), and no token reaches a log line, an error or
// a State.
//
// Message size: Config.MaxMessageSize is 16 MiB by default, following
// Azure SignalR Service (the real hub's front; MicrosoftDocs azure-docs
// articles/azure-signalr/signalr-concept-messages-and-connections.md, read
// 2026-11-29): no limit on what it sends to WebSocket clients, "under
// 16 MB is recommended". A message over the limit is skipped and reported
// as a KindTooLarge event; it never ends the connection (docs/signalr.md,
// "Message size").
//
// Design notes and the choices where the spec is silent: docs/hub.md; how it
// uses philippseith/signalr and follows negotiate redirects: docs/signalr.md.
package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of Config, in line with the official SignalR clients where they
// have one.
const (
	DefaultKeepAlive        = 15 * time.Second
	DefaultServerTimeout    = 30 * time.Second
	DefaultHandshakeTimeout = 15 * time.Second
	DefaultMaxMessageSize   = 16 << 20 // the package doc says why
	DefaultProbeInterval    = 60 * time.Second
	DefaultInvokeTimeout    = 15 * time.Second
	DefaultShutdownTimeout  = 5 * time.Second
	DefaultQueueLimit       = 1 << 16

	DefaultBackoffInitial = 500 * time.Millisecond
	DefaultBackoffMax     = 30 * time.Second
	DefaultBackoffJitter  = 0.5
	DefaultBackoffRevoked = 5 * time.Minute
)

// TokenSource returns the current device token. It is called before every
// connection attempt, so a rotated token is picked up. The token is a
// secret: it is never logged.
type TokenSource func(ctx context.Context) (string, error)

// Backoff configures the delays between connection attempts: attempt n
// (n >= 1 since the last successful connection) waits
// min(Max, Initial*2^(n-1)) minus a random part of up to Jitter of it.
type Backoff struct {
	Initial time.Duration // zero: 500 ms
	Max     time.Duration // zero: 30 s
	// Jitter is the fraction of each delay that is random, in [0, 1]; zero:
	// 0.5. A negative value means no jitter.
	Jitter float64
	// Revoked is the delay while the device token is refused (401/403) and
	// OnRevoked did not provide a new one; zero: 5 min.
	Revoked time.Duration
}

// Config configures a Client. Only URL, DeviceID and TokenSource are
// required; every zero value has a documented default.
type Config struct {
	// URL is the hub, {api_url}/device (http or https).
	URL string
	// DeviceID is the paired device; VerifySelf must return it.
	DeviceID string
	// TokenSource returns the device token.
	TokenSource TokenSource

	HTTPClient *http.Client     // negotiate and WebSocket upgrade; nil: a new client with http.DefaultTransport
	Logger     *slog.Logger     // nil: discard
	Now        func() time.Time // stamps states and events; nil: time.Now (timers: see Time in docs/hub.md)

	// AutoListen announces listening after every connection unless
	// listening was explicitly stopped (see docs/hub.md).
	AutoListen bool

	KeepAlive        time.Duration // client pings when idle; zero: 15 s
	ServerTimeout    time.Duration // no frame from the hub for this long drops the connection; zero: 30 s
	HandshakeTimeout time.Duration // negotiate + upgrade, and the SignalR handshake, each; zero: 15 s
	// MaxMessageSize is the largest message (one SignalR record) read; a
	// larger one is skipped and reported as a KindTooLarge event, and the
	// connection stays. It also bounds the memory one message takes.
	// Zero: 16 MiB.
	MaxMessageSize int64
	Backoff        Backoff
	// ProbeInterval bounds the time to notice a frozen hub (see the package
	// doc); zero: 60 s; negative: no probe.
	ProbeInterval time.Duration
	// InvokeTimeout bounds VerifySelf, GetLatestDevice and the listening
	// announcements; zero: 15 s.
	InvokeTimeout time.Duration
	// ShutdownTimeout bounds the DeviceStoppedListening sent when Run's
	// context ends; zero: 5 s.
	ShutdownTimeout time.Duration
	// QueueLimit bounds the events waiting for the consumer; zero: 65536.
	QueueLimit int

	// OnRevoked, when set, is called when the hub refuses the device token
	// (401/403), at most once per Backoff.Revoked period. Returning nil
	// means a new token is available from TokenSource and the client
	// retries promptly; an error (for example "sign in again") keeps the
	// slow pace. It runs on Run's goroutine with Run's context.
	OnRevoked func(ctx context.Context) error
}

// Errors a caller branches on.
var (
	// ErrUnauthorized: the hub refused the device token (401/403).
	ErrUnauthorized = errors.New("hub: device token refused (revoked, disabled or unknown): the device must be paired again")
	// ErrWrongDevice: VerifySelf answered another device than Config.DeviceID. Run returns it.
	ErrWrongDevice = errors.New("hub: VerifySelf answered another device than the paired one")
	// ErrUnresponsive: the hub did not answer within the timeout.
	ErrUnresponsive = errors.New("hub: no answer in time")
	// ErrClosedByHub: the hub sent a close message.
	ErrClosedByHub = errors.New("hub: the hub closed the connection")
	// ErrProtocol: the hub sent something the SignalR JSON protocol does not allow.
	ErrProtocol = errors.New("hub: protocol error")
	// ErrAlreadyRunning: Run was called twice.
	ErrAlreadyRunning = errors.New("hub: Run was already called")
	// ErrStopped: Run has returned.
	ErrStopped = errors.New("hub: client stopped")
	// ErrTooManyRedirects: negotiate kept redirecting (MaxRedirects).
	ErrTooManyRedirects = errors.New("hub: negotiate redirection limit exceeded")
)

// HTTPError is a refused negotiate or WebSocket upgrade.
type HTTPError struct {
	Op         string // "negotiate", "service negotiate" or "upgrade"
	StatusCode int
	RetryAfter time.Duration // from a Retry-After header, zero if none
	// Redirected: the request went to the service a negotiate redirected
	// to. A 401/403 there refuses the redirect's access token (expired, or
	// the service's own judgement), not the device token: it is not
	// ErrUnauthorized, and the next attempt negotiates again at the hub.
	Redirected bool
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("hub: %s answered %d %s", e.Op, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Redirected {
		s += " at the SignalR service the negotiate redirected to"
	}
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return s
}

// Is makes errors.Is(err, ErrUnauthorized) true for 401 and 403 from the
// hub itself (not from a service it redirected to).
func (e *HTTPError) Is(target error) bool {
	return target == ErrUnauthorized && !e.Redirected && (e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden)
}

// HubError is an error the hub answered an invocation with.
type HubError struct {
	Method  string
	Message string
}

func (e *HubError) Error() string { return "hub: " + e.Method + " failed: " + e.Message }

func (c *Config) fill() error {
	if c.URL == "" {
		return errors.New("hub: Config.URL is required")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return fmt.Errorf("hub: Config.URL: %w", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return fmt.Errorf("hub: Config.URL must be http or https, not %q", u.Scheme)
	}
	if c.DeviceID == "" {
		return errors.New("hub: Config.DeviceID is required")
	}
	if c.TokenSource == nil {
		return errors.New("hub: Config.TokenSource is required")
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	for _, d := range []struct {
		p   *time.Duration
		def time.Duration
	}{
		{&c.KeepAlive, DefaultKeepAlive},
		{&c.ServerTimeout, DefaultServerTimeout},
		{&c.HandshakeTimeout, DefaultHandshakeTimeout},
		{&c.InvokeTimeout, DefaultInvokeTimeout},
		{&c.ShutdownTimeout, DefaultShutdownTimeout},
		{&c.ProbeInterval, DefaultProbeInterval},
		{&c.Backoff.Initial, DefaultBackoffInitial},
		{&c.Backoff.Max, DefaultBackoffMax},
		{&c.Backoff.Revoked, DefaultBackoffRevoked},
	} {
		if *d.p == 0 {
			*d.p = d.def
		}
	}
	for name, d := range map[string]time.Duration{
		"KeepAlive": c.KeepAlive, "ServerTimeout": c.ServerTimeout, "HandshakeTimeout": c.HandshakeTimeout,
		"InvokeTimeout": c.InvokeTimeout, "ShutdownTimeout": c.ShutdownTimeout,
		"Backoff.Initial": c.Backoff.Initial, "Backoff.Max": c.Backoff.Max, "Backoff.Revoked": c.Backoff.Revoked,
	} {
		if d < 0 {
			return fmt.Errorf("hub: Config.%s must not be negative", name)
		}
	}
	if c.Backoff.Max < c.Backoff.Initial {
		c.Backoff.Max = c.Backoff.Initial
	}
	if c.Backoff.Jitter == 0 {
		c.Backoff.Jitter = DefaultBackoffJitter
	}
	if c.Backoff.Jitter < 0 {
		c.Backoff.Jitter = 0
	}
	if c.Backoff.Jitter > 1 {
		c.Backoff.Jitter = 1
	}
	if c.MaxMessageSize == 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.MaxMessageSize < 0 {
		return errors.New("hub: Config.MaxMessageSize must not be negative")
	}
	if c.QueueLimit <= 0 {
		c.QueueLimit = DefaultQueueLimit
	}
	return nil
}
