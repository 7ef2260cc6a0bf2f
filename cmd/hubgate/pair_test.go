package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dbus "github.com/godbus/dbus/v5"
	ss "github.com/zalando/go-keyring/secret_service"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

// ---- helpers ----

// startMock serves a mock remote service on 127.0.0.1; wrap, when set,
// sits in front of it (to inject REST failures).
func startMock(t *testing.T, cfg mockhub.Config, wrap func(http.Handler) http.Handler) (*mockhub.Server, string) {
	t.Helper()
	m := mockhubtest.Start(t, mockhubtest.Options{Config: cfg, Wrap: wrap})
	return m.Server, m.URL
}

// pairEnviron is env() for pairing against the mock at apiURL, with curl
// as the browser; extra entries win.
func pairEnviron(t *testing.T, apiURL string, extra ...string) []string {
	base := []string{
		"HUBGATE_API_URL=" + apiURL,
		"HUBGATE_CLIENT_ID=" + mockhub.DefaultClientID,
		"HUBGATE_DEVICE_TYPE=" + mockhub.DefaultDeviceTypeID,
		"BROWSER=curl -fsSL", // no client secret: the vendor's clients need none
	}
	e := env(t, append(base, extra...)...)
	// Later entries win for exec, but keep it unambiguous: drop earlier
	// duplicates.
	seen := map[string]bool{}
	var out []string
	for i := len(e) - 1; i >= 0; i-- {
		k, _, _ := strings.Cut(e[i], "=")
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append([]string{e[i]}, out...)
	}
	return out
}

func envValue(environ []string, key string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

func statePathOf(environ []string) string {
	return filepath.Join(envValue(environ, "XDG_CONFIG_HOME"), "hubgate", "state.json")
}

// fakeBrowser writes a shell script used as BROWSER (it gets the URL as $1).
func fakeBrowser(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "browser.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// requireCurl: curl plays the browser; outside CI a machine without it
// skips, in CI (scripts/test installs it) its absence fails.
func requireCurl(t *testing.T) {
	t.Helper()
	testenv.RequireProgram(t, "curl")
}

var pairAccounts = []string{configs.AccountOAuthRefreshToken, configs.AccountDeviceToken, configs.AccountOAuthClientSecret,
	pairing.SlotAccount(configs.AccountOAuthRefreshToken, pairing.SlotB), pairing.SlotAccount(configs.AccountDeviceToken, pairing.SlotB)}

// pairedAccounts are the base names of the slotted accounts.
var pairedAccounts = []string{pairing.AccountRefreshToken, pairing.AccountDeviceToken}

// lookupSecret reads an account of service hubgate from the Secret
// Service with secret-tool ("" when absent).
// pairedDeviceToken is the device token of the pairing the state file of
// environment e names (its secret slot).
func pairedDeviceToken(t *testing.T, e []string) string {
	t.Helper()
	st, err := pairing.LoadState(statePathOf(e))
	if err != nil {
		t.Fatal(err)
	}
	return lookupSecret(t, pairing.SlotAccount(configs.AccountDeviceToken, st.SecretSlot))
}

func lookupSecret(t *testing.T, account string) string {
	t.Helper()
	out, err := exec.Command("secret-tool", "lookup", "service", "hubgate", "username", account).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "" // not found
		}
		t.Fatalf("secret-tool: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// clearPairSecrets removes the pairing accounts from the harness keyring.
func clearPairSecrets(t *testing.T) {
	t.Helper()
	for _, acct := range pairAccounts {
		exec.Command("secret-tool", "clear", "service", "hubgate", "username", acct).Run()
	}
}

// assertNothingStored checks that no pairing secret and no state file exist.
func assertNothingStored(t *testing.T, environ []string) {
	t.Helper()
	for _, acct := range pairAccounts {
		if v := lookupSecret(t, acct); v != "" {
			t.Errorf("the keyring holds %q after a failed pair", acct)
		}
	}
	if _, err := os.Stat(statePathOf(environ)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state file exists after a failed pair: %v", err)
	}
}

// deviceTokenWorks asks the mock hub whether tok is a valid device token
// (SignalR negotiate with the token as bearer and X-Device-Token).
func deviceTokenWorks(t *testing.T, apiURL, tok string) bool {
	t.Helper()
	req, _ := http.NewRequest("POST", apiURL+"/device/negotiate?negotiateVersion=1", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("X-Device-Token", tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

// refreshTokenWorks redeems rt at the mock's token endpoint.
func refreshTokenWorks(t *testing.T, apiURL, rt string) bool {
	t.Helper()
	req, _ := http.NewRequest("POST", apiURL+"/signin/token", strings.NewReader(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(mockhub.DefaultClientID, mockhub.DefaultClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

func assertNoSecretIn(t *testing.T, where, s string, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			t.Errorf("%s contains a secret", where)
		}
	}
}

// ---- acceptance tests of the command (runCmd) and a real Secret Service ----

func TestPairAgainstTheMockStoresSecretsInTheKeyring(t *testing.T) {
	requireKeyring(t)
	requireCurl(t)
	clearPairSecrets(t)
	t.Cleanup(func() { clearPairSecrets(t) })
	m, apiURL := startMock(t, mockhub.Config{}, nil)
	e := pairEnviron(t, apiURL)
	r := runCmd(t, e, "", "pair", "--name", "desk pad", "--json", "--timeout", "50s")
	t.Logf("stderr:\n%s\nstdout:\n%s", r.stderr, r.stdout)
	if r.code != 0 {
		t.Fatalf("pair: exit %d\nstderr: %s", r.code, r.stderr)
	}
	var res pairing.Summary
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("--json output %q: %v", r.stdout, err)
	}
	devs := m.Devices()
	if len(devs) != 1 || devs[0].Device.ID != res.DeviceID || devs[0].Device.NameOverride != "desk pad" || devs[0].DeviceTypeID != mockhub.DefaultDeviceTypeID {
		t.Fatalf("mock devices %+v, result %+v", devs, res)
	}
	if len(devs[0].Tokens) != 1 || devs[0].Tokens[0].ID != res.TokenID || res.APIURL != apiURL || res.DeviceName != "desk pad" || res.Reused {
		t.Fatalf("result %+v tokens %+v", res, devs[0].Tokens)
	}

	// The secrets are in the Secret Service and work.
	devTok := lookupSecret(t, configs.AccountDeviceToken)
	refresh := lookupSecret(t, configs.AccountOAuthRefreshToken)
	if devTok == "" || refresh == "" {
		t.Fatalf("keyring: device token %v, refresh token %v", devTok != "", refresh != "")
	}
	if lookupSecret(t, configs.AccountOAuthClientSecret) != "" {
		t.Error("a client secret from the environment was stored")
	}
	if !deviceTokenWorks(t, apiURL, devTok) {
		t.Error("the stored device token is refused by the hub")
	}
	assertNoSecretIn(t, "the output", r.stdout+r.stderr, devTok, refresh, mockhub.DefaultClientSecret)

	// The state file.
	st, err := pairing.LoadState(statePathOf(e))
	if err != nil {
		t.Fatal(err)
	}
	if st.DeviceID != res.DeviceID || st.TokenID != res.TokenID || st.APIURL != apiURL || st.DeviceTypeID != mockhub.DefaultDeviceTypeID || st.DeviceName != "desk pad" {
		t.Errorf("state %+v", st)
	}
	raw, _ := os.ReadFile(statePathOf(e))
	assertNoSecretIn(t, "the state file", string(raw), devTok, refresh, mockhub.DefaultClientSecret)
	for _, want := range []string{"checking the OS secret store", "signing in at " + apiURL + "/signin", "created device " + res.DeviceID, "created device token", "confirmed device", "paired:"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	// The refresh token is a live one (checked last: redeeming rotates it).
	if !refreshTokenWorks(t, apiURL, refresh) {
		t.Error("the stored refresh token is refused")
	}
}

// Re-runs: without --reuse/--replace a non-interactive run refuses and
// says what exists; --reuse keeps the device with a new token; --replace
// creates a new device; unpair removes everything local.
func TestPairRerunReuseReplaceAndUnpair(t *testing.T) {
	requireKeyring(t)
	requireCurl(t)
	clearPairSecrets(t)
	t.Cleanup(func() { clearPairSecrets(t) })
	m, apiURL := startMock(t, mockhub.Config{}, nil)
	e := pairEnviron(t, apiURL)
	if r := runCmd(t, e, "", "pair", "--name", "first"); r.code != 0 {
		t.Fatalf("first pair: %d %s", r.code, r.stderr)
	}
	first, _ := pairing.LoadState(statePathOf(e))
	firstTok := pairedDeviceToken(t, e)

	r := runCmd(t, e, "", "pair")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "already paired") || !strings.Contains(r.stderr, first.DeviceID) ||
		!strings.Contains(r.stderr, "--reuse") || !strings.Contains(r.stderr, "--replace") {
		t.Fatalf("re-run without a choice: %d %s", r.code, r.stderr)
	}
	if len(m.Devices()) != 1 || pairedDeviceToken(t, e) != firstTok {
		t.Fatal("the refused re-run changed something")
	}
	if r := runCmd(t, e, "", "pair", "--reuse", "--replace"); r.code != ExitUsage {
		t.Errorf("--reuse --replace: %d", r.code)
	}

	// The token in use is disabled on the service (the usual reason to
	// re-pair): --reuse must not call it valid.
	if _, err := m.DisableToken(first.TokenID); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, e, "", "pair", "--reuse", "--json")
	if r.code != 0 {
		t.Fatalf("--reuse: %d %s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "valid") || !strings.Contains(r.stderr, "the previous token "+first.TokenID+" is left on the service as it was (disabled or not") {
		t.Errorf("--reuse over a disabled token says:\n%s", r.stderr)
	}
	var res pairing.Summary
	json.Unmarshal([]byte(r.stdout), &res)
	newTok := pairedDeviceToken(t, e)
	if lookupSecret(t, configs.AccountDeviceToken) != "" {
		t.Error("--reuse left the previous device token in the secret store")
	}
	if !res.Reused || res.DeviceID != first.DeviceID || res.TokenID == first.TokenID || res.DeviceName != "first" || newTok == firstTok || newTok == "" {
		t.Fatalf("--reuse result %+v", res)
	}
	if len(m.Devices()) != 1 || !deviceTokenWorks(t, apiURL, newTok) {
		t.Fatal("--reuse created a device or stored a bad token")
	}

	r = runCmd(t, e, "", "pair", "--replace", "--name", "second", "--json")
	if r.code != 0 {
		t.Fatalf("--replace: %d %s", r.code, r.stderr)
	}
	json.Unmarshal([]byte(r.stdout), &res)
	if res.Reused || res.DeviceID == first.DeviceID || len(m.Devices()) != 2 || !strings.Contains(r.stderr, first.DeviceID+" stays on the service") {
		t.Fatalf("--replace: %+v\n%s", res, r.stderr)
	}

	r = runCmd(t, e, "", "unpair")
	if r.code != 0 || !strings.Contains(r.stderr, res.DeviceID) || !strings.Contains(r.stderr, "still exists") {
		t.Fatalf("unpair: %d %s", r.code, r.stderr)
	}
	assertNothingStored(t, e)
	if r := runCmd(t, e, "", "unpair"); r.code != 0 || !strings.Contains(r.stderr, "nothing to remove") {
		t.Errorf("second unpair: %d %s", r.code, r.stderr)
	}
	if r := runCmd(t, e, "", "pair", "--reuse"); r.code != ExitUsage || !strings.Contains(r.stderr, "no device is paired") {
		t.Errorf("--reuse with nothing paired: %d %s", r.code, r.stderr)
	}
}

// The failure cases of the "Done means": each ends with a clear
// message, its own exit code, and nothing half-stored.
func TestPairFailuresLeaveNothingStored(t *testing.T) {
	requireKeyring(t)
	requireCurl(t)
	for _, tc := range []struct {
		name      string
		mock      mockhub.Config
		wrap      func(http.Handler) http.Handler
		browser   string // script; "" : curl -fsSL
		args      []string
		code      int
		want      []string
		remoteDev bool // a device was created on the service
	}{
		{
			name: "denied consent",
			mock: mockhub.Config{Consent: func(mockhub.ConsentRequest) bool { return false }},
			code: ExitSignIn,
			want: []string{"sign-in failed, nothing was created", "access_denied", "the user denied the request"},
		},
		{
			name: "bad state",
			browser: `loc=$(curl -sS -o /dev/null -w '%{redirect_url}' "$1") || exit 1
curl -sS -o /dev/null "$(printf '%s' "$loc" | sed 's/state=[^&]*/state=forged/')"
`,
			args: []string{"--timeout", "4s"},
			code: ExitSignIn,
			want: []string{"Ignored a sign-in response", "state does not match", "sign-in timed out", "4s"},
		},
		{
			name: "reused code",
			browser: `loc=$(curl -sS -o /dev/null -w '%{redirect_url}' "$1") || exit 1
code=$(printf '%s' "$loc" | sed -n 's/.*[?&]code=\([^&]*\).*/\1/p')
curl -sS -o /dev/null -u mock-client:mock-secret -d grant_type=authorization_code --data-urlencode "code=$code" -d code_verifier=spent "${1%%/signin\?*}/signin/token"
curl -sS -o /dev/null "$loc"
`,
			code: ExitSignIn,
			want: []string{"token exchange was refused: invalid_grant", "already used", "sign in again"},
		},
		{
			name:    "timeout",
			browser: "exit 0\n",
			args:    []string{"--timeout", "2s"},
			code:    ExitSignIn,
			want:    []string{"sign-in timed out", "2s"},
		},
		{
			name: "unknown device type",
			args: []string{"--device-type", "no-such-type"},
			code: ExitRemote,
			want: []string{"creating the device", "404", "nothing was stored on this machine"},
		},
		{
			name: "token creation fails after the device was created",
			wrap: func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/tokens") {
						w.Header().Set("Content-Type", "application/problem+json")
						w.WriteHeader(500)
						io.WriteString(w, `{"title":"boom","status":500}`)
						return
					}
					h.ServeHTTP(w, r)
				})
			},
			code:      ExitRemote,
			want:      []string{"creating the device token", "500", "left there", "nothing was stored on this machine"},
			remoteDev: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearPairSecrets(t)
			t.Cleanup(func() { clearPairSecrets(t) })
			m, apiURL := startMock(t, tc.mock, tc.wrap)
			browser := "curl -fsSL"
			if tc.browser != "" {
				browser = fakeBrowser(t, tc.browser)
			}
			e := pairEnviron(t, apiURL, "BROWSER="+browser)
			r := runCmd(t, e, "", append([]string{"pair"}, tc.args...)...)
			t.Logf("stderr:\n%s", r.stderr)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.code, tc.code, r.stderr)
			}
			last := r.stderr[strings.LastIndex(strings.TrimRight(r.stderr, "\n"), "\n")+1:]
			if !strings.HasPrefix(last, "hubgate: ") {
				t.Errorf("the last line is not the error: %q", last)
			}
			for _, want := range tc.want {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
			devs := m.Devices()
			if tc.remoteDev {
				if len(devs) != 1 || !strings.Contains(r.stderr, "device "+devs[0].Device.ID) {
					t.Errorf("the message does not name the created device: %+v\n%s", devs, r.stderr)
				}
			} else if len(devs) != 0 {
				t.Errorf("devices created: %+v", devs)
			}
			assertNothingStored(t, e)
		})
	}
}

// A locked collection: pair stops at the store check, before any request
// to the service.
func TestPairWithALockedKeyringCreatesNothing(t *testing.T) {
	requireKeyring(t)
	pwFile := os.Getenv("HUBGATE_TEST_KEYRING_PASSWORD_FILE")
	if pwFile == "" {
		t.Skip("locking needs the throwaway keyring of .ci/with-keyring")
	}
	pw, err := os.ReadFile(pwFile)
	if err != nil {
		t.Fatal(err)
	}
	clearPairSecrets(t)
	m, apiURL := startMock(t, mockhub.Config{}, nil)
	e := pairEnviron(t, apiURL)

	const login = "/org/freedesktop/secrets/collection/login"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.secrets",
		"/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock", "array:objpath:"+login).CombinedOutput()
	if err != nil {
		t.Fatalf("lock: %v %s", err, out)
	}
	unlocked := false
	unlock := func() {
		svc, err := ss.NewSecretService()
		if err != nil {
			t.Fatal(err)
		}
		session, err := svc.OpenSession()
		if err != nil {
			t.Fatal(err)
		}
		defer svc.Close(session)
		if err := svc.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").Call(
			"org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface.UnlockWithMasterPassword", 0,
			dbus.ObjectPath(login), ss.NewSecret(session.Path(), string(pw))).Err; err != nil {
			t.Fatalf("unlock: %v", err)
		}
		unlocked = true
	}
	t.Cleanup(func() {
		if !unlocked {
			unlock()
		}
	})

	r := runCmd(t, e, "", "pair")
	t.Logf("stderr:\n%s", r.stderr)
	if r.code != ExitSecretStore || !strings.Contains(r.stderr, "nothing was created") || !strings.Contains(r.stderr, "secret store") {
		t.Fatalf("exit %d stderr %s", r.code, r.stderr)
	}
	if evs := m.Events(0); len(evs) != 0 {
		t.Errorf("the service was contacted: %+v", evs)
	}
	unlock()
	assertNothingStored(t, e)
}

// No D-Bus session at all and 'secrets: keyring': pair fails at once,
// naming the D-Bus addresses it tried and the way out; nothing reaches the
// service and nothing is written. (No harness needed.)
func TestPairWithoutAnySecretStoreCreatesNothing(t *testing.T) {
	requireNoUserBus(t)
	m, apiURL := startMock(t, mockhub.Config{}, nil)
	e := noDBus(t, pairEnviron(t, apiURL))
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgPath, []byte("secrets: keyring\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, e, "", "--config", cfgPath, "pair")
	bus := fmt.Sprintf("/run/user/%d/bus", os.Getuid())
	for _, want := range []string{"nothing was created", "DBUS_SESSION_BUS_ADDRESS is unset", bus, "nothing was written to a plain file", "secrets: file"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if r.code != ExitSecretStore {
		t.Fatalf("exit %d stderr %s", r.code, r.stderr)
	}
	if evs := m.Events(0); len(evs) != 0 {
		t.Errorf("the service was contacted: %+v", evs)
	}
	if _, err := os.Stat(statePathOf(e)); !errors.Is(err, os.ErrNotExist) {
		t.Error("a state file was written")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(statePathOf(e)), configs.SecretsFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Error("a secrets file was written")
	}
	// unpair says so too.
	if r := runCmd(t, e, "", "--config", cfgPath, "unpair"); r.code != ExitSecretStore {
		t.Errorf("unpair: %d %s", r.code, r.stderr)
	}
}

// --no-browser with the client secret typed on stdin: the secret line,
// then the pasted redirect address; the typed secret is stored.
func TestPairNoBrowserPasteAndSecretOnStdin(t *testing.T) {
	requireKeyring(t)
	clearPairSecrets(t)
	t.Cleanup(func() { clearPairSecrets(t) })
	m, apiURL := startMock(t, mockhub.Config{}, nil)
	var e []string
	for _, kv := range pairEnviron(t, apiURL, "BROWSER=/bin/false") {
		if !strings.HasPrefix(kv, "HUBGATE_CLIENT_SECRET=") {
			e = append(e, kv)
		}
	}
	stdin, typed := io.Pipe()
	t.Cleanup(func() { typed.Close() })
	p := startInProc(t, e, stdin, "pair", "--no-browser", "--json", "--client-secret-stdin")
	// The person types (a pipe's writes wait for pair to read them).
	typeLines := func(s string) { go io.WriteString(typed, s) }
	typeLines(mockhub.DefaultClientSecret + "\n")
	// The authorization URL is what pair prints for the person to open
	// elsewhere (--no-browser): its line, as pair writes it.
	var u string
	p.waitOutput(t, "the authorization URL", func() bool {
		lines := strings.Split(p.stderr.String(), "\n")
		for _, line := range lines[:len(lines)-1] { // the whole lines
			if l := strings.TrimSpace(line); strings.HasPrefix(l, apiURL+"/signin?") {
				u = l
				return true
			}
		}
		return false
	})
	// The "browser" (another machine): follow the authorization page, read
	// the address it was redirected to, paste it.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	typeLines("not an address\n" + loc + "\n")
	code := p.wait(t, e2eWait)
	text := p.stderr.String()
	if code != 0 {
		t.Fatalf("pair: exit %d\n%s", code, text)
	}
	if !strings.Contains(text, "paste it here") || !strings.Contains(text, "carries no sign-in response") {
		t.Errorf("stderr:\n%s", text)
	}
	if got := lookupSecret(t, configs.AccountOAuthClientSecret); got != mockhub.DefaultClientSecret {
		t.Errorf("the typed client secret was not stored")
	}
	if len(m.Devices()) != 1 || lookupSecret(t, configs.AccountDeviceToken) == "" {
		t.Error("not paired")
	}
	assertNoSecretIn(t, "the output", text+p.stdout.String(), mockhub.DefaultClientSecret)
}

func TestPairConfigAndUsageErrors(t *testing.T) {
	e := env(t)
	r := runCmd(t, e, "", "pair")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "remote.api_url") || !strings.Contains(r.stderr, "remote.client_id") || !strings.Contains(r.stderr, "remote.device_type_id") {
		t.Errorf("no settings: %d %s", r.code, r.stderr)
	}
	r = runCmd(t, e, "", "pair", "--api-url", "http://example.com", "--client-id", "c", "--device-type", "d")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "flag --api-url") || !strings.Contains(r.stderr, "https") {
		t.Errorf("plain http to a remote host: %d %s", r.code, r.stderr)
	}
	if r := runCmd(t, e, "", "pair", "--client-secret", "x"); r.code != ExitUsage {
		t.Errorf("a --client-secret flag must not exist: %d", r.code)
	}
	if r := runCmd(t, e, "", "pair", "--timeout", "0s"); r.code != ExitUsage {
		t.Errorf("--timeout 0: %d", r.code)
	}
	r = runCmd(t, e, "", "pair", "--help")
	for _, want := range []string{"--no-browser", "--reuse", "--replace", "--json", "HUBGATE_CLIENT_SECRET", "never a\nflag", "--redirect-uri", "--client-secret-stdin"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("pair --help lacks %q", want)
		}
	}
}

// The "Done means": pair against `hubgate mock` (the command, run
// in this process, serving on loopback), with curl as the browser,
// secrets in a real Secret Service afterwards.
func TestPairAgainstHubgateMockProcess(t *testing.T) {
	requireKeyring(t)
	requireCurl(t)
	clearPairSecrets(t)
	t.Cleanup(func() { clearPairSecrets(t) })
	apiURL := startMockProc(t, env(t), "--listen", "127.0.0.1:0").url
	if !strings.HasPrefix(apiURL, "http://127.0.0.1:") {
		t.Fatalf("mock URL %q", apiURL)
	}
	e := pairEnviron(t, apiURL)
	r := runCmd(t, e, "", "pair", "--json", "--name", "from the mock process")
	if r.code != 0 {
		t.Fatalf("pair: %d\n%s", r.code, r.stderr)
	}
	var res pairing.Summary
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(apiURL + "/mock/devices")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var devs []mockhub.DeviceInfo
	if err := json.NewDecoder(resp.Body).Decode(&devs); err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 || devs[0].Device.ID != res.DeviceID || len(devs[0].Tokens) != 1 || devs[0].Tokens[0].ID != res.TokenID {
		t.Fatalf("mock devices %+v, result %+v", devs, res)
	}
	devTok := lookupSecret(t, configs.AccountDeviceToken)
	if devTok == "" || lookupSecret(t, configs.AccountOAuthRefreshToken) == "" {
		t.Fatal("the secrets are not in the Secret Service")
	}
	if !deviceTokenWorks(t, apiURL, devTok) {
		t.Error("the stored device token is refused by the mock hub")
	}
}

// ---- in-process tests of the pairing logic (memory store) ----

// follow is a browser: it follows the authorization URL and its redirect.
func follow(u string) error {
	go func() {
		resp, err := http.Get(u)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	return nil
}

// failingStore fails Set of one account (after n successful calls).
type failingStore struct {
	*configs.MemoryStore
	account string
}

func (f *failingStore) Set(ctx context.Context, account, value string) error {
	if account == f.account {
		return &configs.StoreError{Op: "set", Account: account, Kind: configs.KindTimeout, Err: context.DeadlineExceeded}
	}
	return f.MemoryStore.Set(ctx, account, value)
}

func testPairEnv(t *testing.T, store configs.SecretStore, stdin string, envs map[string]string) (pairEnv, *testutil.SyncBuffer) {
	var errBuf testutil.SyncBuffer
	in := bufio.NewReader(strings.NewReader(stdin))
	return pairEnv{
		stdio:       Stdio{In: strings.NewReader(""), Out: io.Discard, Err: &errBuf},
		in:          in,
		getenv:      func(k string) string { return envs[k] },
		store:       store,
		statePath:   filepath.Join(t.TempDir(), "hubgate", "state.json"),
		now:         time.Now,
		log:         nil,
		hostname:    func() (string, error) { return "testhost", nil },
		openBrowser: follow,
	}, &errBuf
}

func testConfig(t *testing.T, apiURL string) *configs.Config {
	t.Helper()
	return testConfigWith(t, apiURL)
}

// testConfigWith is testConfig with overrides (flags).
func testConfigWith(t *testing.T, apiURL string, overrides ...configs.Override) *configs.Config {
	t.Helper()
	dir := t.TempDir()
	cfg, err := configs.Load(configs.LoadOptions{
		Overrides: overrides,
		Env: func(k string) string {
			return map[string]string{
				"HUBGATE_API_URL":     apiURL,
				"HUBGATE_CLIENT_ID":   mockhub.DefaultClientID,
				"HUBGATE_DEVICE_TYPE": mockhub.DefaultDeviceTypeID,
			}[k]
		},
		UserConfigDir: func() (string, error) { return dir, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func quietLog(e pairEnv) pairEnv {
	e.log = slog.New(slog.DiscardHandler)
	return e
}

// A secret write that fails after sign-in and device creation: the
// earlier pairing stays whole (its state and its secrets), what this run
// wrote is removed, and the error names the device created remotely.
func TestRunPairKeepsThePreviousPairingWhenAWriteFails(t *testing.T) {
	m, apiURL := startMock(t, mockhub.Config{}, nil)
	mem := configs.NewMemoryStore()
	ctx := context.Background()
	mem.Set(ctx, configs.AccountOAuthRefreshToken, "old-refresh")
	mem.Set(ctx, configs.AccountDeviceToken, "old-token")
	mem.Set(ctx, configs.AccountOAuthClientSecret, mockhub.DefaultClientSecret)
	newSlot := pairing.SlotAccount(configs.AccountDeviceToken, pairing.SlotB)
	e, errBuf := testPairEnv(t, &failingStore{mem, newSlot}, "", nil)
	e = quietLog(e)
	old := pairing.State{DeviceID: "old-device", APIURL: apiURL, DeviceTypeID: mockhub.DefaultDeviceTypeID, ClientID: mockhub.DefaultClientID}
	if err := pairing.SaveState(e.statePath, old); err != nil {
		t.Fatal(err)
	}
	_, err := runPair(ctx, e, testConfig(t, apiURL), pairFlags{timeout: time.Minute, replace: true})
	if err == nil {
		t.Fatal("no error")
	}
	if exitCode(err) != ExitSecretStore || !strings.Contains(err.Error(), "storing the secrets") || !strings.Contains(err.Error(), "nothing was stored on this machine") {
		t.Fatalf("exit %d err %v", exitCode(err), err)
	}
	devs := m.Devices()
	if len(devs) != 1 || !strings.Contains(err.Error(), "device "+devs[0].Device.ID) || !strings.Contains(err.Error(), "device token "+devs[0].Tokens[0].ID) {
		t.Fatalf("the error does not name what was created: %v", err)
	}
	if v, _ := mem.Get(ctx, configs.AccountOAuthRefreshToken); v != "old-refresh" {
		t.Errorf("the previous refresh token changed: %q", v)
	}
	if v, _ := mem.Get(ctx, configs.AccountDeviceToken); v != "old-token" {
		t.Errorf("the previous device token changed: %q", v)
	}
	for _, acct := range []string{newSlot, pairing.SlotAccount(configs.AccountOAuthRefreshToken, pairing.SlotB)} {
		if _, err := mem.Get(ctx, acct); !errors.Is(err, configs.ErrSecretNotFound) {
			t.Errorf("%s left behind: %v", acct, err)
		}
	}
	if st, err := pairing.LoadState(e.statePath); err != nil || st.DeviceID != "old-device" || st.SecretSlot != pairing.SlotA {
		t.Errorf("the state file changed: %+v %v", st, err)
	}
	if !strings.Contains(errBuf.String(), "using the client secret from the OS secret store") {
		t.Errorf("stderr %s", errBuf.String())
	}
}

// The state file cannot be written: the secrets written are undone.
func TestRunPairUndoesSecretsWhenTheStateFileFails(t *testing.T) {
	_, apiURL := startMock(t, mockhub.Config{}, nil)
	mem := configs.NewMemoryStore()
	e, _ := testPairEnv(t, mem, mockhub.DefaultClientSecret+"\n", nil)
	e = quietLog(e)
	// A directory where the state file should go makes the rename fail.
	if err := os.MkdirAll(filepath.Join(e.statePath, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := runPair(context.Background(), e, testConfig(t, apiURL), pairFlags{timeout: time.Minute, replace: true})
	if err == nil || !strings.Contains(err.Error(), "writing the state file") {
		t.Fatalf("err %v", err)
	}
	for _, acct := range pairAccounts {
		if _, err := mem.Get(context.Background(), acct); !errors.Is(err, configs.ErrSecretNotFound) {
			t.Errorf("%s left behind: %v", acct, err)
		}
	}
}

func TestRunPairClientSecretSources(t *testing.T) {
	_, apiURL := startMock(t, mockhub.Config{}, nil)
	ctx := context.Background()

	// From stdin: stored.
	mem := configs.NewMemoryStore()
	e, errBuf := testPairEnv(t, mem, mockhub.DefaultClientSecret+"\n", nil)
	e = quietLog(e)
	res, err := runPair(ctx, e, testConfig(t, apiURL), pairFlags{timeout: time.Minute, secretStdin: true})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := mem.Get(ctx, configs.AccountOAuthClientSecret); v != mockhub.DefaultClientSecret {
		t.Error("the typed secret was not stored")
	}
	if res.DeviceName != "hubgate on testhost" || !strings.Contains(errBuf.String(), "OAuth client secret") {
		t.Errorf("name %q stderr %s", res.DeviceName, errBuf.String())
	}
	assertNoSecretIn(t, "stderr", errBuf.String(), mockhub.DefaultClientSecret)

	// From the environment: not stored.
	mem = configs.NewMemoryStore()
	e, _ = testPairEnv(t, mem, "", map[string]string{EnvClientSecret: mockhub.DefaultClientSecret})
	if _, err := runPair(ctx, quietLog(e), testConfig(t, apiURL), pairFlags{timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Get(ctx, configs.AccountOAuthClientSecret); !errors.Is(err, configs.ErrSecretNotFound) {
		t.Error("a secret from the environment was stored")
	}

	// --client-secret-stdin with nothing on stdin: a configuration error
	// before sign-in.
	mem = configs.NewMemoryStore()
	e, _ = testPairEnv(t, mem, "", nil)
	_, err = runPair(ctx, quietLog(e), testConfig(t, apiURL), pairFlags{timeout: time.Minute, secretStdin: true})
	if exitCode(err) != ExitConfig || !strings.Contains(err.Error(), EnvClientSecret) {
		t.Fatalf("exit %d err %v", exitCode(err), err)
	}

	// None at all: a public client, as the vendor's clients are; nothing
	// is asked on stdin.
	mem = configs.NewMemoryStore()
	e, errBuf = testPairEnv(t, mem, "", nil)
	if _, err := runPair(ctx, quietLog(e), testConfig(t, apiURL), pairFlags{timeout: time.Minute}); err != nil {
		t.Fatalf("without a secret: %v", err)
	}
	if strings.Contains(errBuf.String(), "OAuth client secret (") || !strings.Contains(errBuf.String(), "public client") {
		t.Errorf("without a secret, stderr: %s", errBuf.String())
	}

	// A wrong secret: the exchange is refused (invalid_client), exit 6.
	e, _ = testPairEnv(t, configs.NewMemoryStore(), "", map[string]string{EnvClientSecret: "wrong-secret-42"})
	_, err = runPair(ctx, quietLog(e), testConfig(t, apiURL), pairFlags{timeout: time.Minute})
	if exitCode(err) != ExitSignIn || !strings.Contains(err.Error(), "invalid_client") || strings.Contains(err.Error(), "wrong-secret-42") {
		t.Fatalf("exit %d err %v", exitCode(err), err)
	}
}

func TestRunPairInteractiveChoice(t *testing.T) {
	m, apiURL := startMock(t, mockhub.Config{}, nil)
	ctx := context.Background()
	mem := configs.NewMemoryStore()
	envs := map[string]string{EnvClientSecret: mockhub.DefaultClientSecret}
	e, _ := testPairEnv(t, mem, "", envs)
	first, err := runPair(ctx, quietLog(e), testConfig(t, apiURL), pairFlags{timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		answer  string
		devices int
		reused  bool
		err     string
	}{
		{"cancel\n", 1, false, "canceled"},
		{"", 1, false, "no answer"},
		{"reuse\n", 1, true, ""},
		{"replace\n", 2, false, ""},
	} {
		e2, errBuf := testPairEnv(t, mem, tc.answer, envs)
		e2.statePath = e.statePath
		e2.interactive = true
		res, err := runPair(ctx, quietLog(e2), testConfig(t, apiURL), pairFlags{timeout: time.Minute})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v", tc.answer, err)
			}
		} else if err != nil || res.Reused != tc.reused {
			t.Errorf("%q: %+v %v", tc.answer, res, err)
		}
		if n := len(m.Devices()); n != tc.devices {
			t.Errorf("%q: %d devices", tc.answer, n)
		}
		if !strings.Contains(errBuf.String(), "already paired: "+first.DeviceID) {
			t.Errorf("%q: the prompt does not say what exists: %s", tc.answer, errBuf.String())
		}
	}
}

func TestRunPairReuseOfADeletedDevice(t *testing.T) {
	_, apiURL := startMock(t, mockhub.Config{}, nil)
	e, _ := testPairEnv(t, configs.NewMemoryStore(), "", map[string]string{EnvClientSecret: mockhub.DefaultClientSecret})
	pairing.SaveState(e.statePath, pairing.State{DeviceID: "gone", DeviceName: "old", APIURL: apiURL, DeviceTypeID: mockhub.DefaultDeviceTypeID})
	_, err := runPair(context.Background(), quietLog(e), testConfig(t, apiURL), pairFlags{timeout: time.Minute, reuse: true})
	if exitCode(err) != ExitRemote || !strings.Contains(err.Error(), "--replace") {
		t.Fatalf("exit %d err %v", exitCode(err), err)
	}
	// --reuse with --api-url naming another service is refused before
	// anything happens.
	pairing.SaveState(e.statePath, pairing.State{DeviceID: "d", APIURL: "https://other.example.com"})
	_, err = runPair(context.Background(), quietLog(e), testConfigWith(t, apiURL, configs.Override{Path: "remote.api_url", Value: apiURL, Origin: "flag --api-url"}), pairFlags{timeout: time.Minute, reuse: true})
	if exitCode(err) != ExitUsage || !strings.Contains(err.Error(), "other.example.com") {
		t.Fatalf("exit %d err %v", exitCode(err), err)
	}
}

// `pair --no-browser` with stdin closed: nobody can paste the address,
// so it fails at once (exit 2) saying why, instead of waiting out the
// five-minute sign-in.
func TestPairNoBrowserWithStdinClosedFailsAtOnce(t *testing.T) {
	requireKeyring(t)
	clearPairSecrets(t)
	t.Cleanup(func() { clearPairSecrets(t) })
	_, apiURL := startMock(t, mockhub.Config{}, nil)
	r := runCmdWithin(t, 30*time.Second, pairEnviron(t, apiURL), "", "pair", "--no-browser")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--no-browser reads the address the browser was redirected to from stdin, and stdin is closed") {
		t.Fatalf("pair --no-browser </dev/null: exit %d %q, want 2 and the reason", r.code, r.stderr)
	}
}
