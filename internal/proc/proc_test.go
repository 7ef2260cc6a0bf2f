package proc

import (
	"context"
	"errors"
	"fmt"
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

// A variable the configuration names for a secret (an upstream's API key)
// is dropped once AlsoSecret names it; others stay.
func TestAlsoSecretDropsANamedVariable(t *testing.T) {
	// A name of this run's own: AlsoSecret lasts for the process.
	name := fmt.Sprintf("PROC_TEST_UPSTREAM_KEY_%d", time.Now().UnixNano())
	t.Setenv(name, "secret-upstream")
	t.Setenv("PROC_TEST_OTHER", "kept")
	if env := strings.Join(Environ(), "\n"); !strings.Contains(env, "secret-upstream") {
		t.Fatal("the variable is dropped before it was named a secret")
	}
	AlsoSecret(name, "")
	env := strings.Join(Environ(), "\n")
	if strings.Contains(env, "secret-upstream") {
		t.Error("Environ keeps the variable named by AlsoSecret")
	}
	if !strings.Contains(env, "PROC_TEST_OTHER=kept") {
		t.Error("Environ drops a variable nobody named")
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
