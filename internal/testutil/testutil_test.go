package testutil

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestEventuallyWaitsForTheCondition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var ready atomic.Bool
		time.AfterFunc(time.Second, func() { ready.Store(true) })
		if !Eventually(5*time.Second, ready.Load) {
			t.Fatal("Eventually gave up before the condition held")
		}
		if waited := time.Since(start); waited < time.Second || waited > time.Second+pollInterval {
			t.Errorf("waited %s for a condition true after 1s", waited)
		}
	})
}

func TestEventuallyGivesUpAfterItsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		calls := 0
		if Eventually(time.Second, func() bool { calls++; return false }) {
			t.Fatal("Eventually reported a condition that never held")
		}
		if waited := time.Since(start); waited < time.Second || waited > time.Second+pollInterval {
			t.Errorf("gave up after %s, want 1s", waited)
		}
		if calls < 2 {
			t.Errorf("cond called %d times", calls)
		}
		start = time.Now()
		Eventually(0, func() bool { return false })
		if waited := time.Since(start); waited < DefaultTimeout {
			t.Errorf("zero timeout gave up after %s, want %s", waited, DefaultTimeout)
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
