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

// playOptions are `mock play`'s options.
type playOptions struct {
	adminOptions
	File   string // the scenario (YAML)
	Device string // --device: when the scenario names none
}

// newPlayCommand wires `hubgate mock play FILE`: the scenario engine
// is mockhub.Play, driving a running mock over its admin API.
func newPlayCommand(a *cli) *cobra.Command { return newCmdPlay(a, nil) }

// newCmdPlay builds mock play; runF (nil: runPlay) gets the parsed
// options.
func newCmdPlay(a *cli, runF func(context.Context, *playOptions) error) *cobra.Command {
	o := &playOptions{}
	check := func(_ *cobra.Command, args []string) error { o.File = args[0]; return nil }
	cmd := adminCommand(a, "play FILE",
		"Play a scenario (YAML) against the running mock and the device that connects to it; exit 1 with a report when an expectation fails", true,
		o, &o.adminOptions, check, runF, runPlay)
	cmd.Long = playLong
	cmd.Args = cobra.ExactArgs(1)
	cmd.Flags().StringVar(&o.Device, "device", "", "the device to play against when the scenario names none (default: the only connected device, else the first to connect)")
	return cmd
}

// runPlay plays the scenario (mockhub.Play); a failed expectation is a
// *ReportedError after the report.
func runPlay(ctx context.Context, o *playOptions) error {
	b, err := os.ReadFile(o.File)
	if err != nil {
		return &InputError{fmt.Errorf("scenario: %w", err)}
	}
	sc, err := mockhub.ParseScenario(b)
	if err != nil {
		return &InputError{fmt.Errorf("%s: %w", o.File, err)}
	}
	cfg := mockhub.PlayConfig{Admin: o.Client, Device: o.Device}
	if !o.JSON {
		cfg.Progress = func(line string) { fmt.Fprintln(o.Out, line) }
	}
	err = mockhub.Play(ctx, sc, cfg)
	var failure *mockhub.ScenarioFailure
	if err != nil && !errors.As(err, &failure) {
		return err
	}
	if o.JSON {
		if perr := o.printJSON(playResult{Passed: failure == nil, Steps: len(sc.Steps), Failure: failure}); perr != nil {
			return perr
		}
	} else if failure != nil {
		fmt.Fprintf(o.Out, "FAIL %v\n", failure)
	} else {
		fmt.Fprintf(o.Out, "PASS %d steps\n", len(sc.Steps))
	}
	if failure != nil {
		return &ReportedError{failure}
	}
	return nil
}

// recordOptions are `mock record`'s options.
type recordOptions struct {
	adminOptions
	File   string        // where the scenario goes
	Device string        // --device ("": the first the journal names)
	For    time.Duration // --for: stop after this long (0: when ctx ends)
}

// newRecordCommand wires `hubgate mock record FILE`: what happens on
// the running mock until interrupted (or --for), written as a scenario.
func newRecordCommand(a *cli) *cobra.Command { return newCmdRecord(a, nil) }

// newCmdRecord builds mock record; runF (nil: runRecord) gets the parsed
// options.
func newCmdRecord(a *cli, runF func(context.Context, *recordOptions) error) *cobra.Command {
	o := &recordOptions{}
	check := func(_ *cobra.Command, args []string) error {
		if o.For < 0 {
			return &UsageError{errors.New("--for must be >= 0")}
		}
		o.File = args[0]
		return nil
	}
	cmd := adminCommand(a, "record FILE",
		"Record a live session on the running mock as a scenario FILE, until interrupted (or --for), to replay with `hubgate mock play`", true,
		o, &o.adminOptions, check, runF, runRecord)
	cmd.Args = cobra.ExactArgs(1)
	cmd.Flags().StringVar(&o.Device, "device", "", "the device to record (default: the first one the journal names)")
	cmd.Flags().DurationVar(&o.For, "for", 0, "stop after this long (default: until interrupted)")
	return cmd
}

// runRecord records the mock's journal until ctx ends (or For passes)
// and writes it as a scenario.
func runRecord(ctx context.Context, o *recordOptions) error {
	rec, err := mockhub.StartRecording(ctx, mockhub.RecordConfig{Admin: o.Client, Device: o.Device})
	if err != nil {
		return err
	}
	fmt.Fprintln(o.Err, "hubgate: recording the mock's journal; interrupt (Ctrl-C) to stop and write", o.File)
	wait := ctx
	if o.For > 0 {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(ctx, o.For)
		defer cancel()
	}
	<-wait.Done()
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	sc, err := rec.Finish(fctx)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(o.File, sc.YAML(), 0o644); err != nil {
		return err
	}
	if o.JSON {
		return o.printJSON(sc)
	}
	_, err = fmt.Fprintf(o.Out, "wrote %d steps to %s\n", len(sc.Steps), o.File)
	return err
}
