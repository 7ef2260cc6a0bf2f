// Package hub owns the device-hub client: the SignalR connection of a
// paired User Device to {api_url}/device (docs/specs/device-hub.md).
// It connects with the device token, identifies itself with VerifySelf,
// resyncs with GetLatestDevice, runs the listening handshake, hands every
// hub event to one consumer in the order it arrived on the wire, reconnects
// forever, and publishes one stream of connection states with reasons. It
// starts no runs: the bridge consumes its events.
//
// # How it uses philippseith/signalr
//
// The library (v0.11.0, docs/signalr.md) runs the protocol
// engine of one connection: handshake, keep-alive pings, the server
// timeout, client-to-hub invocations and their completions. Everything it
// gets wrong for a long-lived device is done here instead:
//
//   - Transport. The client dials the connection itself (negotiate POST
//     with negotiateVersion=1, following redirects, then the WebSocket
//     upgrade through the configured *http.Client) and hands the library a signalr.Connection
//     through WithConnector. Doing the dial here, rather than wrapping
//     signalr.NewHTTPConnection, gives a typed HTTP status (401/403 tell a
//     refused token apart from a network fault; 503 carries Retry-After),
//     a receive limit that actually applies (the library raises the
//     WebSocket read limit only on its own connection type, so a wrapped
//     one stays at 32 KiB), and a connection that can be torn down at once
//     (the library's own one lives on context.Background()).
//   - Ordering and arity. The connection reads the JSON records (each ends
//     with 0x1E) in wire order and takes every hub-to-client invocation out
//     of the stream before the library sees it. Each one gets the next
//     arrival sequence number, is decoded (unknown arguments are kept raw)
//     and is queued for the consumer right there, on the one reader
//     goroutine. The library only ever sees the handshake, pings,
//     completions and close messages; a swallowed invocation is replaced by
//     a ping (at most one a second) so that its server-timeout clock still
//     sees traffic. This is the notes' "rewrite to one canonical receiver"
//     design taken one step further: the library never dispatches an
//     invocation, so it never reorders one (it runs each on its own
//     goroutine), never answers an unexpected arity with the completion
//     without invocationId that makes ASP.NET Core drop the connection, and
//     never loses records that were read just before a disconnect (its
//     reader reports a read error past records still being parsed). An
//     invocation that carries an invocationId (an ASP.NET Core "client
//     result") is answered with an empty completion for that id. Stream
//     invocations are refused with a completion error; unknown message
//     types (8 Ack, 9 Sequence: stateful reconnect is never negotiated) are
//     dropped instead of failing the connection.
//   - Reconnect. One library client serves one connection (its own
//     backoff is StopBackOff); the supervisor in Run dials a fresh
//     connection and builds a fresh library client for every attempt, so a
//     failed handshake never leaves it retrying a dead connection, and it
//     never gives up (the library's default stops after 15 minutes).
//   - Identity of what arrives. Event.Seq counts the invocations read by
//     one Client; Event.Session names the connection an event arrived on,
//     numbered for the whole process (a Client that replaces another never
//     reuses a number). The client never hands an invocation to the
//     consumer twice and SignalR never redelivers one on a new connection
//     (stateful reconnect is not negotiated), so the only repetition a
//     consumer can meet is a hub sending one invocation (the same
//     InvocationID) twice on one connection: (Session, InvocationID) names
//     it. An invocation without an id is a new event every time.
//   - Invoke has no context and decodes results to interface{}: every call
//     here has a timeout and results are re-marshalled into deviceapi
//     types (numbers beyond 2^53 in unknown members lose precision there).
//
// # Time
//
// Every delay and timeout of the client (the backoff and Retry-After
// waits, the handshake, invocation, probe and shutdown timeouts) runs on
// the time package, as do the library's keep-alive, server timeout and
// handshake timeout and the WebSocket's close timeouts. Tests take all of
// them in hand at once: they run the client, a hub and an in-memory
// network (internal/testutil.PipeNet) in a testing/synctest bubble, whose
// fake clock the time package follows. A clock injected into this package
// alone would leave the library's timers on the real one. Config.Now only
// stamps states and events.
//
// # Choices where the spec says "not shown"
//
//   - Hub-to-client arguments: DeviceCommand(command string, macro Macro),
//     DeviceProfileUpdate(device UserDevice) as the spec shows;
//     DeviceSettingsUpdate, DeviceType, StartListening and StopListening
//     take any arguments, kept raw in Event.Args (the first one also in
//     Event.Payload). Extra or missing arguments never fail anything; an
//     argument that does not decode sets Event.DecodeErr and the event is
//     still delivered. Decoding is liberal (package deviceapi): a macro or
//     device with values of an unexpected shape is delivered, kept as it
//     came, with its oddities noted in it, and never sets DecodeErr; the
//     client logs one warning per odd item for its whole life (hub/odd.go),
//     whether it came in VerifySelf, GetLatestDevice, a profile update or
//     every DeviceCommand. A command sent as a number is read as its text. Targets match case-insensitively, as in the official
//     clients; an unknown target is delivered as KindOther.
//   - GetLatestDevice is assumed to return a UserDevice; an answer that is
//     not one is ignored (logged). VerifySelf must return the UserDevice
//     whose id is Config.DeviceID, otherwise Run stops with ErrWrongDevice.
//   - Listening: a hub StartListening is answered with
//     DeviceStartedListening, StopListening with DeviceStoppedListening,
//     one announcement per request, in order, after the event is queued
//     for the consumer (a request the hub repeats is confirmed again). The
//     bridge's StartListening/StopListening calls are announced the same
//     way. A new connection starts not listening; after VerifySelf and
//     GetLatestDevice the client announces DeviceStartedListening when it
//     was listening before, or when auto-listen applies (Config.AutoListen
//     or the device's isAutoListen) and no explicit StopListening (from the
//     hub or the bridge) has come since the last StartListening; requests
//     made while disconnected collapse into that one wish. A
//     DeviceProfileUpdate that turns isAutoListen on starts listening under
//     the same rule. A hub error answering an announcement is logged and
//     returned to the bridge's call; it does not drop the connection (a
//     timeout does). On a clean shutdown (Run's context ends) the client
//     announces DeviceStoppedListening if it was listening, then sends a
//     close message and closes the WebSocket normally.
//   - Close from the hub: with allowReconnect the client reconnects after
//     the normal backoff; without it, it waits Backoff.Max first (it still
//     never gives up: a hub that means it answers the next attempt with
//     401, which is classified).
//   - 401 and 403 (on negotiate or on the upgrade) mean the device token is
//     refused: revoked, disabled or unknown. The state says CauseUnauthorized
//     (State.NeedsRepair), OnRevoked is asked for a new token, and unless it
//     succeeds the next attempt waits Backoff.Revoked (5 min) instead of the
//     fast backoff. 429 and 503 honour Retry-After (at most Backoff.Revoked).
//   - Liveness: every ProbeInterval/2 the client invokes GetLatestDevice
//     with a timeout of ProbeInterval/2 (one probe in flight). Any answer,
//     even a hub error, proves the hub alive; a timeout tears the
//     connection down with CauseUnresponsive. A hub that freezes is so
//     noticed within ProbeInterval (at most twice the interval whatever the
//     timing); the library's ServerTimeout (no frame at all for 30 s) is a
//     second line.
//   - The reader never waits for the consumer (that would stall pings and
//     completions): events wait in a queue of up to Config.QueueLimit
//     events (besides the Events channel's 64 and the batch being handed
//     over); beyond it new events are dropped, counted in Stats.Dropped and
//     logged, and their sequence numbers are skipped, so a consumer sees
//     the gap.
//
// # Negotiate redirects (Azure SignalR Service)
//
// The real hub sits behind Azure SignalR Service: its negotiate answers a
// redirect, and the client follows it as the official clients do. Facts
// followed (read 2026-11-24): the vendor's raw protocol steps
// (Cephable/Cephable-VirtualController-Sample src/c++/e2e/README.md, and
// src/c++/winhttp/WinHTTPSignalRDemo.cpp), the official client's
// HttpConnection.ts (dotnet/aspnetcore src/SignalR/clients/ts/signalr),
// and Azure's "Client negotiation" (MicrosoftDocs/azure-docs
// articles/azure-signalr/signalr-concept-client-negotiation.md):
//
//   - POST {URL}/negotiate?negotiateVersion=1 with the device token as
//     bearer and in X-Device-Token. An answer with a url member is a
//     redirect ({"negotiateVersion":0,"url":"https://<name>.service.signalr.net/client/?hub=devicehub&asrs.op=%2Fdevice&...","accessToken":"...","availableTransports":[]}).
//   - The next negotiate goes to that url's path plus "/negotiate" with its
//     query kept byte for byte and negotiateVersion=1 added only when the
//     query lacks it (HttpConnection.resolveNegotiateUrl), with the
//     redirect's accessToken as bearer (a redirect without one keeps the
//     previous bearer) while X-Device-Token stays the device token (the
//     vendor's step 2). Redirects chain: at most MaxRedirects (100)
//     negotiate requests per attempt, as MAX_REDIRECTS; the 100th still
//     redirecting fails with ErrTooManyRedirects. A loop is caught the
//     same way, as the official client does.
//   - The WebSocket opens at the final url (ws/wss) with id=<connectionToken>
//     for negotiate version 1, id=<connectionId> for version 0 (the
//     official client copies connectionId into connectionToken below
//     version 1), and, when a redirect gave an access token,
//     access_token=<accessToken> in the query (the vendor's step 3; the
//     official clients in browsers) and as the bearer (the official
//     clients elsewhere; the vendor's WinHTTP sample); X-Device-Token stays
//     the device token, which never goes into a URL. An answer naming
//     neither id is a protocol error.
//   - An error member in any negotiate answer ends the attempt with its
//     text (CauseRefused), as the official client throws it; an ASP.NET
//     (not Core) answer (ProtocolVersion) is refused likewise.
//   - Every attempt starts again at {URL}/negotiate: the redirect's token
//     is short-lived (Azure's AccessTokenLifetime, 1 h by default) and is
//     never kept, as the official clients start each reconnect from the
//     base url.
//   - A 401/403 from the service a negotiate redirected to (its negotiate
//     or the upgrade) refuses the redirect's access token, not the device
//     token: HTTPError.Redirected, not ErrUnauthorized, the normal backoff,
//     no OnRevoked. If the device token is the problem, the next attempt's
//     negotiate at the hub says so with its own 401.
//   - Our own choices: a redirect must be an absolute http(s) URL; one from
//     https down to plain http is refused unless it points at loopback
//     (X-Device-Token would travel in clear). Stats.Redirects counts the
//     redirects followed; the redirect's host and path (never its query)
//     are logged at debug level.
//
// Tokens never reach a log line, an error or a State: the device token
// and a redirect's access token are sent only in headers and, for the
// access token, in the WebSocket URL's query; every error text that could
// quote either (a dial error quotes the URL) has both tokens and any
// access_token query value replaced by [redacted].
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
	DefaultMaxMessageSize   = 1 << 20
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
	Now        func() time.Time // stamps states and events; nil: time.Now (timers: see Time in the package doc)

	// AutoListen announces listening after every connection unless
	// listening was explicitly stopped (see the package doc).
	AutoListen bool

	KeepAlive        time.Duration // client pings when idle; zero: 15 s
	ServerTimeout    time.Duration // no frame from the hub for this long drops the connection; zero: 30 s
	HandshakeTimeout time.Duration // negotiate + upgrade, and the SignalR handshake, each; zero: 15 s
	MaxMessageSize   int64         // receive limit of one WebSocket message; zero: 1 MiB
	Backoff          Backoff
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
