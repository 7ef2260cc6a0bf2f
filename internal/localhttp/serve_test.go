package localhttp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
)

// serveOne serves handler on an in-memory listener and sends it one GET
// in the background; it returns once the handler has started. The
// answer's error (nil: answered) arrives on the channel.
func serveOne(handler http.HandlerFunc) (*Serving, <-chan error) {
	l := testutil.NewPipeListener()
	started := make(chan struct{})
	s := Serve(&http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		handler(w, r)
	})}, l)
	out := make(chan error, 1)
	go func() {
		c := &http.Client{Transport: &http.Transport{DialContext: l.Dial}}
		resp, err := c.Get("http://127.0.0.1/")
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		out <- err
	}()
	<-started
	return s, out
}

// A handler that outlives the bound is cut at the bound, not later: Stop
// returns at exactly the bound on the bubble's clock, says it was cut,
// and the handler's request ends (its connection was closed).
func TestStopCutsASlowHandlerAtTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ended := make(chan error, 1)
		s, answer := serveOne(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
			ended <- r.Context().Err()
		})

		begin := time.Now()
		err := s.Stop(context.Background(), 5*time.Second)
		if took := time.Since(begin); took != 5*time.Second {
			t.Errorf("Stop returned after %v, want the bound 5s", took)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Stop = %v, want a cut shutdown (context.DeadlineExceeded)", err)
		}
		if err := <-ended; err == nil {
			t.Error("the slow handler's request context was not ended")
		}
		if err := <-answer; err == nil {
			t.Error("the client of the cut request got an answer")
		}
		select {
		case <-s.Done():
		default:
			t.Error("Done is open after Stop returned")
		}
		if err := s.Err(); err != nil {
			t.Errorf("Err after Stop = %v, want nil", err)
		}
		if again := s.Stop(context.Background(), time.Second); again != err {
			t.Errorf("a second Stop = %v, want the first one's result", again)
		}
	})
}

// A request that ends within the bound is answered, and Stop returns nil
// as soon as it has ended, not at the bound.
func TestStopWaitsForARequestWithinTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, answer := serveOne(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Second)
			io.WriteString(w, "done")
		})

		begin := time.Now()
		if err := s.Stop(context.Background(), 5*time.Second); err != nil {
			t.Errorf("Stop = %v, want nil (the request ended within the bound)", err)
		}
		if took := time.Since(begin); took >= 5*time.Second {
			t.Errorf("Stop took %v: it waited for the bound, not for the request", took)
		}
		if err := <-answer; err != nil {
			t.Errorf("the request that ended within the bound failed: %v", err)
		}
	})
}

// The caller's context bounds Stop too.
func TestStopIsBoundedByItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, answer := serveOne(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		begin := time.Now()
		if err := s.Stop(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Stop = %v, want a cut shutdown", err)
		}
		if took := time.Since(begin); took != 2*time.Second {
			t.Errorf("Stop returned after %v, want the context's 2s", took)
		}
		<-answer
	})
}

// brokenListener fails every Accept with a permanent error.
type brokenListener struct{ net.Listener }

var errAcceptBroke = errors.New("accept broke")

func (brokenListener) Accept() (net.Conn, error) { return nil, errAcceptBroke }
func (brokenListener) Close() error              { return nil }
func (brokenListener) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// A failure of Serve (anything but http.ErrServerClosed) ends serving and
// is reported by Err; a Stop afterwards has nothing to cut.
func TestServeFailureIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := Serve(&http.Server{Handler: http.NotFoundHandler()}, brokenListener{})
		<-s.Done()
		if err := s.Err(); !errors.Is(err, errAcceptBroke) {
			t.Errorf("Err = %v, want the listener's failure", err)
		}
		if err := s.Stop(context.Background(), time.Second); err != nil {
			t.Errorf("Stop after a failure = %v, want nil", err)
		}
		if err := s.Err(); !errors.Is(err, errAcceptBroke) {
			t.Errorf("Err after Stop = %v, want the failure still", err)
		}
	})
}

// Before serving ends, Err is nil and Done is open.
func TestErrIsNilWhileServing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := Serve(&http.Server{Handler: http.NotFoundHandler()}, testutil.NewPipeListener())
		synctest.Wait()
		select {
		case <-s.Done():
			t.Fatalf("Done closed while serving (Err %v)", s.Err())
		default:
		}
		if err := s.Err(); err != nil {
			t.Errorf("Err while serving = %v", err)
		}
		if err := s.Stop(context.Background(), time.Second); err != nil {
			t.Errorf("Stop of an idle server = %v", err)
		}
	})
}
