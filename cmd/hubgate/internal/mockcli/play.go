package mockcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/atomicfile"
)

// playResult is `mock play --json`'s answer.
type playResult struct {
	Passed  bool                     `json:"passed"`
	Steps   int                      `json:"steps"`
	Failure *mockhub.ScenarioFailure `json:"failure,omitempty"`
}

const playLong = "Play a scenario against the running mock (--url, default $" + EnvURL + " or http://" + mockhub.DefaultListen + "): " +
	"pushes, faults, waits and expectations on what the device does, judged on the mock's journal. " +
	"Start `hubgate mock` (with --state, so your client stays paired), then play, then start your client: what happens after the play began counts " +
	"(an expectation of connected also holds for a client connected already). " +
	"`hubgate mock record FILE` writes one from a live session.\n\n" +
	"A scenario:\n\n" +
	"  device: ID                 # optional: default the only connected device, else the first to connect\n" +
	"  within: 10s                # optional: the default deadline of an expectation\n" +
	"  steps:\n" +
	"    - expect: {connected: true, within: 1m}\n" +
	"    - expect: {invoke: VerifySelf}\n" +
	"    - push: {macroName: Space}      # or command, macro, profile, settings, startListening, stopListening\n" +
	"    - expect: {invoke: DeviceStartedListening, args: [], within: 5s}   # args match the call's, objects by subset\n" +
	"    - fault: {drop: true}           # as `hubgate mock fault`: drop, refuseFor, freeze, expireServiceTokens, serviceErrorFor\n" +
	"    - expect: {reconnect: true, within: 30s}\n" +
	"    - wait: 2s\n" +
	"    - expect: {listening: true, for: 3s}\n\n" +
	"Exit 0 when every expectation held; 1 with a report of the first that did not (its step and line, the expectation, what the journal showed); 3 for a bad file."

// newPlayCommand wires `hubgate mock play FILE`: the scenario engine
// is mockhub.Play, driving a running mock over its admin API.
func newPlayCommand(a *cli) *cobra.Command {
	m := &clientFlags{}
	var device string
	cmd := &cobra.Command{
		Use:   "play FILE",
		Short: "Play a scenario (YAML) against the running mock and the device that connects to it; exit 1 with a report when an expectation fails",
		Long:  playLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.admin(m)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(args[0])
			if err != nil {
				return &InputError{fmt.Errorf("scenario: %w", err)}
			}
			sc, err := mockhub.ParseScenario(b)
			if err != nil {
				return &InputError{fmt.Errorf("%s: %w", args[0], err)}
			}
			cfg := mockhub.PlayConfig{Admin: c, Device: device}
			if !m.json {
				cfg.Progress = func(line string) { fmt.Fprintln(a.Out, line) }
			}
			err = mockhub.Play(cmd.Context(), sc, cfg)
			var failure *mockhub.ScenarioFailure
			if err != nil && !errors.As(err, &failure) {
				return err
			}
			if m.json {
				if perr := a.printJSON(playResult{Passed: failure == nil, Steps: len(sc.Steps), Failure: failure}); perr != nil {
					return perr
				}
			} else if failure != nil {
				fmt.Fprintf(a.Out, "FAIL %v\n", failure)
			} else {
				fmt.Fprintf(a.Out, "PASS %d steps\n", len(sc.Steps))
			}
			if failure != nil {
				return &ReportedError{failure}
			}
			return nil
		},
	}
	m.register(cmd, true)
	cmd.Flags().StringVar(&device, "device", "", "the device to play against when the scenario names none (default: the only connected device, else the first to connect)")
	return cmd
}

// newRecordCommand wires `hubgate mock record FILE`: what happens on
// the running mock until interrupted (or --for), written as a scenario.
func newRecordCommand(a *cli) *cobra.Command {
	m := &clientFlags{}
	var device string
	var span time.Duration
	cmd := &cobra.Command{
		Use:   "record FILE",
		Short: "Record a live session on the running mock as a scenario FILE, until interrupted (or --for), to replay with `hubgate mock play`",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if span < 0 {
				return &UsageError{errors.New("--for must be >= 0")}
			}
			c, err := a.admin(m)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			rec, err := mockhub.StartRecording(ctx, mockhub.RecordConfig{Admin: c, Device: device})
			if err != nil {
				return err
			}
			fmt.Fprintln(a.Err, "hubgate: recording the mock's journal; interrupt (Ctrl-C) to stop and write", args[0])
			wait := ctx
			if span > 0 {
				var cancel context.CancelFunc
				wait, cancel = context.WithTimeout(ctx, span)
				defer cancel()
			}
			<-wait.Done()
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			sc, err := rec.Finish(fctx)
			if err != nil {
				return err
			}
			if err := atomicfile.WriteFile(args[0], sc.YAML(), 0o644); err != nil {
				return err
			}
			if m.json {
				return a.printJSON(sc)
			}
			_, err = fmt.Fprintf(a.Out, "wrote %d steps to %s\n", len(sc.Steps), args[0])
			return err
		},
	}
	m.register(cmd, true)
	cmd.Flags().StringVar(&device, "device", "", "the device to record (default: the first one the journal names)")
	cmd.Flags().DurationVar(&span, "for", 0, "stop after this long (default: until interrupted)")
	return cmd
}
