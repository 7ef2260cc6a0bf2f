package service

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a Runner that records each call and answers from a table
// keyed by the arguments.
type recorder struct {
	calls   []string
	answers map[string]string
	fail    map[string]bool
}

func (r *recorder) run(_ context.Context, prog string, args ...string) (string, error) {
	call := strings.Join(args, " ")
	r.calls = append(r.calls, filepath.Base(prog)+" "+call)
	if r.fail[call] {
		return "boom", errors.New("exit status 1")
	}
	return r.answers[call], nil
}

func newManager(t *testing.T, goos string, r *recorder) *Manager {
	t.Helper()
	dir := t.TempDir()
	m, err := New(Config{GOOS: goos, Getenv: func(string) string { return "" },
		LookPath:      func(name string) (string, error) { return "/usr/bin/" + name, nil },
		UserConfigDir: func() (string, error) { return filepath.Join(dir, "config"), nil },
		HomeDir:       func() (string, error) { return filepath.Join(dir, "home"), nil },
		UID:           501, Run: r.run})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSystemdInstallStatusUninstall(t *testing.T) {
	r := &recorder{answers: map[string]string{"--user is-enabled hubgate.service": "enabled", "--user is-active hubgate.service": "active"}}
	m := newManager(t, "linux", r)
	if !strings.HasSuffix(m.File(), filepath.Join("config", "systemd", "user", "hubgate.service")) || m.Installed() {
		t.Fatalf("file %s installed %v", m.File(), m.Installed())
	}
	if err := m.Write([]string{"/bin/hubgate", "run"}); err != nil {
		t.Fatal(err)
	}
	if body, _ := os.ReadFile(m.File()); !strings.Contains(string(body), "ExecStart=/bin/hubgate run\n") {
		t.Fatalf("unit:\n%s", body)
	}
	if err := m.Enable(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if active, desc := m.State(context.Background()); !active || desc != "enabled: enabled, active: active" {
		t.Fatalf("state %v %q", active, desc)
	}
	if ok, err := m.Uninstall(context.Background()); !ok || err != nil || m.Installed() {
		t.Fatalf("uninstall %v %v", ok, err)
	}
	want := []string{"systemctl --user daemon-reload", "systemctl --user enable --now hubgate.service",
		"systemctl --user is-enabled hubgate.service", "systemctl --user is-active hubgate.service",
		"systemctl --user disable --now hubgate.service", "systemctl --user daemon-reload"}
	if strings.Join(r.calls, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls:\n%s", strings.Join(r.calls, "\n"))
	}
	if ok, err := m.Uninstall(context.Background()); ok || err != nil {
		t.Fatalf("uninstall of nothing: %v %v", ok, err)
	}
}

// A failing manager: its output is in the error, and the file stays.
func TestSystemdFailureNamesTheCommandAndItsOutput(t *testing.T) {
	r := &recorder{fail: map[string]bool{"--user enable hubgate.service": true, "--user disable --now hubgate.service": true}}
	m := newManager(t, "linux", r)
	if err := m.Write([]string{"/bin/hubgate", "run"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Enable(context.Background(), false); err == nil || err.Error() != "systemctl --user enable hubgate.service: exit status 1: boom" {
		t.Fatalf("enable: %v", err)
	}
	if _, err := m.Uninstall(context.Background()); err == nil || !m.Installed() {
		t.Fatalf("uninstall: %v, installed %v", err, m.Installed())
	}
}

func TestLaunchdInstallStatusUninstall(t *testing.T) {
	r := &recorder{answers: map[string]string{"print gui/501/dev.hubgate.hubgate": "state = running"}}
	m := newManager(t, "darwin", r)
	if !strings.HasSuffix(m.File(), filepath.Join("home", "Library", "LaunchAgents", "dev.hubgate.hubgate.plist")) ||
		!strings.HasSuffix(m.LogsHint(), filepath.Join("Library", "Logs", "hubgate.log")) {
		t.Fatalf("file %s logs %s", m.File(), m.LogsHint())
	}
	if err := m.Write([]string{"/bin/hubgate", "run"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Enable(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if active, desc := m.State(context.Background()); !active || desc != "loaded, running" {
		t.Fatalf("state %v %q", active, desc)
	}
	if ok, err := m.Uninstall(context.Background()); !ok || err != nil {
		t.Fatalf("uninstall %v %v", ok, err)
	}
	want := []string{"launchctl bootout gui/501/dev.hubgate.hubgate", "launchctl bootstrap gui/501 " + m.File(),
		"launchctl print gui/501/dev.hubgate.hubgate", "launchctl bootout gui/501/dev.hubgate.hubgate"}
	if strings.Join(r.calls, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls:\n%s", strings.Join(r.calls, "\n"))
	}
}

func TestNoServiceManager(t *testing.T) {
	_, err := New(Config{GOOS: "linux", Getenv: func(string) string { return "" },
		LookPath:      func(string) (string, error) { return "", errors.New("not found") },
		UserConfigDir: func() (string, error) { return t.TempDir(), nil }})
	if !errors.Is(err, ErrNoServiceManager) || !strings.Contains(err.Error(), "systemctl is not installed") {
		t.Fatalf("%v", err)
	}
	m, err := New(Config{GOOS: "linux", Getenv: func(k string) string { return map[string]string{EnvSystemctl: "/opt/fake"}[k] },
		LookPath:      func(string) (string, error) { return "", errors.New("not found") },
		UserConfigDir: func() (string, error) { return t.TempDir(), nil }})
	if err != nil || m.prog != "/opt/fake" {
		t.Fatalf("the environment's program: %v", err)
	}
}

func TestArgv(t *testing.T) {
	got, err := Argv("/usr/bin/hubgate", "")
	if err != nil || strings.Join(got, " ") != "/usr/bin/hubgate run" {
		t.Fatalf("%q %v", got, err)
	}
	got, err = Argv("/usr/bin/hubgate", "rel/c.yaml")
	if abs, _ := filepath.Abs("rel/c.yaml"); err != nil || len(got) != 4 || got[1] != "--config" || got[2] != abs {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := Argv("/tmp/go-build123/b001/exe/hubgate", ""); err == nil || !strings.Contains(err.Error(), "go run") {
		t.Fatalf("go run binary: %v", err)
	}
}
