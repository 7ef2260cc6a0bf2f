package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/internal/atomicfile"
	"github.com/hubgate/hubgate/internal/proc"
)

// Environment variables that replace the service manager's command (tests,
// unusual installs); the arguments stay those of systemctl --user or
// launchctl.
const (
	EnvSystemctl = "HUBGATE_SYSTEMCTL"
	EnvLaunchctl = "HUBGATE_LAUNCHCTL"
)

// errNoServiceManager: this system has neither systemctl nor launchctl.
var errNoServiceManager = errors.New("no service manager: 'hubgate service' needs systemd (systemctl --user) or launchd (macOS)")

// serviceManager installs hubgate as the user's service on one platform.
type serviceManager interface {
	// file is the unit or agent file's path.
	file() string
	// render is the file's contents for argv.
	render(argv []string) ([]byte, error)
	// enable loads and starts (now) the written file; disable stops and
	// unloads it; state describes it.
	enable(ctx context.Context, now bool) error
	disable(ctx context.Context) error
	state(ctx context.Context) (active bool, desc string)
	logsHint() string
}

func (a *app) serviceManager() (serviceManager, error) {
	if runtime.GOOS == "darwin" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, err
		}
		prog, err := a.managerProgram(EnvLaunchctl, "launchctl")
		if err != nil {
			return nil, err
		}
		return &launchd{dir: filepath.Join(home, "Library", "LaunchAgents"), logDir: filepath.Join(home, "Library", "Logs"), launchctl: prog}, nil
	}
	cfgDir, err := os.UserConfigDir()
	if err != nil {
		return nil, err
	}
	prog, err := a.managerProgram(EnvSystemctl, "systemctl")
	if err != nil {
		return nil, err
	}
	return &systemd{dir: filepath.Join(cfgDir, "systemd", "user"), systemctl: prog}, nil
}

// managerProgram finds the service manager's command (env overrides).
func (a *app) managerProgram(env, name string) (string, error) {
	if v := a.getenv(env); v != "" {
		return v, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s is not installed; run 'hubgate run' under your own supervisor instead", errNoServiceManager, name)
	}
	return p, nil
}

// runManager runs the service manager with args; its output is part of a
// failure's message.
func runManager(ctx context.Context, prog string, args ...string) (string, error) {
	res, err := proc.Run(ctx, proc.Command(prog, args...), 0)
	text := strings.TrimSpace(res.Output)
	if err != nil {
		if text != "" {
			return text, fmt.Errorf("%s %s: %w: %s", filepath.Base(prog), strings.Join(args, " "), err, text)
		}
		return text, fmt.Errorf("%s %s: %w", filepath.Base(prog), strings.Join(args, " "), err)
	}
	return text, nil
}

type systemd struct{ dir, systemctl string }

func (s *systemd) file() string                         { return filepath.Join(s.dir, configs.SystemdUnitName) }
func (s *systemd) render(argv []string) ([]byte, error) { return configs.SystemdUnit(argv) }
func (s *systemd) logsHint() string                     { return "journalctl --user -u hubgate -f" }

func (s *systemd) enable(ctx context.Context, now bool) error {
	if _, err := runManager(ctx, s.systemctl, "--user", "daemon-reload"); err != nil {
		return err
	}
	args := []string{"--user", "enable", configs.SystemdUnitName}
	if now {
		args = []string{"--user", "enable", "--now", configs.SystemdUnitName}
	}
	_, err := runManager(ctx, s.systemctl, args...)
	return err
}

func (s *systemd) disable(ctx context.Context) error {
	_, err := runManager(ctx, s.systemctl, "--user", "disable", "--now", configs.SystemdUnitName)
	return err
}

func (s *systemd) state(ctx context.Context) (bool, string) {
	enabled, _ := runManager(ctx, s.systemctl, "--user", "is-enabled", configs.SystemdUnitName)
	active, err := runManager(ctx, s.systemctl, "--user", "is-active", configs.SystemdUnitName)
	return err == nil && active == "active", fmt.Sprintf("enabled: %s, active: %s", orUnknown(enabled), orUnknown(active))
}

type launchd struct{ dir, logDir, launchctl string }

func (l *launchd) file() string { return filepath.Join(l.dir, configs.LaunchdLabel+".plist") }
func (l *launchd) render(argv []string) ([]byte, error) {
	return configs.LaunchdPlist(argv, filepath.Join(l.logDir, "hubgate.log"))
}
func (l *launchd) logsHint() string { return "tail -f " + filepath.Join(l.logDir, "hubgate.log") }
func (l *launchd) domain() string   { return fmt.Sprintf("gui/%d", os.Getuid()) }

func (l *launchd) enable(ctx context.Context, now bool) error {
	// bootstrap loads (and, with RunAtLoad, starts) the agent; a loaded
	// one is booted out first so that the new file applies.
	_, _ = runManager(ctx, l.launchctl, "bootout", l.domain()+"/"+configs.LaunchdLabel)
	if !now {
		return nil // loaded at the next login
	}
	_, err := runManager(ctx, l.launchctl, "bootstrap", l.domain(), l.file())
	return err
}

func (l *launchd) disable(ctx context.Context) error {
	_, err := runManager(ctx, l.launchctl, "bootout", l.domain()+"/"+configs.LaunchdLabel)
	return err
}

func (l *launchd) state(ctx context.Context) (bool, string) {
	out, err := runManager(ctx, l.launchctl, "print", l.domain()+"/"+configs.LaunchdLabel)
	if err != nil {
		return false, "not loaded"
	}
	running := strings.Contains(out, "state = running")
	if running {
		return true, "loaded, running"
	}
	return false, "loaded, not running"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func newServiceCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Run hubgate as your user's service (systemd --user, or launchd on macOS)",
		Long: `Install, remove or inspect hubgate as a service of your user: a systemd --user
unit (~/.config/systemd/user/hubgate.service), or a launchd agent on macOS
(~/Library/LaunchAgents/dev.hubgate.hubgate.plist). The service runs
'hubgate run' with this binary's absolute path (and --config when given).

The daemon reads its secrets from the OS keyring, which a login session
unlocks. For a service that starts at boot without a login, see the README
("Run as a service"): 'loginctl enable-linger' plus HUBGATE_DEVICE_TOKEN and
HUBGATE_AUTOMATE_KEY in a drop-in's environment.`,
	}
	groupCommand(cmd)
	cmd.AddCommand(newServiceInstallCommand(a), newServiceUninstallCommand(a), newServiceStatusCommand(a))
	return cmd
}

func newServiceInstallCommand(a *app) *cobra.Command {
	var noStart bool
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Write the service file, enable it and start it (again, when it ran)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := a.serviceManager()
			if err != nil {
				return err
			}
			argv, err := a.serviceArgv()
			if err != nil {
				return err
			}
			data, err := m.render(argv)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(m.file()), 0o755); err != nil {
				return err
			}
			if err := atomicfile.WriteFile(m.file(), data, 0o644); err != nil {
				return fmt.Errorf("write %s: %w", m.file(), err)
			}
			fmt.Fprintf(a.stdio.Out, "wrote %s\n", m.file())
			if err := m.enable(cmd.Context(), !noStart); err != nil {
				return fmt.Errorf("the file is written but enabling it failed: %w", err)
			}
			if noStart {
				fmt.Fprintln(a.stdio.Out, "enabled; it starts at your next login")
			} else {
				fmt.Fprintln(a.stdio.Out, "enabled and started")
			}
			fmt.Fprintf(a.stdio.Out, "logs: %s\nstate: hubgate status; hubgate service status\n", m.logsHint())
			return nil
		},
	}
	cmd.Flags().BoolVar(&noStart, "no-start", false, "enable only; do not start it now")
	return cmd
}

func newServiceUninstallCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "uninstall",
		Short: "Stop and disable the service and remove its file",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := a.serviceManager()
			if err != nil {
				return err
			}
			if _, err := os.Stat(m.file()); errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(a.stdio.Out, "not installed (%s does not exist)\n", m.file())
				return nil
			}
			if err := m.disable(cmd.Context()); err != nil {
				return err
			}
			if err := os.Remove(m.file()); err != nil {
				return err
			}
			if s, ok := m.(*systemd); ok {
				if _, err := runManager(cmd.Context(), s.systemctl, "--user", "daemon-reload"); err != nil {
					return err
				}
			}
			fmt.Fprintf(a.stdio.Out, "stopped, disabled and removed %s\n", m.file())
			return nil
		},
	}
}

func newServiceStatusCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Say whether the service is installed and running (exit 0 when it runs, 9 when not)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := a.serviceManager()
			if err != nil {
				return err
			}
			if _, err := os.Stat(m.file()); errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(a.stdio.Out, "not installed (%s does not exist); 'hubgate service install' installs it\n", m.file())
				return &quietError{errNotRunning}
			}
			active, desc := m.state(cmd.Context())
			fmt.Fprintf(a.stdio.Out, "installed: %s\n%s\nlogs: %s\n", m.file(), desc, m.logsHint())
			if !active {
				return &quietError{errNotRunning}
			}
			return nil
		},
	}
}

// serviceArgv is the service's command line: this binary's absolute path,
// --config when one was given, and run.
func (a *app) serviceArgv() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this binary's path: %w", err)
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return nil, fmt.Errorf("this binary was built by 'go run' into a temporary folder; install it first (go install ./cmd/hubgate) and run 'hubgate service install' from there")
	}
	argv := []string{exe}
	if a.configPath != "" {
		p, err := filepath.Abs(a.configPath)
		if err != nil {
			return nil, err
		}
		argv = append(argv, "--config", p)
	}
	return append(argv, "run"), nil
}
