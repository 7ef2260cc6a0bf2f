// Package mockcli owns `hubgate mock`, the mock remote service's command
// line: running the mock, and the admin subcommands that drive a running
// one (devices, send, fault, events, token, play, record...) over its
// admin API. Each command is an options struct filled from its flags and
// a run function (newCmdX(a, runF), runX(ctx, o)), as gh builds its
// commands; tests call either. Like the mock, it is imported by cmd only.
// Its errors are typed (UsageError, InputError, UnavailableError,
// ReportedError) for cmd's exit-code table.
package mockcli

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

// EnvClientSecret overrides the mock's OAuth client secret (a test
// credential); EnvURL is the default --url of the admin subcommands.
const (
	EnvClientSecret = "HUBGATE_MOCK_CLIENT_SECRET"
	EnvURL          = "HUBGATE_MOCK_URL"
)

// Options are what the commands take from the process.
type Options struct {
	In       io.Reader           // nil: os.Stdin
	Out, Err io.Writer           // nil: os.Stdout, os.Stderr
	Getenv   func(string) string // nil: os.Getenv
	// Logger is called when the mock starts, after the flags are parsed
	// (the global log flags shape it). Nil: logs are discarded.
	Logger func() *slog.Logger
}

// UsageError is a command-line mistake.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// InputError is a file the command was given that it cannot use: a
// scenario that does not parse, a corrupt --state file.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// UnavailableError is an address the mock cannot listen on because it
// is taken (--listen, --service-listen).
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// ReportedError is a failure the command already reported on its output
// (a scenario's failed expectation): the caller prints nothing more.
type ReportedError struct{ Err error }

func (e *ReportedError) Error() string { return e.Err.Error() }
func (e *ReportedError) Unwrap() error { return e.Err }

// cli is the commands' shared state: the options with defaults applied.
type cli struct{ Options }

// NewCommand builds `hubgate mock` and its subcommands.
func NewCommand(opts Options) *cobra.Command {
	a := &cli{opts}
	if a.In == nil {
		a.In = os.Stdin
	}
	if a.Out == nil {
		a.Out = os.Stdout
	}
	if a.Err == nil {
		a.Err = os.Stderr
	}
	if a.Getenv == nil {
		a.Getenv = os.Getenv
	}
	cmd := newCommand(a, nil)
	setExamples(cmd)
	return cmd
}

func (a *cli) logger() *slog.Logger {
	if a.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Logger()
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return &UsageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args[0])}
	}
	return nil
}
