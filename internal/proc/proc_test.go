package proc

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestEnvironDropsHubgateSecrets(t *testing.T) {
	t.Setenv("HUBGATE_AUTOMATE_KEY", "secret-automate-key")
	t.Setenv("HUBGATE_CLIENT_SECRET", "secret-client")
	t.Setenv("hubgate_device_token", "secret-device")
	t.Setenv("HUBGATE_LOG_LEVEL", "debug")
	t.Setenv("OTHER_TOKEN", "not-ours")
	env := strings.Join(Environ(), "\n")
	for _, s := range []string{"secret-automate-key", "secret-client", "secret-device"} {
		if strings.Contains(env, s) {
			t.Errorf("Environ keeps %q", s)
		}
	}
	for _, s := range []string{"HUBGATE_LOG_LEVEL=debug", "OTHER_TOKEN=not-ours"} {
		if !strings.Contains(env, s) {
			t.Errorf("Environ drops %q", s)
		}
	}
}

func unixOnly(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell scripts")
	}
}

func TestRunCapsOutputAndReportsTheExitStatus(t *testing.T) {
	unixOnly(t)
	res, err := Run(context.Background(), Shell("printf 0123456789; printf err >&2; exit 3"), 8)
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || res.ExitCode != 3 {
		t.Fatalf("err %v code %d", err, res.ExitCode)
	}
	if res.Output != "01234567" || !res.Truncated {
		t.Errorf("output %q truncated %v", res.Output, res.Truncated)
	}
	res, err = Run(context.Background(), Shell("echo ok"), 0)
	if err != nil || res.Output != "ok\n" || res.Truncated || res.ExitCode != 0 {
		t.Errorf("%+v %v", res, err)
	}
	if _, err := Run(context.Background(), Command(filepath.Join(t.TempDir(), "missing")), 0); err == nil || errors.As(err, &exitErr) {
		t.Errorf("a missing program: %v", err)
	}
}

func TestOutputKeepsTheTail(t *testing.T) {
	o, err := NewOutput(4, KeepTail)
	if err != nil {
		t.Fatal(err)
	}
	o.Writer().WriteString("abcdefgh")
	o.CloseWriter()
	o.Drain(10 * time.Second)
	if o.String() != "efgh" || !o.Truncated() {
		t.Errorf("%q %v", o.String(), o.Truncated())
	}
}
