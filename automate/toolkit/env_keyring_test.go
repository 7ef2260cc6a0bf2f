//go:build linux

package toolkit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/proc"
)

// TestRunCommandCannotReadTheKeyring, against the real Secret Service of
// .ci/with-keyring: a secret stored as hubgate stores its own is read back
// by secret-tool in hubgate's environment, but not by run_command's
// default one, even where the session bus also listens at
// $XDG_RUNTIME_DIR/bus (a systemd user session, rebuilt here): D-Bus
// clients find it there once the address is unset, which is why
// XDG_RUNTIME_DIR is withheld too. automate.child_env.allow passes them.
func TestRunCommandCannotReadTheKeyring(t *testing.T) {
	if os.Getenv("HUBGATE_TEST_KEYRING") != "1" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI is set but HUBGATE_TEST_KEYRING is not: run the tests as `.ci/with-keyring go test ...`")
		}
		t.Skip("no Secret Service harness: run `.ci/with-keyring go test ./automate/toolkit/...` to include this test")
	}
	secretTool, err := exec.LookPath("secret-tool")
	if err != nil {
		t.Fatalf("secret-tool is not installed (apt-get install -y --no-install-recommends libsecret-tools): %v", err)
	}
	addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	socket, ok := strings.CutPrefix(addr, "unix:path=")
	if !ok {
		t.Skipf("the session bus %q is not a socket path", addr)
	}
	socket, _, _ = strings.Cut(socket, ",")
	runtime := t.TempDir()
	if err := os.Symlink(socket, filepath.Join(runtime, "bus")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	t.Setenv("DISPLAY", "")
	os.Unsetenv("DISPLAY") // no X11 autolaunch of another bus

	value := "device-token-" + time.Now().Format("150405.000000000")
	attrs := []string{"service", "hubgate-confine-test", "username", "device-token"}
	store := exec.Command(secretTool, append([]string{"store", "--label=hubgate confine test"}, attrs...)...)
	store.Stdin = strings.NewReader(value)
	if out, err := store.CombinedOutput(); err != nil {
		t.Fatalf("secret-tool store: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command(secretTool, append([]string{"clear"}, attrs...)...).Run() })
	lookup := secretTool + " lookup " + strings.Join(attrs, " ")

	run := func(env []string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, _ := New(Config{Workspace: t.TempDir(), Env: env}).RunCommand(ctx, lookup)
		return out.Content
	}
	if got := run(os.Environ()); !strings.Contains(got, value) {
		t.Fatalf("in hubgate's own environment secret-tool does not read the secret: %q", got)
	}
	if got := run(nil); strings.Contains(got, value) {
		t.Errorf("run_command's default environment reads the keyring: %q", got)
	}
	// Without the address alone, the bus is found at $XDG_RUNTIME_DIR/bus.
	if got := run(proc.RunEnviron([]string{"XDG_RUNTIME_DIR"})); !strings.Contains(got, value) {
		t.Errorf("with XDG_RUNTIME_DIR passed, secret-tool should find the bus at $XDG_RUNTIME_DIR/bus: %q", got)
	}
	if got := run(proc.RunEnviron([]string{"DBUS_SESSION_BUS_ADDRESS"})); !strings.Contains(got, value) {
		t.Errorf("automate.child_env.allow [DBUS_SESSION_BUS_ADDRESS] does not pass the bus: %q", got)
	}
}
