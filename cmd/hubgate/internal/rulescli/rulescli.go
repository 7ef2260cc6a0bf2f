// Package rulescli owns the command line of the routing rules: `hubgate
// config check` (is the configuration valid, and what does it route) and
// `hubgate rules test` (route one command as the daemon would, sending
// nothing). cmd wires their flags and hands the configuration loaded; only
// cmd imports this package.
package rulescli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/mockcli"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi"
)

// Compile compiles the bridge section's rules, command tools and
// unmatched action.
func Compile(b configs.BridgeConfig) (*rules.Set, error) {
	return rules.Compile(b.Rules, b.CommandTools, b.Unmatched)
}

// CheckOptions is one `hubgate config check`.
type CheckOptions struct {
	Config   *configs.Config // loaded and validated
	Out, Err io.Writer
}

// Check compiles the configuration's rules and says what it routes on
// Out, with a warning on Err when no command can start a run.
func Check(o CheckOptions) error {
	set, err := Compile(o.Config.Bridge)
	if err != nil {
		return err
	}
	file := o.Config.File()
	if file == "" {
		file = "no file (defaults only)"
	}
	unmatched := "ignored"
	if _, ok := set.Unmatched(rules.Command{Text: "x"}); ok {
		unmatched = "run as the prompt"
	}
	fmt.Fprintf(o.Out, "%s: valid\n%d rules, %d command tools; unmatched commands are %s\n",
		file, len(set.Rules()), len(set.CommandToolNames()), unmatched)
	if hint := set.NoRunHint(o.Config.File()); hint != "" {
		fmt.Fprintln(o.Err, "warning: "+hint)
	}
	return nil
}

// TestOptions is one `hubgate rules test`.
type TestOptions struct {
	Config  *configs.Config // loaded and validated
	Command string          // the command's text
	// MacroFile is the command's macro as JSON ("-": In); "" none.
	MacroFile string
	// Events are MacroEvents as JSON, appended to the macro's events (to
	// a macro named after the command when there is none), as `hubgate
	// mock send --event` does.
	Events []string
	// ProfileFile is the device's profile as JSON ("-": In), whose macros
	// complete a command without one; "" none.
	ProfileFile string
	// DeviceType is the device type custom actions are for ("": not
	// checked), asked once the macro and the profile were read; nil: "".
	DeviceType func() string
	JSON       bool // print the rules.Explanation as one JSON object
	In         io.Reader
	Out        io.Writer
	Now        func() time.Time // the command's receipt; nil: time.Now
}

// Test routes the command as the daemon would and prints the outcome
// (rules.Explanation, whose request is the one the daemon would send,
// ask_person and every client tool included) on Out. A rule whose
// template fails for this command is a *RenderFailedError, after the
// outcome was printed. An unreadable macro or profile is a
// configs.ValidationError naming its flag; an --event that is not a
// MacroEvent is a mockcli.UsageError.
func Test(o TestOptions) error {
	set, err := Compile(o.Config.Bridge)
	if err != nil {
		return err
	}
	var macro *deviceapi.Macro
	if o.MacroFile != "" {
		if macro, err = readJSONFlag[deviceapi.Macro](o.In, "--macro", "a macro", o.MacroFile); err != nil {
			return err
		}
	}
	if macro, err = mockcli.MacroWithEvents(macro, o.Command, o.Events); err != nil {
		return err
	}
	if o.ProfileFile != "" {
		// A profile as `mock profile --file` takes it.
		profile, err := readJSONFlag[deviceapi.Profile](o.In, "--profile", "a profile", o.ProfileFile)
		if err != nil {
			return err
		}
		set = set.WithCatalog(profile.Configuration.Macros)
	}
	now, deviceType := time.Now, ""
	if o.Now != nil {
		now = o.Now
	}
	if o.DeviceType != nil {
		deviceType = o.DeviceType()
	}
	d := set.WithDeviceType(deviceType)
	res := d.Explain(rules.Command{Text: o.Command, Macro: macro, Received: now()},
		rules.Defaults{Notify: o.Config.Bridge.Notify, Ask: o.Config.Bridge.Ask})
	res.ConfigSrc = o.Config.File()
	if o.JSON {
		err = cliout.WriteJSON(o.Out, res)
	} else {
		res.WriteText(o.Out)
	}
	if err == nil && res.Action == string(rules.ActionError) {
		return &RenderFailedError{Rule: res.Rule, Err: errors.New(res.Error)}
	}
	return err
}

// RenderFailedError is a command whose matched rule's template failed:
// Test showed it on Out (the rule once, then the error), so the caller
// prints nothing more; cmd exits 3, as for a configuration problem.
type RenderFailedError struct {
	Rule string
	Err  error // the error without the rule's name
}

func (e *RenderFailedError) Error() string {
	return "rule " + strconv.Quote(e.Rule) + ": " + e.Err.Error()
}
func (e *RenderFailedError) Unwrap() error { return e.Err }

// readJSONFlag reads the JSON value of a flag (--macro, --profile) from a
// file or stdin ("-"); what names it in errors ("a macro"). Errors are
// configuration errors naming the flag.
func readJSONFlag[T any](stdin io.Reader, flag, what, file string) (*T, error) {
	data, err := cliout.ReadInput(stdin, file)
	if err != nil {
		return nil, &configs.ValidationError{Problems: []configs.FieldError{{Path: flag, Message: "cannot read " + what + ": " + err.Error()}}}
	}
	v := new(T)
	if err := json.Unmarshal(data, v); err != nil {
		return nil, &configs.ValidationError{Problems: []configs.FieldError{{Path: flag, Message: "not " + what + "'s JSON: " + err.Error(), Source: file}}}
	}
	return v, nil
}
