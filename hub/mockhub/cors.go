package mockhub

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Browser clients, as the real service answers them
// (notes/real-service.md, "Browser clients and the device record"): the
// vendor's browser sample is served from its own origin and calls the
// service's host for everything, so sign-in, REST, negotiate and the hub
// answer cross-origin requests, and Azure SignalR Service, whose CORS
// setting allows every origin by default ("*"), gives browsers
// WebSockets. The official JavaScript client sends credentials by default
// (withCredentials: true): the answer echoes the exact origin with
// Access-Control-Allow-Credentials: true, never "*".
//
// CORS covers only what the real service answers browsers: /signin,
// /signin/..., /api/..., the hub at /device (negotiate by GET and POST)
// and the whole mock SignalR service. The admin API (/mock/...: console,
// journal stream) and the explorer send no CORS headers. The Host checks
// (the admin API's loopback Host, against DNS rebinding) are untouched.

// AnyOrigin, as an entry of Config.CORSOrigins, allows every origin.
const AnyOrigin = "*"

// corsMaxAge is how long a browser may cache a preflight's answer.
const corsMaxAge = "600"

// ErrBadCORSOrigin is returned for an entry of Config.CORSOrigins that is
// neither "*" nor an origin.
var ErrBadCORSOrigin = errors.New("mockhub: not an origin")

// ParseCORSOrigin checks an entry of Config.CORSOrigins: "*" or an
// origin, scheme://host[:port] with scheme http or https (a trailing "/"
// is accepted). It returns the origin as the mock compares it: lower
// case, without the scheme's default port.
func ParseCORSOrigin(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == AnyOrigin {
		return s, nil
	}
	u, ok := parseOrigin(s)
	if !ok {
		return "", fmt.Errorf("%w: %q (want scheme://host[:port], e.g. http://localhost:3000, or %s for any)", ErrBadCORSOrigin, s, AnyOrigin)
	}
	return normalOrigin(u), nil
}

// parseOrigin parses s as http(s)://host[:port] with nothing else (a
// trailing slash aside): a CORS origin or a public URL.
func parseOrigin(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil ||
		u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, false
	}
	return u, true
}

// normalOrigin is u's scheme and host in lower case, without the scheme's
// default port (a browser's Origin header omits it).
func normalOrigin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}

// corsPolicy is the set of allowed origins.
type corsPolicy struct {
	any     bool
	origins map[string]bool // normalOrigin form
}

// newCORSPolicy builds the policy of Config.CORSOrigins (empty: any
// origin).
func newCORSPolicy(list []string) (*corsPolicy, error) {
	p := &corsPolicy{any: len(list) == 0, origins: map[string]bool{}}
	for _, o := range list {
		n, err := ParseCORSOrigin(o)
		if err != nil {
			return nil, err
		}
		if n == AnyOrigin {
			p.any = true
		}
		p.origins[n] = true
	}
	return p, nil
}

// allows reports whether a request's Origin header value is allowed. Any
// value is allowed under "*", "null" (a sandboxed page, a file) included.
func (p *corsPolicy) allows(origin string) bool {
	if origin == "" {
		return false
	}
	if p.any {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return p.origins[normalOrigin(u)]
}

// corsPath reports whether the real service answers browsers at an
// application path: sign-in, REST and the hub.
func corsPath(p string) bool {
	return p == "/signin" || strings.HasPrefix(p, "/signin/") || strings.HasPrefix(p, "/api/") ||
		p == HubPath || strings.HasPrefix(p, HubPath+"/")
}

// corsOnly applies cors to the application's paths that the real service
// answers browsers on (corsPath), and to no other.
func (s *Server) corsOnly(next http.Handler) http.Handler {
	withCORS := s.cors(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if corsPath(r.URL.Path) {
			withCORS.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// cors answers a preflight (OPTIONS with Access-Control-Request-Method)
// itself: 204 with the allowed origin echoed, credentials allowed, the
// method and headers asked for (the official client asks for
// Authorization, X-Device-Token, X-Requested-With, X-SignalR-User-Agent,
// a page for its own headers), or 403 for an origin not allowed. Any
// other request from an allowed origin gets the origin echoed with
// credentials allowed; one from another origin gets no CORS header (the
// browser then withholds the answer), and its WebSocket upgrade is
// refused with 403 unless it is same-origin.
func (s *Server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		allowed := s.allowedOrigins.allows(origin)
		if r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			if !allowed {
				writeProblem(w, http.StatusForbidden, fmt.Sprintf("origin %q is not allowed (hubgate mock --cors-origin)", origin))
				return
			}
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			if m := r.Header.Get("Access-Control-Request-Method"); isToken(m) {
				h.Set("Access-Control-Allow-Methods", m)
			}
			if hs := r.Header.Values("Access-Control-Request-Headers"); len(hs) > 0 {
				if list := headerList(hs); list != "" {
					h.Set("Access-Control-Allow-Headers", list)
				}
			}
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if allowed {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
		} else if origin != "" && requestKind(r) == "websockets" && !sameOrigin(origin, r.Host) {
			msg := fmt.Sprintf("WebSocket from origin %q refused: not an allowed origin (hubgate mock --cors-origin)", origin)
			s.record(Event{Source: SourceHub, Action: "rejected", Status: http.StatusForbidden, Error: msg,
				Args: map[string]any{"request": "websockets", "origin": origin}})
			writeProblem(w, http.StatusForbidden, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether an Origin names the host the request was
// sent to (as coder/websocket's own check: the host and port of both).
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}

// headerList joins the header names of Access-Control-Request-Headers
// values, each an RFC 9110 token; "" when one is not.
func headerList(values []string) string {
	var names []string
	for _, v := range values {
		for n := range strings.SplitSeq(v, ",") {
			n = strings.TrimSpace(n)
			if n == "" {
				continue
			}
			if !isToken(n) {
				return ""
			}
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// isToken reports whether s is an RFC 9110 token (a method, a header
// name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// negotiateByGET lets the SignalR library's negotiate, which answers POST
// only, take GET too: the vendor's raw browser sample and C++ client
// negotiate by GET (notes/real-service.md).
func negotiateByGET(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/negotiate") {
			r = r.WithContext(r.Context()) // a shallow copy
			r.Method = http.MethodPost
		}
		next.ServeHTTP(w, r)
	})
}
