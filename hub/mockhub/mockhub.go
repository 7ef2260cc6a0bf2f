// Package mockhub owns the mock of the remote device service that hubgate's
// tests and developers run on one machine: the OAuth endpoints, the device
// REST routes, the SignalR device hub behind a negotiate redirect (as the
// real one), an admin API under /mock to push hub events and inject faults,
// the journal of every call in both directions, the hub console page,
// scenarios (play, record), an optional state file, and the API explorer
// (Swagger UI over a document generated from the one route table); browser
// pages of other origins reach sign-in, REST and the hub as they reach the
// real service's (CORS, WebSocket origins: cors.go). One
// *Server is one independent service, an http.Handler usable with httptest
// (tailscale's testcontrol is the model). It must not be imported by
// production code paths other than cmd and the demo.
//
// The real service's facts it follows, the choices where the spec says
// "not shown", and its design notes: docs/mockhub.md.
package mockhub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/philippseith/signalr"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/internal/localhttp"
	"github.com/hubgate/hubgate/internal/loopbackpeer"
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
	// profiles across restarts (see docs/mockhub.md). Zero: all in memory.
	StateFile string

	// AdminBodyTimeout bounds reading the body of an admin request: a
	// client that stalls mid-body is disconnected. Zero: 30 s.
	AdminBodyTimeout time.Duration

	// The hub behind a negotiate redirect, as the real service's hub sits
	// behind Azure SignalR Service (see docs/mockhub.md).
	DirectHub       bool          // serve the hub at /device itself, without a redirect (the old behaviour)
	ServiceAddr     string        // listen address of the SignalR service; zero: "127.0.0.1:0"
	ServiceTokenTTL time.Duration // lifetime of the redirect's access tokens; zero: 1 h (Azure's default)
	// Listen opens the SignalR service's listener at ServiceAddr; nil:
	// net.Listen. A test gives an in-memory network's (testutil.PipeNet).
	Listen func(network, address string) (net.Listener, error)

	// Sign-in as the real service answers it (see docs/mockhub.md).
	// RedirectURIs are the redirect addresses registered for the client
	// (exact match); zero: any loopback address. RequireClientSecret
	// refuses a token request without client_secret; zero: a secret is
	// checked only when the client sends one, as the vendor's clients send
	// none.
	RedirectURIs        []string
	RequireClientSecret bool

	// CORSOrigins are the browser origins that sign-in, REST, negotiate
	// and the hub answer cross-origin (with credentials) and take
	// WebSockets from, each scheme://host[:port] or "*" (see cors.go and
	// docs/mockhub.md). Zero: any origin, as Azure SignalR Service's
	// default. The admin API never answers cross-origin.
	CORSOrigins []string

	// PublicURLs are further addresses the mock is reached at (a tunnel,
	// a container's name), each http(s)://host[:port] (ParsePublicURL).
	// Every request's Host header must name what the mock serves: a
	// loopback name with the port it was accepted on, that address, or
	// one of these (hosts.go). Zero: none.
	PublicURLs []string

	// PeerUID tells which user holds the other end of a connection (local
	// is the mock's end): the admin API answers only the mock's own user.
	// Zero: loopbackpeer.UID where the system tells (Linux); elsewhere no
	// user is checked (as the status page).
	PeerUID func(local, remote netip.AddrPort) (uid int, err error)

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

	allowedOrigins *corsPolicy         // Config.CORSOrigins
	public         []publicHost        // Config.PublicURLs
	owner          *loopbackpeer.Guard // the admin API's user (Config.PeerUID)

	svc *service // the SignalR service the negotiate redirects to; nil with Config.DirectHub

	docOnce sync.Once // the OpenAPI document with this server's examples, made on first use
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
	cp, err := newCORSPolicy(cfg.CORSOrigins)
	if err != nil {
		return nil, err
	}
	s.allowedOrigins = cp
	if s.public, err = newPublicHosts(cfg.PublicURLs); err != nil {
		return nil, err
	}
	s.owner = loopbackpeer.NewGuard(cfg.PeerUID)
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
	hs := newHTTPServer(s, s.log, slog.LevelWarn)
	hs.ConnContext = s.owner.ConnContext // the admin API's user, asked once per connection
	return hs
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
	r.Use(s.hostOnly) // before anything: a foreign Host learns nothing
	r.Use(s.corsOnly) // before routing: it answers preflights (OPTIONS) itself
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
			g.Use(negotiateByGET)
			s.hub.MapHTTP(func() signalr.MappableRouter { return chiMappable{g} }, HubPath)
			return
		}
		g.Post(HubPath+"/negotiate", s.handleRedirect)
		g.Get(HubPath+"/negotiate", s.handleRedirect) // the vendor's raw samples negotiate by GET
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
