// Package demo owns the one-process demo (`hubgate demo`): the daemon's
// own assembly (package daemon, made with New and started with Start as
// `hubgate run` does) on the options its caller maps from the embedded
// defaults, with the demo's options over them (the scripted engine, the
// embedded demo rules, everything in a temp dir), and around it the mock
// remote service, pairing against it (package pairing) and the sample
// commands, narrated step by step through a callback. It prints nothing;
// its caller prints what it narrates. Only cmd imports it. Run returns
// once the first command is settled (Once) or ctx ends.
//
// The choices where the issue is silent: docs/demo.md.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/daemon"
	"github.com/hubgate/hubgate/bridge/journal"
)

// Defaults of Options.
const (
	DefaultCommand      = "hello"
	DefaultStartTimeout = 60 * time.Second
	// DeviceName is the name of the User Device the demo creates.
	DeviceName = "hubgate demo"
)

// Options configure Run. Zero values are documented per field.
type Options struct {
	// Command is the sample DeviceCommand pushed once the device listens.
	// Zero: DefaultCommand.
	Command string
	// Once returns after the first command is settled (see RunError).
	// Zero: run until ctx ends.
	Once bool
	// Narrate is told each step, from one goroutine at a time. Zero:
	// nothing is told.
	Narrate func(Step)
	// Invocation is how the person runs hubgate, for the commands the
	// hint shows ("go run ./cmd/hubgate"). Zero: "hubgate".
	Invocation string
	// Version is hubgate's version: in the pairing's User-Agent and the
	// Automate server's answers. Zero: "dev".
	Version string
	// TempDir is where the demo's temp dir is made. Zero: os.TempDir().
	TempDir string
	// StartTimeout bounds the sign-in and the wait for the device to
	// listen. Zero: DefaultStartTimeout.
	StartTimeout time.Duration
	// Logger receives the logs of every part. Zero: discard.
	Logger *slog.Logger
	// Now is the clock of the steps and of the daemon. Zero: time.Now.
	Now func() time.Time
	// Daemon returns the daemon's options before the demo's own, given
	// the demo's temp dir: `hubgate demo` maps the embedded defaults onto
	// them as `hubgate run` maps its configuration, engine included, with
	// dir as the user config dir. The demo then sets what is its own (see
	// daemonOptions: the device and its token, the demo rules, the paths
	// in dir, any free port, no desktop notification, Logger and Now).
	// Zero: the daemon's zero values and the scripted engine.
	Daemon func(dir string) (daemon.Options, error)
}

// Step is one step of the narrative.
type Step struct {
	// At is when it happened (Options.Now).
	At time.Time
	// Name names the step for machine readers: start, mock, pair,
	// sign-in, signed-in, device, device-token, confirmed, daemon,
	// automate, journal, rules, hub, listening, push, hint, rules-hint,
	// more-hint, stopping, daemon-stopped, mock-stopped, removed; or a
	// line of the bridge's event stream (bridge.Line.Step: received,
	// decision, run-started, run-finished, answer, ...).
	Name string
	// Text is what a person reads; it may span lines.
	Text string
	// Fields are the step's values for machine readers (ids, addresses,
	// status, answer); never a secret.
	Fields map[string]any
}

// RunError: with Once, the first command did not end in a completed run.
type RunError struct {
	CommandID int64
	Decision  journal.Decision
	Status    automate.RunStatus
	ErrorCode string
	Reason    string
}

func (e *RunError) Error() string {
	var what string
	switch {
	case e.Status != "":
		what = "the run ended " + string(e.Status)
		if e.ErrorCode != "" {
			what += " (" + e.ErrorCode + ")"
		}
	case e.Decision != "" && e.Decision != journal.DecisionStarted:
		what = "the command was " + string(e.Decision)
	default:
		what = "the run did not complete"
	}
	if e.Reason != "" {
		what += ": " + e.Reason
	}
	if e.CommandID > 0 {
		return fmt.Sprintf("demo: command #%d: %s", e.CommandID, what)
	}
	return "demo: " + what
}

// ErrEmptyCommand: Options.Command is only blanks.
var ErrEmptyCommand = errors.New("demo: the sample command must not be empty")

func (o Options) withDefaults() Options {
	if o.Command == "" {
		o.Command = DefaultCommand
	}
	if o.Invocation == "" {
		o.Invocation = "hubgate"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// run is one Run: its options and its serialized narrator.
type run struct {
	o   Options
	log *slog.Logger
	mu  sync.Mutex // serializes Narrate
	dir string
}

// say tells one step.
func (r *run) say(name string, fields map[string]any, format string, args ...any) {
	if r.o.Narrate == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.o.Narrate(Step{At: r.o.Now(), Name: name, Text: fmt.Sprintf(format, args...), Fields: fields})
}

// interrupted is the result of a demo stopped by ctx before it was done:
// nothing wrong, unless Once still waited for its run.
func (r *run) interrupted() error {
	if r.o.Once {
		return &RunError{Reason: "interrupted before the run finished"}
	}
	return nil
}

// Run runs the demo until ctx ends (or, with Once, the first command is
// settled). Everything it starts is stopped in reverse order: the daemon,
// the mock, then the temp dir is removed.
func Run(ctx context.Context, opts Options) (err error) {
	o := opts.withDefaults()
	if strings.TrimSpace(o.Command) == "" {
		return ErrEmptyCommand
	}
	dir, err := os.MkdirTemp(o.TempDir, "hubgate-demo-")
	if err != nil {
		return fmt.Errorf("demo: make a temp dir: %w", err)
	}
	r := &run{o: o, log: o.Logger, dir: dir}
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil {
			if err == nil {
				err = fmt.Errorf("demo: remove %s: %w", dir, rerr)
			}
			return
		}
		r.say("removed", map[string]any{"tempDir": dir}, "removed %s", dir)
	}()
	r.say("start", map[string]any{"tempDir": dir},
		"hubgate demo: the main job in this one process; secrets stay in memory, files in %s (removed on exit)", dir)

	// 1. The mock remote service.
	m, err := startMock(r.log)
	if err != nil {
		return err
	}
	defer func() {
		m.stop()
		r.say("mock-stopped", nil, "stopped the mock remote service")
	}()
	r.say("mock", map[string]any{"mockUrl": m.base},
		"1. mock remote service at %s (OAuth sign-in, device REST routes, SignalR hub at /device, admin API at /mock)", m.base)

	// 2. Pairing, secrets in memory.
	p, err := r.pair(ctx, m)
	if err != nil {
		if ctx.Err() != nil {
			return r.interrupted()
		}
		return err
	}

	// 3. The daemon, and 4. the sample command.
	return r.runDaemon(ctx, m, p)
}
