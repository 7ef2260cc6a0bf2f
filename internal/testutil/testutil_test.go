package testutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// A wait on an event source checks its condition once per event, not on
// a clock: with no event nothing is re-checked, however long it waits.
func TestUntilChecksAtEachEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wake := make(chan int)
		var ready atomic.Bool
		var calls atomic.Int32
		go func() {
			time.Sleep(20 * time.Second) // no event for 20 s of fake time
			wake <- 1                    // an event that changes nothing
			time.Sleep(time.Second)
			ready.Store(true)
			wake <- 2
		}()
		start := time.Now()
		Until(t, "ready", wake, func() bool { calls.Add(1); return ready.Load() })
		if waited := time.Since(start); waited != 21*time.Second {
			t.Errorf("returned after %s, want at the second event (21s)", waited)
		}
		if n := calls.Load(); n != 3 {
			t.Errorf("cond checked %d times, want 3 (at once, then at each of 2 events)", n)
		}
	})
}

// Without an event source the wait polls, and returns within a poll of
// the condition holding.
func TestUntilWithNoEventPolls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var ready atomic.Bool
		time.AfterFunc(time.Second, func() { ready.Store(true) })
		Until(t, "ready", NoEvent, ready.Load)
		if waited := time.Since(start); waited < time.Second || waited > time.Second+pollInterval {
			t.Errorf("waited %s for a condition true after 1s", waited)
		}
	})
}

// An event source that ends before the condition holds ends the wait at
// once, naming what it waited for.
func TestWaitEndsWhenTheEventSourceCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wake := make(chan struct{})
		time.AfterFunc(time.Second, func() { close(wake) })
		start := time.Now()
		err := Wait(context.Background(), "the kettle", wake, func() bool { return false })
		if !errors.Is(err, ErrWakeClosed) || err.Error() != "the event source ended before the kettle" || time.Since(start) != time.Second {
			t.Errorf("err %v after %s", err, time.Since(start))
		}
		// A condition that holds by the close is met.
		wake = make(chan struct{})
		close(wake)
		n := 0
		if err := Wait(context.Background(), "x", wake, func() bool { n++; return n == 2 }); err != nil {
			t.Errorf("a condition true at the close: %v", err)
		}
	})
}

// The bound is the context's deadline, else DefaultTimeout.
func TestWaitGivesUpAtItsBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		err := Wait(ctx, "the kettle", NoEvent, func() bool { return false })
		if err == nil || err.Error() != "timed out after 1s waiting for the kettle" || time.Since(start) != time.Second {
			t.Errorf("err %v after %s", err, time.Since(start))
		}
		start = time.Now()
		if err := Wait(context.Background(), "the kettle", NoEvent, func() bool { return false }); err == nil || time.Since(start) != DefaultTimeout {
			t.Errorf("Wait with no deadline gave up after %s (%v), want %s", time.Since(start), err, DefaultTimeout)
		}
	})
}

// recorder is a testing.TB that records Fatalf instead of stopping.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

func TestWaitForFailsNamingWhatItWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{TB: t}
		start := time.Now()
		WaitFor(r, "the kettle", func() bool { return false })
		if r.fatal != "timed out after 30s waiting for the kettle" || time.Since(start) < DefaultTimeout {
			t.Errorf("failure %q", r.fatal)
		}
		r.fatal = ""
		WaitFor(r, "the tea", func() bool { return true })
		if r.fatal != "" {
			t.Errorf("a held condition failed: %q", r.fatal)
		}
		Until(r, "the milk", NoEvent, func() bool { return false }, func() string { return "last seen: none" })
		if r.fatal != "timed out after 30s waiting for the milk\nlast seen: none" {
			t.Errorf("failure with detail %q", r.fatal)
		}
	})
}

func TestSyncBufferTakesConcurrentWrites(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprintf(&b, "%d\n", i)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 800 {
		t.Fatalf("%d lines, want 800", n)
	}
}

// A real HTTP server and client over the pipe listener, inside a bubble:
// the handler's 10-minute wait costs no real time.
func TestPipeListenerServesHTTPInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewPipeListener()
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(10 * time.Minute)
			fmt.Fprintf(w, "host %s", r.Host)
		})}
		go srv.Serve(l)
		tr := &http.Transport{DialContext: l.Dial}
		start := time.Now()
		resp, err := (&http.Client{Transport: tr}).Get("http://127.0.0.1:4317/x")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "host 127.0.0.1:4317" || time.Since(start) != 10*time.Minute {
			t.Errorf("got %q after %s", body, time.Since(start))
		}
		tr.CloseIdleConnections()
		srv.Close()
		if _, err := l.Dial(t.Context(), "tcp", "x"); err == nil {
			t.Error("Dial after Close succeeded")
		}
	})
}

// A PipeNet routes by address: two servers side by side, a refused dial
// where nothing listens, and a server stopped and served again at its
// address.
func TestPipeNetRoutesByAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pn PipeNet
		serve := func(addr, name string) (net.Listener, *http.Server) {
			l, err := pn.Listen("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, name) })}
			go srv.Serve(l)
			return l, srv
		}
		client := pn.Client(t)
		get := func(addr string) (string, error) {
			resp, err := client.Get("http://" + addr + "/")
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return string(b), err
		}
		a, srvA := serve("127.0.0.1:0", "a")
		b, srvB := serve("127.0.0.1:0", "b")
		if a.Addr().String() == b.Addr().String() {
			t.Fatalf("two listeners at %s", a.Addr())
		}
		if _, err := pn.Listen("tcp", a.Addr().String()); !errors.Is(err, syscall.EADDRINUSE) {
			t.Errorf("a second Listen at %s = %v, want EADDRINUSE", a.Addr(), err)
		}
		for addr, want := range map[string]string{a.Addr().String(): "a", b.Addr().String(): "b"} {
			if got, err := get(addr); got != want || err != nil {
				t.Errorf("GET %s = %q, %v; want %q", addr, got, err, want)
			}
		}
		if _, err := get("127.0.0.1:1"); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("GET where nothing listens = %v, want ECONNREFUSED", err)
		}
		addrA := a.Addr().String()
		srvA.Close()
		client.CloseIdleConnections()
		if _, err := get(addrA); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("GET at a closed listener = %v, want ECONNREFUSED", err)
		}
		_, srvA = serve(addrA, "a again")
		if got, err := get(addrA); got != "a again" || err != nil {
			t.Errorf("GET after serving again = %q, %v", got, err)
		}
		srvA.Close()
		srvB.Close()
	})
}

// A wait on a SyncBuffer's text wakes at each write, not on a clock.
func TestSyncBufferWrittenWakesAWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b SyncBuffer
		go func() {
			time.Sleep(10 * time.Second)
			b.Write([]byte("noise "))
			time.Sleep(10 * time.Second)
			b.Write([]byte("ready"))
		}()
		checks := 0
		start := time.Now()
		Until(t, "ready in the buffer", b.Written(), func() bool { checks++; return strings.Contains(b.String(), "ready") })
		if time.Since(start) != 20*time.Second || checks != 3 {
			t.Errorf("returned after %s and %d checks, want 20s and 3 (at once, at each write)", time.Since(start), checks)
		}
	})
}
