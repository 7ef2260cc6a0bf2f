package controlcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
)

// historyOptions are `history`'s options.
type historyOptions struct {
	Out    io.Writer
	Daemon Daemon // asked first; its journal file is read when it is not running
	JSON   bool   // --json: a JSON array
	Limit  int    // --limit: how many entries
}

// newCmdHistory builds history; runF (nil: runHistory) gets the parsed
// options.
func newCmdHistory(c *CLI, runF func(context.Context, *historyOptions) error) *cobra.Command {
	o := &historyOptions{Out: c.opts.Out, Daemon: c.daemon()}
	cmd := &cobra.Command{
		Use: "history",
		Example: `  hubgate history
  hubgate history --limit 100 --json`,
		Short: "Show the journal of commands and runs, newest first (works while the daemon is stopped)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Limit < 1 || o.Limit > journal.MaxHistoryLimit {
				return &UsageError{fmt.Errorf("--limit must be between 1 and %d", journal.MaxHistoryLimit)}
			}
			return cliout.Run(cmd, runF, runHistory, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the entries as a JSON array")
	cmd.Flags().IntVar(&o.Limit, "limit", 20, "how many entries")
	return cmd
}

// runHistory prints the journal's latest entries: the daemon's answer,
// else the journal file's.
func runHistory(ctx context.Context, o *historyOptions) error {
	ep, cl, err := o.Daemon.dial()
	if err != nil {
		return err
	}
	defer cl.Close()
	entries, err := cl.History(ctx, o.Limit)
	if errors.Is(err, control.ErrNotRunning) {
		entries, err = readJournal(ctx, ep.Journal, o.Limit)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		if entries == nil {
			entries = []journal.Entry{}
		}
		return cliout.WriteJSON(o.Out, entries)
	}
	journal.WriteHistoryText(o.Out, entries)
	return nil
}

// readJournal reads the journal file directly (the daemon is stopped).
func readJournal(ctx context.Context, path string, limit int) ([]journal.Entry, error) {
	j, err := journal.OpenReadOnly(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nothing was ever journaled
	}
	if err != nil {
		return nil, err
	}
	defer j.Close()
	return j.History(ctx, journal.HistoryQuery{Limit: limit})
}

// cancelOptions are `cancel`'s options.
type cancelOptions struct {
	Out    io.Writer
	Daemon Daemon
	Now    func() time.Time // the clock: how long the run may go on
	Force  bool             // --force: terminate the run at once
}

// newCmdCancel builds cancel; runF (nil: runCancel) gets the parsed
// options.
func newCmdCancel(c *CLI, runF func(context.Context, *cancelOptions) error) *cobra.Command {
	o := &cancelOptions{Out: c.opts.Out, Daemon: c.daemon(), Now: c.opts.Now}
	cmd := &cobra.Command{
		Use: "cancel",
		Example: `  hubgate cancel           # a soft cancel; says how long the run may go on
  hubgate cancel --force   # stop it now`,
		Short: "Cancel the daemon's current run (soft; --force terminates it at once)",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runCancel, o) },
	}
	cmd.Flags().BoolVar(&o.Force, "force", false, "terminate the run at once (kills the worker) instead of a soft cancel")
	return cmd
}

// runCancel asks the daemon to cancel its run and says what it did
// (cancelText).
func runCancel(ctx context.Context, o *cancelOptions) error {
	res, err := call(o.Daemon, func(cl *control.Client) (bridge.CancelResult, error) { return cl.Cancel(ctx, o.Force) })
	if err != nil {
		return err
	}
	fmt.Fprintln(o.Out, cancelText(res, o.Now()))
	return nil
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

// answerOptions are `answer`'s options.
type answerOptions struct {
	Out    io.Writer
	Daemon Daemon
	Text   string // the arguments joined with single blanks, trimmed
}

// newCmdAnswer builds answer; runF (nil: runAnswer) gets the parsed
// options.
func newCmdAnswer(c *CLI, runF func(context.Context, *answerOptions) error) *cobra.Command {
	o := &answerOptions{Out: c.opts.Out, Daemon: c.daemon()}
	return &cobra.Command{
		Use: "answer TEXT...",
		Example: `  hubgate answer blue
  hubgate answer "the one in the kitchen"`,
		Short: "Answer the question the agent of the current run asked (rules with ask: true)",
		Long: `Answer the question the agent of the current run asked you (the ask_person
tool, offered on runs of rules with ask: true or under bridge.ask: true).
Your next command through the hub answers it too, as does the status page's
answer box. The words are joined with single blanks. Exits 1 when no
question is waiting, 9 when the daemon is not running.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Text = strings.TrimSpace(strings.Join(args, " "))
			if o.Text == "" {
				return &UsageError{errors.New("an answer needs some text")}
			}
			return cliout.Run(cmd, runF, runAnswer, o)
		},
	}
}

// runAnswer gives the daemon's waiting question its answer; none waiting
// is ErrNoQuestion.
func runAnswer(ctx context.Context, o *answerOptions) error {
	res, err := call(o.Daemon, func(cl *control.Client) (bridge.AnswerResult, error) { return cl.Answer(ctx, o.Text) })
	if err != nil {
		return err
	}
	if !res.Answered {
		return ErrNoQuestion
	}
	fmt.Fprintf(o.Out, "answered the question of command #%d\n", res.CommandID)
	return nil
}
