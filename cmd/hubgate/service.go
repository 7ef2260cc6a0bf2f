package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/controlcli"
	"github.com/hubgate/hubgate/configs/service"
	"github.com/hubgate/hubgate/internal/userdirs"
)

// Environment variables that replace the service manager's program.
const (
	EnvSystemctl = service.EnvSystemctl
	EnvLaunchctl = service.EnvLaunchctl
)

// serviceManager is the platform's service manager (configs/service).
func (a *app) serviceManager() (*service.Manager, error) {
	return service.New(service.Config{Getenv: a.getenv, UserConfigDir: a.userConfigDir,
		HomeDir: func() (string, error) { return userdirs.HomeDir(a.getenv) }})
}

func newServiceCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use: "service",
		Example: `  hubgate service install && hubgate service status
  hubgate service uninstall`,
		Short: "Run hubgate as your user's service (systemd --user, or launchd on macOS)",
		Long: `Install, remove or inspect hubgate as a service of your user: a systemd --user
unit (~/.config/systemd/user/hubgate.service), or a launchd agent on macOS
(~/Library/LaunchAgents/dev.hubgate.hubgate.plist). The service runs
'hubgate run' with this binary's absolute path (and --config when given).

The daemon reads its secrets from the OS keyring, which a login session
unlocks. For a service that starts at boot without a login, see docs/guide.md
("Run as a service"): 'loginctl enable-linger' plus HUBGATE_DEVICE_TOKEN and
HUBGATE_AUTOMATE_KEY in a drop-in's environment.`,
	}
	groupCommand(cmd)
	cmd.AddCommand(newServiceInstallCommand(a, nil), newServiceUninstallCommand(a), newServiceStatusCommand(a))
	return cmd
}

// serviceInstallOptions are service install's options.
type serviceInstallOptions struct {
	IO Stdio
	// Manager is the platform's service manager (configs/service).
	Manager func() (*service.Manager, error)
	// Executable is this binary's path, which the service runs.
	Executable func() (string, error)
	ConfigPath string // --config, passed on to the service ("": none)
	NoStart    bool   // --no-start: enable only
}

// newServiceInstallCommand builds service install; runF (nil:
// runServiceInstall) gets the parsed options.
func newServiceInstallCommand(a *app, runF func(context.Context, *serviceInstallOptions) error) *cobra.Command {
	o := &serviceInstallOptions{IO: a.stdio, Manager: a.serviceManager, Executable: a.executablePath}
	cmd := &cobra.Command{
		Use: "install",
		Example: `  hubgate service install
  hubgate --config ~/hubgate.yaml service install --no-start`,
		Short: "Write the service file, enable it and start it (again, when it ran)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ConfigPath = a.configPath
			return cliout.Run(cmd, runF, runServiceInstall, o)
		},
	}
	cmd.Flags().BoolVar(&o.NoStart, "no-start", false, "enable only; do not start it now")
	return cmd
}

// runServiceInstall writes the service file, enables it and (unless
// NoStart) starts it.
func runServiceInstall(ctx context.Context, o *serviceInstallOptions) error {
	m, err := o.Manager()
	if err != nil {
		return err
	}
	exe, err := o.Executable()
	if err != nil {
		return fmt.Errorf("find this binary's path: %w", err)
	}
	argv, err := service.Argv(exe, o.ConfigPath)
	if err != nil {
		return err
	}
	if err := m.Write(argv); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "wrote %s\n", m.File())
	if err := m.Enable(ctx, !o.NoStart); err != nil {
		return fmt.Errorf("the file is written but enabling it failed: %w", err)
	}
	if o.NoStart {
		fmt.Fprintln(o.IO.Out, "enabled; it starts at your next login")
	} else {
		fmt.Fprintln(o.IO.Out, "enabled and started")
	}
	fmt.Fprintf(o.IO.Out, "logs: %s\nstate: hubgate status; hubgate service status\n", m.LogsHint())
	return nil
}

// serviceOptions are the options of service uninstall and service status.
type serviceOptions struct {
	IO      Stdio
	Manager func() (*service.Manager, error) // the platform's service manager
}

func newServiceUninstallCommand(a *app) *cobra.Command { return newCmdServiceUninstall(a, nil) }

// newCmdServiceUninstall builds service uninstall; runF (nil:
// runServiceUninstall) gets the options.
func newCmdServiceUninstall(a *app, runF func(context.Context, *serviceOptions) error) *cobra.Command {
	o := &serviceOptions{IO: a.stdio, Manager: a.serviceManager}
	return &cobra.Command{
		Use:     "uninstall",
		Example: `  hubgate service uninstall`,
		Short:   "Stop and disable the service and remove its file",
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runServiceUninstall, o) },
	}
}

// runServiceUninstall stops, disables and removes the service.
func runServiceUninstall(ctx context.Context, o *serviceOptions) error {
	m, err := o.Manager()
	if err != nil {
		return err
	}
	installed, err := m.Uninstall(ctx)
	switch {
	case err != nil:
		return err
	case !installed:
		fmt.Fprintf(o.IO.Out, "not installed (%s does not exist)\n", m.File())
	default:
		fmt.Fprintf(o.IO.Out, "stopped, disabled and removed %s\n", m.File())
	}
	return nil
}

func newServiceStatusCommand(a *app) *cobra.Command { return newCmdServiceStatus(a, nil) }

// newCmdServiceStatus builds service status; runF (nil:
// runServiceStatus) gets the options.
func newCmdServiceStatus(a *app, runF func(context.Context, *serviceOptions) error) *cobra.Command {
	o := &serviceOptions{IO: a.stdio, Manager: a.serviceManager}
	return &cobra.Command{
		Use:     "status",
		Example: `  hubgate service status && echo running`,
		Short:   "Say whether the service is installed and running (exit 0 when it runs, 9 when not)",
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runServiceStatus, o) },
	}
}

// runServiceStatus says whether the service is installed and runs; not
// running (or not installed) is controlcli.ErrNotRunning, told already.
func runServiceStatus(ctx context.Context, o *serviceOptions) error {
	m, err := o.Manager()
	if err != nil {
		return err
	}
	if !m.Installed() {
		fmt.Fprintf(o.IO.Out, "not installed (%s does not exist); 'hubgate service install' installs it\n", m.File())
		return &quietError{controlcli.ErrNotRunning}
	}
	active, desc := m.State(ctx)
	fmt.Fprintf(o.IO.Out, "installed: %s\n%s\nlogs: %s\n", m.File(), desc, m.LogsHint())
	if !active {
		return &quietError{controlcli.ErrNotRunning}
	}
	return nil
}
