// Package controlcli owns the commands that talk to a running daemon over
// its control socket (status, history, cancel, answer, watch, open) and
// telling a daemon that the pairing changed: their flags and their text
// and JSON output. Like cmd/hubgate/internal/mockcli, only cmd imports it; its
// errors are typed or sentinels for cmd's exit-code table.
package controlcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/internal/proc"
)

// Endpoints are where the daemon answers and journals.
type Endpoints struct {
	ControlSocket string
	Journal       string
}

// Options are what the commands take from the process.
type Options struct {
	Out, Err io.Writer // nil: os.Stdout, os.Stderr
	// Locate finds the daemon's endpoints (the caller loads the
	// configuration and warns about a broken file).
	Locate func() (Endpoints, error)
	// ExitCode is the exit code an error ends the process with: `status
	// --json` reports it in its error object.
	ExitCode func(error) int
	// Args is the command line as the process got it (`status` reads
	// --json from it when a flag mistake stopped the parsing).
	Args []string
	// Getenv reads BROWSER (`open`). Nil: os.Getenv.
	Getenv func(string) string
	// Now is the clock (`cancel`: how long the run may go on). Nil:
	// time.Now.
	Now func() time.Time
	// Dial dials the daemon's control socket. Nil: control.Dial.
	Dial func(socket string) *control.Client
	// StartBrowser starts the browser command argv, detached, and calls
	// exited (if not nil) when it exits (`open`). Nil: internal/proc's
	// StartDetached.
	StartBrowser func(argv []string, exited func(error)) error
}

// ErrNotRunning: the daemon's control endpoint does not answer.
var ErrNotRunning = errors.New("hubgate is not running (no daemon answers on its control socket)")

// ErrNoQuestion: `hubgate answer` found no question waiting.
var ErrNoQuestion = errors.New("no question is waiting for an answer")

// The states `status` reports through its exit code.
var (
	ErrNeedsRepair  = errors.New("the hub refused the device token: run 'hubgate pair' again")
	ErrNotConnected = errors.New("the daemon runs but its hub is not connected")
	ErrNotListening = errors.New("the hub is connected but commands are refused: the device is not listening (bridge.listening: obey)")
)

// UsageError is a command-line mistake.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ReportedError carries an exit code whose story the command already
// told on its output (status): the caller prints nothing more.
type ReportedError struct{ Err error }

func (e *ReportedError) Error() string { return e.Err.Error() }
func (e *ReportedError) Unwrap() error { return e.Err }

// CLI builds the commands; one per process. Each command is, as gh's
// are, an options struct filled from the flags (newCmdX(c, runF): runF,
// when a test gives one, gets them) and a run function (runX(ctx, o))
// that does the work with what the options inject.
type CLI struct{ opts Options }

// New returns the commands' builder with opts' defaults applied.
func New(opts Options) *CLI {
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.Err == nil {
		opts.Err = os.Stderr
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Dial == nil {
		opts.Dial = control.Dial
	}
	if opts.StartBrowser == nil {
		opts.StartBrowser = func(argv []string, exited func(error)) error {
			_, err := proc.StartDetached(argv[0], argv[1:], exited)
			return err
		}
	}
	return &CLI{opts}
}

// Commands are status, history, cancel, answer, watch and open.
func (c *CLI) Commands() []*cobra.Command {
	return []*cobra.Command{newCmdStatus(c, nil), newCmdHistory(c, nil), newCmdCancel(c, nil),
		newCmdAnswer(c, nil), newCmdWatch(c, nil), newCmdOpen(c, nil)}
}

// Daemon is how a command reaches the running daemon.
type Daemon struct {
	// Locate finds the daemon's endpoints.
	Locate func() (Endpoints, error)
	// Dial dials its control socket.
	Dial func(socket string) *control.Client
}

// daemon is the commands' Daemon.
func (c *CLI) daemon() Daemon { return Daemon{Locate: c.opts.Locate, Dial: c.opts.Dial} }

// dial finds the daemon's endpoints and dials its control socket; the
// caller closes the client.
func (d Daemon) dial() (Endpoints, *control.Client, error) {
	ep, err := d.Locate()
	if err != nil {
		return Endpoints{}, nil, err
	}
	return ep, d.Dial(ep.ControlSocket), nil
}

// call dials the daemon, runs f on its control client and closes it: no
// daemon answering is ErrNotRunning.
func call[T any](d Daemon, f func(*control.Client) (T, error)) (T, error) {
	_, cl, err := d.dial()
	if err != nil {
		var zero T
		return zero, err
	}
	defer cl.Close()
	v, err := f(cl)
	return v, daemonError(err)
}

// daemonError maps a control call's error: no daemon answering is
// ErrNotRunning.
func daemonError(err error) error {
	if errors.Is(err, control.ErrNotRunning) {
		return ErrNotRunning
	}
	return err
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return &UsageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args[0])}
	}
	return nil
}

// DaemonAnswer is what a running daemon did when told that the pairing
// changed.
type DaemonAnswer struct {
	Running bool   // a daemon answered
	PID     int    // its process id, when it took the change
	Message string // its answer
	Err     error  // Running: it did not take the change; else: it could not be asked
}

// TellDaemon asks a running daemon to reconnect its hub at once with the
// pairing as it is now saved (after `pair`), or to stop when none is left
// (after `unpair`).
func (c *CLI) TellDaemon(ctx context.Context) DaemonAnswer {
	_, cl, err := c.daemon().dial()
	if err != nil {
		return DaemonAnswer{Err: err}
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	res, err := cl.Reconnect(ctx)
	switch {
	case errors.Is(err, control.ErrNotRunning):
		return DaemonAnswer{}
	case err != nil:
		return DaemonAnswer{Running: true, Err: err}
	}
	return DaemonAnswer{Running: true, PID: res.PID, Message: res.Message}
}

// SayDaemonAnswer says on w (stderr) what a running daemon did when told
// that the pairing changed; a daemon that is not running is told nothing
// (quiet unless always).
func SayDaemonAnswer(w io.Writer, d DaemonAnswer, always bool) {
	say := func(format string, args ...any) { fmt.Fprintf(w, "hubgate: "+format+"\n", args...) }
	switch {
	case !d.Running && d.Err != nil:
		say("could not tell a running daemon: %v", d.Err)
	case !d.Running:
		if always {
			say("no daemon is running")
		}
	case d.Err != nil:
		say("the running daemon did not take the change (%v); restart it to apply it", d.Err)
	default:
		say("the running daemon (pid %d): %s", d.PID, d.Message)
	}
}
