package toolkit

import (
	"context"
	"strings"
	"testing"
)

func TestChildEnvironDropsHubgateSecrets(t *testing.T) {
	t.Setenv("HUBGATE_AUTOMATE_KEY", "secret-automate-key-0123456789")
	t.Setenv("HUBGATE_CLIENT_SECRET", "secret-client")
	t.Setenv("HUBGATE_DEVICE_TOKEN", "secret-device")
	t.Setenv("HUBGATE_LOG_LEVEL", "debug")
	t.Setenv("OTHER_TOKEN", "not-ours")
	env := strings.Join(ChildEnviron(), "\n")
	for _, s := range []string{"secret-automate-key", "secret-client", "secret-device"} {
		if strings.Contains(env, s) {
			t.Errorf("ChildEnviron keeps %q", s)
		}
	}
	for _, s := range []string{"HUBGATE_LOG_LEVEL=debug", "OTHER_TOKEN=not-ours", "PATH="} {
		if !strings.Contains(env, s) {
			t.Errorf("ChildEnviron drops %q", s)
		}
	}
	// And a real command does not see the key.
	tb := New(Config{Workspace: t.TempDir()})
	out, err := tb.RunCommand(context.Background(), "env")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.Content, "secret-automate-key") || !strings.Contains(out.Content, "HUBGATE_LOG_LEVEL=debug") {
		t.Errorf("run_command environment: %q", out.Content)
	}
}
