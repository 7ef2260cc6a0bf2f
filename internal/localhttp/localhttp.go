// Package localhttp owns what every loopback HTTP server of hubgate shares:
// the hardened *http.Server (a small header limit, header and idle
// timeouts), the deadline for reading a request body, the way a server
// refuses a request without reading its body, the Host check that stops
// DNS rebinding, the writers of JSON answers (JSON: each server keeps
// its own headers and framing) and of server-sent events (EventStream), and
// the one way a server runs and stops (Serve, Serving.Stop).
//
// Why each piece: docs/localhttp.md.
package localhttp

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// Defaults of Options.
const (
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyReadTimeout   = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
)

// Options configures NewServer. Zero values are the defaults above.
type Options struct {
	// MaxHeaderBytes bounds the request line and headers. Zero: 64 KiB.
	MaxHeaderBytes int
	// ReadHeaderTimeout bounds reading the request line and headers.
	// Zero: 10 s.
	ReadHeaderTimeout time.Duration
	// BodyReadTimeout bounds reading a request body, from the moment the
	// handler starts to the body's end (see BodyDeadline). It never bounds
	// the handler itself. Zero: 30 s.
	BodyReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long. Zero: 2 min.
	IdleTimeout time.Duration
	// Logger receives net/http's own errors at warn level. Zero: discarded.
	Logger *slog.Logger
}

// NewServer returns an *http.Server for handler with the limits of o; its
// handler reads bodies under BodyDeadline. Requests' contexts derive from
// context.Background (set BaseContext to change that).
func NewServer(handler http.Handler, o Options) *http.Server {
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.BodyReadTimeout <= 0 {
		o.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &http.Server{
		Handler:           BodyDeadline(o.BodyReadTimeout, handler),
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// BodyDeadline makes a request body that has not arrived within timeout
// fail, and its connection close, so that a client that stalls mid-body
// holds neither a goroutine nor a descriptor for longer. The deadline is
// set when next starts and cleared once the body has been read to its
// end: a handler that blocks afterwards (a run waiting for its
// engine, a parked resume, a long poll) is not bounded by it. A request
// without a body is passed on untouched. Under a ResponseWriter that
// cannot set deadlines (httptest.ResponseRecorder) it does nothing.
func BodyDeadline(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(timeout)); err == nil {
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody clears the connection's read deadline when the body ends.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		// Setting a deadline also applies to a read already pending: the
		// server's background read, started at the body's end, runs on.
		// After any other error the deadline stays: net/http would
		// otherwise read on when it closes the body.
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// Refuse prepares w for an answer that refuses r before its body is read:
// the connection closes after the answer and no more of the body is read
// (net/http would otherwise read up to 256 KiB of it). Call it before
// writing the answer.
func Refuse(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	if r.Body != nil && r.Body != http.NoBody {
		// An expired deadline makes every further read of the connection
		// fail at once; the answer is still written.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
}

// LoopbackHost reports whether a Host header value names the loopback:
// `localhost` (any case), an IPv4 address in 127.0.0.0/8 or [::1], each
// with or without a port. Any port is accepted, so that a tunnel or a port
// forward (ssh -L) keeps working; a DNS rebinding page cannot put a
// loopback name in Host, whatever the port. Anything else (another name,
// a LAN address, an empty Host) is refused.
func LoopbackHost(host string) bool {
	if host == "" {
		return false
	}
	name := host
	if h, port, err := net.SplitHostPort(host); err == nil {
		if !validPort(port) {
			return false
		}
		name = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		name = host[1 : len(host)-1] // [::1] without a port
	} else if strings.Contains(host, ":") {
		return false // a bare IPv6 address must be bracketed in Host
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(name)
	if err != nil || addr.Zone() != "" {
		return false
	}
	return addr.Unmap().IsLoopback()
}

// LoopbackHostOn reports whether a Host header value is a LoopbackHost
// with exactly the given port (the port the request was accepted on,
// LocalPort): a server that must be named as it listens (the status page,
// the mock) uses it instead of LoopbackHost.
func LoopbackHostOn(host, port string) bool {
	_, p, err := net.SplitHostPort(host)
	return err == nil && p == port && LoopbackHost(host)
}

// LocalPort is the port r was accepted on (false when r did not come
// through an http.Server, e.g. a handler called by a test directly).
func LocalPort(r *http.Request) (string, bool) {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return "", false
	}
	_, port, err := net.SplitHostPort(addr.String())
	return port, err == nil
}

// validPort reports whether p is a Host header's port: empty (RFC 3986
// allows "127.0.0.1:") or a decimal number up to 65535.
func validPort(p string) bool {
	if len(p) > 5 {
		return false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n <= 65535
}

// RequireLoopbackHost passes on requests whose Host header is a
// LoopbackHost and answers every other one with refuse, after Refuse (so
// none of its body is read). Put it before authentication and routing, so
// that a refused request learns nothing of either.
func RequireLoopbackHost(refuse http.HandlerFunc, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !LoopbackHost(r.Host) {
			Refuse(w, r)
			refuse(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
