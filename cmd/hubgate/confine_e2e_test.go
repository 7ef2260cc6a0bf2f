package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/configs"
)

// starterBridge is the bridge section of the starter configuration
// (`hubgate config init`), without its indentation, with extra rules
// first: the default rules as a new user has them.
func starterBridge(t *testing.T, extraRules string) string {
	t.Helper()
	_, section, ok := strings.Cut(string(configs.StarterYAML()), "\nbridge:\n")
	if !ok {
		t.Fatal("the starter configuration has no bridge section")
	}
	var b strings.Builder
	for _, line := range strings.Split(section, "\n") {
		b.WriteString(strings.TrimPrefix(line, "  ") + "\n")
		if line == "  rules:" {
			b.WriteString(extraRules)
		}
	}
	return b.String()
}

// Issue 25: through the default rules, a hub command carrying #!write to
// a path outside the workspace, or through a symlink inside the workspace
// pointing out, writes nothing there, and the run says why (the step and
// the answer the person gets). A run step running env shows neither the
// session bus address nor a secret of the daemon's environment.
func TestHubCommandsAreConfinedToTheWorkspace(t *testing.T) {
	h := startHub(t)
	shell := `  - name: shell
    match: {command_glob: "shell *"}
    run: {prompt: "{{.Command}}", allow_destructive_tools: true}
`
	s := newDaemonSetup(t, h, daemonConfig{Bridge: starterBridge(t, shell)})
	outside := t.TempDir()
	if err := os.MkdirAll(s.workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.workspace, "notes")); err != nil {
		t.Fatal(err)
	}
	s.env = append(s.env, "HUBGATE_CONFINE_MARK=visible")
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		s.env = append(s.env, "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/confine-test-bus")
	}
	// The binary: a run's command gets the environment of the daemon's
	// process (internal/proc's run environment reads the process's, not
	// the command's getenv), which is what this test shows.
	s.ownProcess = true
	startListening(t, s)
	lines, _ := startWatch(t, s, "--history", "1000")

	for _, c := range []struct{ command, planted string }{
		{"save my notes\n#!write " + filepath.Join(outside, "planted.txt") + " overwritten", filepath.Join(outside, "planted.txt")},
		{"save my notes again\n#!write notes/linked.txt overwritten", filepath.Join(outside, "linked.txt")},
	} {
		h.push(c.command, nil)
		e := waitSettled(t, s, c.command)
		if e.Decision != journal.DecisionStarted || e.Rule != "" && e.Rule != rules.UnmatchedRuleName || e.Status != automate.StatusCompleted ||
			!strings.Contains(e.Answer, "(step 1 refused: ") || !strings.Contains(e.Answer, "outside the folder this run is confined to") {
			t.Errorf("%q: %s", c.command, e2eDump([]journal.Entry{e}))
		}
		step := nextLine(t, lines, "the refused step", func(ev bridge.Event) bool {
			return ev.Kind == bridge.EventStep && ev.Step.Status == automate.StepFailed && ev.Step.ToolName == "write_file"
		})
		if !strings.Contains(step.event.Step.ResultSummary, "outside the folder this run is confined to") {
			t.Errorf("%q: step %+v", c.command, step.event.Step)
		}
		if _, err := os.Lstat(c.planted); !os.IsNotExist(err) {
			t.Errorf("%q wrote %s: %v", c.command, c.planted, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the folder outside holds %v", entries)
	}

	const envCommand = `shell what is set
#!run env | grep -E '^(DBUS|XDG_RUNTIME|HUBGATE_)' | cut -c1-60; echo end-of-env`
	h.push(envCommand, nil)
	e := waitSettled(t, s, envCommand)
	step := nextLine(t, lines, "the env step", func(ev bridge.Event) bool {
		return ev.Kind == bridge.EventStep && ev.Step.ToolName == "run_command" && ev.Step.Status != automate.StepPending && ev.Step.Status != automate.StepRunning
	})
	out := step.event.Step.ResultSummary
	if e.Status != automate.StatusCompleted || step.event.Step.Status != automate.StepSuccess ||
		!strings.Contains(out, "HUBGATE_CONFINE_MARK=visible") || !strings.Contains(out, "end-of-env") {
		t.Fatalf("the env step: %+v\n%s", step.event.Step, e2eDump([]journal.Entry{e}))
	}
	for _, hidden := range []string{"DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", configs.EnvAutomateKey, EnvDeviceToken, s.key, h.device.Token.Token} {
		if strings.Contains(out, hidden) {
			t.Errorf("the env step shows %q: %s", hidden, out)
		}
	}
}
