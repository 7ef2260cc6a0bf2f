package statuspage_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/internal/testenv"
)

// stranger is the unprivileged user the test connects as (nobody).
var stranger = testenv.User{Name: "nobody", UID: 65534, GID: 65534}

// The page belongs to its owner: another local user (uid 65534, for real:
// the kernel names the peer's socket) is refused with 403 whatever they
// carry: a valid login code, the armed code-free login, the token, a
// valid session cookie, on the state, the event stream, and cancel with
// the CSRF token. None of it is spent by the refusals: the owner then logs
// in with the same code and the same armed login, and is served.
func TestAnotherUserIsRefusedWhateverTheyCarry(t *testing.T) {
	testenv.RequireRoot(t)
	b, fh, _ := startBridge(t)
	page := servePage(t, b)
	origin := "http://" + page.Addr().String()
	token := mustQuery(t, page.URL(), "token")
	code := page.NewLoginCode()
	armed := page.NewLoginURL()
	if armed != origin+"/login" {
		t.Fatalf("NewLoginURL() = %q, want the code-free %s/login", armed, origin)
	}
	cookie, csrf := newSession(t, page)

	events := b.Subscribe(t.Context(), bridge.SubscribeOptions{})
	fh.command("slow count the stars")
	for e := range events {
		if e.Kind == bridge.EventStarted {
			break
		}
	}

	withCookie := http.Header{"Cookie": {cookie}}
	for _, c := range []struct {
		name, method, path string
		header             http.Header
	}{
		{"login with a valid code", "GET", "/login?code=" + code, nil},
		{"the armed code-free login", "GET", "/login", nil},
		{"the token address", "GET", "/?token=" + token, nil},
		{"the page with a valid cookie", "GET", "/", withCookie},
		{"the state with a valid cookie", "GET", "/api/state", withCookie},
		{"the event stream with a valid cookie", "GET", "/api/events", withCookie},
		{"cancel with the cookie and the CSRF token", "POST", "/api/cancel",
			http.Header{"Cookie": {cookie}, "X-Hubgate-Csrf": {csrf}, "Origin": {origin}, "Content-Type": {"application/json"}}},
	} {
		if got := testenv.CurlAs(t, stranger, c.method, origin+c.path, c.header); got != http.StatusForbidden {
			t.Errorf("uid %d, %s: %d, want 403", stranger.UID, c.name, got)
		}
	}
	if st, err := b.Status(t.Context()); err != nil || st.Current == nil {
		t.Fatalf("the stranger's cancel stopped the run: %+v %v", st.Current, err)
	}

	// The owner: the same code and the armed login are still good.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/login?code=" + code, "/login"} {
		resp, err := noFollow.Get(origin + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
			t.Errorf("the owner at %s: %d, want 303 with a session cookie", strings.SplitN(path, "=", 2)[0], resp.StatusCode)
		}
	}
	if resp, _ := request(t, page, "GET", "/api/state", "", withCookie); resp.StatusCode != http.StatusOK {
		t.Errorf("the owner's state: %d", resp.StatusCode)
	}
	streamReq, _ := http.NewRequestWithContext(t.Context(), "GET", origin+"/api/events", nil)
	streamReq.Header.Set("Cookie", cookie)
	stream, err := http.DefaultClient.Do(streamReq)
	if err != nil {
		t.Fatal(err)
	}
	stream.Body.Close()
	if stream.StatusCode != http.StatusOK || !strings.HasPrefix(stream.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("the owner's event stream: %d %q", stream.StatusCode, stream.Header.Get("Content-Type"))
	}
	resp, body := request(t, page, "POST", "/api/cancel", "", http.Header{"Cookie": {cookie}, "X-Hubgate-CSRF": {csrf}, "Origin": {origin}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"stopped":true`) {
		t.Errorf("the owner's cancel: %d %q", resp.StatusCode, body)
	}
}

func mustQuery(t *testing.T, u, key string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil || p.Query().Get(key) == "" {
		t.Fatalf("%q has no %s: %v", u, key, err)
	}
	return p.Query().Get(key)
}
