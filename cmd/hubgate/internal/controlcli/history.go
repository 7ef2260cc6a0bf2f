package controlcli

import (
	"context"
	"errors"
	"fmt"
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

func (c *CLI) newHistoryCommand() *cobra.Command {
	var (
		asJSON bool
		limit  int
	)
	cmd := &cobra.Command{
		Use: "history",
		Example: `  hubgate history
  hubgate history --limit 100 --json`,
		Short: "Show the journal of commands and runs, newest first (works while the daemon is stopped)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > journal.MaxHistoryLimit {
				return &UsageError{fmt.Errorf("--limit must be between 1 and %d", journal.MaxHistoryLimit)}
			}
			ep, cl, err := c.dial()
			if err != nil {
				return err
			}
			defer cl.Close()
			entries, err := cl.History(cmd.Context(), limit)
			if errors.Is(err, control.ErrNotRunning) {
				entries, err = readJournal(cmd.Context(), ep.Journal, limit)
			}
			if err != nil {
				return err
			}
			if asJSON {
				if entries == nil {
					entries = []journal.Entry{}
				}
				return cliout.WriteJSON(c.opts.Out, entries)
			}
			journal.WriteHistoryText(c.opts.Out, entries)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the entries as a JSON array")
	cmd.Flags().IntVar(&limit, "limit", 20, "how many entries")
	return cmd
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

func (c *CLI) newCancelCommand() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use: "cancel",
		Example: `  hubgate cancel           # a soft cancel; says how long the run may go on
  hubgate cancel --force   # stop it now`,
		Short: "Cancel the daemon's current run (soft; --force terminates it at once)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := call(c, func(cl *control.Client) (bridge.CancelResult, error) { return cl.Cancel(cmd.Context(), force) })
			if err != nil {
				return err
			}
			fmt.Fprintln(c.opts.Out, cancelText(res, time.Now()))
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

func (c *CLI) newAnswerCommand() *cobra.Command {
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
			text := strings.TrimSpace(strings.Join(args, " "))
			if text == "" {
				return &UsageError{errors.New("an answer needs some text")}
			}
			res, err := call(c, func(cl *control.Client) (bridge.AnswerResult, error) { return cl.Answer(cmd.Context(), text) })
			if err != nil {
				return err
			}
			if !res.Answered {
				return ErrNoQuestion
			}
			fmt.Fprintf(c.opts.Out, "answered the question of command #%d\n", res.CommandID)
			return nil
		},
	}
}
