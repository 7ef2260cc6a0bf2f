package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/controlcli"
)

// `status --json` prints one JSON object whatever goes wrong, also a
// usage error (the same shape as the daemon-down object).
func TestStatusJSONOnUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"status", "--json", "extra"},
		{"status", "--json", "--bogus"},
		{"status", "--bogus", "--json"},
		{"status", "--json=true", "--jsn"},
	} {
		r := runCmd(t, env(t), "", args...)
		var body controlcli.StatusErrorBody
		if err := json.Unmarshal([]byte(r.stdout), &body); err != nil {
			t.Errorf("%v: stdout is not one JSON object (%v): %q", args, err, r.stdout)
			continue
		}
		if r.code != ExitUsage || body.ExitCode != ExitUsage || body.Running || body.Error == "" {
			t.Errorf("%v: exit %d, body %+v", args, r.code, body)
		}
	}
	// Without --json, no JSON.
	if r := runCmd(t, env(t), "", "status", "--bogus"); r.code != ExitUsage || r.stdout != "" {
		t.Errorf("status --bogus: exit %d stdout %q", r.code, r.stdout)
	}
}

// An unknown flag names the command's closest flag; the hints read as
// one sentence.
func TestUnknownFlagSuggestsTheClosestFlag(t *testing.T) {
	for args, want := range map[string]string{
		"status --jsn":      "unknown flag: --jsn (did you mean --json?); see 'hubgate status --help'",
		"pair --replce":     "(did you mean --replace?)",
		"run --confg x":     "(did you mean --config?)", // an inherited flag
		"history --limt 3":  "(did you mean --limit?)",
		"stauts":            `unknown command "stauts" for "hubgate" (did you mean "status"?); see 'hubgate --help'`,
		"status --zzzzzzzz": "unknown flag: --zzzzzzzz; see 'hubgate status --help'",
	} {
		r := runCmd(t, env(t), "", strings.Fields(args)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", args, r.code, r.stderr, want)
		}
	}
}

func TestClosestFlag(t *testing.T) {
	for _, tc := range []struct{ typed, want string }{
		{"jsn", "json"}, {"JSON", "json"}, {"nobrowser", "no-browser"}, {"reus", "reuse"},
		{"time", "timeout"}, {"xyzzy", ""}, {"", ""},
	} {
		root := newRootCommand(&app{})
		pair, _, err := root.Find([]string{"pair"})
		if err != nil {
			t.Fatal(err)
		}
		if got := cliout.ClosestFlag(pair, tc.typed); got != tc.want {
			t.Errorf("closestFlag(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
}

// The documented codes: an unreadable config or macro is 3; config init
// over an existing file is a usage error (2) that names --force.
func TestConfigAndInputErrorCodes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	if r := runCmd(t, env(t), "", "config", "check", "--config", missing); r.code != ExitConfig || !strings.Contains(r.stderr, "missing.yaml") {
		t.Errorf("config check --config missing: exit %d %q", r.code, r.stderr)
	}
	if r := runCmd(t, env(t), "", "rules", "test", "--macro", missing, "x"); r.code != ExitConfig || !strings.Contains(r.stderr, "--macro") {
		t.Errorf("rules test --macro missing: exit %d %q", r.code, r.stderr)
	}
	e := env(t)
	if r := runCmd(t, e, "", "config", "init"); r.code != 0 {
		t.Fatalf("config init: exit %d %q", r.code, r.stderr)
	}
	r := runCmd(t, e, "", "config", "init")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "config init --force") || !strings.Contains(r.stderr, "nothing was written") {
		t.Errorf("config init over a file: exit %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(envValue(e, "XDG_CONFIG_HOME"), "hubgate", "config.yaml.bak")); err == nil {
		t.Error("a .bak was written without --force")
	}
}
