package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/rulescli"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
)

func newConfigCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use: "config",
		Example: `  hubgate config init && hubgate config check
  hubgate config path`,
		Short: "Write, locate and check the configuration file",
	}
	groupCommand(cmd)
	cmd.AddCommand(newConfigInitCommand(a), newConfigPathCommand(a), newConfigCheckCommand(a), newConfigDefaultsCommand(a))
	return cmd
}

// configPath is the file --config names, else the default one.
func (a *app) configFile() (string, error) {
	if a.configPath != "" {
		return filepath.Abs(a.configPath)
	}
	dir, err := a.userConfigDir()
	if err != nil {
		return "", fmt.Errorf("locate the config file: %w", err)
	}
	return configs.PathIn(dir), nil
}

// configInitOptions are `config init`'s options.
type configInitOptions struct {
	IO Stdio
	// ConfigFile is the file to write: --config, else the default path.
	ConfigFile func() (string, error)
	Force      bool // replace an existing file (kept as <file>.bak)
}

func newConfigInitCommand(a *app) *cobra.Command { return newCmdConfigInit(a, nil) }

// newCmdConfigInit builds config init; runF (nil: runConfigInit) gets the
// parsed options.
func newCmdConfigInit(a *app, runF func(context.Context, *configInitOptions) error) *cobra.Command {
	o := &configInitOptions{IO: a.stdio, ConfigFile: a.configFile}
	cmd := &cobra.Command{
		Use: "init",
		Example: `  hubgate config init           # a commented starter file
  hubgate config init --force   # replace it (the old one kept as .bak)`,
		Short: "Write a commented starter config (scripted engine, example rules, other commands run as their prompt)",
		Long: `Write a commented starter configuration file at the config path (--config,
else $XDG_CONFIG_HOME/hubgate/config.yaml): the co-hosted Automate server with
the scripted engine, two example routing rules, and every other command run
with its text as the prompt (bridge.unmatched.action: run), so that the first
command from your app is answered without editing anything.

An existing file is never replaced unless --force is given; then the old file
is kept next to it as <file>.bak. Without --force, an existing file is a usage
error (exit code 2) and nothing is written.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runConfigInit, o) },
	}
	cmd.Flags().BoolVar(&o.Force, "force", false, "replace an existing file (kept as <file>.bak)")
	return cmd
}

// runConfigInit writes the starter file.
func runConfigInit(_ context.Context, o *configInitOptions) error {
	path, err := o.ConfigFile()
	if err != nil {
		return err
	}
	if err := configs.WriteStarter(path, o.Force); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "wrote %s\n", path)
	fmt.Fprintf(o.IO.Err, "Next: 'hubgate config check', then 'hubgate run' (or 'hubgate service install').\n")
	return nil
}

// configPathOptions are `config path`'s options.
type configPathOptions struct {
	IO         Stdio
	ConfigFile func() (string, error) // --config, else the default path
}

func newConfigPathCommand(a *app) *cobra.Command { return newCmdConfigPath(a, nil) }

// newCmdConfigPath builds config path; runF (nil: runConfigPath) gets the
// options.
func newCmdConfigPath(a *app, runF func(context.Context, *configPathOptions) error) *cobra.Command {
	o := &configPathOptions{IO: a.stdio, ConfigFile: a.configFile}
	return &cobra.Command{
		Use: "path",
		Example: `  hubgate config path
  "${EDITOR:-vi}" "$(hubgate config path)"`,
		Short: "Print the config file's path (whether or not it exists)",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runConfigPath, o) },
	}
}

// runConfigPath prints the path, and on stderr that the file does not
// exist yet when it does not.
func runConfigPath(_ context.Context, o *configPathOptions) error {
	path, err := o.ConfigFile()
	if err != nil {
		return err
	}
	fmt.Fprintln(o.IO.Out, path)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(o.IO.Err, "(it does not exist yet: the defaults apply; 'hubgate config init' writes a starter file)")
	}
	return nil
}

// configDefaultsOptions are `config defaults`'s options.
type configDefaultsOptions struct {
	IO Stdio
}

func newConfigDefaultsCommand(a *app) *cobra.Command { return newCmdConfigDefaults(a, nil) }

// newCmdConfigDefaults builds config defaults; runF (nil:
// runConfigDefaults) gets the options.
func newCmdConfigDefaults(a *app, runF func(context.Context, *configDefaultsOptions) error) *cobra.Command {
	o := &configDefaultsOptions{IO: a.stdio}
	return &cobra.Command{
		Use:     "defaults",
		Example: `  hubgate config defaults | less`,
		Short:   "Print every setting with its default and its documentation",
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runConfigDefaults, o) },
	}
}

// runConfigDefaults prints the documented defaults (configs.DefaultsYAML).
func runConfigDefaults(_ context.Context, o *configDefaultsOptions) error {
	_, err := o.IO.Out.Write(configs.DefaultsYAML())
	return err
}

// configCheckOptions are `config check`'s options.
type configCheckOptions struct {
	IO Stdio
	// LoadConfig loads and validates the configuration (the global flags
	// applied); its error is a *configError.
	LoadConfig func() (*configs.Config, error)
}

func newConfigCheckCommand(a *app) *cobra.Command { return newCmdConfigCheck(a, nil) }

// newCmdConfigCheck builds config check; runF (nil: runConfigCheck) gets
// the options.
func newCmdConfigCheck(a *app, runF func(context.Context, *configCheckOptions) error) *cobra.Command {
	o := &configCheckOptions{IO: a.stdio, LoadConfig: func() (*configs.Config, error) { return a.loadConfig(nil) }}
	return &cobra.Command{
		Use: "check",
		Example: `  hubgate config check
  hubgate --config ./test.yaml config check`,
		Short: "Load and validate the configuration; print what it routes",
		Long: `Load the configuration (defaults, the file, HUBGATE_* variables) and validate
it as 'hubgate run' does. Exit code 0 when it is valid, 3 with every problem
listed when it is not, and 3 when the file cannot be read (a --config file that
does not exist, no permission).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runConfigCheck, o) },
	}
}

// runConfigCheck loads the configuration and says what it routes
// (rulescli.Check).
func runConfigCheck(_ context.Context, o *configCheckOptions) error {
	cfg, err := o.LoadConfig()
	if err != nil {
		return err
	}
	return rulescli.Check(rulescli.CheckOptions{Config: cfg, Out: o.IO.Out, Err: o.IO.Err})
}

func newRulesCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "rules",
		Example: `  hubgate rules test "water the plants"`,
		Short:   "Try the routing rules of the configuration",
	}
	groupCommand(cmd)
	cmd.AddCommand(newRulesTestCommand(a))
	return cmd
}

// rulesTestResult is `rules test --json` (rules.Explanation).
type rulesTestResult = rules.Explanation

// oneCommandArg takes exactly one argument: the command to test.
func oneCommandArg(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return &usageError{fmt.Errorf("%s takes one command (quote it), got %d arguments", cmd.CommandPath(), len(args))}
	}
	return nil
}

const rulesTestLong = `Route a command as the daemon would when the hub delivers it, and show which
rule matches, its busy policy, whether the person is notified (notify) and the
answer spoken (speak), and the RunRequest it would send to the Automate server.
Nothing is sent and no daemon is needed.

The command's macro is given as 'hubgate mock send' takes it: --macro FILE, the
macro as JSON (deviceapi.Macro: id, name, commands, events; "-" reads stdin),
and --event JSON, a MacroEvent appended to its events (repeatable; without
--macro, to a macro named after the command, as mock send makes it).
--profile FILE is the device's profile (the JSON 'hubgate mock profile' takes):
the daemon completes a command without a macro from it, by macro id, then by the
macros' commands, then by their names (trimmed, case-insensitive).

A macro with a StopOutputs event cancels the current run instead of being
routed. A custom action (DeviceTypeCustomAction) for another device type than
the paired device's (state.json; --device-type overrides, "" turns the check
off) is refused. A template that fails shows its error. The request is the one
the daemon would send, with every client tool it declares (notify, command
tools, and ask_person where the rule or bridge.ask offers it); only the task id
is left empty when the rule has none: the journal assigns one per command.

Exit code 0 when the command would run, be ignored, refused or cancel (--json
says which in "action"); 3 when the matched rule's template fails for this
command ("action": "error"), and when the configuration, the macro or the
profile is invalid or cannot be read; 2 for an --event that is not a
MacroEvent's JSON.`

// rulesTestOptions are `rules test`'s options.
type rulesTestOptions struct {
	IO Stdio
	// LoadConfig loads and validates the configuration.
	LoadConfig func() (*configs.Config, error)
	// PairedDeviceType is the paired device's type ("" none), asked only
	// without --device-type.
	PairedDeviceType func() string
	Now              func() time.Time // the command's receipt; nil: time.Now

	Command     string   // the argument
	MacroFile   string   // --macro ("" none, "-" stdin)
	Events      []string // --event, each a MacroEvent's JSON
	ProfileFile string   // --profile ("" none, "-" stdin)
	// DeviceType is --device-type; DeviceTypeSet says it was given ("":
	// custom actions unchecked). Unset: PairedDeviceType.
	DeviceType    string
	DeviceTypeSet bool
	JSON          bool // --json
}

func newRulesTestCommand(a *app) *cobra.Command { return newCmdRulesTest(a, nil) }

// newCmdRulesTest builds rules test; runF (nil: runRulesTest) gets the
// parsed options.
func newCmdRulesTest(a *app, runF func(context.Context, *rulesTestOptions) error) *cobra.Command {
	o := &rulesTestOptions{IO: a.stdio, LoadConfig: func() (*configs.Config, error) { return a.loadConfig(nil) },
		PairedDeviceType: a.pairedDeviceType, Now: time.Now}
	cmd := &cobra.Command{
		Use: `test "<command>"`,
		Example: `  hubgate rules test "what time is it"
  hubgate rules test --event '{"eventType":"Type","typedPhrase":"water the plants"}' type
  hubgate rules test --profile profile.json --json "water plants"`,
		Short: "Show which rule a command matches and the run request it would send (sends nothing)",
		Long:  rulesTestLong,
		Args:  oneCommandArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Command = args[0]
			o.DeviceTypeSet = cmd.Flags().Changed("device-type")
			return cliout.Run(cmd, runF, runRulesTest, o)
		},
	}
	cmd.Flags().StringVar(&o.MacroFile, "macro", "", `the command's macro as a JSON file ("-": stdin)`)
	cmd.Flags().StringArrayVar(&o.Events, "event", nil, `a MacroEvent as JSON, appended to the macro's events (repeatable), e.g. '{"eventType":"Type","typedPhrase":"water the plants"}'`)
	cmd.Flags().StringVar(&o.ProfileFile, "profile", "", `the device's profile as a JSON file ("-": stdin), to find a command's macro as the daemon does`)
	cmd.Flags().StringVar(&o.DeviceType, "device-type", "", "the device type custom actions are for (default: the paired device's)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the result as one JSON object")
	return cmd
}

// runRulesTest routes the command as the daemon would (rulescli.Test).
func runRulesTest(_ context.Context, o *rulesTestOptions) error {
	cfg, err := o.LoadConfig()
	if err != nil {
		return err
	}
	t := rulescli.TestOptions{Config: cfg, Command: o.Command, MacroFile: o.MacroFile, Events: o.Events, ProfileFile: o.ProfileFile,
		DeviceType: func() string { return o.DeviceType }, JSON: o.JSON, In: o.IO.In, Out: o.IO.Out, Now: o.Now}
	if !o.DeviceTypeSet {
		t.DeviceType = o.PairedDeviceType
	}
	return rulescli.Test(t)
}

// pairedDeviceType is the paired device's type from the state file, or ""
// (not paired, or a state file without it: custom actions unchecked).
func (a *app) pairedDeviceType() string {
	path, err := a.statePath()
	var st *pairing.State
	if err == nil {
		st, err = pairing.LoadState(path)
	}
	if err != nil {
		if !errors.Is(err, pairing.ErrNoState) {
			fmt.Fprintf(a.stdio.Err, "warning: the pairing state cannot be read (%v); custom actions are not checked against a device type (--device-type sets one)\n", err)
		}
		return ""
	}
	return st.DeviceTypeID
}
