package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A command whose environment has no user config directory (no
// XDG_CONFIG_HOME, no HOME) says so and fails; it never falls back to the
// directory of the process it runs in (in-process, the test runner's:
// unpair would remove that user's pairing).
func TestNoUserDirInTheEnvironmentNeverMeansTheProcesses(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	dir := filepath.Join(home, ".config", "hubgate")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state.json")
	if err := os.WriteFile(state, []byte(`{"version":1,"deviceId":"d","apiUrl":"http://127.0.0.1:1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	for _, args := range [][]string{{"unpair"}, {"automate", "key"}, {"secrets", "migrate"}, {"config", "path"}} {
		var out, errb strings.Builder
		code := Run(context.Background(), Process{Args: args, Stdio: Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, Getenv: noEnv,
			Signals: func(chan<- os.Signal, ...os.Signal) func() { return func() {} }})
		if code == 0 || !strings.Contains(errb.String(), "neither $XDG_CONFIG_HOME nor $HOME are defined") {
			t.Errorf("hubgate %s with no user directory: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out.String(), errb.String())
		}
		if strings.Contains(out.String()+errb.String(), home) {
			t.Errorf("hubgate %s names the process's home %s:\n%s%s", strings.Join(args, " "), home, out.String(), errb.String())
		}
	}
	if _, err := os.Stat(state); err != nil {
		t.Errorf("the process's pairing state: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "secrets.json")); !os.IsNotExist(err) {
		t.Errorf("a secrets file in the process's config directory: %v", err)
	}
}
