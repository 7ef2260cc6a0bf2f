package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/mockcli"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/rulescli"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/internal/buildinfo"
	"github.com/hubgate/hubgate/internal/userdirs"
)

// app is what every command shares: the streams, the environment, and the
// global flags. It is the factory of the commands, as gh's cmdutil.Factory:
// each command is an options struct (xOptions) that newCmdX(a, runF) fills
// from app and from its flags, and a run function runX(ctx, opts) that
// does the work with only what the options inject (streams, getenv, the
// clock, the configuration loader, the secret store, the service manager,
// the daemon's answer...). RunE parses, then hands the options to runF when
// a test gave one, else to runX (cliout.Run). Tests call either.
type app struct {
	stdio      Stdio
	getenv     func(string) string
	signals    func(c chan<- os.Signal, sigs ...os.Signal) (stop func()) // Process.Signals
	executable func() (string, error)                                    // Process.Executable
	args       []string                                                  // the command line, as Run got it
	configPath string
	logLevel   string
	logFormat  string
}

func newRootCommand(a *app) *cobra.Command {
	root := newBareRoot(a)
	root.AddCommand(newAutomateCommand(a), newVersionCommand(a), newPairCommand(a), newUnpairCommand(a), newMockCommand(a), newRunCommand(a), newDemoCommand(a))
	root.AddCommand(newConfigCommand(a), newRulesCommand(a), newServiceCommand(a), newSecretsCommand(a), newMcpCommand(a))
	root.AddCommand(a.control().Commands()...)
	return root
}

// newBareRoot is the hubgate command without its subcommands: its help,
// version and global flags.
func newBareRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "hubgate",
		Short: "Gateway between a remote device hub and a local AI assistant",
		Long: `hubgate pairs a virtual controller with a remote device service, holds its hub
connection, and turns the commands a person triggers in their app into runs of a
local AI assistant behind a loopback Automate server, which hubgate also hosts.

New here? 'hubgate demo' shows the whole chain in one process, with no set-up:
the mock remote service, pairing, the daemon and a sample command with its answer.
Then 'hubgate pair', 'hubgate config init' and 'hubgate run' against your service.`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate(buildinfo.Read().Long() + "\n")
	root.SetFlagErrorFunc(flagError)
	groupCommand(root)
	root.PersistentFlags().StringVar(&a.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/hubgate/config.yaml)")
	root.PersistentFlags().StringVar(&a.logLevel, "log-level", "", "log level: debug, info, warn, error (overrides the config)")
	root.PersistentFlags().StringVar(&a.logFormat, "log-format", "", "log format: text or json (overrides the config)")
	return root
}

// versionOptions are `version`'s options.
type versionOptions struct {
	IO      Stdio
	Version string // the long version text (buildinfo.Read().Long())
}

func newVersionCommand(a *app) *cobra.Command { return newCmdVersion(a, nil) }

// newCmdVersion builds version; runF (nil: runVersion) gets the options.
func newCmdVersion(a *app, runF func(context.Context, *versionOptions) error) *cobra.Command {
	o := &versionOptions{IO: a.stdio, Version: buildinfo.Read().Long()}
	return &cobra.Command{
		Use:     "version",
		Example: `  hubgate version`,
		Short:   "Print the version",
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runVersion, o) },
	}
}

// userConfigDir is the per-user config directory of the command's
// environment (getenv), not of the process: Run runs in-process too,
// with an environment of its own.
func (a *app) userConfigDir() (string, error) { return userdirs.ConfigDir(a.getenv) }

// executablePath is Process.Executable (nil: os.Executable, for an app a
// test builds).
func (a *app) executablePath() (string, error) {
	if a.executable == nil {
		return os.Executable()
	}
	return a.executable()
}

// statePath is the pairing state file in the user config directory.
func (a *app) statePath() (string, error) {
	dir, err := a.userConfigDir()
	if err != nil {
		return "", fmt.Errorf("locate the state file: %w", err)
	}
	return pairing.StatePathIn(dir), nil
}

// secretsPath is the secrets file in the user config directory.
func (a *app) secretsPath() (string, error) {
	dir, err := a.userConfigDir()
	if err != nil {
		return "", fmt.Errorf("locate the secrets file: %w", err)
	}
	return configs.SecretsPathIn(dir), nil
}

// runVersion prints the version.
func runVersion(_ context.Context, o *versionOptions) error {
	_, err := fmt.Fprintln(o.IO.Out, o.Version)
	return err
}

// loadConfig loads the configuration with the global flag overrides.
func (a *app) loadConfig(overrides []configs.Override) (*configs.Config, error) {
	cfg, err := configs.Load(a.loadOptions(overrides))
	if err != nil {
		return nil, &configError{err}
	}
	return cfg, nil
}

// loadOptions are the options of configs.Load: the --config file, the
// environment, and overrides after the global flags.
func (a *app) loadOptions(overrides []configs.Override) configs.LoadOptions {
	if a.logLevel != "" {
		overrides = append(overrides, configs.Override{Path: "log.level", Value: a.logLevel, Origin: "flag --log-level"})
	}
	if a.logFormat != "" {
		overrides = append(overrides, configs.Override{Path: "log.format", Value: a.logFormat, Origin: "flag --log-format"})
	}
	return configs.LoadOptions{Path: a.configPath, Env: a.getenv, Overrides: overrides,
		UserConfigDir: a.userConfigDir, HomeDir: func() (string, error) { return userdirs.HomeDir(a.getenv) },
		CheckRules: func(b configs.BridgeConfig) error { _, err := rulescli.Compile(b); return err }}
}

// logger builds the process logger on stderr.
func (a *app) logger(cfg *configs.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Log.Level))
	opts := &slog.HandlerOptions{Level: level}
	if strings.EqualFold(cfg.Log.Format, "json") {
		return slog.New(slog.NewJSONHandler(a.stdio.Err, opts))
	}
	return slog.New(slog.NewTextHandler(a.stdio.Err, opts))
}

// groupCommand makes a command that only holds subcommands print its help
// when called bare and answer an unknown subcommand with a usage error.
func groupCommand(cmd *cobra.Command) {
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return &usageError{errors.New(cliout.UnknownCommand(c, args[0]))}
		}
		return nil
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return &usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args[0])}
	}
	return nil
}

// flagError makes a flag mistake a usage error (cobra's flag error
// function, for every command). An unknown flag names the command's
// closest flag, if one is near: cobra suggests only subcommands.
func flagError(c *cobra.Command, err error) error {
	hint := ""
	// pflag's *NotExistError, without importing pflag for its type.
	var unknown interface{ GetSpecifiedName() string }
	if errors.As(err, &unknown) && unknown.GetSpecifiedName() != "" {
		if s := cliout.ClosestFlag(c, unknown.GetSpecifiedName()); s != "" {
			hint = fmt.Sprintf(" (did you mean --%s?)", s)
		}
	}
	return &usageError{fmt.Errorf("%w%s; see '%s --help'", err, hint, c.CommandPath())}
}

// newMockCommand wires `hubgate mock` (hub/mockhub/mockcli) to the
// process: its streams, environment and logger.
func newMockCommand(a *app) *cobra.Command {
	return mockcli.NewCommand(mockcli.Options{In: a.stdio.In, Out: a.stdio.Out, Err: a.stdio.Err, Getenv: a.getenv,
		Logger: func() *slog.Logger {
			return a.logger(&configs.Config{Log: configs.LogConfig{Level: a.logLevel, Format: a.logFormat}})
		}})
}
