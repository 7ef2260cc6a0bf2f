package rulescli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/mockcli"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi"
)

// load loads a config file of yaml, with no environment.
func load(t *testing.T, yaml string) *configs.Config {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load(configs.LoadOptions{Path: path, Env: func(string) string { return "" },
		UserConfigDir: func() (string, error) { return dir, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const lightsRule = `bridge:
  rules:
    - name: lights
      match: {command_regex: '(?i)lights (?P<state>on|off)'}
      run: {prompt: "lights {{.Named.state}}"}
`

// Check says how many rules route what, and warns when nothing can run.
func TestCheckSaysWhatTheConfigurationRoutes(t *testing.T) {
	var out, errOut strings.Builder
	cfg := load(t, lightsRule)
	if err := Check(CheckOptions{Config: cfg, Out: &out, Err: &errOut}); err != nil {
		t.Fatal(err)
	}
	if want := cfg.File() + ": valid\n1 rules, 0 command tools; unmatched commands are ignored\n"; out.String() != want || errOut.Len() != 0 {
		t.Errorf("out %q err %q, want %q", out.String(), errOut.String(), want)
	}
}

// Test routes a command with its macro's events as the daemon would; an
// event that is not a MacroEvent is a usage error, a macro file that
// cannot be read a configuration error naming its flag.
func TestTestRoutesOneCommand(t *testing.T) {
	cfg := load(t, lightsRule)
	var out strings.Builder
	asked := false
	err := Test(TestOptions{Config: cfg, Command: "lights on", Events: []string{`{"eventType":"Type","typedPhrase":"x"}`}, JSON: true,
		DeviceType: func() string { asked = true; return "" }, Out: &out, Now: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	var res rules.Explanation
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil || res.Rule != "lights" || res.ConfigSrc != cfg.File() || !asked {
		t.Errorf("explanation %s (%v), device type asked: %v", out.String(), err, asked)
	}
	var u *mockcli.UsageError
	if err := Test(TestOptions{Config: cfg, Command: "x", Events: []string{`"text"`}, Out: &out}); !errors.As(err, &u) {
		t.Errorf("a bad event: %v", err)
	}
	var v *configs.ValidationError
	if err := Test(TestOptions{Config: cfg, Command: "x", MacroFile: filepath.Join(t.TempDir(), "none.json"), Out: &out}); !errors.As(err, &v) || !strings.Contains(err.Error(), "--macro: cannot read a macro") {
		t.Errorf("a missing macro file: %v", err)
	}
}

// Test says whether the run is confined to the workspace: by default it
// is (restrictToWorkspace true in the request); a rule that opts out is
// shown as not confined, in the text and the JSON.
func TestTestShowsTheWorkspaceConfinement(t *testing.T) {
	cfg := load(t, `bridge:
  rules:
    - name: free
      match: {command: free}
      run: {prompt: "anything", restrict_to_workspace: false}
  unmatched: {action: run}
`)
	run := func(command string, asJSON bool) string {
		var out strings.Builder
		if err := Test(TestOptions{Config: cfg, Command: command, JSON: asJSON, Out: &out}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if out := run("write a file", false); !strings.Contains(out, "files    confined to the Automate server's workspace") || !strings.Contains(out, `"restrictToWorkspace": true`) {
		t.Errorf("unmatched command:\n%s", out)
	}
	if out := run("free", false); !strings.Contains(out, "files    NOT confined: the rule sets restrict_to_workspace: false") || strings.Contains(out, "restrictToWorkspace") {
		t.Errorf("opted-out rule:\n%s", out)
	}
	for cmd, want := range map[string]bool{"write a file": true, "free": false} {
		var res rules.Explanation
		if err := json.Unmarshal([]byte(run(cmd, true)), &res); err != nil || res.Confined == nil || *res.Confined != want {
			t.Errorf("%q: confined %v (%v), want %v", cmd, res.Confined, err, want)
		}
	}
}

// `rules test --profile --json` prints exactly rules.Set.Explain's result
// for the configuration, the profile's catalogue and the command: the one
// decision the bridge makes too (bridge's
// TestRulesTestAndTheBridgeDecideAlike compares the bridge with
// Set.Explain).
func TestTestPrintsTheRulesExplanation(t *testing.T) {
	cfg := load(t, `bridge:
  rules:
    - name: water
      match: {macro_name: Water Plants}
      run: {prompt: "water"}
`)
	profile := `{"id":"p","name":"Both","configuration":{"macros":[` +
		`{"id":"7","name":"Water Plants","commands":["water the plants"],"events":[]},` +
		`{"id":"3","name":"Stop","commands":["stop"],"events":[{"eventType":"StopOutputs"}]}]}}`
	profilePath := filepath.Join(t.TempDir(), "profile.json")
	if err := os.WriteFile(profilePath, []byte(profile), 0o600); err != nil {
		t.Fatal(err)
	}
	var prof deviceapi.Profile
	if err := json.Unmarshal([]byte(profile), &prof); err != nil {
		t.Fatal(err)
	}
	set, err := Compile(cfg.Bridge)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1700000000, 0)
	for _, c := range []string{"Water Plants", "  WATER THE PLANTS ", "unknown", "Stop"} {
		var out strings.Builder
		if err := Test(TestOptions{Config: cfg, Command: c, ProfileFile: profilePath, JSON: true, Out: &out, Now: func() time.Time { return at }}); err != nil {
			t.Fatal(err)
		}
		var printed rules.Explanation
		if err := json.Unmarshal([]byte(out.String()), &printed); err != nil {
			t.Fatalf("%s: %v", out.String(), err)
		}
		want := set.WithCatalog(prof.Configuration.Macros).WithDeviceType("").Explain(
			rules.Command{Text: c, Received: at}, rules.Defaults{Notify: cfg.Bridge.Notify, Ask: cfg.Bridge.Ask})
		want.ConfigSrc = cfg.File()
		wantJSON, _ := json.Marshal(want)
		gotJSON, _ := json.Marshal(printed)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("%q: rules test printed\n%s\nSet.Explain says\n%s", c, gotJSON, wantJSON)
		}
		if c == "Water Plants" && printed.Rule != "water" || c == "Stop" && printed.Action != "cancel" || c == "unknown" && printed.Action != "ignore" {
			t.Errorf("%q: %s", c, gotJSON)
		}
	}
}
