// Package testutil owns the helpers that tests of every package share:
// waiting for a condition (Eventually, WaitFor), a buffer that many
// goroutines may write (SyncBuffer, a log sink), and an in-memory network
// (PipeListener; PipeNet for several listeners by address) that lets real
// HTTP and WebSocket servers and clients run inside a testing/synctest
// bubble, where time is fake and synctest.Wait proves that nothing more
// happens.
//
// Prefer a bubble to a wait: inside synctest.Test, time.Sleep and timers
// are instant and synctest.Wait returns once every goroutine of the test is
// blocked, so a test can assert absence ("nothing ran") without sleeping.
// Eventually is for what a bubble cannot hold: child processes, real
// sockets, the real binary.
package testutil

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultTimeout is WaitFor's timeout and Eventually's given zero: long
// enough for a loaded CI machine, only ever reached by a failing test.
const DefaultTimeout = 30 * time.Second

// pollInterval is how often Eventually asks again.
const pollInterval = 10 * time.Millisecond

// Eventually calls cond until it returns true, every 10ms, for up to
// timeout (zero: DefaultTimeout), and reports whether it did. The caller
// fails with what it waited for and what it saw last.
func Eventually(timeout time.Duration, cond func() bool) bool {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollInterval)
	}
}

// WaitFor is Eventually with DefaultTimeout that fails the test, naming
// what it waited for. A test with more to say on failure (the last state
// seen) calls Eventually itself.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	if !Eventually(DefaultTimeout, cond) {
		tb.Fatalf("timed out after %s waiting for %s", DefaultTimeout, what)
	}
}

// SyncBuffer is an io.Writer that goroutines may write concurrently (a
// logger's sink, a child's output) while the test reads it. The zero value
// is ready.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// InOrder fails tb unless every one of want appears in text, in this
// order (each after the end of the one before).
func InOrder(tb testing.TB, text string, want ...string) {
	tb.Helper()
	rest := text
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			tb.Fatalf("missing (or out of order) %q in:\n%s", w, text)
		}
		rest = rest[i+len(w):]
	}
}
