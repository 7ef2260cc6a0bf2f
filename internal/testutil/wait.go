package testutil

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// DefaultTimeout bounds every wait: long enough for a loaded CI machine,
// only ever reached by a failing test.
const DefaultTimeout = 30 * time.Second

// pollInterval is how often a wait with no event source looks again.
const pollInterval = 10 * time.Millisecond

// NoEvent is the wake of a wait on state that no event announces: a
// child process's exit or its files seen from outside, /proc, a server
// that answers only when asked. Such a wait re-checks its condition every
// 10ms, a bounded poll; name the reason at the call.
var NoEvent <-chan struct{}

// ErrWakeClosed is Wait's error when its event source ended before the
// condition held: no later event can make it hold.
var ErrWakeClosed = errors.New("the event source ended")

// Wait is the project's one wait for tests. It returns nil once cond
// holds. It checks cond at once, then again each time wake delivers (an
// event source that signals a change of what cond reads: a component's
// event stream, a state subscription, a journal's or mock hub's
// notification), and once more when wake closes, failing with
// ErrWakeClosed if cond still does not hold. With wake NoEvent (nil) cond
// is re-checked every 10ms: a bounded poll, only for state that has no
// event.
//
// The wait ends at ctx's deadline, or after DefaultTimeout when ctx has
// none; the error then names what it waited for. Inside a
// testing/synctest bubble the bound and the poll run on the fake clock.
//
// Tests call Until, which fails the test; Wait is for helpers that return
// an error of their own.
func Wait[E any](ctx context.Context, what string, wake <-chan E, cond func() bool) error {
	timeout := DefaultTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	} else {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var tick <-chan time.Time
	if wake == nil {
		t := time.NewTicker(pollInterval)
		defer t.Stop()
		tick = t.C
	}
	for !cond() {
		select {
		case _, ok := <-wake:
			if !ok {
				if cond() {
					return nil
				}
				return fmt.Errorf("%w before %s", ErrWakeClosed, what)
			}
		case <-tick:
		case <-ctx.Done():
			if cond() {
				return nil
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("timed out after %s waiting for %s", timeout.Round(time.Millisecond), what)
			}
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
	return nil
}

// Until is Wait for a test: it fails tb with Wait's error, followed by
// what detail returns (the last state seen, a journal, stacks) when the
// test gives one.
func Until[E any](tb testing.TB, what string, wake <-chan E, cond func() bool, detail ...func() string) {
	tb.Helper()
	if err := Wait(context.Background(), what, wake, cond); err != nil {
		msg := err.Error()
		for _, d := range detail {
			msg += "\n" + d()
		}
		tb.Fatalf("%s", msg)
	}
}

// WaitFor is Until with NoEvent: a bounded poll, for state that no event
// announces.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	Until(tb, what, NoEvent, cond)
}

// Signal is an event source for Until that a fake (or a test's wrapper of
// a component) raises when the state a wait reads has changed: Notify
// never blocks and leaves at most one signal pending, so a waiter that
// checks its condition after each signal misses no change. One waiter at
// a time. The zero value is ready.
type Signal struct {
	once sync.Once
	ch   chan struct{}
}

func (s *Signal) init() { s.once.Do(func() { s.ch = make(chan struct{}, 1) }) }

// Notify signals a change.
func (s *Signal) Notify() {
	s.init()
	select {
	case s.ch <- struct{}{}:
	default: // a signal is pending already
	}
}

// C is the channel to give Until as its wake.
func (s *Signal) C() <-chan struct{} {
	s.init()
	return s.ch
}
