package main

// Acceptance tests of issue 24's first item with the real binaries: the
// macro catalogue comes from every device record the service sends, the
// answer to VerifySelf first, so that a command naming its macro by name
// or phrase (a voice command, no macro attached) runs after every start.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
)

// The mock device's profile is only in the answer to VerifySelf: it is
// set while no daemon is connected, and no DeviceProfileUpdate is ever
// pushed. `hubgate mock send --command` without --macro sends the
// command with a null macro, as the real service may; the daemon finds
// the macro by its name and by its phrase and runs its rule, as `hubgate
// rules test --profile` says it would. A profile changed while the
// daemon is stopped is the one used after its next start.
func TestACommandNamedByItsMacroRunsWithTheProfileFromVerifySelf(t *testing.T) {
	h := startHub(t)
	garden := `{"id":"p-garden","name":"Garden","configuration":{"macros":[{"id":"7","name":"Water Plants","commands":["water the plants"],"events":[]}]}}`
	pets := `{"id":"p-pets","name":"Pets","configuration":{"macros":[{"id":"9","name":"Feed The Cat","commands":["feed the cat"],"events":[]}]}}`
	dir := t.TempDir()
	setProfile := func(profile string) string {
		t.Helper()
		path := filepath.Join(dir, "profile.json")
		if err := os.WriteFile(path, []byte(profile), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCmd(t, e2eEnv(t.TempDir()), "", "mock", "profile", "--url", h.url, "--device", h.id(), "--file", path)
		if r.code != 0 || !strings.Contains(r.stdout, "delivered to 0 connection") {
			t.Fatalf("mock profile while no daemon is connected: %+v", r)
		}
		return path
	}
	profilePath := setProfile(garden)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: `rules:
  - name: water
    match: {macro_name: Water Plants}
    run: {prompt: "water {{.Macro.ID}}"}
  - name: feed
    match: {macro_name: Feed The Cat}
    run: {prompt: "feed {{.Macro.ID}}"}
`})
	send := func(args ...string) {
		t.Helper()
		r := runCmd(t, e2eEnv(t.TempDir()), "", append([]string{"mock", "send", "--url", h.url, "--device", h.id()}, args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, "delivered to 1 connection") {
			t.Fatalf("mock send %v: %+v", args, r)
		}
	}

	// What `rules test --profile` says the daemon would do.
	for _, command := range []string{"Water Plants", "water the plants"} {
		r := runCmd(t, s.environ(), "", "--config", s.configPath, "rules", "test", "--profile", profilePath, "--json", command)
		var ex rules.Explanation
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ex) != nil || ex.Action != "run" || ex.Rule != "water" || ex.Macro == nil || ex.Macro.ID != "7" {
			t.Fatalf("rules test %q: %+v", command, r)
		}
	}

	d := startListening(t, s)
	if ev := d.waitEvent("the catalogue from VerifySelf", func(e bridge.Event) bool { return e.Kind == bridge.EventCatalogue }); ev.From != "VerifySelf" ||
		ev.Profile != "Garden" || ev.Macros != 1 {
		t.Errorf("catalogue event %+v, want Garden's one macro from VerifySelf", ev)
	}
	// The macro's name, as the app sends it, then the phrase, as a voice
	// command: one after the other's end (the rule is busy: single, so a
	// command sent while the first runs would be dropped).
	for _, command := range []string{"Water Plants", "water the plants"} {
		send("--command", command)
		if e := waitSettled(t, s, command); e.Rule != "water" || e.MacroID != "7" || e.Status != automate.StatusCompleted || e.Answer != "Done: water 7" {
			t.Errorf("%q: %s", command, e2eDump([]journal.Entry{e}))
		}
	}
	// --macro-name attaches the profile's macro.
	send("--macro-name", "water plants", "--command", "hey plants")
	if e := waitSettled(t, s, "hey plants"); e.Rule != "water" || e.MacroID != "7" || e.Status != automate.StatusCompleted {
		t.Errorf("--macro-name: %s", e2eDump([]journal.Entry{e}))
	}
	// The mock sent the commands with a null macro and never pushed the
	// profile.
	nulls := 0
	for _, ev := range h.events(0) {
		if ev.Action == "DeviceCommand" && strings.HasSuffix(string(ev.Payload), ",null]") {
			nulls++
		}
	}
	if nulls != 2 || h.countActions(0, "DeviceProfileUpdate") != 0 {
		t.Errorf("%d commands with a null macro (want 2), %d DeviceProfileUpdate pushed (want 0)", nulls, h.countActions(0, "DeviceProfileUpdate"))
	}
	if n := len(d.bridgeLogs("macro catalogue replaced")); n != 1 {
		t.Errorf("%d catalogue changes logged, want 1 (VerifySelf's; GetLatestDevice's is the same)\n%s", n, d.Stderr())
	}

	// The person changes the profile while the daemon is stopped.
	if code := d.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("the daemon stopped with %d:\n%s", code, d.Stderr())
	}
	setProfile(pets)
	d = startListening(t, s)
	if ev := d.waitEvent("the new catalogue", func(e bridge.Event) bool { return e.Kind == bridge.EventCatalogue }); ev.Profile != "Pets" {
		t.Errorf("catalogue event %+v after the restart, want Pets", ev)
	}
	send("--command", "Feed the cat")
	if e := waitSettled(t, s, "Feed the cat"); e.Rule != "feed" || e.MacroID != "9" || e.Status != automate.StatusCompleted {
		t.Errorf("after the restart: %s", e2eDump([]journal.Entry{e}))
	}
}
