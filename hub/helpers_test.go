package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
)

// logSink captures every log line of a test at debug level, so that tests
// can check that no token is ever written.
type logSink = testutil.SyncBuffer

// newLogger returns a debug logger into a sink; at cleanup it fails the
// test if any of the secrets appears in the log, and dumps the log on
// failure when -v is set.
func newLogger(t testing.TB, secrets ...func() []string) *slog.Logger {
	t.Helper()
	sink := &logSink{}
	t.Cleanup(func() {
		out := sink.String()
		for _, f := range secrets {
			for _, sec := range f() {
				if sec != "" && strings.Contains(out, sec) {
					t.Errorf("a device token appears in the log")
				}
			}
		}
		if t.Failed() && testing.Verbose() {
			t.Logf("client log:\n%s", tail(out, 20000))
		}
	})
	return slog.New(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// running is a Client whose Run goroutine the test owns.
type running struct {
	*Client
	cancel context.CancelFunc
	done   chan error
}

// start runs c until the test ends (or stop is called).
func start(t testing.TB, c *Client) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Client: c, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- c.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels Run, drains the events and waits for Run to return.
func (r *running) stop(t testing.TB) error {
	t.Helper()
	r.cancel()
	go func() {
		for range r.Events() {
		}
	}()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("Run did not return within 30 s of cancel")
		return nil
	}
}

// waitState waits until the client's state satisfies ok.
func waitState(t testing.TB, c *Client, what string, timeout time.Duration, ok func(State) bool) State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ch := c.Subscribe(ctx)
	var last State
	for s := range ch {
		last = s
		if ok(s) {
			return s
		}
	}
	t.Fatalf("timed out waiting for %s; last state: %v", what, last)
	return last
}

func isStatus(st ...Status) func(State) bool {
	return func(s State) bool {
		for _, x := range st {
			if s.Status == x {
				return true
			}
		}
		return false
	}
}

// nextEvent reads the next invocation with a timeout, passing over the
// device records answered (KindDeviceRecord; nextRecord reads those).
func nextEvent(t testing.TB, c *Client, timeout time.Duration) Event {
	t.Helper()
	for {
		if e := nextAny(t, c, timeout); e.Kind != KindDeviceRecord {
			return e
		}
	}
}

// nextAny reads one event, whatever its kind, with a timeout.
func nextAny(t testing.TB, c *Client, timeout time.Duration) Event {
	t.Helper()
	select {
	case e, ok := <-c.Events():
		if !ok {
			t.Fatalf("the events channel closed")
		}
		return e
	case <-time.After(timeout):
		t.Fatalf("no event within %s", timeout)
	}
	return Event{}
}

var errTest = errors.New("test error")

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("must: %v", err))
	}
	return v
}
