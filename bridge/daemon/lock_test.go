package daemon

import (
	"errors"
	"testing"

	"github.com/hubgate/hubgate/bridge/control"
)

// A lock the caller took first (Lock, then Options.Lock) is the one Start
// uses, not a second one (a second flock, even in this process, would be
// refused), and Close releases it.
func TestStartUsesTheCallersLockAndCloseReleasesIt(t *testing.T) {
	f := newFixture(t)
	lock, err := Lock(f.opts.ControlSocket)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if _, err := Lock(f.opts.ControlSocket); !errors.Is(err, control.ErrAlreadyRunning) {
		t.Fatalf("a second Lock: %v, want ErrAlreadyRunning", err)
	}
	f.opts.Lock = lock
	d, err := New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(t.Context()); err != nil {
		t.Fatalf("Start with the caller's lock: %v", err)
	}
	d.Close() // its error is the bridge's (a recovery cut short), not the lock's
	again, err := Lock(f.opts.ControlSocket)
	if err != nil {
		t.Fatalf("the lock is held after Close: %v", err)
	}
	again.Release()
}
