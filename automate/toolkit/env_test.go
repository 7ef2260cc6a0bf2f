package toolkit

import (
	"context"
	"strings"
	"testing"
)

// TestRunCommandGetsNoHubgateSecrets: run_command's default environment is
// proc.Environ (tested in internal/proc): a real command does not see the
// key but keeps the other variables.
func TestRunCommandGetsNoHubgateSecrets(t *testing.T) {
	t.Setenv("HUBGATE_AUTOMATE_KEY", "secret-automate-key-0123456789")
	t.Setenv("HUBGATE_LOG_LEVEL", "debug")
	tb := New(Config{Workspace: t.TempDir()})
	out, err := tb.RunCommand(context.Background(), "env")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.Content, "secret-automate-key") || !strings.Contains(out.Content, "HUBGATE_LOG_LEVEL=debug") {
		t.Errorf("run_command environment: %q", out.Content)
	}
}
