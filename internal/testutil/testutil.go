// Package testutil owns the helpers that tests of every package share:
// the one wait (Wait, Until: a condition re-checked on an event, or a
// bounded poll where no event exists), a buffer that many
// goroutines may write (SyncBuffer, a log sink), and an in-memory network
// (PipeListener; PipeNet for several listeners by address) that lets real
// HTTP and WebSocket servers and clients run inside a testing/synctest
// bubble, where time is fake and synctest.Wait proves that nothing more
// happens.
//
// Prefer a bubble to a wait: inside synctest.Test, time.Sleep and timers
// are instant and synctest.Wait returns once every goroutine of the test is
// blocked, so a test can assert absence ("nothing ran") without sleeping.
// Until is for what a bubble cannot hold (child processes, real sockets,
// the real binary) and, inside one, for waiting on a component's events.
// A test that waits names what it waits for and the event that may bring
// it; there is no other wait helper, and no test sleeps to wait.
package testutil

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// SyncBuffer is an io.Writer that goroutines may write concurrently (a
// logger's sink, a child's output) while the test reads it. The zero value
// is ready.
type SyncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written Signal
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.written.Notify()
	return b.buf.Write(p)
}

// Written is the buffer's event source for Until: it signals each Write
// (see Signal), so a test waiting for a text checks String once per
// write.
func (b *SyncBuffer) Written() <-chan struct{} { return b.written.C() }

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
