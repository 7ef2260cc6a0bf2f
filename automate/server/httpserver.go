package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/hubgate/hubgate/internal/localhttp"
)

// HTTPOptions configures NewHTTPServer. Zero values are documented per
// field.
type HTTPOptions struct {
	// BodyReadTimeout bounds reading a request body: a client that stalls
	// mid-body is disconnected after it. It never bounds what the request
	// waits for once its body is read (a run of up to timeoutMs, a parked
	// resume, a model switch). Zero: 30 s.
	BodyReadTimeout time.Duration
	// Logger receives net/http's own errors at warn level. Zero: discarded.
	Logger *slog.Logger
}

// NewHTTPServer returns the *http.Server every Automate server runs
// handler (a Server's Handler) in: headers of at most 64 KiB read within
// 10 s, bodies read within o.BodyReadTimeout, idle keep-alive connections
// closed after 2 minutes, and requests whose context is not the serving
// goroutine's (a shutdown's Close, not a cancelled context, ends runs).
func NewHTTPServer(handler http.Handler, o HTTPOptions) *http.Server {
	hs := localhttp.NewServer(handler, localhttp.Options{BodyReadTimeout: o.BodyReadTimeout, Logger: o.Logger})
	hs.BaseContext = func(net.Listener) context.Context { return context.Background() }
	return hs
}
