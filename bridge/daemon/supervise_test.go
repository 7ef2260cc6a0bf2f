package daemon

import (
	"context"
	"log/slog"
	"os"
	"strings"
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

// LogReload says what the reload applied and, as a warning, what waits
// for a restart; a reload that changed no rule says so.
func TestLogReloadSaysChangesAndWhatNeedsARestart(t *testing.T) {
	var buf strings.Builder
	LogReload(slog.New(slog.NewTextHandler(&buf, nil)), "/c.yaml", []string{"rule a added", "rule b removed"}, []string{"log"})
	out := buf.String()
	for _, want := range []string{`level=INFO msg="SIGHUP: configuration reloaded: rule a added; rule b removed" file=/c.yaml changes=2`,
		`level=WARN msg="SIGHUP: these settings changed but apply only after a restart: log" file=/c.yaml`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	buf.Reset()
	LogReload(slog.New(slog.NewTextHandler(&buf, nil)), "/c.yaml", nil, nil)
	if out := buf.String(); !strings.Contains(out, "the rules did not change") || strings.Contains(out, "WARN") {
		t.Errorf("no change: %s", out)
	}
}
