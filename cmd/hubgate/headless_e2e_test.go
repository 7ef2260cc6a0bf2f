package main

// Acceptance tests of the headless route (issue 24, item 3) with the real
// binary on a machine with no D-Bus at all: DBUS_SESSION_BUS_ADDRESS is
// removed from the child's environment and XDG_RUNTIME_DIR points at an
// empty folder. godbus looks at /run/user/<uid>/bus whatever
// XDG_RUNTIME_DIR says, so the tests skip where that socket exists.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
)

// requireNoUserBus skips where godbus would find a session bus anyway.
func requireNoUserBus(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(fmt.Sprintf("/run/user/%d/bus", os.Getuid())); err == nil {
		t.Skip("this machine has a user session bus at /run/user/<uid>/bus; the no-D-Bus case cannot be arranged")
	}
}

// noDBus is environ without any D-Bus session: no DBUS_SESSION_BUS_ADDRESS,
// XDG_RUNTIME_DIR an empty folder.
func noDBus(t *testing.T, environ []string) []string {
	t.Helper()
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") && !strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") {
			out = append(out, kv)
		}
	}
	return append(out, "XDG_RUNTIME_DIR="+t.TempDir())
}

// readSecretsFile reads the file store's secrets as the test (the command
// wrote them); it checks the mode first.
func readSecretsFile(t *testing.T, xdg string) map[string]string {
	t.Helper()
	path := filepath.Join(xdg, "hubgate", configs.SecretsFileName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the secrets file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("the secrets file has mode %04o, want 0600", fi.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Secrets map[string]string `json:"secrets"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("the secrets file is not JSON: %v", err)
	}
	return f.Secrets
}

// startRunWith starts `hubgate run` with s's config file and environ
// (not s.environ: no secrets in the environment unless the test adds them).
func startRunWith(t *testing.T, s *daemonSetup, environ []string) *daemonProc {
	t.Helper()
	since := s.hub.lastSeq()
	// No D-Bus in environ: startCommand runs the binary (needsOwnProcess).
	p := startCommand(t, environ, "", nil, "--config", s.configPath, "run")
	return &daemonProc{bgProc: p, tb: t, s: s, since: since}
}

// answersOneCommand pushes a command and waits for its run's answer.
func answersOneCommand(t *testing.T, s *daemonSetup) {
	t.Helper()
	s.hub.push("hello 1", nil)
	es := waitJournalState(t, s, "the command's run completed", func(es []journal.Entry) bool {
		return len(es) == 1 && es[0].Settled()
	})
	if es[0].Status != automate.StatusCompleted || es[0].Answer != "done hello 1" {
		t.Fatalf("the command: %s", e2eDump(es))
	}
}

const helloRules = "rules:\n"

// The "Done means": no D-Bus at all; pair, then run answers a
// command; the secrets are in a 0600 file and nowhere in the output.
func TestHeadlessPairThenRunWithoutDBus(t *testing.T) {
	requireNoUserBus(t)
	requireCurl(t)
	mp := startMockProc(t, env(t), "--listen", "127.0.0.1:0")
	e := noDBus(t, pairEnviron(t, mp.url))
	xdg := envValue(e, "XDG_CONFIG_HOME")

	r := runCmd(t, e, "", "pair", "--json", "--name", "headless")
	if r.code != 0 {
		t.Fatalf("pair: exit %d\n%s", r.code, r.stderr)
	}
	secretsPath := filepath.Join(xdg, "hubgate", configs.SecretsFileName)
	for _, want := range []string{"no Secret Service could be reached", "DBUS_SESSION_BUS_ADDRESS is unset", "PLAIN TEXT", secretsPath, "hubgate secrets migrate"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("pair's warning lacks %q:\n%s", want, r.stderr)
		}
	}
	var res pairing.Summary
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("pair --json: %v\n%s", err, r.stdout)
	}
	secrets := readSecretsFile(t, xdg)
	tok := secrets[configs.AccountDeviceToken]
	if tok == "" || secrets[configs.AccountOAuthRefreshToken] == "" {
		t.Fatalf("the secrets file holds %d secrets, not the device and refresh tokens", len(secrets))
	}
	if !deviceTokenWorks(t, mp.url, tok) {
		t.Fatal("the stored device token is refused by the mock hub")
	}

	h := &e2eHub{tb: t, proc: mp, url: mp.url, client: &http.Client{Timeout: 30 * time.Second}}
	h.device.Device.ID = res.DeviceID
	s := newDaemonSetup(t, h, daemonConfig{Bridge: helloRules + busyRule("hello", "single", "", 1)})
	s.xdg = xdg // pair's state and secrets; no secret in the environment
	d := startRunWith(t, s, noDBus(t, e2eEnv(xdg)))
	d.waitListening()
	answersOneCommand(t, s)
	if code := d.stop(15); code != 0 {
		t.Errorf("run exited %d", code)
	}
	if !strings.Contains(d.Stderr(), "PLAIN TEXT") { // whole: run exited
		t.Errorf("run did not warn that the secrets are in plain text:\n%s", d.Stderr())
	}
	// The Automate access key joined the file; the mode is still 0600.
	secrets = readSecretsFile(t, xdg)
	if secrets[configs.AccountAutomateAccessKey] == "" {
		t.Error("the daemon's Automate key is not in the secrets file")
	}
	for name, out := range map[string]string{"pair stdout": r.stdout, "pair stderr": r.stderr, "run stderr": d.Stderr()} {
		for acct, v := range secrets {
			if strings.Contains(out, v) {
				t.Errorf("%s contains the secret %s", name, acct)
			}
		}
	}
}

// The environment route: HUBGATE_DEVICE_ID and HUBGATE_DEVICE_TOKEN, no
// state file, no D-Bus: run answers a command, and writes no pairing.
func TestHeadlessRunWithOnlyDeviceIDAndToken(t *testing.T) {
	requireNoUserBus(t)
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: helloRules + busyRule("hello", "single", "", 1)})
	state := filepath.Join(s.xdg, "hubgate", "state.json")
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	environ := noDBus(t, e2eEnv(s.xdg, "HUBGATE_API_URL="+h.url,
		EnvDeviceID+"="+h.id(), EnvDeviceToken+"="+h.device.Token.Token))
	d := startRunWith(t, s, environ)
	d.waitListening()
	answersOneCommand(t, s)
	if code := d.stop(15); code != 0 {
		t.Errorf("run exited %d", code)
	}
	if _, err := os.Stat(state); err == nil {
		t.Error("run wrote a state file")
	}
	if strings.Contains(d.Stderr(), h.device.Token.Token) {
		t.Error("the device token is in the daemon's log")
	}
	// Only the Automate key went to the file: the device token stays the
	// environment's.
	if secrets := readSecretsFile(t, s.xdg); len(secrets) != 1 || secrets[configs.AccountAutomateAccessKey] == "" {
		t.Errorf("the secrets file holds %d secrets, want the Automate key only", len(secrets))
	}

	// Half of the pair is a clear configuration error.
	r := runCmd(t, noDBus(t, e2eEnv(s.xdg, "HUBGATE_API_URL="+h.url, EnvDeviceID+"="+h.id())), "", "--config", s.configPath, "run")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "HUBGATE_DEVICE_ID is set without HUBGATE_DEVICE_TOKEN") {
		t.Errorf("id without token: exit %d %s", r.code, r.stderr)
	}
	r = runCmd(t, noDBus(t, e2eEnv(s.xdg, EnvDeviceToken+"="+h.device.Token.Token)), "", "--config", s.configPath, "run")
	if r.code != ExitNotPaired || !strings.Contains(r.stderr, "set HUBGATE_DEVICE_ID beside HUBGATE_DEVICE_TOKEN") {
		t.Errorf("token without id: exit %d %s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, h.device.Token.Token) {
		t.Error("the device token is in an error")
	}
}

// A pairing made without D-Bus moves into a real Secret Service with
// `hubgate secrets migrate`: every secret arrives, the file goes, and the
// next run (auto) reads the keyring.
func TestSecretsMigrateIntoTheKeyring(t *testing.T) {
	requireKeyring(t)
	requireNoUserBus(t)
	requireCurl(t)
	clearAll := func() {
		clearPairSecrets(t)
		exec.Command("secret-tool", "clear", "service", "hubgate", "username", configs.AccountAutomateAccessKey).Run()
	}
	clearAll()
	t.Cleanup(clearAll)
	mp := startMockProc(t, env(t), "--listen", "127.0.0.1:0")
	withBus := pairEnviron(t, mp.url)
	xdg := envValue(withBus, "XDG_CONFIG_HOME")
	if r := runCmd(t, noDBus(t, withBus), "", "pair", "--name", "headless"); r.code != 0 {
		t.Fatalf("pair without D-Bus: exit %d\n%s", r.code, r.stderr)
	}
	before := readSecretsFile(t, xdg)

	// With the keyring back, auto writes there and says what the file
	// still holds.
	r := runCmd(t, withBus, "", "automate", "key")
	if r.code != 0 || !strings.Contains(r.stderr, "some secrets are still in the plain-text file") || !strings.Contains(r.stderr, "hubgate secrets migrate") {
		t.Fatalf("automate key with a file left: exit %d %s", r.code, r.stderr)
	}
	if key := strings.TrimSpace(r.stdout); key == "" || lookupSecret(t, configs.AccountAutomateAccessKey) != key {
		t.Fatal("the new Automate key is not in the Secret Service")
	}
	if _, ok := readSecretsFile(t, xdg)[configs.AccountAutomateAccessKey]; ok {
		t.Fatal("the Automate key went to the plain-text file though a keyring answers")
	}

	// 'secrets: file' in the configuration: migrate refuses (the next run
	// would read the emptied file).
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgPath, []byte("secrets: file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCmd(t, withBus, "", "--config", cfgPath, "secrets", "migrate"); r.code != ExitConfig || !strings.Contains(r.stderr, "set it to auto or keyring first") {
		t.Fatalf("migrate under secrets: file: exit %d %s", r.code, r.stderr)
	}

	r = runCmd(t, withBus, "", "secrets", "migrate")
	if r.code != 0 || !strings.Contains(r.stderr, fmt.Sprintf("moved %d secrets", len(before))) {
		t.Fatalf("migrate: exit %d\n%s", r.code, r.stderr)
	}
	for acct, v := range before {
		if got := lookupSecret(t, acct); got != v {
			t.Errorf("%s did not arrive in the Secret Service", acct)
		}
		if strings.Contains(r.stderr+r.stdout, v) {
			t.Errorf("migrate printed the secret %s", acct)
		}
	}
	if _, err := os.Stat(filepath.Join(xdg, "hubgate", configs.SecretsFileName)); err == nil {
		t.Error("the secrets file stayed")
	}
	// Nothing left to move: said, not an error.
	if r := runCmd(t, withBus, "", "secrets", "migrate"); r.code != 0 || !strings.Contains(r.stderr, "nothing to migrate") {
		t.Errorf("second migrate: exit %d %s", r.code, r.stderr)
	}
	// The pairing works from the keyring: unpair finds its secrets there.
	if r := runCmd(t, withBus, "", "unpair"); r.code != 0 {
		t.Fatalf("unpair: exit %d %s", r.code, r.stderr)
	}
	if lookupSecret(t, configs.AccountDeviceToken) != "" {
		t.Error("unpair left the device token in the keyring")
	}
}
