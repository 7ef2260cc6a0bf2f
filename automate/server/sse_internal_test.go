package server

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
)

// stuckWriter is a ResponseWriter whose Write blocks, as on a caller that
// stopped reading without closing, until a write deadline in the past is
// set (what net/http's connection does).
type stuckWriter struct {
	header  http.Header
	mu      sync.Mutex
	expired chan struct{}
	writes  int
	wrote   testutil.Signal // each Write begun
}

func newStuckWriter() *stuckWriter {
	return &stuckWriter{header: http.Header{}, expired: make(chan struct{})}
}

func (w *stuckWriter) Header() http.Header { return w.header }
func (w *stuckWriter) WriteHeader(int)     {}
func (w *stuckWriter) Flush()              {}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes++
	first := w.writes == 1
	w.mu.Unlock()
	w.wrote.Notify()
	if first {
		return len(p), nil // the headers' role chunk goes out
	}
	<-w.expired
	return 0, errors.New("i/o timeout")
}

func (w *stuckWriter) SetWriteDeadline(t time.Time) error {
	if !t.IsZero() && !t.After(time.Now()) {
		w.mu.Lock()
		defer w.mu.Unlock()
		select {
		case <-w.expired:
		default:
			close(w.expired)
		}
	}
	return nil
}

// TestStreamWriteStuckOnTheCallerIsUnblocked: a model-mode stream whose
// caller stopped reading blocks the engine in its sink; unblock (called
// when the call is cancelled or times out) ends that write and every later
// one, so the engine returns and the inference slot is freed.
func TestStreamWriteStuckOnTheCallerIsUnblocked(t *testing.T) {
	w := newStuckWriter()
	o := &sseOutput{w: w, rc: http.NewResponseController(w)}
	if err := o.Begin(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- o.Content("more of the answer") }()
	testutil.Until(t, "the content to reach the stuck connection", w.wrote.C(), func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.writes == 2
	})
	o.unblock()
	select {
	case err := <-done:
		if !errors.Is(err, errClientGone) {
			t.Fatalf("the unblocked write answered %v, want errClientGone", err)
		}
	case <-time.After(testutil.DefaultTimeout):
		t.Fatal("the write stayed blocked after unblock")
	}
	if err := o.Content("after"); !errors.Is(err, errClientGone) {
		t.Fatalf("a later write answered %v, want errClientGone", err)
	}
}
