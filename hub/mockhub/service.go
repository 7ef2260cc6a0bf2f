package mockhub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/philippseith/signalr"
)

// The hub behind a negotiate redirect: the real service's
// POST {api_url}/device/negotiate answers a redirect to Azure SignalR
// Service, which hosts the hub (docs/real-service.md). The mock
// plays both parts: the application's negotiate on the main handler, the
// SignalR service on a second listener of its own.

// Names of the mock SignalR service.
const (
	// ServiceHubName is the hub name in the redirect URL (hub=devicehub).
	ServiceHubName = "devicehub"
	// ServicePath is the client endpoint of the service, as Azure's.
	ServicePath = "/client"
	// DefaultServiceTokenTTL is the life of a redirect's access token, the
	// Azure SignalR SDK's default AccessTokenLifetime.
	DefaultServiceTokenTTL = time.Hour
)

// service is the mock SignalR service: its listener, server and access
// tokens.
type service struct {
	ln  net.Listener
	srv *http.Server

	mu         sync.Mutex
	tokens     map[string]*serviceToken // by SHA-256 of the token
	errorUntil time.Time                // negotiate answers an error until then (wall clock)
}

// serviceToken is an access token the application's negotiate issued for
// one device token.
type serviceToken struct {
	tokenID, deviceID string
	expires           time.Time // on Config.Now
}

// startService opens the service's listener and serves it.
func (s *Server) startService() error {
	addr := s.cfg.ServiceAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	listen := s.cfg.Listen
	if listen == nil {
		listen = net.Listen
	}
	ln, err := listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mockhub: the SignalR service listener: %w", err)
	}
	sv := &service{ln: ln, tokens: map[string]*serviceToken{}}
	sv.srv = newHTTPServer(s.serviceRoutes(), s.log, slog.LevelDebug)
	s.svc = sv
	go func() { _ = sv.srv.Serve(ln) }()
	return nil
}

// ServiceURL is the base URL of the mock SignalR service
// (http://127.0.0.1:<port>), "" with Config.DirectHub.
func (s *Server) ServiceURL() string {
	if s.svc == nil {
		return ""
	}
	return "http://" + s.svc.ln.Addr().String()
}

func (s *Server) serviceRoutes() http.Handler {
	r := chi.NewRouter()
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path+" on the SignalR service")
	})
	r.Group(func(g chi.Router) {
		g.Use(checkServiceHub, s.hubGate(s.admitService), s.serviceNegotiate, negotiateByGET)
		s.hub.MapHTTP(func() signalr.MappableRouter { return chiMappable{g} }, ServicePath)
	})
	// Azure's URL is /client/?hub=...: the trailing slash is the same
	// endpoint. Browsers reach the whole service cross-origin (cors.go).
	// A foreign Host is refused first (hosts.go).
	return s.hostOnly(s.cors(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == ServicePath+"/" {
			req.URL.Path = ServicePath
			req.URL.RawPath = ""
		}
		r.ServeHTTP(w, req)
	})))
}

// checkServiceHub refuses a request for another hub than devicehub.
func checkServiceHub(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.URL.Query().Get("hub"); !strings.EqualFold(h, ServiceHubName) {
			writeProblem(w, http.StatusNotFound, fmt.Sprintf("unknown hub %q (want hub=%s)", h, ServiceHubName))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serviceNegotiate stands before the library's negotiate on the service:
// it logs the negotiation, or answers {"error": ...} while that fault is
// on.
func (s *Server) serviceNegotiate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requestKind(r) != "negotiate" {
			next.ServeHTTP(w, r)
			return
		}
		tr := r.Context().Value(transportKey{}).(*transport)
		s.svc.mu.Lock()
		failing := time.Now().Before(s.svc.errorUntil)
		s.svc.mu.Unlock()
		if failing {
			const msg = "the SignalR service refuses the connection (fault injection)"
			s.record(Event{Source: SourceHub, Action: "service-negotiate", DeviceID: tr.deviceID, TokenID: tr.tokenID, Error: msg})
			writeJSON(w, http.StatusOK, map[string]string{"error": msg})
			return
		}
		s.record(Event{Source: SourceHub, Action: "service-negotiate", DeviceID: tr.deviceID, TokenID: tr.tokenID})
		next.ServeHTTP(w, r)
	})
}

// handleRedirect is the application's negotiate: it issues an access
// token for the service and redirects there.
func (s *Server) handleRedirect(w http.ResponseWriter, r *http.Request) {
	tr := r.Context().Value(transportKey{}).(*transport)
	tok := newSecret()
	now := s.now()
	s.svc.mu.Lock()
	for k, t := range s.svc.tokens { // forget tokens long expired
		if now.Sub(t.expires) > s.cfg.ServiceTokenTTL {
			delete(s.svc.tokens, k)
		}
	}
	s.svc.tokens[digest(tok)] = &serviceToken{tokenID: tr.tokenID, deviceID: tr.deviceID, expires: now.Add(s.cfg.ServiceTokenTTL)}
	s.svc.mu.Unlock()

	host := s.svc.ln.Addr().(*net.TCPAddr)
	hostname := host.IP.String()
	if host.IP.IsUnspecified() { // the name the client used for the application
		if h, _, err := net.SplitHostPort(r.Host); err == nil {
			hostname = h
		} else {
			hostname = r.Host
		}
	}
	q := url.Values{"hub": {ServiceHubName}, "asrs.op": {HubPath}, "negotiateVersion": {"1"}, "asrs_request_id": {newSecret()[:12]}}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(hostname, fmt.Sprint(host.Port)), Path: ServicePath + "/", RawQuery: q.Encode()}
	s.record(Event{Source: SourceHub, Action: "negotiate-redirect", DeviceID: tr.deviceID, TokenID: tr.tokenID,
		Args: map[string]any{"service": u.Scheme + "://" + u.Host + u.Path}})
	writeJSON(w, http.StatusOK, map[string]any{
		"negotiateVersion":    0,
		"url":                 u.String(),
		"accessToken":         tok,
		"availableTransports": []any{},
	})
}

// admitService authenticates a request to the service: one of the tokens
// presented (Authorization: Bearer, access_token) must be a redirect's
// access token, known and unexpired (two such tokens must be for the same
// device token), its device token still enabled, and an X-Device-Token,
// when sent, that same device token.
func (s *Server) admitService(r *http.Request, kind string) (*transport, context.Context, *Event) {
	rejected := &Event{Source: SourceHub, Action: "rejected", Status: http.StatusUnauthorized, Args: map[string]any{"request": kind, "at": "service"}}
	var toks []string
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
			rejected.Error = "malformed Authorization header (want Bearer <access token of the negotiate redirect>)"
			return nil, nil, rejected
		}
		toks = append(toks, strings.TrimSpace(tok))
	}
	if v := r.URL.Query().Get("access_token"); v != "" {
		toks = append(toks, v)
	}
	if len(toks) == 0 {
		rejected.Error = "missing access token (the negotiate redirect's accessToken, as Authorization: Bearer or access_token)"
		return nil, nil, rejected
	}
	// Liberal, as a client may send the device token as bearer and the
	// redirect's access token in the query: any presented token that is
	// a valid, unexpired access token admits the request.
	now := s.now()
	var (
		at       serviceToken
		valid    bool
		conflict bool
		expired  *serviceToken
	)
	s.svc.mu.Lock()
	for _, tok := range toks {
		st := s.svc.tokens[digest(tok)]
		switch {
		case st == nil:
		case !now.Before(st.expires):
			e := *st
			expired = &e
		case valid && st.tokenID != at.tokenID:
			conflict = true
		default:
			at, valid = *st, true
		}
	}
	s.svc.mu.Unlock()
	switch {
	case conflict:
		rejected.Error = "the access tokens of the request were issued for different device tokens"
		return nil, nil, rejected
	case !valid && expired != nil:
		rejected.DeviceID, rejected.TokenID = expired.deviceID, expired.tokenID
		rejected.Error = "the access token expired; negotiate again at " + HubPath + "/negotiate"
		return nil, nil, rejected
	case !valid:
		rejected.Error = "unknown access token"
		return nil, nil, rejected
	}
	rejected.DeviceID, rejected.TokenID = at.deviceID, at.tokenID
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := strings.TrimSpace(r.Header.Get("X-Device-Token")); v != "" {
		if t := s.devTokens[digest(v)]; t == nil || t.id != at.tokenID {
			rejected.Error = "X-Device-Token is not the device token the access token was issued for"
			return nil, nil, rejected
		}
	}
	if t := s.tokenByID[at.tokenID]; t == nil || t.disabled {
		rejected.Error = "the device token is disabled"
		return nil, nil, rejected
	}
	return s.registerLocked(r, at.deviceID, at.tokenID, kind)
}

// ExpireServiceTokens makes every access token the application's negotiate
// issued so far expire now (a new negotiate gives a new one); it returns
// how many were still valid. Connections already open stay open, as with
// Azure SignalR Service, which checks the token when a client connects.
func (s *Server) ExpireServiceTokens() int {
	if s.svc == nil {
		return 0
	}
	now := s.now()
	s.svc.mu.Lock()
	defer s.svc.mu.Unlock()
	n := 0
	for _, t := range s.svc.tokens {
		if now.Before(t.expires) {
			n++
			t.expires = now
		}
	}
	return n
}

// FailServiceNegotiateFor makes the service's negotiate answer
// {"error": ...} for d (0 stops it).
func (s *Server) FailServiceNegotiateFor(d time.Duration) {
	if s.svc == nil {
		return
	}
	s.svc.mu.Lock()
	defer s.svc.mu.Unlock()
	s.svc.errorUntil = time.Now().Add(d)
}

func (s *Server) serviceFailingUntil() *time.Time {
	if s.svc == nil {
		return nil
	}
	s.svc.mu.Lock()
	defer s.svc.mu.Unlock()
	if until := s.svc.errorUntil; time.Now().Before(until) {
		return &until
	}
	return nil
}

// closeService stops the service's listener.
func (s *Server) closeService() {
	if s.svc != nil {
		_ = s.svc.srv.Close()
		// Serve may not have taken the listener yet (it runs in its own
		// goroutine), and then srv.Close has none to close: close it here,
		// so that the port is released when Close returns.
		_ = s.svc.ln.Close()
	}
}

var errServiceOnly = errors.New("this hub is reached through the redirect of " + HubPath + "/negotiate (the mock's SignalR service), not at " + HubPath)
