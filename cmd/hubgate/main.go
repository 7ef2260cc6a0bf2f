// Command hubgate is the hubgate gateway: one binary whose subcommands
// serve the Automate server (`hubgate automate serve`), manage its access
// key (`hubgate automate key`), pair a device (`hubgate pair`), run the
// daemon (`hubgate run`, assembled by bridge/daemon) and talk to it
// (`status`, `history`, `cancel`), write and check its configuration
// (`config`, `rules test`), install it as a user service (`service`),
// serve the mock remote service (`hubgate mock`) and show it all at once
// (`hubgate demo`).
//
// This package is the one command tree (its families with packages of
// their own are under cmd/hubgate/internal). Each command is an options
// struct, a builder that only reads flags into it, and a run function
// whose streams, environment, clock and dependencies are in the options,
// as gh builds its commands; tests call the run functions, or Run with a
// Process of their own, in the test process. The logic lives in the
// domain packages: configuration in configs, pairing in
// deviceapi/pairing, the daemon's assembly in bridge/daemon, engines in
// automate/... Every error reaching Run is mapped to an exit code by the
// one table in exitcodes.go.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := context.Background(), context.CancelFunc(func() {})
	if isDaemon(os.Args[1:]) {
		useOneProc() // `run` handles its own signals (daemon.Supervise)
		// A closed terminal's SIGHUP must not kill it before it listens
		// for SIGHUP (a reload) itself.
		signal.Ignore(syscall.SIGHUP)
	} else {
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	}
	code := Run(ctx, Process{Args: os.Args[1:], Stdio: Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, Getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// Process is what a command gets from the process that runs it: main
// gives the real ones; tests run the command tree in-process with their
// own (fake streams, an environment of their own, signals they send).
type Process struct {
	Args  []string // the command line without the program name
	Stdio Stdio
	// Getenv reads the environment. Zero: os.Getenv.
	Getenv func(string) string
	// Signals subscribes c to sigs until the returned stop is called, as
	// signal.Notify and signal.Stop do. Zero: the process's signals.
	Signals func(c chan<- os.Signal, sigs ...os.Signal) (stop func())
	// Executable is the path of the hubgate binary (what `service install`
	// runs; how `demo` says to run hubgate). Zero: os.Executable.
	Executable func() (string, error)
}

// notifySignals is Process.Signals of a real process.
func notifySignals(c chan<- os.Signal, sigs ...os.Signal) func() {
	signal.Notify(c, sigs...)
	return func() { signal.Stop(c) }
}

// Stdio are the streams a command uses.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Run runs p's command line and returns the exit code. ctx ends the
// command (SIGINT/SIGTERM in main).
func Run(ctx context.Context, p Process) int {
	if p.Getenv == nil {
		p.Getenv = os.Getenv
	}
	if p.Signals == nil {
		p.Signals = notifySignals
	}
	if p.Executable == nil {
		p.Executable = os.Executable
	}
	root := commandTree(&app{stdio: p.Stdio, getenv: p.Getenv, signals: p.Signals, executable: p.Executable, args: p.Args}, p.Args)
	root.SetArgs(p.Args)
	root.SetIn(p.Stdio.In)
	root.SetOut(p.Stdio.Out)
	root.SetErr(p.Stdio.Err)
	err := root.ExecuteContext(ctx)
	if err != nil {
		reportError(p.Stdio.Err, err)
	}
	return exitCode(err)
}
