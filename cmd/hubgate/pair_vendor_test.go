package main

// Acceptance tests (the command tree in this process, or the binary where
// a process matters; a real Secret Service) of pairing as the vendor's
// clients sign in (issue 10) and of pair's manners (issue 13).

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// The Done-means command: flags only, BROWSER="curl -fsSL", no client
// secret anywhere, the private keyring. The exchange the mock saw is the
// vendor's (grant_type=code, no client authentication, form body), and
// pair ends by naming the next command (no config file here: config init,
// then run).
func TestPairWithFlagsAndNoClientSecretAsTheVendorsClients(t *testing.T) {
	requireKeyring(t)
	requireCurl(t)
	clearPairSecrets(t)
	t.Cleanup(func() { clearPairSecrets(t) })
	m, apiURL := startMock(t, mockhub.Config{}, nil)
	e := env(t, "BROWSER=curl -fsSL")
	for _, kv := range e {
		if strings.HasPrefix(kv, EnvClientSecret+"=") {
			t.Fatal("the test environment carries a client secret")
		}
	}
	r := runCmd(t, e, "", "pair", "--api-url", apiURL, "--client-id", "mock-client", "--device-type", "mock-controller", "--json")
	if r.code != 0 {
		t.Fatalf("pair: exit %d\nstderr: %s", r.code, r.stderr)
	}
	var res pairing.Summary
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if len(m.Devices()) != 1 || res.DeviceID != m.Devices()[0].Device.ID || res.Next != pairing.NextConfigInit {
		t.Fatalf("result %+v", res)
	}
	if lookupSecret(t, configs.AccountDeviceToken) == "" || lookupSecret(t, configs.AccountOAuthRefreshToken) == "" || lookupSecret(t, configs.AccountOAuthClientSecret) != "" {
		t.Error("keyring contents")
	}
	var tokenCalls []string
	sawSignin := false
	for _, ev := range m.Events(0) {
		if ev.Source == mockhub.SourceOAuth && ev.Action == "token" {
			tokenCalls = append(tokenCalls, fmt.Sprint(ev.Args["grantType"], " ", ev.Args["clientAuth"], " ", ev.Args["paramsIn"], " ", ev.Status))
		}
		if ev.Source == mockhub.SourceOAuth && ev.Action == "authorize" {
			sawSignin = ev.Args["clientId"] == "mock-client" && ev.Args["responseType"] == "code" && ev.Args["hasState"] == true
		}
	}
	if len(tokenCalls) != 1 || tokenCalls[0] != "code none body 200" || !sawSignin {
		t.Errorf("token calls %q, authorize ok %v", tokenCalls, sawSignin)
	}
	if !strings.Contains(r.stderr, "next: run 'hubgate config init' (there is no config file yet), then 'hubgate run'") || !strings.Contains(r.stderr, "public client") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	st, err := pairing.LoadState(statePathOf(e))
	if err != nil || st.ClientID != "mock-client" {
		t.Fatalf("state %+v %v", st, err)
	}

	// --reuse takes the api url and the client id from state.json: no
	// flag, no environment, no config file names them.
	r = runCmd(t, env(t, "BROWSER=curl -fsSL", "XDG_CONFIG_HOME="+envValue(e, "XDG_CONFIG_HOME")), "", "pair", "--reuse", "--json")
	if r.code != 0 {
		t.Fatalf("pair --reuse: exit %d\nstderr: %s", r.code, r.stderr)
	}
	var again pairing.Summary
	json.Unmarshal([]byte(r.stdout), &again)
	if !again.Reused || again.DeviceID != res.DeviceID || again.APIURL != apiURL || len(m.Devices()) != 1 {
		t.Errorf("reuse result %+v", again)
	}
}

// A wrong api url fails in seconds with exit 6, before any browser opens.
// "In seconds" is the command's deadline: a pair still running after 10 s
// (a hang on the dead address) is killed and fails the test.
func TestPairAgainstADeadAddressExits6Quickly(t *testing.T) {
	requireKeyring(t)
	marker := t.TempDir() + "/browser-ran"
	browser := fakeBrowser(t, "touch "+marker+"\n")
	r := runCmdWithin(t, 10*time.Second, env(t, "BROWSER="+browser), "", "pair", "--api-url", "http://127.0.0.1:1", "--client-id", "mock-client", "--device-type", "mock-controller")
	if r.code != ExitSignIn {
		t.Fatalf("exit %d, want %d\nstderr: %s", r.code, ExitSignIn, r.stderr)
	}
	if !strings.Contains(r.stderr, "does not answer at http://127.0.0.1:1") || !strings.Contains(r.stderr, "nothing was created") {
		t.Errorf("stderr: %s", r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a browser was opened for a dead address")
	}
}

// The browser command runs without hubgate's secrets in its environment
// (before the fix it inherited HUBGATE_CLIENT_SECRET), and its exit status
// is honoured: a failing browser makes pair read the pasted address from
// stdin, and say so.
func TestPairBrowserEnvironmentAndFailureFallBackToStdin(t *testing.T) {
	requireKeyring(t)
	requireCurl(t)
	clearPairSecrets(t)
	t.Cleanup(func() { clearPairSecrets(t) })
	m, apiURL := startMock(t, mockhub.Config{}, nil)
	dump := t.TempDir() + "/browser-env"
	loc := t.TempDir() + "/location"
	// The "browser" records its environment, loads the sign-in page
	// without following the redirect (it runs "elsewhere"), keeps the
	// address it was sent to, and fails.
	browser := fakeBrowser(t, `env > `+dump+`
curl -sS -o /dev/null -w '%{redirect_url}' "$1" > `+loc+`
exit 3
`)
	e := env(t, "BROWSER="+browser, EnvClientSecret+"="+mockhub.DefaultClientSecret, "HUBGATE_API_URL="+apiURL,
		"HUBGATE_CLIENT_ID=mock-client", "HUBGATE_DEVICE_TYPE=mock-controller")
	// stdin: the pasted address, as the browser writes it. loc is a FIFO:
	// cat waits for the browser to open it and copies what it wrote, up to
	// its end (pair reads stdin only once the browser failed). The binary:
	// the browser's environment is what a process hands its child.
	r := runShell(t, e, "mkfifo "+loc+" && { cat "+loc+"; echo; } | "+binary+" pair --timeout 30s")
	if r.code != 0 {
		t.Fatalf("pair: exit %d\nstderr: %s", r.code, r.stderr)
	}
	raw, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), mockhub.DefaultClientSecret) || strings.Contains(string(raw), EnvClientSecret) {
		t.Error("the browser command saw HUBGATE_CLIENT_SECRET")
	}
	if !strings.Contains(string(raw), "HUBGATE_API_URL=") {
		t.Error("the browser's environment lost ordinary variables")
	}
	if !strings.Contains(r.stderr, "Could not open a browser") || !strings.Contains(r.stderr, "exit status 3") || !strings.Contains(r.stderr, "from stdin") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if len(m.Devices()) != 1 {
		t.Error("not paired")
	}
}

// A fixed redirect address (--redirect-uri) is the one the service sees
// and the one the listener answers on, and it is recorded for --reuse.
func TestPairWithAFixedRedirectAddress(t *testing.T) {
	requireKeyring(t)
	requireCurl(t)
	clearPairSecrets(t)
	t.Cleanup(func() { clearPairSecrets(t) })
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/", ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	// The mock knows only this registered address.
	m, apiURL := startMock(t, mockhub.Config{RedirectURIs: []string{redirect}}, nil)
	e := env(t, "BROWSER=curl -fsSL")
	r := runCmd(t, e, "", "pair", "--api-url", apiURL, "--client-id", "mock-client", "--device-type", "mock-controller", "--redirect-uri", redirect)
	if r.code != 0 {
		t.Fatalf("pair: exit %d\nstderr: %s", r.code, r.stderr)
	}
	if len(m.Devices()) != 1 {
		t.Fatal("not paired")
	}
	if st, err := pairing.LoadState(statePathOf(e)); err != nil || st.RedirectURI != redirect {
		t.Errorf("state %+v %v", st, err)
	}
	// An address that is not on this machine is a configuration error.
	r = runCmd(t, e, "", "pair", "--replace", "--api-url", apiURL, "--client-id", "mock-client", "--device-type", "mock-controller", "--redirect-uri", "http://example.com:80/")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "remote.redirect_uri") {
		t.Errorf("remote redirect: exit %d %s", r.code, r.stderr)
	}
}

// runShell runs script with sh -c (for pipelines into the binary).
func runShell(t *testing.T, environ []string, script string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Env = environ
	cmd.WaitDelay = 5 * time.Second // a child left waiting on a FIFO when the test failed
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}
