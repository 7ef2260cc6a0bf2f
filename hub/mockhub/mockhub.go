// Package mockhub owns the mock of the remote device service
// (docs/specs/device-hub.md) that hubgate's tests and developers run
// on their own machine: the OAuth endpoints, the four device REST routes,
// the SignalR device hub (behind a negotiate redirect at /device, as the
// real one), an admin API under /mock to push hub
// events and inject faults, a journal of every call in both directions, a
// hub console page, an optional state file, and the API explorer (Swagger
// UI) under /swagger. One *Server is one independent service (tailscale's
// testcontrol is the model). It must not be imported by production code
// paths other than cmd.
//
// `hubgate mock` listens on DefaultListen, 127.0.0.1:5080, unless told
// otherwise: a fixed address (as the Azure SignalR emulator's), so that a
// client paired with the mock finds it again after a restart; 5080 is clear
// of the Automate window 4317..4328 and of the usual development ports.
//
// A Server is an http.Handler (one chi router), usable with
// httptest.NewServer; Go tests can also drive it through methods that
// mirror the admin API (CreateDevice, PushCommand, PushMacro, PushProfile,
// StartListening, StopListening, PushSettings, Push, DisableToken, Faults,
// ExpireServiceTokens, FailServiceNegotiateFor, Events, WaitEvents), and a
// few the admin API does not offer: CreateToken (a new token for a device,
// as a re-pairing that reuses it gets) and PushAwaiting (an invocation
// awaiting a client result, repeated on one connection if asked; see
// results.go). Close ends every hub connection and closes the SignalR
// service's listener.
//
// # Choices where the spec says "not shown"
//
// OAuth, as the vendor's published clients speak it (docs/
// real-service.md; Cephable-Unity-Plugin OAuth2Manager.cs and the
// VirtualController samples' browser, Android, iOS and C++ clients):
//   - GET /signin (the old /signin/authorize is an alias) takes client_id,
//     redirect_uri, and optionally response_type (code when present),
//     state, code_challenge with code_challenge_method=S256 (PKCE: the
//     vendor's samples send none; when a challenge is sent the exchange
//     must prove it), and scope (echoed in the token answer). The redirect
//     URI must be one of Config.RedirectURIs exactly when that list is set
//     (the addresses registered in the developer portal), else a loopback
//     redirect: scheme http, host 127.0.0.1, [::1] or localhost, an
//     explicit port, any path, no fragment. An unknown client_id or a bad
//     redirect URI answers 400 without redirecting (RFC 6749 4.1.2.1);
//     every other problem redirects with error, error_description and the
//     state. Consent is automatic; Config.Consent can deny, which
//     redirects with error=access_denied. The state is echoed verbatim
//     when sent: checking it is the client's job.
//   - POST /signin/token reads its parameters from the query string (the
//     browser, C++ and Unity samples) or a form body (Android, iOS); the
//     body wins. grant_type is code (the vendor's) or authorization_code
//     (the standard one), with code, client_id, redirect_uri and, after a
//     PKCE request, code_verifier; or refresh_token with refresh_token and
//     client_id (client_secret and redirect_uri are accepted, as the Unity
//     client sends them). The client secret is optional: a client that
//     sends client_secret (or HTTP Basic, still accepted; the event log
//     records which: clientAuth none, client_secret or basic) must send
//     the right one (Config.ClientSecret), and Config.RequireClientSecret
//     refuses a request without one. A bad client answers 401
//     invalid_client. Errors are RFC 6749 5.2 JSON {"error",
//     "error_description"} (400 otherwise).
//   - The answer is the vendor's shape: JSON {access_token, refresh_token,
//     access_token_expiration, refresh_token_expiration, scope?}, the
//     expirations as RFC 3339 UTC strings with fraction, no expires_in and
//     no token_type, with Cache-Control: no-store.
//   - Codes are single-use and live Config.CodeTTL (2 min). Redeeming a
//     code consumes it even when the verifier is wrong; redeeming it again
//     is invalid_grant and revokes every token issued from it (RFC 6749
//     4.1.2). Refresh tokens rotate: each refresh returns a new refresh
//     token and the old one stops working; presenting a rotated one again
//     is invalid_grant and revokes the whole grant (all its access and
//     refresh tokens), as the OAuth security BCP recommends.
//   - Lifetimes: access tokens Config.AccessTokenTTL (1 h; `hubgate mock
//     --access-token-ttl`), refresh tokens Config.RefreshTokenTTL (30
//     days, renewed on rotation), both judged on Config.Now. An expired
//     access token is refused with 401 on the REST routes. Tokens and
//     codes are 32 random bytes, base64url without padding; only their
//     SHA-256 is kept.
//
// REST (user bearer):
//   - Device routes need Authorization: Bearer <access token>. Missing:
//     401 with WWW-Authenticate: Bearer realm="mock"; unknown, revoked or
//     expired: 401 with error="invalid_token" and a description.
//   - Errors are RFC 9457 problem details (application/problem+json:
//     type, title, status, detail), the shape ASP.NET Core answers with.
//   - POST /api/Device/userDevices/new/{deviceTypeId}?name= answers 200
//     with the new UserDevice (every flag false, currentProfile null); an
//     unknown device type is 404, a missing or empty name 400.
//     POST .../{id}/tokens answers 200 with a new DeviceToken (earlier
//     tokens stay valid); GET .../{id} answers the UserDevice; an unknown
//     id is 404. Ids are random UUIDs; all devices belong to one mock user.
//
// Hub behind a negotiate redirect (the default), as the real service's
// hub sits behind Azure SignalR Service (docs/real-service.md;
// the vendor's raw protocol steps in Cephable/Cephable-VirtualController-Sample
// src/c++/e2e/README.md; MicrosoftDocs/azure-docs
// articles/azure-signalr/signalr-concept-client-negotiation.md):
//   - POST /device/negotiate (device token as below) answers
//     {"negotiateVersion":0,"url":"http://<service>/client/?hub=devicehub&asrs.op=%2Fdevice&negotiateVersion=1&asrs_request_id=<random>","accessToken":"<token>","availableTransports":[]},
//     the real service's shape. The url points at a second listener that
//     New opens itself (Config.ServiceAddr, 127.0.0.1:0 by default, through
//     Config.Listen; with an unspecified address the url names the host
//     the client used) and Close closes: the mock SignalR service,
//     ServiceURL.
//   - The service serves POST /client/negotiate (the library's answer:
//     negotiateVersion 1, connectionId, connectionToken, transports) and
//     the connection at /client/ (WebSockets, SSE), for hub=devicehub only
//     (another hub: 404). Every request needs the redirect's access token,
//     as Authorization: Bearer or access_token; liberal, as a client may
//     send the device token as bearer and the access token in the query,
//     one valid, unexpired access token among those presented is enough
//     (two valid ones must be of the same device token); an X-Device-Token, when sent, must be the device token the access
//     token was issued for, and that device token must still be enabled.
//     Otherwise 401, logged as "rejected" with at=service.
//   - Access tokens are 32 random bytes (only their SHA-256 is kept) and
//     live Config.ServiceTokenTTL (1 h, Azure's default
//     AccessTokenLifetime), judged on Config.Now; an expired one is refused
//     on the negotiate and on the connection. A connection already open
//     stays open (Azure checks the token when a client connects). A new
//     negotiate at /device gives a new token.
//   - Other requests to /device answer 404: the hub is reached through the
//     redirect only, as with the real service.
//   - The event log has negotiate-redirect (the service's address, never
//     the token) and service-negotiate entries before connected.
//   - Config.DirectHub (hubgate mock --direct-hub) serves the hub at /device
//     itself, without a redirect or a second listener (the mock's old
//     behaviour).
//
// Hub (WebSockets and Server-Sent Events, JSON protocol; at the service,
// or at /device with Config.DirectHub):
//   - The device token is read from Authorization: Bearer, from
//     X-Device-Token and from the access_token query parameter (where the
//     official JS client puts it for SSE and in browsers). Any one is
//     enough; when several are present they must agree. Missing, unknown,
//     disabled or disagreeing tokens answer 401 on every /device request
//     (negotiate, WebSocket upgrade, SSE stream and SSE posts).
//   - Client to hub: VerifySelf() returns the UserDevice and sets
//     isVerified and isConnected; GetLatestDevice() returns the UserDevice;
//     DeviceStartedListening() and DeviceStoppedListening() take no
//     arguments, return nothing, and set or clear isListening.
//   - Hub to client: DeviceCommand(command, macro);
//     DeviceProfileUpdate(device); DeviceSettingsUpdate(settings) with the one JSON value the
//     admin posted; StartListening() and StopListening() without
//     arguments. DeviceType is never sent on its own; Push sends any target
//     with any arguments, to test a client against the unexpected.
//   - When a device's last hub connection ends, isConnected and
//     isListening become false. Pushes to one connection are delivered in
//     the order they were made (one sender per connection; the library's
//     own fan-out would reorder them).
//   - Keep-alive and client timeout default to 15 s and 30 s, the receive
//     limit to 32 KiB, like ASP.NET Core.
//
// Admin API (/mock, answers only loopback peers, no auth; errors are
// problem details too). Because a web page in a developer's browser could
// otherwise push a command that the developer's daemon then runs, it also
// answers 403 to a Host header that does not name the loopback (DNS
// rebinding; 127.0.0.0/8, [::1], localhost, any port) and to a cross-origin
// browser request that changes state (Sec-Fetch-Site / Origin, as
// net/http.CrossOriginProtection), in both cases without reading the body;
// a body must arrive within Config.AdminBodyTimeout:
//
//	GET  /mock                              -> {routes:[{method, path, name, summary}]} (an HTML page for Accept: text/html)
//	GET  /mock/console                      the hub console page (below)
//	POST /mock/devices                      {deviceTypeId?, name?} -> 201 {device, token}
//	GET  /mock/devices                      -> [{device, deviceTypeId, connected, connections, hubConnections:[{id,transport,tokenId,since}], tokens:[{id,userDeviceId,isDisabled}]}]
//	POST /mock/devices/{id}/command         {command?, macro?, macroName?} -> {delivered}
//	POST /mock/devices/{id}/profile         Profile -> {device, delivered}
//	POST /mock/devices/{id}/start-listening -> {delivered}
//	POST /mock/devices/{id}/stop-listening  -> {delivered}
//	POST /mock/devices/{id}/settings        any JSON -> {delivered}
//	POST /mock/tokens/{tokenId}/disable     -> {token:{id,userDeviceId,isDisabled}, dropped}
//	POST /mock/faults                       {drop?, refuseFor?, freeze?, expireServiceTokens?, serviceErrorFor?}
//	                                        -> {dropped, refusingUntil?, frozenUntil?, held?, expiredServiceTokens?, serviceErrorUntil?}
//	GET  /mock/journal?after=N[&device=ID][&wait=5s] -> {events:[...], last, missed?}
//	GET  /mock/journal (Accept: text/event-stream)    the journal followed live
//	GET  /mock/events?since=N[&wait=5s]     the journal under its older name
//	POST /mock/signin                       -> {access_token, refresh_token, access_token_expiration, refresh_token_expiration}
//	POST /mock/devices/{id}/tokens          -> 201 DeviceToken
//
// The admin API is part of the one route table (api.go: apiRoutes): it
// registers the routes, feeds the OpenAPI document and is what GET /mock
// lists (AdminRoutes). Every push route takes ?connection=ID to push to
// one of the device's hub connections only (409 when it has no such
// connection). A command with macroName pushes the macro of that name in
// the device's current profile (the exact name, else the one name equal
// without case; 404 naming the profile's macros otherwise), as the real app
// sends a macro; a command without a command string gets the macro's name
// (what the real app sends, docs/real-service.md), else its first
// command.
//
// Pushes answer 404 for an unknown device and 409 when it has no hub
// connection (a profile is stored anyway: 200 with delivered 0). A command
// without a macro gets one made from it (fresh id, name and commands
// [command], no events). Durations are Go duration strings; "0s" ends a
// refusal or a freeze; wait (at most 1m) makes the events call wait for a
// new event. Faults: "drop" closes
// every hub transport abruptly (TCP close, no SignalR close message);
// "refuseFor" answers 503 with Retry-After to new hub connections
// (negotiate and connection-start requests) for a while; "freeze" stops
// every hub connection, existing and new, from reading or writing
// anything (no pings, no results, no pushes) without closing it, until the
// freeze ends; pushes made meanwhile are queued and delivered in order
// after the thaw, a client that leaves is noticed only after the thaw, and
// new requests to /device (negotiate included) wait for the thaw, so a
// client needs its own timeout on them (the philippseith Go client holds
// its lock, State() included, while its connector runs); "held" counts the
// requests, reads and writes waiting for the thaw. Fault windows run
// on the wall clock, not on Config.Now. The refusal and the freeze apply
// to the SignalR service too. "expireServiceTokens" expires every access
// token of a redirect issued so far (open connections stay; a client must
// negotiate at /device again); "serviceErrorFor" makes the service's
// negotiate answer {"error": "..."} (a documented negotiate answer) for a
// while.
//
// # The explorer and its document
//
// One route table (api.go: apiRoutes) registers the handlers of the
// sign-in, device REST and admin routes and feeds the OpenAPI 3.0 document
// (github.com/swaggest/openapi-go, from the requests' and answers' Go
// types), so the two cannot drift; a contract test checks the real
// answers against the document for every route and status, and that the
// router and the document list the same routes. The SignalR hub (/device)
// is left out: it is a transport, described above. The document follows
// the real service where the facts are published (docs/real-service.md,
// the vendor's samples): /signin with client_id, redirect_uri, state and
// response_type=code; /signin/token with grant_type=code (the vendor's),
// parameters in the query string or a form body, and the vendor's answer
// (access_token_expiration, refresh_token_expiration, no expires_in);
// POST .../new/{deviceTypeId}?name= with no body; the DeviceToken's token
// under token (the C++ sample's deviceToken is noted, not answered); the
// spec's UserDevice, Profile, Macro and MacroEvent fields, with every
// vendor field of MacroEvent nullable, and examples from the vendor's
// sample data (basicKeys.json, game_controller_simple_movement.json, with
// its JoystickMove spelling). A field without omitempty is always written,
// so the document marks it required. What the spec does not show is the
// mock's (problem details, 401 challenges). The admin API has its own tag.
//
// GET /swagger (and /swagger/, /swagger/index.html) serves Swagger UI
// (github.com/swaggest/swgui, its files embedded in the binary: no
// network, no build step) over /swagger/v1/swagger.json (Swashbuckle's
// path; /swagger/openapi.json too). Authorize takes a bearer token: one
// from `hubgate mock token` (POST /mock/signin, which signs the mock user
// in without a browser; POST /mock/devices/{id}/tokens mints a device
// token). The Sign in button above the UI runs the sign-in as the vendor's
// browser sample does (/signin, then POST /signin/token?grant_type=code)
// with the explorer's own address, http://<host the browser used>/swagger/,
// as redirect_uri, which the sign-in always accepts besides the registered
// or loopback ones (the code comes back to the mock itself); it checks the
// state and puts the access token into Authorize. Swagger UI's own oauth2
// flow is not used: the swgui build lacks its oauth2-redirect.js, and it
// would send grant_type=authorization_code, not the vendor's code.
//
// # The journal
//
// Every OAuth, REST, admin and hub call is journaled in order as an Event:
// a sequence number, the time on Config.Now, its kind (Source: oauth, rest,
// admin, hub, mock), its direction ("in": a client's request or hub call
// with the mock's answer, and connections, disconnections, rejections;
// "out": a push, entered when it was written to the connection), its
// target (Action: the hub method, the REST or OAuth operation, the admin
// route's name), the device, token and connection, the status and error,
// and the payloads: Payload (a hub call's arguments as a JSON array, a
// request's JSON body or parameters) and Result (a hub call's result, the
// JSON answer). A recorder can turn in/out hub entries into a scenario's
// expectations and pushes. Reads of the admin API (GET) are not journaled:
// reading the journal would fill it. A hub call the SignalR library
// refuses itself (an unknown method, wrong arguments) is journaled from
// the library's log line, with its error.
//
// Redaction: every member or parameter named like a secret (token,
// access_token, refresh_token, id_token, device token, connectionToken,
// code, code_verifier, code_challenge, client_secret, secret, password,
// state, authorization; compared without case, "_" or "-"), at any depth,
// is journaled as "[redacted]"; Authorization headers are never journaled.
// The journal is a ring bounded by Config.MaxEvents (10000 entries) and
// Config.MaxJournalBytes (16 MiB of payloads, counting 256 bytes per entry
// besides); each payload is capped at MaxPayloadBytes (64 KiB; a larger one
// is kept as {"truncated":true,"bytes":N}). A reader that asks for entries
// the ring already dropped is told how many (missed; a "gap" event on the
// stream). The stream (server-sent events) sends each entry as data with
// its sequence number as id, resumes from Last-Event-ID, and sends a
// comment every 15 s when idle.
//
// # The hub console
//
// GET /mock/console (loopback only, like all of /mock) is a page of plain
// HTML, CSS and JS embedded in the binary: pick a device and one of its
// connections (or all), push a DeviceCommand (a macro of the device's
// profile by name, or edited JSON), a profile, settings, Start/
// StopListening and the faults; a live log of the device's journal (every
// hub frame both ways, with arguments and results) over the stream. It
// uses the admin API only, same-origin.
//
// # The state file
//
// With Config.StateFile (`hubgate mock --state FILE`) the devices (with
// their profile and isVerified; isConnected and isListening start false),
// device tokens (disabled or not), OAuth grants and unexpired access and
// refresh tokens survive a restart: the file is loaded by New and written
// atomically (internal/atomicfile, mode 0600) after each change. Tokens
// are kept as in memory, as SHA-256 digests, never in clear. Authorization
// codes (two minutes of life), the negotiate redirect's access tokens (a
// client negotiates again), faults and the journal are not kept. A missing
// file is created at once; a file that is not a valid state (not JSON,
// another version, unknown members, missing or repeated ids, bad digests,
// tokens of unknown grants) makes New fail with ErrCorruptState and is left
// alone: never a silent reset. A write that fails is logged, journaled
// (source mock, action state-write-failed) and leaves the last good file;
// the mock runs on in memory.
//
// # Scenarios
//
// A scenario (scenario.go; `hubgate mock play FILE`) is a YAML list of
// steps (push, fault, wait, expect) played against a running mock over its
// admin API, so a developer's CI starts `hubgate mock --state FILE` and
// their client once, and plays any number of scenarios against them;
// expectations are judged on the journal's stream, never by polling.
// Waits and deadlines run on the player's clock, not Config.Now. A
// recording (StartRecording, `hubgate mock record FILE`) turns the
// journal of a live session into such a file: pushes and faults made
// through the admin API become steps, the device's hub calls and
// reconnections expectations, gaps before a push waits.
package mockhub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/philippseith/signalr"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// Defaults of Config.
const (
	DefaultClientID        = "mock-client"
	DefaultClientSecret    = "mock-secret"
	DefaultDeviceTypeID    = "mock-controller"
	DefaultAccessTokenTTL  = time.Hour
	DefaultRefreshTokenTTL = 30 * 24 * time.Hour
	DefaultCodeTTL         = 2 * time.Minute
	DefaultKeepAlive       = 15 * time.Second
	DefaultTimeout         = 30 * time.Second
	DefaultMaxMessageSize  = 32 << 10
	DefaultMaxEvents       = 10000
	// UserID is the one mock user owning every device.
	UserID = "mock-user"
	// HubPath is where the SignalR hub is mapped.
	HubPath = "/device"
	// DefaultListen is the documented address of `hubgate mock`: a fixed
	// port, so that a paired client finds the mock again after a restart
	// (clear of the Automate window 4317..4328 and of the usual
	// development ports).
	DefaultListen = "127.0.0.1:5080"
)

// Config configures a Server. Every zero value has a documented default.
type Config struct {
	ClientID     string // zero: "mock-client"
	ClientSecret string // zero: "mock-secret" (a test credential)
	DeviceTypeID string // the one known device type; zero: "mock-controller"

	// Consent decides the authorization page's answer; nil approves
	// every request. Returning false redirects with error=access_denied.
	Consent func(ConsentRequest) bool

	AccessTokenTTL  time.Duration // zero: 1 h
	RefreshTokenTTL time.Duration // zero: 30 days
	CodeTTL         time.Duration // zero: 2 min

	KeepAliveInterval time.Duration // hub pings when idle; zero: 15 s
	TimeoutInterval   time.Duration // hub drops a silent client; zero: 30 s
	HandshakeTimeout  time.Duration // zero: 15 s
	MaxMessageSize    uint          // hub receive limit in bytes; zero: 32 KiB

	// The journal's bounds: entries kept (older ones are dropped) and the
	// bytes of their payloads. Zero: 10000 entries, 16 MiB.
	MaxEvents       int
	MaxJournalBytes int

	// StateFile, when set, keeps users' grants, devices, device tokens and
	// profiles across restarts (see the package doc). Zero: all in memory.
	StateFile string

	// AdminBodyTimeout bounds reading the body of an admin request: a
	// client that stalls mid-body is disconnected. Zero: 30 s.
	AdminBodyTimeout time.Duration

	// The hub behind a negotiate redirect, as the real service's hub sits
	// behind Azure SignalR Service (see the package doc).
	DirectHub       bool          // serve the hub at /device itself, without a redirect (the old behaviour)
	ServiceAddr     string        // listen address of the SignalR service; zero: "127.0.0.1:0"
	ServiceTokenTTL time.Duration // lifetime of the redirect's access tokens; zero: 1 h (Azure's default)
	// Listen opens the SignalR service's listener at ServiceAddr; nil:
	// net.Listen. A test gives an in-memory network's (testutil.PipeNet).
	Listen func(network, address string) (net.Listener, error)

	// Sign-in as the real service answers it (see the package doc).
	// RedirectURIs are the redirect addresses registered for the client
	// (exact match); zero: any loopback address. RequireClientSecret
	// refuses a token request without client_secret; zero: a secret is
	// checked only when the client sends one, as the vendor's clients send
	// none.
	RedirectURIs        []string
	RequireClientSecret bool

	Logger *slog.Logger     // nil: discard
	Now    func() time.Time // clock for token lifetimes; nil: time.Now
}

// ConsentRequest is what the authorization page asks Config.Consent.
type ConsentRequest struct {
	ClientID    string
	RedirectURI string
	Scope       string
}

// Errors of the Go methods (the admin API maps them to statuses).
var (
	ErrUnknownDevice     = errors.New("mockhub: unknown device")
	ErrUnknownDeviceType = errors.New("mockhub: unknown device type")
	ErrUnknownToken      = errors.New("mockhub: unknown device token")
	ErrUnknownMacro      = errors.New("mockhub: no such macro in the device's current profile")
	ErrNoConnection      = errors.New("mockhub: the device has no hub connection")
	ErrClosed            = errors.New("mockhub: server closed")
)

// Server is one mock remote service.
type Server struct {
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	router chi.Router
	events *journal

	mu        sync.Mutex
	devices   map[string]*device
	order     []string                // device ids in creation order
	devTokens map[string]*deviceToken // by SHA-256 of the token
	tokenByID map[string]*deviceToken
	codes     map[string]*authCode
	access    map[string]*accessToken
	refresh   map[string]*refreshToken
	grants    map[string]*grant
	conns     map[string]*hubConn     // by SignalR connection id
	live      map[*transport]struct{} // every /device request in flight

	refuseMu    sync.Mutex
	refuseUntil time.Time
	freeze      *gate

	persist statePersist // the state file's writes (Config.StateFile)

	svc *service // the SignalR service the negotiate redirects to; nil with Config.DirectHub

	docOnce sync.Once // the OpenAPI document, generated on first use
	doc     []byte
	docErr  error

	hub      signalr.Server
	hubCtx   context.Context
	hubStop  context.CancelFunc
	closeMux sync.Once
}

type device struct {
	dev      deviceapi.UserDevice
	typeID   string
	tokenIDs []string
}

type deviceToken struct {
	id, deviceID string
	disabled     bool
}

// New builds a Server.
func New(cfg Config) (*Server, error) {
	if cfg.ClientID == "" {
		cfg.ClientID = DefaultClientID
	}
	if cfg.ClientSecret == "" {
		cfg.ClientSecret = DefaultClientSecret
	}
	if cfg.DeviceTypeID == "" {
		cfg.DeviceTypeID = DefaultDeviceTypeID
	}
	for _, d := range []struct {
		p    *time.Duration
		def  time.Duration
		name string
	}{
		{&cfg.AccessTokenTTL, DefaultAccessTokenTTL, "AccessTokenTTL"},
		{&cfg.RefreshTokenTTL, DefaultRefreshTokenTTL, "RefreshTokenTTL"},
		{&cfg.CodeTTL, DefaultCodeTTL, "CodeTTL"},
		{&cfg.KeepAliveInterval, DefaultKeepAlive, "KeepAliveInterval"},
		{&cfg.TimeoutInterval, DefaultTimeout, "TimeoutInterval"},
		{&cfg.HandshakeTimeout, 15 * time.Second, "HandshakeTimeout"},
		{&cfg.ServiceTokenTTL, DefaultServiceTokenTTL, "ServiceTokenTTL"},
		{&cfg.AdminBodyTimeout, localhttp.DefaultBodyReadTimeout, "AdminBodyTimeout"},
	} {
		if *d.p < 0 {
			return nil, fmt.Errorf("mockhub: %s must not be negative", d.name)
		}
		if *d.p == 0 {
			*d.p = d.def
		}
	}
	if cfg.MaxMessageSize == 0 {
		cfg.MaxMessageSize = DefaultMaxMessageSize
	}
	if cfg.MaxEvents <= 0 {
		cfg.MaxEvents = DefaultMaxEvents
	}
	if cfg.MaxJournalBytes <= 0 {
		cfg.MaxJournalBytes = DefaultMaxJournalBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{
		cfg:       cfg,
		log:       cfg.Logger,
		now:       cfg.Now,
		devices:   map[string]*device{},
		devTokens: map[string]*deviceToken{},
		tokenByID: map[string]*deviceToken{},
		codes:     map[string]*authCode{},
		access:    map[string]*accessToken{},
		refresh:   map[string]*refreshToken{},
		grants:    map[string]*grant{},
		conns:     map[string]*hubConn{},
		live:      map[*transport]struct{}{},
		freeze:    newGate(),
	}
	s.events = newJournal(cfg.MaxEvents, cfg.MaxJournalBytes, cfg.Now)
	if err := s.loadState(); err != nil {
		return nil, err
	}
	if err := s.startHub(); err != nil {
		return nil, err
	}
	if !cfg.DirectHub {
		if err := s.startService(); err != nil {
			s.hubStop()
			return nil, err
		}
	}
	s.router = s.routes()
	return s, nil
}

// ServeHTTP serves every route of the mock.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// Handler returns the Server as an http.Handler.
func (s *Server) Handler() http.Handler { return s }

// NewHTTPServer returns the *http.Server to serve the mock on a listener
// of the caller's: internal/localhttp's hardened server (a 64 KiB header
// limit, header, body and idle timeouts), with net/http's own errors in
// the mock's log.
func (s *Server) NewHTTPServer() *http.Server {
	return newHTTPServer(s, s.log, slog.LevelWarn)
}

// newHTTPServer is a localhttp server for h whose net/http errors go to
// log at level.
func newHTTPServer(h http.Handler, log *slog.Logger, level slog.Level) *http.Server {
	hs := localhttp.NewServer(h, localhttp.Options{})
	hs.ErrorLog = slog.NewLogLogger(log.Handler(), level)
	hs.BaseContext = func(net.Listener) context.Context { return context.Background() }
	return hs
}

// Config returns the effective configuration (defaults filled in).
func (s *Server) Config() Config { return s.cfg }

// Close ends every hub connection, stops the hub's goroutines and closes
// the SignalR service's listener. The HTTP routes keep answering; the hub
// refuses new connections.
func (s *Server) Close() error {
	s.closeMux.Do(func() {
		s.hubStop()
		s.freeze.freeze(0)
		s.mu.Lock()
		live := make([]*transport, 0, len(s.live))
		for tr := range s.live {
			live = append(live, tr)
		}
		s.mu.Unlock()
		for _, tr := range live {
			tr.drop()
		}
		s.closeService()
	})
	return nil
}

func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path)
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path)
	})

	s.mountGroup(r, groupSignIn, "", nil) // the route table: api.go
	r.Route(devicePrefix, func(api chi.Router) {
		api.Use(s.requireUser)
		s.mountGroup(api, groupDevice, devicePrefix, nil)
	})

	r.Group(func(g chi.Router) {
		g.Use(s.hubGate(s.admit))
		if s.cfg.DirectHub {
			s.hub.MapHTTP(func() signalr.MappableRouter { return chiMappable{g} }, HubPath)
			return
		}
		g.Post(HubPath+"/negotiate", s.handleRedirect)
		g.HandleFunc(HubPath, func(w http.ResponseWriter, _ *http.Request) {
			writeProblem(w, http.StatusNotFound, errServiceOnly.Error())
		})
	})

	r.Route(adminPrefix, s.adminRoutes)
	r.Route(explorerPath, s.explorerRoutes)
	return r
}

// chiMappable lets signalr's MapHTTP register on a chi router, whose
// HandleFunc takes an http.HandlerFunc rather than a plain func.
type chiMappable struct{ r chi.Router }

func (m chiMappable) Handle(p string, h http.Handler) { m.r.Handle(p, h) }
func (m chiMappable) HandleFunc(p string, f func(http.ResponseWriter, *http.Request)) {
	m.r.HandleFunc(p, f)
}
