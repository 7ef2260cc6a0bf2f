package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/philippseith/signalr"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// mockProc is `hubgate mock` running in this process.
type mockProc struct {
	*inProc
	t   testing.TB
	url string
}

// startMockProc runs `hubgate mock args...` in this process (stopped at
// the test's end) and waits for its URL line on stdout, the line it
// prints once it serves, after all it says on stderr.
func startMockProc(tb testing.TB, environ []string, args ...string) *mockProc {
	tb.Helper()
	p := startInProc(tb, environ, nil, append([]string{"mock"}, args...)...)
	line, _, _ := strings.Cut(p.waitStdout(tb, "\n"), "\n")
	return &mockProc{inProc: p, t: tb, url: strings.TrimSpace(line)}
}

// Stderr is what the mock said on stderr so far.
func (p *mockProc) Stderr() string { return p.stderr.String() }

// stop delivers sig and returns the mock's exit code.
func (p *mockProc) stop(sig syscall.Signal) int {
	p.t.Helper()
	p.signal(sig)
	return p.wait(p.t, 20*time.Second)
}

type mockReceiver struct {
	signalr.Receiver
	commands chan [2]any
}

func (r *mockReceiver) DeviceCommand(command string, macro deviceapi.Macro) {
	r.commands <- [2]any{command, macro}
}

// The receiver must have every method the hub calls: a missing one makes
// the Go client answer with a bad completion, and the hub closes the
// connection.
func (r *mockReceiver) StartListening()                          {}
func (r *mockReceiver) StopListening()                           {}
func (r *mockReceiver) DeviceSettingsUpdate(json.RawMessage)     {}
func (r *mockReceiver) DeviceProfileUpdate(deviceapi.UserDevice) {}

type quietLogger struct{}

func (quietLogger) Log(...any) error { return nil }

// followRedirect posts the hub's negotiate and returns where a SignalR
// client connects and with which headers: the redirect's url with its
// access token as bearer, or the hub itself when it is direct.
func followRedirect(ctx context.Context, base, tok string) (string, http.Header, error) {
	h := http.Header{"Authorization": {"Bearer " + tok}, "X-Device-Token": {tok}}
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/device/negotiate?negotiateVersion=1", nil)
	if err != nil {
		return "", nil, err
	}
	req.Header = h.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	var neg struct{ URL, AccessToken string }
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&neg) != nil {
		return "", nil, fmt.Errorf("negotiate: %s", resp.Status)
	}
	if neg.URL == "" {
		return base + "/device", h, nil
	}
	h.Set("Authorization", "Bearer "+neg.AccessToken)
	return neg.URL, h, nil
}

// connectDevice connects the Go SignalR client as a device and calls
// VerifySelf.
func connectDevice(t *testing.T, base, tok string) *mockReceiver {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &mockReceiver{commands: make(chan [2]any, 10)}
	c, err := signalr.NewClient(ctx,
		signalr.WithConnector(func() (signalr.Connection, error) {
			cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
			defer ccancel()
			// The library does not follow the negotiate redirect of the
			// mock (as the real service, its default): follow it here.
			u, h, err := followRedirect(cctx, base, tok)
			if err != nil {
				return nil, err
			}
			return signalr.NewHTTPConnection(cctx, u,
				signalr.WithHTTPHeaders(func() http.Header { return h }),
				signalr.WithTransports(signalr.TransportWebSockets))
		}),
		signalr.WithReceiver(r), signalr.Logger(quietLogger{}, false))
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	t.Cleanup(func() { cancel(); c.Stop() })
	select {
	case res := <-c.Invoke("VerifySelf"):
		if res.Error != nil {
			t.Fatalf("VerifySelf: %v", res.Error)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("VerifySelf never answered")
	}
	return r
}

func TestMockCommand(t *testing.T) {
	const secret = "acceptance-test-secret"
	e := env(t, "HUBGATE_MOCK_CLIENT_SECRET="+secret)
	p := startMockProc(t, e, "--listen", "127.0.0.1:0", "--device-type", "pad")
	if !strings.HasPrefix(p.url, "http://127.0.0.1:") {
		t.Fatalf("URL %q", p.url)
	}

	// create-device prints the device and its token.
	r := runCmd(t, e, "", "mock", "create-device", "--url", p.url, "--name", "cli pad")
	var created mockhub.CreatedDevice
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &created) != nil || created.Device.NameOverride != "cli pad" || created.Token.Token == "" {
		t.Fatalf("create-device: %+v", r)
	}
	id := created.Device.ID

	// send before a device connects: 409, a clear message, exit 1.
	r = runCmd(t, e, "", "mock", "send", "--url", p.url, "--device", id, "--command", "hello")
	if r.code != ExitError || !strings.Contains(r.stderr, "no hub connection") {
		t.Errorf("send without a connection: %+v", r)
	}

	rx := connectDevice(t, p.url, created.Token.Token)
	macroFile := filepath.Join(t.TempDir(), "macro.json")
	os.WriteFile(macroFile, []byte(`{"id":"m-1","name":"Greet","commands":["hello"],"events":[{"eventType":"Type","text":"hi there"}]}`), 0o600)
	// The URL can come from HUBGATE_MOCK_URL.
	r = runCmd(t, append(e, "HUBGATE_MOCK_URL="+p.url), "", "mock", "send", "--device", id, "--command", "hello", "--macro", macroFile)
	if r.code != 0 || !strings.Contains(r.stdout, "delivered to 1 connection") {
		t.Fatalf("send: %+v", r)
	}
	select {
	case got := <-rx.commands:
		m := got[1].(deviceapi.Macro)
		if got[0] != "hello" || m.ID != "m-1" || m.Events[0].Text() != "hi there" {
			t.Errorf("received %v", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the device never received the command")
	}
	// The macro can come from stdin.
	r = runCmd(t, e, `{"id":"m-2","name":"Stdin","commands":["x"],"events":[]}`, "mock", "send", "--url", p.url, "--device", id, "--command", "x", "--macro", "-", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"delivered": 1`) {
		t.Fatalf("send --macro -: %+v", r)
	}
	if got := <-rx.commands; got[1].(deviceapi.Macro).Name != "Stdin" {
		t.Errorf("received %v", got)
	}
	// --event: the events of the two patterns an app user sets up (a Type
	// macro, a custom action) reach the device as typed, nulls kept.
	typeEvent := `{"eventType":"Type","typedPhrase":"water the plants"}`
	customEvent := `{"eventType":"DeviceTypeCustomAction","deviceTypeCustomActionId":"ask-agent","deviceTypeId":null,"additionalInputContent":"summarise my day"}`
	r = runCmd(t, e, "", "mock", "send", "--url", p.url, "--device", id, "--command", "water", "--event", typeEvent, "--event", customEvent)
	if r.code != 0 || !strings.Contains(r.stdout, "delivered to 1 connection") {
		t.Fatalf("send --event: %+v", r)
	}
	got := <-rx.commands
	m := got[1].(deviceapi.Macro)
	if got[0] != "water" || m.Name != "water" || len(m.Commands) != 1 || m.Commands[0] != "water" || m.ID == "" || len(m.Events) != 2 || m.Events[0].Text() != "water the plants" {
		t.Fatalf("received %v", got)
	}
	if a, ok := m.Events[1].CustomAction(); !ok || a.ID != "ask-agent" || a.Content != "summarise my day" {
		t.Errorf("custom action %+v", m.Events[1])
	}
	if b, _ := json.Marshal(m.Events[1]); string(b) != customEvent {
		t.Errorf("the event arrived as %s, sent %s", b, customEvent)
	}
	// --event appends to --macro's events.
	r = runCmd(t, e, `{"id":"1","name":"Both","commands":[],"events":[{"eventType":"KeyPress","keys":["a"]}]}`, "mock", "send", "--url", p.url,
		"--device", id, "--command", "both", "--macro", "-", "--event", typeEvent)
	if got := <-rx.commands; r.code != 0 || got[1].(deviceapi.Macro).ID != "1" || len(got[1].(deviceapi.Macro).Events) != 2 {
		t.Errorf("send --macro --event: %+v %v", r, got)
	}
	// A bad --event is a usage error naming it.
	for _, bad := range []string{`{"typedPhrase":`, `42`} {
		r = runCmd(t, e, "", "mock", "send", "--url", p.url, "--device", id, "--command", "x", "--event", typeEvent, "--event", bad)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "--event #2") {
			t.Errorf("bad --event %s: %+v", bad, r)
		}
	}

	// devices --json shows the connection and the flags.
	r = runCmd(t, e, "", "mock", "devices", "--url", p.url, "--json")
	var list []mockhub.DeviceInfo
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) != 1 || !list[0].Connected || !list[0].Device.IsVerified || list[0].DeviceTypeID != "pad" {
		t.Errorf("devices: %+v", r)
	}
	r = runCmd(t, e, "", "mock", "devices", "--url", p.url)
	if r.code != 0 || !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "cli pad") {
		t.Errorf("devices table: %+v", r)
	}

	// events: VerifySelf is there, the token is not.
	r = runCmd(t, e, "", "mock", "events", "--url", p.url, "--json")
	var page mockhub.EventsPage
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &page) != nil {
		t.Fatalf("events: %+v", r)
	}
	verified := false
	for _, ev := range page.Events {
		verified = verified || ev.Action == "VerifySelf" && ev.DeviceID == id
	}
	if !verified || strings.Contains(r.stdout, created.Token.Token) {
		t.Errorf("events: %s", r.stdout)
	}
	if r := runCmd(t, e, "", "mock", "events", "--url", p.url, "--since", "1"); r.code != 0 || !strings.Contains(r.stdout, "VerifySelf") {
		t.Errorf("events text: %+v", r)
	}

	// Listening, settings, profile, faults, disable-token.
	for _, args := range [][]string{
		{"start-listening", "--device", id},
		{"stop-listening", "--device", id},
	} {
		if r := runCmd(t, e, "", append(append([]string{"mock"}, args...), "--url", p.url)...); r.code != 0 || !strings.Contains(r.stdout, "delivered to 1") {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if r := runCmd(t, e, `{"volume":3}`, "mock", "settings", "--url", p.url, "--device", id, "--file", "-"); r.code != 0 {
		t.Errorf("settings: %+v", r)
	}
	if r := runCmd(t, e, `{"id":"p","name":"Office"}`, "mock", "profile", "--url", p.url, "--device", id, "--file", "-"); r.code != 0 || !strings.Contains(r.stdout, "profile set") {
		t.Errorf("profile: %+v", r)
	}
	if r := runCmd(t, e, "", "mock", "fault", "--url", p.url, "--refuse-for", "1m", "--json"); r.code != 0 || !strings.Contains(r.stdout, "refusingUntil") {
		t.Errorf("fault: %+v", r)
	}
	if r := runCmd(t, e, "", "mock", "fault", "--url", p.url, "--refuse-for", "0s"); r.code != 0 {
		t.Errorf("fault end: %+v", r)
	}
	// The hub is behind the negotiate redirect (the mock says so: checked
	// once its stderr is whole); its tokens can be expired.
	if r := runCmd(t, e, "", "mock", "fault", "--url", p.url, "--expire-service-tokens", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"expiredServiceTokens": 1`) {
		t.Errorf("fault --expire-service-tokens: %+v", r)
	}
	if r := runCmd(t, e, "", "mock", "fault", "--url", p.url, "--service-error-for", "1m"); r.code != 0 || !strings.Contains(r.stdout, "negotiate fails until") {
		t.Errorf("fault --service-error-for: %+v", r)
	}
	if r := runCmd(t, e, "", "mock", "fault", "--url", p.url, "--service-error-for", "0s"); r.code != 0 {
		t.Errorf("fault --service-error-for 0s: %+v", r)
	}
	if r := runCmd(t, e, "", "mock", "disable-token", "--url", p.url, "--token-id", created.Token.ID); r.code != 0 || !strings.Contains(r.stdout, "1 connection(s) dropped") {
		t.Errorf("disable-token: %+v", r)
	}

	// The client secret came from HUBGATE_MOCK_CLIENT_SECRET.
	tokenStatus := func(secret string) (int, string) {
		req, _ := http.NewRequest("POST", p.url+"/signin/token", strings.NewReader(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(mockhub.DefaultClientID, secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Error string `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body.Error
	}
	if st, code := tokenStatus(secret); st != 400 || code != "invalid_grant" {
		t.Errorf("with the configured secret: %d %s", st, code)
	}
	if st, code := tokenStatus(mockhub.DefaultClientSecret); st != 401 || code != "invalid_client" {
		t.Errorf("with the default secret: %d %s", st, code)
	}
	if strings.Contains(p.Stderr(), secret) {
		t.Error("the client secret reached the log")
	}

	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM exit %d; stderr %s", code, p.Stderr())
	}
	if !strings.Contains(p.Stderr(), "/device/negotiate redirects to the mock SignalR service at http://127.0.0.1:") {
		t.Errorf("the mock does not say where its hub is: %s", p.Stderr())
	}
}

func TestMockStopsOnSIGINTWithAConnectedDevice(t *testing.T) {
	e := env(t)
	// The old direct hub (--direct-hub): a device connects at /device.
	p := startMockProc(t, e, "--listen", "127.0.0.1:0", "--deny-consent", "--direct-hub")
	r := runCmd(t, e, "", "mock", "create-device", "--url", p.url)
	var created mockhub.CreatedDevice
	json.Unmarshal([]byte(r.stdout), &created)
	connectDevice(t, p.url, created.Token.Token)
	// --deny-consent: the authorization page redirects with access_denied.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(p.url + "/signin/authorize?" + url.Values{
		"response_type": {"code"}, "client_id": {"mock-client"}, "redirect_uri": {"http://127.0.0.1:9/cb"}, "state": {"s"},
		"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"},
	}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc, _ := url.Parse(resp.Header.Get("Location")); resp.StatusCode != 302 || loc.Query().Get("error") != "access_denied" {
		t.Errorf("deny-consent: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if code := p.stop(syscall.SIGINT); code != 0 {
		t.Errorf("SIGINT exit %d; stderr %s", code, p.Stderr())
	}
	// Its stderr is whole once it exited.
	if !strings.Contains(p.Stderr(), "the hub is served directly at") {
		t.Errorf("the mock does not say its hub is direct: %s", p.Stderr())
	}
}

func TestMockUsageErrors(t *testing.T) {
	e := env(t)
	for _, args := range [][]string{
		{"mock", "--listen", "nonsense"},
		{"mock", "--hub-timeout", "-1s"},
		{"mock", "bogus"},
		{"mock", "send", "--url", "http://127.0.0.1:1", "--device", "x"}, // nothing to send
		{"mock", "send", "--url", "http://127.0.0.1:1", "--macro", "m.json", "--macro-name", "Save"},
		{"mock", "send", "--url", "not a url", "--device", "x", "--command", "y"},
		{"mock", "fault", "--url", "http://127.0.0.1:1"},
		{"mock", "fault", "--url", "http://127.0.0.1:1", "--service-error-for", "-1s"},
		{"mock", "--service-listen", "nonsense"},
		{"mock", "--hub-token-ttl", "-1s"},
		{"mock", "events", "--url", "http://127.0.0.1:1", "--since", "-2"},
	} {
		r := runCmd(t, e, "", args...)
		if r.code != ExitUsage || !strings.HasPrefix(r.stderr, "hubgate: ") {
			t.Errorf("%v: exit %d stderr %q", args, r.code, r.stderr)
		}
	}
	// A mistyped subcommand of mock gets the nearest one, as hubgate's own.
	if r := runCmd(t, e, "", "mock", "sned"); r.code != ExitUsage || !strings.Contains(r.stderr, `(did you mean "send"?)`) {
		t.Errorf("mock sned: exit %d %q, want a suggestion of send", r.code, r.stderr)
	}
	// A taken --listen (or --service-listen) address: exit 5, as for
	// every resource that is taken.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, args := range [][]string{{"mock", "--listen", ln.Addr().String()}, {"mock", "--listen", "127.0.0.1:0", "--service-listen", ln.Addr().String()}} {
		if r := runCmd(t, e, "", args...); r.code != ExitUnavailable || !strings.Contains(r.stderr, "127.0.0.1:0 takes any free port") {
			t.Errorf("%v on a taken port: exit %d %q, want 5", args, r.code, r.stderr)
		}
	}
	// A mock that is not running: a plain error.
	r := runCmd(t, e, "", "mock", "devices", "--url", "http://127.0.0.1:1")
	if r.code != ExitError || !strings.Contains(r.stderr, "mock admin API") {
		t.Errorf("devices against nothing: %+v", r)
	}
	r = runCmd(t, e, "", "mock", "--help")
	for _, want := range []string{"--listen", "HUBGATE_MOCK_CLIENT_SECRET", "send", "fault", "events", "disable-token"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("mock --help lacks %q", want)
		}
	}
}
