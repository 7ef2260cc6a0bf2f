package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/localhttp"
	"github.com/hubgate/hubgate/internal/proc"
)

// DefaultCloseTimeout bounds Running.Close when StartOptions.CloseTimeout
// is zero.
const DefaultCloseTimeout = 15 * time.Second

// StartOptions configures Start: the one way to run an Automate server,
// used by the daemon and `hubgate automate serve`. Zero values are
// documented per field.
type StartOptions struct {
	// Config is the server's (New; required fields there). Its Logger
	// also receives the HTTP server's errors and Start's own lines.
	Config Config
	// Port and Window say where it listens, as ListenOptions: Port > 0
	// forces that port, < 0 takes any free port the OS chooses, 0 the
	// first free port of Window. Zero: the first free port of the
	// contract's window 4317..4328.
	Port   int
	Window []int
	// Listener, when set, is served instead of binding one (Port and
	// Window are then unused): tests pass an in-memory listener to run the
	// server on a testing/synctest bubble's clock. Zero: bind.
	Listener net.Listener
	// LedgerDir is where the process groups of the server's runs are
	// recorded (internal/proc.TrackGroups), in the file
	// automate-<port>.children: one file per port, since a port is bound
	// by one live process at a time. The groups that a previous server on
	// the same port left when it was killed (Pdeathsig ends only their
	// leaders) are killed before this one serves. Zero: the server keeps
	// no ledger of its own (the daemon records all its children, runs
	// included, in its own ledger before it opens its journal).
	LedgerDir string
	// CloseTimeout bounds Close: the run in flight is stopped and the
	// HTTP server shut down within it; connections still open then are
	// cut. Zero: DefaultCloseTimeout (15 s).
	CloseTimeout time.Duration
}

// Running is a started Automate server: listening, serving and, with a
// LedgerDir, recording its runs' process groups. Close stops it.
type Running struct {
	srv          *Server
	addr         *net.TCPAddr
	moved        bool
	serving      *localhttp.Serving
	stopTracking func() error
	closeTimeout time.Duration
	log          *slog.Logger

	closeOnce sync.Once
	closeErr  error
}

// Start makes the server (New), binds its port (ListenWith: the first
// free one of the window unless told otherwise), reaps and opens the
// ledger of its runs' process groups (LedgerDir), and serves. It returns
// once the server accepts connections. When the window's preferred port
// was taken, it says so in a warning (Moved reports it too); when every
// port of the window is taken, the error is a *PortWindowError naming the
// range. On an error nothing is left bound or running.
func Start(o StartOptions) (*Running, error) {
	srv, err := New(o.Config)
	if err != nil {
		return nil, err
	}
	log := srv.log
	ln, moved := o.Listener, false
	if ln == nil {
		window := o.Window
		if len(window) == 0 {
			window = automate.PortWindow()
		}
		ln, moved, err = ListenWith(ListenOptions{Port: o.Port, Window: window})
		if err != nil {
			_ = srv.Close(context.Background()) // nothing runs yet
			return nil, err
		}
		if moved {
			log.Warn(fmt.Sprintf("port %d is in use; the Automate server listens on %s instead", window[0], ln.Addr()),
				"addr", ln.Addr().String())
		}
	}
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		ln.Close()
		_ = srv.Close(context.Background())
		return nil, fmt.Errorf("server: listener address %s is not TCP", ln.Addr())
	}
	r := &Running{srv: srv, addr: addr, moved: moved, log: log, stopTracking: func() error { return nil },
		closeTimeout: o.CloseTimeout}
	if r.closeTimeout <= 0 {
		r.closeTimeout = DefaultCloseTimeout
	}
	if o.LedgerDir != "" {
		// Before serving: no run of this server starts before the groups
		// of the killed one are gone.
		if stop, _, err := proc.TrackGroups(LedgerPath(o.LedgerDir, addr.Port), log); err != nil {
			log.Warn("child processes of runs are not tracked", "err", err)
		} else {
			r.stopTracking = stop
		}
	}
	hs := NewHTTPServer(srv.Handler(), HTTPOptions{Logger: log})
	r.serving = localhttp.Serve(hs, ln)
	log.Info("automate server listening", "endpoint", r.URL(), "workspace", srv.Workspace(), "product", srv.Product())
	return r, nil
}

// LedgerPath is the file in dir where a server bound to port records its
// runs' process groups (StartOptions.LedgerDir).
func LedgerPath(dir string, port int) string {
	return filepath.Join(dir, fmt.Sprintf("automate-%d.children", port))
}

// Server is the running server, for what changes while it runs (SetKey)
// and what it answers with (Product, Workspace).
func (r *Running) Server() *Server { return r.srv }

// Addr is the address it listens on.
func (r *Running) Addr() *net.TCPAddr { return r.addr }

// URL is its base URL, http://127.0.0.1:<port>.
func (r *Running) URL() string { return "http://" + r.addr.String() }

// Moved reports that the window's preferred port was taken and another
// port of the window was bound.
func (r *Running) Moved() bool { return r.moved }

// Done is closed once the server stopped serving: after Close, or when
// serving failed (Err says why; Close must still be called).
func (r *Running) Done() <-chan struct{} { return r.serving.Done() }

// Err is why serving stopped on its own once Done is closed; nil while it
// serves and after Close.
func (r *Running) Err() error { return r.serving.Err() }

// Close stops the server within CloseTimeout (and ctx): the run in flight
// is stopped first (its record ends terminated), then the HTTP server
// shuts down (connections still open at the bound are cut), then the
// ledger is closed, so that no run's process group outlives an unrecorded
// server. It returns the error of stopping the run (one that did not
// stop within the bound); later calls return the first one's.
func (r *Running) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, r.closeTimeout)
		defer cancel()
		r.closeErr = r.srv.Close(ctx)
		if err := r.serving.Stop(ctx, 0); err != nil && r.closeErr == nil {
			r.log.Warn("automate server: requests cut at shutdown", "err", err)
		}
		if err := r.stopTracking(); err != nil {
			r.log.Warn("automate server: close the record of child processes", "err", err)
		}
	})
	return r.closeErr
}

// ServeUntil serves until ctx ends or serving fails, calling reload on
// each value of hup (the caller subscribes it: SIGHUP), then closes r.
// Serving that failed returns its error (after Close); the end of ctx
// returns Close's.
func (r *Running) ServeUntil(ctx context.Context, hup <-chan os.Signal, reload func()) error {
	for {
		select {
		case <-hup:
			reload()
		case <-r.Done():
			if err := r.Close(context.Background()); err != nil {
				r.log.Warn("stopping the runs", "err", err)
			}
			return fmt.Errorf("automate server: %w", r.Err())
		case <-ctx.Done():
			r.log.Info("stopping automate server")
			return r.Close(context.Background())
		}
	}
}
