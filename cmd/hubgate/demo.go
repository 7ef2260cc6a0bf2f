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

func newDemoCommand(a *app) *cobra.Command {
	var f demoFlags
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
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runDemo(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.once, "once", false, "exit after the first run: 0 when it completed, 10 otherwise")
	fl.BoolVar(&f.json, "json", false, "print the narrative as JSON lines, one object per step")
	fl.StringVar(&f.command, "command", "hello", "the sample DeviceCommand pushed once the device listens")
	return cmd
}

// runDemo runs the demo (bridge/daemon/demo) until ctx ends (or, with --once,
// the first run) and prints its narrative.
func (a *app) runDemo(ctx context.Context, f demoFlags) (err error) {
	if a.configPath != "" {
		return &usageError{errors.New("demo runs on embedded defaults and reads no config file; drop --config")}
	}
	if strings.TrimSpace(f.command) == "" {
		return &usageError{errors.New("--command must not be empty")}
	}
	log, err := a.demoLogger()
	if err != nil {
		return err
	}
	// A closed stdout (`hubgate demo | head`) stops the demo cleanly
	// instead of killing it with SIGPIPE before it removed its temp dir.
	sigpipe := make(chan os.Signal, 1)
	defer a.signals(sigpipe, syscall.SIGPIPE)()
	ctx, stopAll := context.WithCancelCause(ctx)
	defer stopAll(nil)
	n := &demoPrinter{W: a.stdio.Out, JSON: f.json, Failed: func(werr error) {
		stopAll(fmt.Errorf("%w: %w", errDemoStdout, werr))
	}}
	daemonOpts, closeEngine := demoDaemonOptions(log)
	defer closeEngine()
	err = demo.Run(ctx, demo.Options{Command: f.command, Once: f.once, Narrate: n.Print,
		Invocation: demoInvocation(), Version: version(), Logger: log, Daemon: daemonOpts})
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
// when this binary was built by go run, else "hubgate".
func demoInvocation() string {
	if exe, err := os.Executable(); err == nil && strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "go run ./cmd/hubgate"
	}
	return "hubgate"
}
