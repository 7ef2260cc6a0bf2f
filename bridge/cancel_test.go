package bridge_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
)

// TestCancelWaitsForThePOSTWithoutPolling: a cancel asked right after a
// run started, before its POST reached the server, finds the server idle;
// it asks again when the run's request id is known, not on a timer. While
// the POST is held the bridge asks /health once whatever the fake time
// spent; once the POST is let through, the cancel lands at that same
// instant with one more /health and one cancel.
func TestCancelWaitsForThePOSTWithoutPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var health, cancels atomic.Int32
		hold := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.Method == http.MethodPost && r.URL.Path == "/v1/runs":
					<-release
				case r.URL.Path == "/health":
					health.Add(1)
				case r.URL.Path == "/v1/automate/cancel":
					cancels.Add(1)
				}
				next.ServeHTTP(w, r)
			})
		}
		e := newEnv(t, envOptions{rules: basicRules, wrapServer: hold})
		e.hub.command("slow held", nil)
		synctest.Wait() // the run started; its POST is held
		if st, err := e.bridge.Status(context.Background()); err != nil || st.Current == nil || st.Current.RequestID != "" {
			t.Fatalf("want a current run with no request id yet: %+v %v", st.Current, err)
		}
		health0 := health.Load()

		type result struct {
			at  time.Time
			err error
		}
		done := make(chan result, 1)
		go func() {
			_, err := e.bridge.Cancel(context.Background(), true)
			done <- result{time.Now(), err}
		}()
		time.Sleep(time.Second) // half the cancel grace, in fake time
		synctest.Wait()
		if n := health.Load() - health0; n != 1 {
			t.Errorf("/health asked %d times while the POST was held, want 1 (no polling)", n)
		}
		if n := cancels.Load(); n != 0 {
			t.Errorf("%d cancels sent while the server ran nothing, want 0", n)
		}

		released := time.Now()
		close(release)
		res := <-done
		if res.err != nil {
			t.Fatalf("cancel: %v", res.err)
		}
		if !res.at.Equal(released) {
			t.Errorf("the cancel was sent %s after the POST reached the server, want at once", res.at.Sub(released))
		}
		if n := health.Load() - health0; n != 2 {
			t.Errorf("/health asked %d times in all, want 2", n)
		}
		if n := cancels.Load(); n != 1 {
			t.Errorf("%d cancels sent, want 1", n)
		}
		h := e.waitFor("the run to end", finished(1))
		if h[0].Status != automate.StatusCanceled || h[0].Decision != journal.DecisionStarted || h[0].Note != "stopped by hubgate cancel --force (forced)" {
			t.Errorf("the held run was not canceled by a forced stop:\n%s", describe(h))
		}
	})
}
