package controlcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
)

// `hubgate watch`: follows the running daemon's event stream (the bridge's
// decisions, run outcomes with their answers, notify messages, hub state)
// over the control socket. Text lines by default; --json prints each event
// as one JSON object per line (bridge.Event). It runs until interrupted;
// when the daemon is not running, or stops, it exits 9.

// watchOptions are `watch`'s options.
type watchOptions struct {
	Out     io.Writer
	Daemon  Daemon
	JSON    bool // --json: one JSON object per line
	History int  // --history: past events first (0 none)
}

// newCmdWatch builds watch; runF (nil: runWatch) gets the parsed options.
func newCmdWatch(c *CLI, runF func(context.Context, *watchOptions) error) *cobra.Command {
	o := &watchOptions{Out: c.opts.Out, Daemon: c.daemon()}
	cmd := &cobra.Command{
		Use: "watch",
		Example: `  hubgate watch
  hubgate watch --history 20 --json`,
		Short: "Follow the running daemon: every command, decision, run, answer and hub state as it happens",
		Long: `Follow the running daemon's event stream: each command received (and the rule it
matched), each decision (queued, dropped and why, ...), each run started,
parked, cancelled and finished with its answer, the notify tool's messages and
the hub connection's state changes.

--json prints one JSON object per line (for scripts); --history N first prints
up to N of the latest past events of this daemon's life. Ctrl-C stops.
Exit code 9 when the daemon is not running or when it stops.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.History < 0 || o.History > control.MaxWatchHistory {
				return &UsageError{fmt.Errorf("--history must be between 0 and %d", control.MaxWatchHistory)}
			}
			return cliout.Run(cmd, runF, runWatch, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print each event as one JSON object per line")
	cmd.Flags().IntVar(&o.History, "history", 0, "first print up to this many of the latest past events")
	return cmd
}

// runWatch prints the daemon's events until ctx ends or the daemon stops
// (ErrNotRunning).
func runWatch(ctx context.Context, o *watchOptions) error {
	_, cl, err := o.Daemon.dial()
	if err != nil {
		return err
	}
	defer cl.Close()
	err = cl.Watch(ctx, o.History, func(e bridge.Event) error {
		if o.JSON {
			return cliout.WriteJSONLine(o.Out, e) // bounded in depth and size
		}
		_, err := io.WriteString(o.Out, FormatEvent(e)+"\n")
		return err
	})
	if errors.Is(err, control.ErrNotRunning) {
		return fmt.Errorf("%w: %v", ErrNotRunning, err)
	}
	return err
}

// FormatEvent renders one event for a person: the event stream's one
// text form (bridge.Event.Lines), each line after the local time.
func FormatEvent(e bridge.Event) string {
	at := e.At.Local().Format(time.TimeOnly)
	lines := e.Lines()
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = at + " " + l.Text
	}
	return strings.Join(out, "\n")
}
