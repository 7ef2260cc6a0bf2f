package statuspage_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/statuspage"
)

var csrfMeta = regexp.MustCompile(`<meta name="hubgate-csrf" content="([0-9a-f]{64})">`)

// newSession opens the page by its token address, as a browser given
// `hubgate open --print`'s address does, and returns the session cookie
// ("name=value") and the CSRF token the page embeds.
func newSession(t *testing.T, page *statuspage.Server) (cookie, csrf string) {
	t.Helper()
	u, _ := url.Parse(page.URL())
	resp, body := request(t, page, "GET", "/?token="+u.Query().Get("token"), "", nil)
	cs := resp.Cookies()
	m := csrfMeta.FindStringSubmatch(body)
	if resp.StatusCode != 200 || len(cs) != 1 || m == nil {
		t.Fatalf("the token address: %d, cookies %v, CSRF meta found %v", resp.StatusCode, resp.Cookies(), m != nil)
	}
	return cs[0].Name + "=" + cs[0].Value, m[1]
}

// The cookie is not the POST token: a cancel with the session cookie but
// without the session's CSRF token (or with another session's, or with
// the cookie's value) is refused with 403 and cancels nothing; with it,
// 200 and the run is cancelled. The CSRF token is never set as a cookie.
func TestCancelNeedsTheSessionsCSRFToken(t *testing.T) {
	b, fh, _ := startBridge(t)
	page := servePage(t, b)
	cookie, csrf := newSession(t, page)
	_, otherCSRF := newSession(t, page)
	if csrf == otherCSRF || strings.Contains(cookie, csrf) {
		t.Fatalf("two sessions share a CSRF token, or the cookie carries it")
	}
	origin := "http://" + page.Addr().String()

	events := b.Subscribe(t.Context(), bridge.SubscribeOptions{})
	fh.command("slow walk to the bakery")
	for e := range events {
		if e.Kind == bridge.EventStarted {
			break
		}
	}

	for _, c := range []struct {
		name   string
		header http.Header
	}{
		{"the cookie alone", http.Header{"Cookie": {cookie}, "Origin": {origin}}},
		{"another session's token", http.Header{"Cookie": {cookie}, "X-Hubgate-CSRF": {otherCSRF}, "Origin": {origin}}},
		{"the cookie's value as the token", http.Header{"Cookie": {cookie}, "X-Hubgate-CSRF": {strings.SplitN(cookie, "=", 2)[1]}, "Origin": {origin}}},
	} {
		resp, body := request(t, page, "POST", "/api/cancel", "", c.header)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "CSRF") {
			t.Errorf("%s: %d %q, want 403 naming the CSRF token", c.name, resp.StatusCode, body)
		}
	}
	st, err := b.Status(t.Context())
	if err != nil || st.Current == nil {
		t.Fatalf("a refused cancel stopped the run: %+v %v", st.Current, err)
	}
	resp, body := request(t, page, "POST", "/api/cancel", "", http.Header{"Cookie": {cookie}, "X-Hubgate-CSRF": {csrf}, "Origin": {origin}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"stopped":true`) {
		t.Fatalf("cancel with the CSRF token: %d %q, want 200 and the run stopped", resp.StatusCode, body)
	}
	for _, sc := range resp.Header.Values("Set-Cookie") {
		if strings.Contains(sc, csrf) {
			t.Errorf("the CSRF token was set as a cookie: %q", sc)
		}
	}
}
