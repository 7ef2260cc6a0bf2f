package daemon

import (
	"context"
	"log/slog"
	"os"
	"syscall"
	"testing"
)

// SIGHUP reloads while the daemon runs; a stop signal closes it and
// Supervise returns Close's result; a daemon whose hub was not refused
// stopped for no wrong device.
func TestSuperviseReloadsOnSIGHUPAndStopsOnSIGTERM(t *testing.T) {
	f := newFixture(t)
	d, err := New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 2)
	reloaded := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Supervise(context.Background(), d, sigs, func() { close(reloaded) }, slog.New(slog.DiscardHandler))
	}()
	sigs <- syscall.SIGHUP
	<-reloaded
	sigs <- syscall.SIGTERM
	if err := <-done; err != nil {
		t.Fatalf("Supervise: %v", err)
	}
	if err := d.WrongDevice(); err != nil {
		t.Errorf("WrongDevice after a clean stop: %v", err)
	}
}
