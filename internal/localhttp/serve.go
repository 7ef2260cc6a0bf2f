package localhttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Serving is an *http.Server serving a listener in its own goroutine: the
// one way every server of hubgate runs and stops. Serve starts it; Done
// and Err say when and why serving ended on its own; Stop ends it within
// a bound.
type Serving struct {
	hs   *http.Server
	done chan struct{}
	err  error // Serve's failure; nil once it returned http.ErrServerClosed

	stopOnce sync.Once
	stopErr  error
}

// Serve serves ln with hs in a new goroutine until Stop (or hs.Close, or
// a failure of the listener). hs is fully configured by the caller
// (handlers, limits, RegisterOnShutdown) before the call.
func Serve(hs *http.Server, ln net.Listener) *Serving {
	s := &Serving{hs: hs, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	return s
}

// Done is closed once serving has ended: after Stop or hs.Close, or when
// Serve failed (Err says why).
func (s *Serving) Done() <-chan struct{} { return s.done }

// Err is why serving ended once Done is closed: Serve's error, or nil
// after a Stop or a Close (http.ErrServerClosed). Before Done it is nil.
func (s *Serving) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Stop ends serving: a graceful Shutdown (no new connections, idle ones
// closed, active requests waited for) until ctx ends or timeout passes,
// whichever comes first (timeout <= 0: ctx alone bounds it), then Close,
// which cuts the connections of handlers still running. It returns once
// the serving goroutine has returned. The error says the shutdown was
// cut at the bound (it wraps ctx's error); nil when every request ended
// within it. Later calls return the first call's result at once.
func (s *Serving) Stop(ctx context.Context, timeout time.Duration) error {
	s.stopOnce.Do(func() {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		if err := s.hs.Shutdown(ctx); err != nil {
			_ = s.hs.Close()
			s.stopErr = fmt.Errorf("shutdown cut before every request ended: %w", err)
		}
		<-s.done
	})
	return s.stopErr
}
