package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/internal/testutil"
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

// ReportReload says what the reload applied and, as a warning, what waits
// for a restart, in the log and then on the event stream; a reload that
// changed no rule says so; a refused one says why.
func TestReportReloadLogsAndPublishes(t *testing.T) {
	f := newFixture(t)
	var buf testutil.SyncBuffer
	f.opts.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	d := f.start(t)
	events := d.Info().Bridge.Subscribe(t.Context(), bridge.SubscribeOptions{})
	next := func() bridge.Event {
		t.Helper()
		for e := range events {
			if e.Kind == bridge.EventReloaded || e.Kind == bridge.EventReloadRefused {
				return e
			}
		}
		t.Fatal("the event stream ended")
		return bridge.Event{}
	}

	d.ReportReload("/c.yaml", []string{"rule a added", "rule b removed"}, []string{"log"}, nil)
	e := next()
	for _, want := range []string{`level=INFO msg="SIGHUP: configuration reloaded: rule a added; rule b removed" file=/c.yaml changes=2`,
		`level=WARN msg="SIGHUP: these settings changed but apply only after a restart: log" file=/c.yaml`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("missing %q in:\n%s", want, buf.String())
		}
	}
	if got, want := e.Describe(), "configuration reloaded: rule a added; rule b removed\nthese settings changed but apply only after a restart: log"; e.Kind != bridge.EventReloaded || got != want {
		t.Errorf("reload event %s: %q, want %q", e.Kind, got, want)
	}

	d.ReportReload("/c.yaml", nil, nil, nil)
	if e := next(); e.Describe() != "configuration reloaded; nothing changed" {
		t.Errorf("no change: %q", e.Describe())
	}
	if !strings.Contains(buf.String(), "configuration reloaded; nothing changed") || strings.Count(buf.String(), "WARN") != 1 {
		t.Errorf("no change:\n%s", buf.String())
	}

	d.ReportReload("/c.yaml", nil, nil, errors.New("bridge.rules[0]: bad"))
	if e := next(); e.Kind != bridge.EventReloadRefused || e.Describe() != "configuration refused; the running one stays: bridge.rules[0]: bad" {
		t.Errorf("refused: %s %q", e.Kind, e.Describe())
	}
	if want := `level=ERROR msg="SIGHUP: the configuration was refused; the running one stays" file=/c.yaml err="bridge.rules[0]: bad"`; !strings.Contains(buf.String(), want) {
		t.Errorf("missing %q in:\n%s", want, buf.String())
	}
}
