package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// errNoQuestion: `hubgate answer` found no question waiting (exit 1).
var errNoQuestion = errors.New("no question is waiting for an answer")

func newAnswerCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "answer TEXT...",
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
				return &usageError{errors.New("an answer needs some text")}
			}
			_, c, err := a.dialControl()
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.Answer(cmd.Context(), text)
			if err != nil {
				return daemonError(err)
			}
			if !res.Answered {
				return errNoQuestion
			}
			fmt.Fprintf(a.stdio.Out, "answered the question of command #%d\n", res.CommandID)
			return nil
		},
	}
}
