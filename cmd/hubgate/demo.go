package main

// `hubgate demo`: the main job on embedded defaults, in one process, with no
// set-up (package bridge/daemon/demo runs it and narrates each step; this
// command prints the narrative). The daemon's options are the embedded
// defaults mapped as `run` maps its configuration (demoDaemonOptions), with
// the demo's own over them.
//
// Choices where the issue is silent:
//   - Embedded defaults only: no config file and no HUBGATE_ environment
//     variable is read; --log-level and --log-format apply (logs go to
//     stderr, at warn unless --log-level says otherwise); --config is a usage
//     error rather than silently ignored.
//   - --once exits after the first command is settled: 0 when its run
//     completed; otherwise (a failed or canceled run, a command not run, an
//     interruption) a *demo.RunError, exit code ExitRunFailed.
//   - --json prints the narrative as JSON lines: {"time","event","message"}
//     plus the fields of the step (ids, status, answer, ...).
//   - --command replaces the sample command ("hello"), e.g. to see a rule
//     with a tool or a run that fails.
//   - A closed stdout (`hubgate demo | head`) stops the demo like a signal
//     (SIGPIPE is caught for that), with exit code 1: the temp dir is still
//     removed.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/bridge/daemon/demo"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/configs"
)

// errDemoStdout: the narrative could not be written (stdout closed); the
// demo stopped.
var errDemoStdout = errors.New("demo: stdout is closed; stopped")

type demoFlags struct {
	once    bool
	json    bool
	command string
}

// demoOptions are `demo`'s options.
type demoOptions struct {
	IO Stdio
	// ConfigFile is the global --config ("": none); the demo refuses one.
	ConfigFile string
	// Logger is the demo's logger (demoLogger: stderr, warn unless
	// --log-level says otherwise).
	Logger func() (*slog.Logger, error)
	// Signals subscribes to the process's signals (Process.Signals): a
	// SIGPIPE is taken, so that a closed stdout ends the demo cleanly.
	// Nil: none taken.
	Signals func(c chan<- os.Signal, sigs ...os.Signal) (stop func())
	// Invocation is how the person runs hubgate (demoInvocation).
	Invocation string
	Version    string
	Flags      demoFlags
}

func newDemoCommand(a *app) *cobra.Command { return newCmdDemo(a, nil) }

// newCmdDemo builds demo; runF (nil: runDemo) gets the options.
func newCmdDemo(a *app, runF func(context.Context, *demoOptions) error) *cobra.Command {
	o := &demoOptions{IO: a.stdio, Logger: a.demoLogger, Signals: a.signals, Invocation: demoInvocation(a.executablePath), Version: version()}
	f := &o.Flags
	cmd := &cobra.Command{
		Use: "demo",
		Example: `  hubgate demo                    # everything in one process; Ctrl-C stops it
  hubgate demo --once             # one run, then exit (0 when it completed)
  hubgate demo --command "notify the kettle is on" --json`,
		Short: "Run the whole job in this process: mock service, pairing, daemon, a sample command",
		Long: `Run the main job on embedded defaults, in one process, with no set-up:

  1. the mock remote service on 127.0.0.1 (any free port);
  2. pairing against it for real (OAuth sign-in with PKCE, the User Device,
     its device token), with every secret kept in memory only;
  3. the daemon: the co-hosted Automate server with the scripted engine, the
     demo routing rules, the journal, the hub connection;
  4. a sample DeviceCommand ("hello") pushed through the mock hub.

It prints each step and the run's answer on stdout, then stays up and says how
to push more commands with 'hubgate mock send'; each further run's answer is
printed as it finishes. Ctrl-C (SIGINT or SIGTERM) stops everything cleanly.
Nothing is kept: the journal and the workspace live in a temp dir that is
removed on exit; no config file, secret store or HUBGATE_ variable is used.
Logs go to stderr at warn level unless --log-level says otherwise.

--once exits after the first run: exit code 0 when it completed, 10 when it did
not (failed, canceled, not run).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ConfigFile = a.configPath // a persistent flag: parsed by now
			return cliout.Run(cmd, runF, runDemo, o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.once, "once", false, "exit after the first run: 0 when it completed, 10 otherwise")
	fl.BoolVar(&f.json, "json", false, "print the narrative as JSON lines, one object per step")
	fl.StringVar(&f.command, "command", "hello", "the sample DeviceCommand pushed once the device listens")
	return cmd
}

// runDemo runs the demo (bridge/daemon/demo) until ctx ends (or, with --once,
// the first run) and prints its narrative.
func runDemo(ctx context.Context, o *demoOptions) (err error) {
	f := o.Flags
	if o.ConfigFile != "" {
		return &usageError{errors.New("demo runs on embedded defaults and reads no config file; drop --config")}
	}
	if strings.TrimSpace(f.command) == "" {
		return &usageError{errors.New("--command must not be empty")}
	}
	log, err := o.Logger()
	if err != nil {
		return err
	}
	// A closed stdout (`hubgate demo | head`) stops the demo cleanly
	// instead of killing it with SIGPIPE before it removed its temp dir.
	if o.Signals != nil {
		sigpipe := make(chan os.Signal, 1)
		defer o.Signals(sigpipe, syscall.SIGPIPE)()
	}
	ctx, stopAll := context.WithCancelCause(ctx)
	defer stopAll(nil)
	n := &demoPrinter{W: o.IO.Out, JSON: f.json, Failed: func(werr error) {
		stopAll(fmt.Errorf("%w: %w", errDemoStdout, werr))
	}}
	daemonOpts, closeEngine := demoDaemonOptions(log)
	defer closeEngine()
	err = demo.Run(ctx, demo.Options{Command: f.command, Once: f.once, Narrate: n.Print,
		Invocation: o.Invocation, Version: o.Version, Logger: log, Daemon: daemonOpts})
	if c := context.Cause(ctx); errors.Is(c, errDemoStdout) {
		return c
	}
	return err
}

// demoLogger is the logger of the demo: on stderr, at warn unless
// --log-level says otherwise, in --log-format.
func (a *app) demoLogger() (*slog.Logger, error) {
	cfg := &configs.Config{Log: configs.LogConfig{Level: "warn", Format: "text"}}
	var problems []configs.FieldError
	for _, f := range []struct {
		path, flag, value string
		allowed           []string
		set               *string
	}{
		{"log.level", "--log-level", a.logLevel, configs.LogLevels, &cfg.Log.Level},
		{"log.format", "--log-format", a.logFormat, configs.LogFormats, &cfg.Log.Format},
	} {
		switch {
		case f.value == "":
		case slices.Contains(f.allowed, f.value):
			*f.set = f.value
		default:
			problems = append(problems, configs.FieldError{Path: f.path, Source: "flag " + f.flag,
				Message: fmt.Sprintf("must be one of %s; got %q", strings.Join(f.allowed, ", "), f.value)})
		}
	}
	if len(problems) > 0 {
		return nil, &configError{&configs.ValidationError{Problems: problems}}
	}
	return a.logger(cfg), nil
}

// demoInvocation is how the person runs hubgate: "go run ./cmd/hubgate"
// when this binary (executable) was built by go run, else "hubgate".
func demoInvocation(executable func() (string, error)) string {
	if exe, err := executable(); err == nil && strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "go run ./cmd/hubgate"
	}
	return "hubgate"
}
