package bridge_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/rules"
)

// A command tool is a child of a run: it starts without the session bus
// and without hubgate's secrets (proc.RunEnviron), unless
// automate.child_env.allow (ToolsOptions.ChildEnvAllow) passes a name.
func TestCommandToolEnvironment(t *testing.T) {
	envPath, err := exec.LookPath("env")
	if err != nil {
		t.Skip("no env program")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/bridge-test-bus")
	t.Setenv("HUBGATE_AUTOMATE_KEY", "automate-key-bridge-test")
	t.Setenv("HUBGATE_LOG_LEVEL", "debug")
	set, err := rules.Compile(nil, []rules.CommandToolSpec{{Name: "show_env", Enabled: true, Description: "Print the environment", Argv: []string{envPath}}}, rules.UnmatchedSpec{})
	if err != nil {
		t.Fatal(err)
	}
	call := []automate.ToolCall{{ID: "c1", Name: "show_env", Arguments: json.RawMessage(`{}`)}}
	text := func(opts bridge.ToolsOptions) string {
		t.Helper()
		opts.Rules = set
		res := bridge.NewTools(opts).Execute(context.Background(), call)
		if len(res) != 1 || res[0].Error != "" {
			t.Fatalf("results %+v", res)
		}
		b, _ := json.Marshal(res[0])
		return string(b)
	}
	out := text(bridge.ToolsOptions{})
	if strings.Contains(out, "DBUS_SESSION_BUS_ADDRESS") || strings.Contains(out, "automate-key-bridge-test") || !strings.Contains(out, "HUBGATE_LOG_LEVEL=debug") {
		t.Errorf("command tool environment: %s", out)
	}
	out = text(bridge.ToolsOptions{ChildEnvAllow: []string{"DBUS_SESSION_BUS_ADDRESS"}})
	if !strings.Contains(out, "DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/bridge-test-bus") || strings.Contains(out, "automate-key-bridge-test") {
		t.Errorf("command tool environment with the bus allowed: %s", out)
	}
}
