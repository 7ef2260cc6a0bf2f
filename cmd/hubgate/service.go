package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

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
	noStart bool
}

// newServiceInstallCommand builds service install; runF (nil:
// a.serviceInstall) gets the parsed options.
func newServiceInstallCommand(a *app, runF func(context.Context, serviceInstallOptions) error) *cobra.Command {
	var o serviceInstallOptions
	cmd := &cobra.Command{
		Use: "install",
		Example: `  hubgate service install
  hubgate --config ~/hubgate.yaml service install --no-start`,
		Short: "Write the service file, enable it and start it (again, when it ran)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return a.serviceInstall(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.noStart, "no-start", false, "enable only; do not start it now")
	return cmd
}

func (a *app) serviceInstall(ctx context.Context, o serviceInstallOptions) error {
	m, err := a.serviceManager()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary's path: %w", err)
	}
	argv, err := service.Argv(exe, a.configPath)
	if err != nil {
		return err
	}
	if err := m.Write(argv); err != nil {
		return err
	}
	fmt.Fprintf(a.stdio.Out, "wrote %s\n", m.File())
	if err := m.Enable(ctx, !o.noStart); err != nil {
		return fmt.Errorf("the file is written but enabling it failed: %w", err)
	}
	if o.noStart {
		fmt.Fprintln(a.stdio.Out, "enabled; it starts at your next login")
	} else {
		fmt.Fprintln(a.stdio.Out, "enabled and started")
	}
	fmt.Fprintf(a.stdio.Out, "logs: %s\nstate: hubgate status; hubgate service status\n", m.LogsHint())
	return nil
}

func newServiceUninstallCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "uninstall",
		Example: `  hubgate service uninstall`,
		Short:   "Stop and disable the service and remove its file",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := a.serviceManager()
			if err != nil {
				return err
			}
			installed, err := m.Uninstall(cmd.Context())
			switch {
			case err != nil:
				return err
			case !installed:
				fmt.Fprintf(a.stdio.Out, "not installed (%s does not exist)\n", m.File())
			default:
				fmt.Fprintf(a.stdio.Out, "stopped, disabled and removed %s\n", m.File())
			}
			return nil
		},
	}
}

func newServiceStatusCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "status",
		Example: `  hubgate service status && echo running`,
		Short:   "Say whether the service is installed and running (exit 0 when it runs, 9 when not)",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := a.serviceManager()
			if err != nil {
				return err
			}
			if !m.Installed() {
				fmt.Fprintf(a.stdio.Out, "not installed (%s does not exist); 'hubgate service install' installs it\n", m.File())
				return &quietError{controlcli.ErrNotRunning}
			}
			active, desc := m.State(cmd.Context())
			fmt.Fprintf(a.stdio.Out, "installed: %s\n%s\nlogs: %s\n", m.File(), desc, m.LogsHint())
			if !active {
				return &quietError{controlcli.ErrNotRunning}
			}
			return nil
		},
	}
}
