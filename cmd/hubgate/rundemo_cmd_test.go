package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
)

// run's and demo's flags become their options; their usage errors stop
// before anything runs.
func TestRunAndDemoFlagsBecomeTheirOptions(t *testing.T) {
	a := testApp(nil)
	a.executable = func() (string, error) { return "/tmp/go-build123/b001/exe/hubgate", nil }
	var ro *runOptions
	if err := parseCmd(t, newCmdRun(a, func(_ context.Context, o *runOptions) error { ro = o; return nil })); err != nil || ro == nil ||
		ro.LoadConfig == nil || ro.Inputs == nil || ro.Logger == nil {
		t.Errorf("run: %v, %+v", err, ro)
	}
	var u *usageError
	if err := parseCmd(t, newCmdRun(a, func(context.Context, *runOptions) error { t.Error("run ran"); return nil }), "extra"); !errors.As(err, &u) {
		t.Errorf("run extra: %v", err)
	}
	var do *demoOptions
	if err := parseCmd(t, newCmdDemo(a, func(_ context.Context, o *demoOptions) error { do = o; return nil }), "--once", "--json", "--command", "lights on"); err != nil || do == nil ||
		!do.Flags.once || !do.Flags.json || do.Flags.command != "lights on" || do.Invocation != "go run ./cmd/hubgate" {
		t.Errorf("demo: %v, %+v", err, do)
	}
	a.executable = func() (string, error) { return "/usr/local/bin/hubgate", nil }
	if err := parseCmd(t, newCmdDemo(a, func(_ context.Context, o *demoOptions) error { do = o; return nil })); err != nil || do.Flags.command != "hello" || do.Invocation != "hubgate" {
		t.Errorf("demo's defaults: %v, %+v", err, do)
	}
}

// demo refuses a config file and an empty command before it starts
// anything (no logger made, no signal taken).
func TestRunDemoRefusesWhatItCannotHonour(t *testing.T) {
	untouched := &demoOptions{
		Logger:  func() (*slog.Logger, error) { t.Error("a logger was made"); return nil, errors.New("no") },
		Signals: func(chan<- os.Signal, ...os.Signal) func() { t.Error("a signal was taken"); return func() {} },
	}
	var u *usageError
	o := *untouched
	o.ConfigFile, o.Flags.command = "my.yaml", "hello"
	if err := runDemo(context.Background(), &o); !errors.As(err, &u) || !strings.Contains(err.Error(), "drop --config") {
		t.Errorf("demo --config: %v", err)
	}
	o = *untouched
	o.Flags.command = "  "
	if err := runDemo(context.Background(), &o); !errors.As(err, &u) || !strings.Contains(err.Error(), "--command must not be empty") {
		t.Errorf("demo --command '  ': %v", err)
	}
}

// run with no paired device says so, after taking the instance lock, and
// lets it go: the next run can take it (the user pairs, then runs again).
func TestRunDaemonNotPairedReleasesTheLock(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "run", "control.sock")
	cfg := loadTestConfig(t, "bridge:\n  control_socket: "+sock+"\n  journal: "+filepath.Join(dir, "journal.db")+"\n")
	denied := 0
	o := &runOptions{
		LoadConfig:     func([]configs.Override) (*configs.Config, error) { return cfg, nil },
		Logger:         func(*configs.Config) *slog.Logger { return slog.New(slog.DiscardHandler) },
		DenyInspection: func(*slog.Logger) { denied++ },
		Inputs: func(context.Context, *configs.Config, *slog.Logger) (daemonParams, *pairing.Follower, error) {
			return daemonParams{}, nil, errNotPaired
		},
		Signals: func(chan<- os.Signal, ...os.Signal) func() {
			t.Error("signals taken before the daemon was made")
			return func() {}
		},
	}
	for range 2 {
		if err := runDaemon(context.Background(), o); !errors.Is(err, errNotPaired) {
			t.Fatalf("run, not paired: %v", err)
		}
	}
	if denied != 2 {
		t.Errorf("the process was made non-dumpable %d times in 2 runs", denied)
	}
	if code := exitCode(errNotPaired); code == 0 {
		t.Errorf("not paired exits %d", code)
	}
}
