package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/hub"
	"github.com/hubgate/hubgate/internal/cliout"
)

// errNotRunning: the daemon's control endpoint does not answer.
var errNotRunning = errors.New("hubgate is not running (no daemon answers on its control socket)")

// dialControl finds the daemon's endpoints and dials its control socket
// (status, watch, history, cancel, open); the caller closes the client.
// Only the endpoints are needed, not the rules: a config file that does
// not load is one warning line on stderr (never on stdout, which may be
// JSON), and the endpoints come from the defaults, the file's own
// endpoint keys, the environment and the flags (configs.LoadEndpoints).
func (a *app) dialControl() (configs.Endpoints, *control.Client, error) {
	ep, broken, err := configs.LoadEndpoints(a.loadOptions(nil))
	if err != nil {
		return configs.Endpoints{}, nil, &configError{err}
	}
	if broken != nil {
		file := firstNonEmpty(ep.File, a.configPath, "the config file")
		fmt.Fprintf(a.stdio.Err, "hubgate: warning: %s is broken, so only its control socket and journal settings are used (control socket %s): %s\n",
			file, ep.ControlSocket, strings.Join(strings.Fields(broken.Error()), " "))
	}
	return ep, control.Dial(ep.ControlSocket), nil
}

// daemonError maps a control call's error: no daemon answering is
// errNotRunning (exit code ExitNotRunning).
func daemonError(err error) error {
	if errors.Is(err, control.ErrNotRunning) {
		return errNotRunning
	}
	return err
}

// The states `status` reports through its exit code (ExitNeedsRepair,
// ExitNotConnected, ExitNotListening).
var (
	errNeedsRepair  = errors.New("the hub refused the device token: run 'hubgate pair' again")
	errNotConnected = errors.New("the daemon runs but its hub is not connected")
	errNotListening = errors.New("the hub is connected but commands are refused: the device is not listening (bridge.listening: obey)")
)

func newStatusCommand(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the running daemon's state: hub connection, listening, current run, queue",
		Long: `Show the running daemon's state: hub connection, listening, current run, queue.

The exit code says the state, for scripts:
  0   the daemon runs and acts on the commands that arrive
  9   the daemon is not running
  11  the hub refused the device token: run 'hubgate pair' again
  12  the hub is not connected (connecting or reconnecting)
  13  the hub is connected but commands are refused: the hub asked to stop
      listening and bridge.listening is obey (by default commands still run)
  3   the configuration is invalid (1 for other errors)

--json always prints one JSON object: the status, or {"running": false,
"error": "...", "exitCode": N} when there is no status to show.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := noArgs(cmd, args); err != nil {
				return a.statusError(asJSON, err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.daemonStatus(cmd.Context())
			if err != nil {
				return a.statusError(asJSON, err)
			}
			if asJSON {
				if err := cliout.WriteJSON(a.stdio.Out, st); err != nil {
					return err
				}
			} else {
				st.WriteText(a.stdio.Out)
			}
			if err := statusCondition(st); err != nil {
				return &quietError{err}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as one JSON object (an error object when there is none)")
	// A flag mistake stops the parsing, perhaps before --json: whether
	// JSON was asked for is read from the command line itself.
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return a.statusError(jsonRequested(a.args), flagError(c, err))
	})
	return cmd
}

// statusError prints err as the error object of `status --json` when
// asJSON, and returns it.
func (a *app) statusError(asJSON bool, err error) error {
	if asJSON {
		_ = cliout.WriteJSON(a.stdio.Out, statusErrorBody{Running: false, Error: err.Error(), ExitCode: exitCode(err)})
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

// statusErrorBody is `status --json` when no daemon answered.
type statusErrorBody struct {
	Running  bool   `json:"running"`
	Error    string `json:"error"`
	ExitCode int    `json:"exitCode"`
}

// daemonStatus asks the running daemon for its status.
func (a *app) daemonStatus(ctx context.Context) (bridge.Status, error) {
	_, c, err := a.dialControl()
	if err != nil {
		return bridge.Status{}, err
	}
	defer c.Close()
	st, err := c.Status(ctx)
	if err != nil {
		return bridge.Status{}, daemonError(err)
	}
	return st, nil
}

// statusCondition is what the status's exit code says: nil when the
// device listens.
func statusCondition(st bridge.Status) error {
	switch {
	case st.Hub.NeedsRepair:
		return errNeedsRepair
	case st.Hub.Status != string(hub.StatusConnected) && st.Hub.Status != string(hub.StatusListening):
		return errNotConnected
	case !st.Listening:
		return errNotListening
	}
	return nil
}

// daemonAnswer is what a running daemon did when told that the pairing
// changed.
type daemonAnswer struct {
	running bool   // a daemon answered
	pid     int    // its process id, when it took the change
	message string // its answer
	err     error  // running: it did not take the change; else: it could not be asked
}

// tellDaemon asks a running daemon to reconnect its hub at once with the
// pairing as it is now saved (after `pair`), or to stop when none is left
// (after `unpair`).
func (a *app) tellDaemon(ctx context.Context) daemonAnswer {
	_, c, err := a.dialControl()
	if err != nil {
		return daemonAnswer{err: err}
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	res, err := c.Reconnect(ctx)
	switch {
	case errors.Is(err, control.ErrNotRunning):
		return daemonAnswer{}
	case err != nil:
		return daemonAnswer{running: true, err: err}
	}
	return daemonAnswer{running: true, pid: res.PID, message: res.Message}
}

// tellDaemonPairing tells a running daemon (tellDaemon) and says on
// stderr what happened to it; a daemon that is not running is told
// nothing (quiet unless always).
func (a *app) tellDaemonPairing(ctx context.Context, always bool) {
	say := func(format string, args ...any) { fmt.Fprintf(a.stdio.Err, "hubgate: "+format+"\n", args...) }
	d := a.tellDaemon(ctx)
	switch {
	case !d.running && d.err != nil:
		say("could not tell a running daemon: %v", d.err)
	case !d.running:
		if always {
			say("no daemon is running")
		}
	case d.err != nil:
		say("the running daemon did not take the change (%v); restart it to apply it", d.err)
	default:
		say("the running daemon (pid %d): %s", d.pid, d.message)
	}
}

func newHistoryCommand(a *app) *cobra.Command {
	var (
		asJSON bool
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Show the journal of commands and runs, newest first (works while the daemon is stopped)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > journal.MaxHistoryLimit {
				return &usageError{fmt.Errorf("--limit must be between 1 and %d", journal.MaxHistoryLimit)}
			}
			ep, c, err := a.dialControl()
			if err != nil {
				return err
			}
			defer c.Close()
			entries, err := c.History(cmd.Context(), limit)
			if errors.Is(err, control.ErrNotRunning) {
				entries, err = readJournal(cmd, ep.Journal, limit)
			}
			if err != nil {
				return err
			}
			if asJSON {
				if entries == nil {
					entries = []journal.Entry{}
				}
				return cliout.WriteJSON(a.stdio.Out, entries)
			}
			journal.WriteHistoryText(a.stdio.Out, entries)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the entries as a JSON array")
	cmd.Flags().IntVar(&limit, "limit", 20, "how many entries")
	return cmd
}

// readJournal reads the journal file directly (the daemon is stopped).
func readJournal(cmd *cobra.Command, path string, limit int) ([]journal.Entry, error) {
	j, err := journal.OpenReadOnly(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nothing was ever journaled
	}
	if err != nil {
		return nil, err
	}
	defer j.Close()
	return j.History(cmd.Context(), journal.HistoryQuery{Limit: limit})
}

func newCancelCommand(a *app) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "cancel",
		Short: "Cancel the daemon's current run (soft; --force terminates it at once)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, c, err := a.dialControl()
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.Cancel(cmd.Context(), force)
			if err != nil {
				return daemonError(err)
			}
			fmt.Fprintln(a.stdio.Out, cancelText(res, time.Now()))
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "terminate the run at once (kills the worker) instead of a soft cancel")
	return cmd
}

// cancelText is what `hubgate cancel` prints of res: what was asked, how
// long the run may go on (the cancel grace) and how to stop it now.
func cancelText(res bridge.CancelResult, now time.Time) string {
	switch {
	case !res.Stopped:
		return "nothing runs"
	case res.Mode == automate.CancelModeTerminate:
		return fmt.Sprintf("force cancel sent for command #%d: the run is terminated now", res.CommandID)
	}
	head := fmt.Sprintf("cancel requested for command #%d", res.CommandID)
	if res.Already {
		head = fmt.Sprintf("a cancel of command #%d was already requested", res.CommandID)
		if res.ForceAt.IsZero() {
			return head + " and forced: the run is terminated now"
		}
	}
	wait := "the run stops at its next step"
	if res.GraceMs > 0 {
		left := time.Duration(res.GraceMs) * time.Millisecond
		if !res.ForceAt.IsZero() {
			left = max(res.ForceAt.Sub(now), 0)
		}
		wait = fmt.Sprintf("the run stops at its next step; it may go on for up to %s, then hubgate forces it", left.Round(time.Second))
	}
	return head + ": " + wait + " (hubgate cancel --force stops it now)"
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
