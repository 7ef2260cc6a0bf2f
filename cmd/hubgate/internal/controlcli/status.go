package controlcli

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/hub"
)

const statusLong = `Show the running daemon's state: hub connection, listening, current run, queue.

The exit code says the state, for scripts:
  0   the daemon runs and acts on the commands that arrive
  9   the daemon is not running
  11  the hub refused the device token: run 'hubgate pair' again
  12  the hub is not connected (connecting or reconnecting)
  13  the hub is connected but commands are refused: the hub asked to stop
      listening and bridge.listening is obey (by default commands still run)
  3   the configuration is invalid (1 for other errors)

--json always prints one JSON object: the status, or {"running": false,
"error": "...", "exitCode": N} when there is no status to show.`

// statusOptions are `status`'s options.
type statusOptions struct {
	Out    io.Writer
	Daemon Daemon
	// ExitCode is the exit code of an error, for the error object; nil: 1.
	ExitCode func(error) int
	JSON     bool // --json
}

// newCmdStatus builds status; runF (nil: runStatus) gets the parsed
// options.
func newCmdStatus(c *CLI, runF func(context.Context, *statusOptions) error) *cobra.Command {
	o := &statusOptions{Out: c.opts.Out, Daemon: c.daemon(), ExitCode: c.opts.ExitCode}
	cmd := &cobra.Command{
		Use: "status",
		Example: `  hubgate status
  hubgate status --json | jq .hub
  hubgate status >/dev/null; echo $?   # 0 listening, 9 not running, 11-13 see above`,
		Short: "Show the running daemon's state: hub connection, listening, current run, queue",
		Long:  statusLong,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := noArgs(cmd, args); err != nil {
				return o.statusError(o.JSON, err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runStatus, o) },
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the status as one JSON object (an error object when there is none)")
	// A flag mistake stops the parsing, perhaps before --json: whether
	// JSON was asked for is read from the command line itself. The
	// mistake itself is told as every command's (the parent's function).
	cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if p := cmd.Parent(); p != nil {
			err = p.FlagErrorFunc()(cmd, err)
		} else {
			err = &UsageError{err}
		}
		return o.statusError(jsonRequested(c.opts.Args), err)
	})
	return cmd
}

// runStatus prints the daemon's status; its condition (statusCondition)
// is a *ReportedError.
func runStatus(ctx context.Context, o *statusOptions) error {
	st, err := call(o.Daemon, func(cl *control.Client) (bridge.Status, error) { return cl.Status(ctx) })
	if err != nil {
		return o.statusError(o.JSON, err)
	}
	if o.JSON {
		if err := cliout.WriteJSON(o.Out, st); err != nil {
			return err
		}
	} else {
		st.WriteText(o.Out)
	}
	if err := statusCondition(st); err != nil {
		return &ReportedError{err}
	}
	return nil
}

// statusError prints err as the error object of `status --json` when
// asJSON, and returns it.
func (o *statusOptions) statusError(asJSON bool, err error) error {
	if asJSON {
		code := 1
		if o.ExitCode != nil {
			code = o.ExitCode(err)
		}
		_ = cliout.WriteJSON(o.Out, StatusErrorBody{Running: false, Error: err.Error(), ExitCode: code})
	}
	return err
}

// jsonRequested reports whether args set --json (before any "--").
func jsonRequested(args []string) bool {
	on := false
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if arg == "--json" {
			on = true
		} else if v, ok := strings.CutPrefix(arg, "--json="); ok {
			on, _ = strconv.ParseBool(v)
		}
	}
	return on
}

// StatusErrorBody is `status --json` when no daemon answered.
type StatusErrorBody struct {
	Running  bool   `json:"running"`
	Error    string `json:"error"`
	ExitCode int    `json:"exitCode"`
}

// statusCondition is what the status's exit code says: nil when the
// device listens.
func statusCondition(st bridge.Status) error {
	switch {
	case st.Hub.NeedsRepair:
		return ErrNeedsRepair
	case st.Hub.Status != string(hub.StatusConnected) && st.Hub.Status != string(hub.StatusListening):
		return ErrNotConnected
	case !st.Listening:
		return ErrNotListening
	}
	return nil
}
