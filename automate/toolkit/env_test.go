package toolkit

import (
	"context"
	"strings"
	"testing"
)

// TestRunCommandGetsNoHubgateSecrets: run_command's default environment is
// proc.RunEnviron (tested in internal/proc): a real command sees neither
// the key nor the session bus, and keeps the other variables.
func TestRunCommandGetsNoHubgateSecrets(t *testing.T) {
	t.Setenv("HUBGATE_AUTOMATE_KEY", "secret-automate-key-0123456789")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/toolkit-test-bus")
	t.Setenv("HUBGATE_LOG_LEVEL", "debug")
	tb := New(Config{Workspace: t.TempDir()})
	out, err := tb.RunCommand(context.Background(), "env")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.Content, "secret-automate-key") || strings.Contains(out.Content, "DBUS_SESSION_BUS_ADDRESS") ||
		!strings.Contains(out.Content, "HUBGATE_LOG_LEVEL=debug") {
		t.Errorf("run_command environment: %q", out.Content)
	}
}
