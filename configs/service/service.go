// Package service owns hubgate as the user's service: the unit templates
// (a systemd --user unit, a launchd agent; templates.go) and installing,
// removing and inspecting them through the platform's manager (systemctl
// --user, launchctl), whose commands go through an injected Runner.
//
// Choices where the issue is silent: launchd is used on darwin, systemd
// everywhere else; HUBGATE_SYSTEMCTL and HUBGATE_LAUNCHCTL replace the
// manager's program (tests, unusual installs); a binary built by 'go run'
// is refused (its path is temporary).
package service

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

	"github.com/hubgate/hubgate/internal/atomicfile"
	"github.com/hubgate/hubgate/internal/proc"
)

// Environment variables that replace the service manager's program; the
// arguments stay those of systemctl --user or launchctl.
const (
	EnvSystemctl = "HUBGATE_SYSTEMCTL"
	EnvLaunchctl = "HUBGATE_LAUNCHCTL"
)

// ErrNoServiceManager: this system has neither systemctl nor launchctl.
var ErrNoServiceManager = errors.New("no service manager: 'hubgate service' needs systemd (systemctl --user) or launchd (macOS)")

// Runner runs a service manager's program with args and returns its
// combined output, trimmed.
type Runner func(ctx context.Context, prog string, args ...string) (string, error)

// Config configures New. Every zero value is the real system's.
type Config struct {
	GOOS          string                       // zero: runtime.GOOS
	Getenv        func(string) string          // zero: os.Getenv
	LookPath      func(string) (string, error) // zero: exec.LookPath
	UserConfigDir func() (string, error)       // zero: os.UserConfigDir (systemd)
	HomeDir       func() (string, error)       // zero: os.UserHomeDir (launchd)
	UID           int                          // launchd's gui/<uid> domain; zero: os.Getuid()
	Run           Runner                       // zero: runs the program (internal/proc)
}

// Manager installs hubgate as the user's service on one platform.
type Manager struct {
	run     Runner
	prog    string // systemctl or launchctl
	launchd bool
	file    string
	logPath string // launchd: the agent's stderr
	domain  string // launchd: gui/<uid>
}

// New finds the platform's service manager.
func New(c Config) (*Manager, error) {
	fillDefaults(&c)
	if c.GOOS == "darwin" {
		home, err := c.HomeDir()
		if err != nil {
			return nil, err
		}
		prog, err := program(c, EnvLaunchctl, "launchctl")
		if err != nil {
			return nil, err
		}
		return &Manager{run: c.Run, prog: prog, launchd: true,
			file:    filepath.Join(home, "Library", "LaunchAgents", LaunchdLabel+".plist"),
			logPath: filepath.Join(home, "Library", "Logs", "hubgate.log"), domain: fmt.Sprintf("gui/%d", c.UID)}, nil
	}
	dir, err := c.UserConfigDir()
	if err != nil {
		return nil, err
	}
	prog, err := program(c, EnvSystemctl, "systemctl")
	if err != nil {
		return nil, err
	}
	return &Manager{run: c.Run, prog: prog, file: filepath.Join(dir, "systemd", "user", SystemdUnitName)}, nil
}

func fillDefaults(c *Config) {
	if c.GOOS == "" {
		c.GOOS = runtime.GOOS
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.LookPath == nil {
		c.LookPath = exec.LookPath
	}
	if c.UserConfigDir == nil {
		c.UserConfigDir = os.UserConfigDir
	}
	if c.HomeDir == nil {
		c.HomeDir = os.UserHomeDir
	}
	if c.UID == 0 {
		c.UID = os.Getuid()
	}
	if c.Run == nil {
		c.Run = runProgram
	}
}

// program finds the service manager's program (env overrides).
func program(c Config, env, name string) (string, error) {
	if v := c.Getenv(env); v != "" {
		return v, nil
	}
	p, err := c.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s is not installed; run 'hubgate run' under your own supervisor instead", ErrNoServiceManager, name)
	}
	return p, nil
}

// runProgram is the real Runner.
func runProgram(ctx context.Context, prog string, args ...string) (string, error) {
	res, err := proc.Run(ctx, proc.Command(prog, args...), 0)
	return strings.TrimSpace(res.Output), err
}

// manage runs the manager; its output is part of a failure's message.
func (m *Manager) manage(ctx context.Context, args ...string) (string, error) {
	text, err := m.run(ctx, m.prog, args...)
	if err != nil {
		if text != "" {
			return text, fmt.Errorf("%s %s: %w: %s", filepath.Base(m.prog), strings.Join(args, " "), err, text)
		}
		return text, fmt.Errorf("%s %s: %w", filepath.Base(m.prog), strings.Join(args, " "), err)
	}
	return text, nil
}

// File is the unit or agent file's path.
func (m *Manager) File() string { return m.file }

// LogsHint is the command that shows the service's logs.
func (m *Manager) LogsHint() string {
	if m.launchd {
		return "tail -f " + m.logPath
	}
	return "journalctl --user -u hubgate -f"
}

// Installed reports whether the file exists.
func (m *Manager) Installed() bool {
	_, err := os.Stat(m.file)
	return !errors.Is(err, fs.ErrNotExist)
}

// Write renders the file for argv (Argv) and writes it atomically.
func (m *Manager) Write(argv []string) error {
	var data []byte
	var err error
	if m.launchd {
		data, err = LaunchdPlist(argv, m.logPath)
	} else {
		data, err = SystemdUnit(argv)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(m.file), 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(m.file, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", m.file, err)
	}
	return nil
}

// Enable loads the written file and, with start, starts it now (else at
// the next login).
func (m *Manager) Enable(ctx context.Context, start bool) error {
	if m.launchd {
		// bootstrap loads (and, with RunAtLoad, starts) the agent; a
		// loaded one is booted out first so that the new file applies.
		_, _ = m.manage(ctx, "bootout", m.domain+"/"+LaunchdLabel)
		if !start {
			return nil
		}
		_, err := m.manage(ctx, "bootstrap", m.domain, m.file)
		return err
	}
	if _, err := m.manage(ctx, "--user", "daemon-reload"); err != nil {
		return err
	}
	args := []string{"--user", "enable", SystemdUnitName}
	if start {
		args = []string{"--user", "enable", "--now", SystemdUnitName}
	}
	_, err := m.manage(ctx, args...)
	return err
}

// Uninstall stops and disables the service and removes its file. It does
// nothing (false) when the file does not exist.
func (m *Manager) Uninstall(ctx context.Context) (bool, error) {
	if !m.Installed() {
		return false, nil
	}
	var err error
	if m.launchd {
		_, err = m.manage(ctx, "bootout", m.domain+"/"+LaunchdLabel)
	} else {
		_, err = m.manage(ctx, "--user", "disable", "--now", SystemdUnitName)
	}
	if err != nil {
		return true, err
	}
	if err := os.Remove(m.file); err != nil {
		return true, err
	}
	if !m.launchd {
		if _, err := m.manage(ctx, "--user", "daemon-reload"); err != nil {
			return true, err
		}
	}
	return true, nil
}

// State says whether the installed service runs, and describes it.
func (m *Manager) State(ctx context.Context) (active bool, desc string) {
	if m.launchd {
		out, err := m.manage(ctx, "print", m.domain+"/"+LaunchdLabel)
		switch {
		case err != nil:
			return false, "not loaded"
		case strings.Contains(out, "state = running"):
			return true, "loaded, running"
		}
		return false, "loaded, not running"
	}
	enabled, _ := m.manage(ctx, "--user", "is-enabled", SystemdUnitName)
	state, err := m.manage(ctx, "--user", "is-active", SystemdUnitName)
	return err == nil && state == "active", fmt.Sprintf("enabled: %s, active: %s", orUnknown(enabled), orUnknown(state))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Argv is the service's command line: exe (this binary's absolute path),
// --config with configPath made absolute when one was given, and run.
func Argv(exe, configPath string) ([]string, error) {
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return nil, fmt.Errorf("this binary was built by 'go run' into a temporary folder; install it first (go install ./cmd/hubgate) and run 'hubgate service install' from there")
	}
	argv := []string{exe}
	if configPath != "" {
		p, err := filepath.Abs(configPath)
		if err != nil {
			return nil, err
		}
		argv = append(argv, "--config", p)
	}
	return append(argv, "run"), nil
}
