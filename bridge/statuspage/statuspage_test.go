package statuspage_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules/rulestest"
	"github.com/hubgate/hubgate/bridge/statuspage"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub"
	"github.com/hubgate/hubgate/internal/testenv"
)

const key = "statuspage-test-key-0123456789abcdef"

// fakeHub delivers the test's commands; the rest is real (the Automate
// server with the scripted engine, the client, the journal, the bridge).
type fakeHub struct {
	events chan hub.Event
	mu     sync.Mutex
	seq    uint64
}

func (f *fakeHub) Events() <-chan hub.Event      { return f.events }
func (f *fakeHub) Listening() bool               { return true }
func (f *fakeHub) State() hub.State              { return hub.State{Status: hub.StatusListening} }
func (f *fakeHub) Device() *deviceapi.UserDevice { return nil }
func (f *fakeHub) command(text string) {
	f.mu.Lock()
	f.seq++
	ev := hub.Event{Kind: hub.KindDeviceCommand, Command: text, Seq: f.seq, Session: 1, Received: time.Now()}
	f.mu.Unlock()
	f.events <- ev
}

const pageRules = `
rules:
  - name: slow
    match: {command_glob: "slow *"}
    run:
      prompt: "{{.Command}}\n#!sleep 30000\n#!answer done {{.Command}}"
  - name: hello
    match: {command: hello}
    run:
      prompt: "hi\n#!answer Hello from the status page test"
  - name: pick
    match: {command: pick}
    ask: true
    run:
      prompt: "p\n#!tool ask_person {\"question\":\"Which colour?\",\"choices\":[\"red\",\"blue\"]}\n#!answer you chose ${result}"
`

// startBridge runs a real bridge with pageRules and a 2s cancel grace,
// and returns it with its hub and journal.
func startBridge(t *testing.T) (*bridge.Bridge, *fakeHub, *journal.Journal) {
	t.Helper()
	return startBridgeWith(t, pageRules, 2*time.Second)
}

// startBridgeWith runs a real bridge with rules (YAML) and a cancel grace.
func startBridgeWith(t *testing.T, rulesYAML string, grace time.Duration) (*bridge.Bridge, *fakeHub, *journal.Journal) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	srv, err := server.New(server.Config{Key: key, Assistant: scripted.New(scripted.Config{Logger: quiet}), Workspace: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	client, err := automate.NewClient(automate.ClientOptions{BaseURL: ts.URL, Key: key, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	file, err := rulestest.Parse([]byte(rulesYAML))
	if err != nil {
		t.Fatal(err)
	}
	set, err := file.Compile()
	if err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(filepath.Join(t.TempDir(), "journal.db"), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fh := &fakeHub{events: make(chan hub.Event, 10)}
	b, err := bridge.New(bridge.Options{Hub: fh, Automate: client, Journal: j, Rules: set, CancelGrace: grace,
		DeviceID: "device-under-test", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		j.Close()
		sctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		srv.Close(sctx)
		ts.Close()
	})
	return b, fh, j
}

// servePage serves the page of b on 127.0.0.1:<any port>.
func servePage(t *testing.T, b *bridge.Bridge) *statuspage.Server {
	t.Helper()
	s, err := statuspage.Listen("127.0.0.1:0", statuspage.Options{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestStatusPageInHeadlessChromium(t *testing.T) {
	b, fh, j := startBridge(t)
	events := b.Subscribe(t.Context(), bridge.SubscribeOptions{})
	fh.command("hello") // a finished run with its answer in the history
	for e := range events {
		if e.Kind == bridge.EventFinished {
			break
		}
	}
	page := servePage(t, b)
	shot := testenv.ArtifactPath(t, "statuspage.png")
	const command = "slow report on the garden"

	var result struct {
		FirstStatus           int    `json:"firstStatus"`
		LoginStatus           int    `json:"loginStatus"`
		AddressAfterLoad      string `json:"addressAfterLoad"`
		LoginAgain            int    `json:"loginAgain"`
		LoginAgainBody        string `json:"loginAgainBody"`
		LoginAgainCookies     int    `json:"loginAgainCookies"`
		TokenStatus           int    `json:"tokenStatus"`
		TokenAddressAfterLoad string `json:"tokenAddressAfterLoad"`
		Cookies               []struct {
			Name     string `json:"name"`
			HTTPOnly bool   `json:"httpOnly"`
			SameSite string `json:"sameSite"`
		} `json:"cookies"`
		CurrentShown       string   `json:"currentShown"`
		CancelResult       string   `json:"cancelResult"`
		CurrentAfterCancel string   `json:"currentAfterCancel"`
		Events             []string `json:"events"`
		PostWithoutHeader  int      `json:"postWithoutHeader"`
		WithoutToken       int      `json:"withoutToken"`
		ForeignHost        int      `json:"foreignHost"`
		ForeignHostBody    string   `json:"foreignHostBody"`
	}
	testenv.RunBrowserScript(t, "statuspage-e2e.cjs",
		[]string{"PAGE_URL=" + page.URL(), "LOGIN_URL=" + page.NewLoginURL(), "SCREENSHOT=" + shot, "COMMAND=" + command},
		func() { fh.command(command) }, &result)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}

	// Logged in by the one-time login address: 303, then the page at /.
	origin := "http://" + page.Addr().String()
	if result.LoginStatus != http.StatusSeeOther || result.FirstStatus != 200 || result.AddressAfterLoad != origin+"/" {
		t.Errorf("login %d, then %d at %q; want 303, then 200 at %s/", result.LoginStatus, result.FirstStatus, result.AddressAfterLoad, origin)
	}
	if result.LoginAgain != http.StatusForbidden || !strings.Contains(result.LoginAgainBody, "hubgate open") || result.LoginAgainCookies != 0 {
		t.Errorf("the login address used again: %d %q with %d cookies, want 403 and none", result.LoginAgain, result.LoginAgainBody, result.LoginAgainCookies)
	}
	if result.TokenStatus != 200 || result.TokenAddressAfterLoad != origin+"/" {
		t.Errorf("the token address: %d, then at %q", result.TokenStatus, result.TokenAddressAfterLoad)
	}
	if len(result.Cookies) != 1 || !result.Cookies[0].HTTPOnly || result.Cookies[0].SameSite != "Strict" {
		t.Errorf("cookies %+v, want one HttpOnly SameSite=Strict", result.Cookies)
	}
	if !strings.Contains(result.CurrentShown, command) || !strings.Contains(result.CurrentShown, "running") {
		t.Errorf("current run shown as %q", result.CurrentShown)
	}
	if !strings.Contains(result.CancelResult, "cancel requested") || !strings.Contains(result.CurrentAfterCancel, "Nothing runs") {
		t.Errorf("after cancel: %q / %q", result.CancelResult, result.CurrentAfterCancel)
	}
	if result.PostWithoutHeader != http.StatusForbidden || result.WithoutToken != http.StatusUnauthorized {
		t.Errorf("POST without the token header: %d (want 403); page without token: %d (want 401)", result.PostWithoutHeader, result.WithoutToken)
	}
	// Under a foreign name resolving to 127.0.0.1 (DNS rebinding), the
	// browser reaches the page's server and is refused for the Host.
	if result.ForeignHost != http.StatusForbidden || !strings.Contains(result.ForeignHostBody, "answers only to 127.0.0.1") {
		// (Not the body: an answered page carries its token.)
		t.Errorf("the page under a foreign host name answered %d, want 403 for the Host", result.ForeignHost)
	}
	joined := strings.Join(result.Events, "\n")
	for _, want := range []string{"received DeviceCommand \"" + command + "\"", "run started", "cancel requested (the status page)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the live events lack %q:\n%s", want, joined)
		}
	}
	if !regexp.MustCompile(`\[#2\] run finished: (canceled|terminated)`).MatchString(joined) {
		t.Errorf("the live events lack the run's end:\n%s", joined)
	}
	// The journal agrees: the run was cancelled through the page.
	h, err := j.History(context.Background(), journal.HistoryQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].Command != command || (h[0].Status != automate.StatusCanceled && h[0].Status != automate.StatusTerminated) {
		t.Errorf("journal: %+v", h)
	}
}

// request sends a request to the page with a chosen Host header.
func request(t *testing.T, page *statuspage.Server, method, path, host string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+page.Addr().String()+path, strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestStatusPageRefusesForeignHostsStrangersAndForgeries(t *testing.T) {
	b, _, _ := startBridge(t)
	page := servePage(t, b)
	u, _ := url.Parse(page.URL())
	token := u.Query().Get("token")
	port := u.Port()
	cookie, csrf := newSession(t, page)

	for _, c := range []struct {
		name, method, path, host string
		header                   http.Header
		want                     int
	}{
		{"token in the URL", "GET", "/?token=" + token, "", nil, 200},
		{"cookie", "GET", "/api/state", "", http.Header{"Cookie": {cookie}}, 200},
		{"localhost", "GET", "/api/state", "localhost:" + port, http.Header{"Cookie": {cookie}}, 200},
		{"ipv6 loopback name", "GET", "/api/state", "[::1]:" + port, http.Header{"Cookie": {cookie}}, 200},
		{"no token", "GET", "/", "", nil, 401},
		{"no token, api", "GET", "/api/state", "", nil, 401},
		{"wrong token", "GET", "/?token=" + strings.Repeat("0", len(token)), "", nil, 401},
		{"wrong cookie", "GET", "/api/state", "", http.Header{"Cookie": {"hubgate_status_" + port + "=nope"}}, 401},
		{"rebinding name", "GET", "/?token=" + token, "evil.example:" + port, nil, 403},
		{"rebinding name with cookie", "GET", "/api/state", "attacker.test:" + port, http.Header{"Cookie": {cookie}}, 403},
		{"other port", "GET", "/api/state", "127.0.0.1:1", http.Header{"Cookie": {cookie}}, 403},
		{"no port", "GET", "/api/state", "127.0.0.1", http.Header{"Cookie": {cookie}}, 403},
		{"post without the CSRF header", "POST", "/api/cancel", "", http.Header{"Cookie": {cookie}}, 403},
		{"post with the access token as CSRF", "POST", "/api/cancel", "", http.Header{"Cookie": {cookie}, "X-Hubgate-CSRF": {token}}, 403},
		{"post with a foreign origin", "POST", "/api/cancel", "", http.Header{"Cookie": {cookie}, "X-Hubgate-CSRF": {csrf}, "Origin": {"http://evil.example"}}, 403},
		{"post, CSRF only in the header", "POST", "/api/cancel", "", http.Header{"X-Hubgate-CSRF": {csrf}}, 401},
		{"post done right", "POST", "/api/cancel", "", http.Header{"Cookie": {cookie}, "X-Hubgate-CSRF": {csrf}, "Origin": {"http://127.0.0.1:" + port}}, 200},
	} {
		resp, body := request(t, page, c.method, c.path, c.host, c.header)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %q, want %d", c.name, resp.StatusCode, body, c.want)
		}
		for k := range resp.Header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("%s: CORS header %s", c.name, k)
			}
		}
		if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("%s: no CSP", c.name)
		}
	}
	// The first answer sets the cookie, HttpOnly and SameSite=Strict.
	resp, body := request(t, page, "GET", "/?token="+token, "", nil)
	sc := resp.Header.Get("Set-Cookie")
	if !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Strict") || strings.Contains(sc, token) || strings.Contains(body, token) {
		t.Errorf("Set-Cookie %q (or the page) carries the access token, or the cookie is not HttpOnly and SameSite=Strict", sc)
	}
	// Listen refuses anything but 127.0.0.1.
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		if _, err := statuspage.Listen(addr, statuspage.Options{Backend: b}); err == nil {
			t.Errorf("Listen(%q) accepted", addr)
		}
	}
}
