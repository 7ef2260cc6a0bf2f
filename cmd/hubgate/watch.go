package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/bridge/control"
)

// `hubgate watch`: follows the running daemon's event stream (the bridge's
// decisions, run outcomes with their answers, notify messages, hub state)
// over the control socket. Text lines by default; --json prints each event
// as one JSON object per line (control.Event). It runs until interrupted;
// when the daemon is not running, or stops, it exits 9.

func newWatchCommand(a *app) *cobra.Command {
	var (
		asJSON  bool
		history int
	)
	cmd := &cobra.Command{
		Use:   "watch",
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
			if history < 0 || history > control.MaxWatchHistory {
				return &usageError{fmt.Errorf("--history must be between 0 and %d", control.MaxWatchHistory)}
			}
			_, c, err := a.dialControl()
			if err != nil {
				return err
			}
			defer c.Close()
			enc := json.NewEncoder(a.stdio.Out)
			err = c.Watch(cmd.Context(), history, func(e control.Event) error {
				if asJSON {
					return enc.Encode(e)
				}
				_, err := io.WriteString(a.stdio.Out, formatEvent(e)+"\n")
				return err
			})
			if errors.Is(err, control.ErrNotRunning) {
				return fmt.Errorf("%w: %v", errNotRunning, err)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each event as one JSON object per line")
	cmd.Flags().IntVar(&history, "history", 0, "first print up to this many of the latest past events")
	return cmd
}

// formatEvent renders one event as a line for a person.
func formatEvent(e control.Event) string {
	at := e.At.Local().Format(time.TimeOnly)
	tag := ""
	if e.CommandID != 0 {
		tag = fmt.Sprintf("#%d ", e.CommandID)
	}
	var what string
	switch e.Kind {
	case control.EventReceived:
		rule := "no rule matched"
		if e.Rule != "" {
			rule = "rule " + e.Rule
		}
		what = fmt.Sprintf("received %q (%s)", e.Command, rule)
	case control.EventDecided:
		what = string(e.Decision)
		if e.Note != "" {
			what += ": " + e.Note
		}
	case control.EventStarted:
		what = "run started"
		if e.TaskID != "" {
			what += " (task " + e.TaskID + ")"
		}
	case control.EventParked:
		what = "run parked for client tools: " + e.Note
	case control.EventResumed:
		what = "run resumed"
	case control.EventCancelRequested:
		what = "cancel requested (" + e.Note + ")"
	case control.EventFinished:
		switch {
		case e.Status == "":
			what = "run failed: " + e.Error
		default:
			what = "run " + string(e.Status)
			if e.ErrorCode != "" {
				what += " (" + e.ErrorCode + ")"
			}
			what += fmt.Sprintf(" in %d ms", e.DurationMs)
			if t := e.Text(); t != "" {
				what += ": " + strings.ReplaceAll(strings.TrimRight(t, "\n"), "\n", "\n    ")
			}
		}
	case control.EventStopOutputs:
		what = "StopOutputs"
	case control.EventNotify:
		what = fmt.Sprintf("notify [%s] %s", e.Level, e.Message)
	case control.EventHub:
		if e.Hub != nil {
			what = "hub " + e.Hub.Status
			if e.Hub.Reason != "" {
				what += ": " + e.Hub.Reason
			}
		}
	case control.EventListening:
		if e.Listening != nil && *e.Listening {
			what = "the hub asked to start listening"
		} else {
			what = "the hub asked to stop listening"
		}
		if e.Note != "" {
			what += ": " + e.Note
		}
	case control.EventUnrecorded:
		what = fmt.Sprintf("%q %s", e.Command, e.Note)
	case control.EventLost:
		what = fmt.Sprintf("(this watcher fell behind: %d events lost; see hubgate history)", e.Lost)
	default:
		what = string(e.Kind)
	}
	return at + " " + tag + what
}
