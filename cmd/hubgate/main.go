// Command hubgate is the hubgate gateway: one binary whose subcommands
// serve the Automate server (`hubgate automate serve`), manage its access
// key (`hubgate automate key`), pair a device (`hubgate pair`), run the
// daemon (`hubgate run`, assembled by bridge/daemon) and talk to it
// (`status`, `history`, `cancel`), write and check its configuration
// (`config`, `rules test`), install it as a user service (`service`),
// serve the mock remote service (`hubgate mock`) and show it all at once
// (`hubgate demo`). This package only wires: configuration from configs, engines
// from automate/..., the server from automate/server. Every error reaching
// Main is mapped to an exit code by the one table in exitcodes.go.
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
	code := Main(ctx, os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Getenv)
	stop()
	os.Exit(code)
}

// Stdio are the streams a command uses.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Main runs the command line args and returns the exit code. ctx ends the
// command (SIGINT/SIGTERM in main); getenv reads the environment.
func Main(ctx context.Context, args []string, stdio Stdio, getenv func(string) string) int {
	root := commandTree(&app{stdio: stdio, getenv: getenv, args: args}, args)
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	err := root.ExecuteContext(ctx)
	if err != nil {
		reportError(stdio.Err, err)
	}
	return exitCode(err)
}
