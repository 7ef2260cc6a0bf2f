package mockhub

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/hubgate/hubgate/internal/localhttp"
	"github.com/hubgate/hubgate/internal/loopbackpeer"
)

// Who reaches the mock (docs/mockhub.md, "Who reaches the mock"):
//
//   - every route, on both listeners, answers only a Host header that
//     names what the mock serves: a loopback name (127.0.0.1, localhost,
//     [::1]) with the port the request was accepted on, the address it was
//     accepted on written out (a client of a mock listening beyond
//     loopback), or a host of Config.PublicURLs. A DNS rebinding page
//     sends its own name and gets 403 before anything else runs (CORS
//     preflights included), so neither the sign-in nor the explorer's
//     redirect rule (explorer.go) answers it;
//   - the admin API, the console and the journal stream under /mock
//     belong to the user who started the mock: the kernel tells who holds
//     the other end of each connection (loopbackpeer.Guard, the status
//     page's check); another user gets 403.

// ErrBadPublicURL: a Config.PublicURLs entry is not scheme://host[:port].
var ErrBadPublicURL = errors.New("mockhub: a public URL must be http(s)://host[:port]")

// ParsePublicURL checks one Config.PublicURLs entry and returns it in its
// normal form (lower case, no default port, no trailing slash).
func ParsePublicURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	u, ok := parseOrigin(s)
	if !ok {
		return "", fmt.Errorf("%w, e.g. http://mock.lan:5080; got %q", ErrBadPublicURL, s)
	}
	return normalOrigin(u), nil
}

// publicHost is a Config.PublicURLs entry: its base URL and the Host
// headers that name it.
type publicHost struct {
	base  string   // normal form: scheme://host[:port]
	hosts []string // the Host header values that name it (lower case)
	name  string   // the host name alone (lower case; IPv6 in brackets)
}

func newPublicHosts(raw []string) ([]publicHost, error) {
	var out []publicHost
	for _, r := range raw {
		base, err := ParsePublicURL(r)
		if err != nil {
			return nil, err
		}
		scheme, host, _ := strings.Cut(base, "://")
		p := publicHost{base: base, hosts: []string{host}, name: host}
		if h, _, err := net.SplitHostPort(host); err == nil {
			p.name = h
			if strings.Contains(h, ":") {
				p.name = "[" + h + "]"
			}
		} else if scheme == "https" {
			p.hosts = append(p.hosts, host+":443")
		} else {
			p.hosts = append(p.hosts, host+":80")
		}
		out = append(out, p)
	}
	return out, nil
}

// servedHost reports whether r's Host header names what the mock serves
// (see the top of this file). A request that came through no server
// (a test calling ServeHTTP) has no accepted port: the loopback name
// alone decides then.
func (s *Server) servedHost(r *http.Request) bool {
	host := strings.ToLower(r.Host)
	withPort := host // a Host without a port names port 80
	if _, _, err := net.SplitHostPort(host); err != nil && host != "" {
		withPort = host + ":80"
	}
	port, ok := localhttp.LocalPort(r)
	switch {
	case !ok && localhttp.LoopbackHost(host), ok && localhttp.LoopbackHostOn(withPort, port):
		return true
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok && !a.IP.IsUnspecified() && withPort == a.String() {
		return true
	}
	for _, p := range s.public {
		for _, h := range p.hosts {
			if host == h {
				return true
			}
		}
		// The public name with the port accepted on: the SignalR service's
		// port in a negotiate redirect that named the public host.
		if ok && host == p.name+":"+port {
			return true
		}
	}
	return false
}

// hostOnly refuses, with 403 and before anything else runs, a request
// whose Host header does not name what the mock serves.
func (s *Server) hostOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.servedHost(r) {
			s.log.Info("mock: refused a request for a foreign host", "host", r.Host, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
			localhttp.Refuse(w, r)
			writeProblem(w, http.StatusForbidden, "the mock answers only a Host header naming what it serves (127.0.0.1, localhost or [::1] with its port, or a --public-url host), not "+fmt.Sprintf("%q", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ownerOnly refuses a request of another local user (or one the kernel
// cannot name) with 403: the admin API, the console and the journal
// belong to the user who started the mock.
func (s *Server) ownerOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := s.owner.Check(r)
		if err == nil {
			next.ServeHTTP(w, r)
			return
		}
		localhttp.Refuse(w, r)
		var other *loopbackpeer.NotOwnerError
		if errors.As(err, &other) {
			s.log.Info("mock: refused an admin request of another user", "uid", other.UID, "path", r.URL.Path, "remote", r.RemoteAddr)
			writeProblem(w, http.StatusForbidden, fmt.Sprintf("the admin API belongs to uid %d, the mock's user, not to uid %d", other.Owner, other.UID))
			return
		}
		s.log.Warn("mock: refused an admin request: cannot tell which user connected", "path", r.URL.Path, "remote", r.RemoteAddr, "err", err)
		writeProblem(w, http.StatusForbidden, "cannot tell which user connected; the admin API answers only the mock's user")
	})
}
