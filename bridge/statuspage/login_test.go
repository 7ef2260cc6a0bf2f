package statuspage_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/bridge/statuspage"
	"github.com/hubgate/hubgate/internal/testutil"
)

// noBackend stands in for the bridge: the login tests load only the page
// itself, which asks the bridge nothing.
type noBackend struct{ statuspage.Backend }

// The page served over testutil's pipe listener, whose address is
// 127.0.0.1:80: the page's own origin is this.
const pipeOrigin = "http://127.0.0.1:80"

// loginPage serves a page inside the calling bubble; it returns the
// handler, a client (no cookie jar, redirects not followed) and the log.
// Every connection's peer is the test's own user.
func loginPage(t *testing.T) (*statuspage.Handler, *http.Client, *testutil.SyncBuffer) {
	t.Helper()
	return pageWithPeers(t, func(netip.AddrPort, netip.AddrPort) (int, error) { return os.Geteuid(), nil })
}

// pageWithPeers is loginPage with peerUID telling the user at the other
// end of each connection.
func pageWithPeers(t *testing.T, peerUID func(local, remote netip.AddrPort) (int, error)) (*statuspage.Handler, *http.Client, *testutil.SyncBuffer) {
	t.Helper()
	var logs testutil.SyncBuffer
	h, err := statuspage.New(statuspage.Options{Backend: noBackend{}, PeerUID: peerUID,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	// A pipe's own address is "pipe": the page learns its port from the
	// accepted connection's address, which a socket would give it, and
	// asks peerUID about the two ends.
	c := testutil.ServePipe(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.RemoteAddr = "127.0.0.1:40000"
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80})))
	}))
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return h, c, &logs
}

// get sends GET path with a Host header (empty: the page's own).
func get(t *testing.T, c *http.Client, path, host string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, pipeOrigin+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// refused checks a login address's refusal: 403 naming `hubgate open`,
// no cookie.
func refused(t *testing.T, what string, resp *http.Response, body string) {
	t.Helper()
	if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("%s: %d, cookies %v, want 403 and none", what, resp.StatusCode, resp.Cookies())
	}
	if !strings.Contains(body, "hubgate open") && !strings.Contains(body, "answers only to 127.0.0.1") {
		t.Errorf("%s: body %q", what, body)
	}
}

// A one-time login address sets the page's session cookie and sends the
// browser to the page (303 to /), which then loads with the cookie; used
// again, or under a foreign Host, or with a code never minted, it is
// refused and sets nothing; no code ever reaches the log.
func TestLoginCodeOpensThePageOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, c, logs := loginPage(t)
		code := h.NewLoginCode()
		if len(code) < 32 {
			t.Fatalf("code %q: fewer than 128 bits", code)
		}

		resp, body := get(t, c, "/login?code="+code, "")
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
			t.Fatalf("login: %d to %q, want 303 to /: %s", resp.StatusCode, resp.Header.Get("Location"), body)
		}
		cookies := resp.Cookies()
		if len(cookies) != 1 || cookies[0].Name != "hubgate_status_80" || cookies[0].Value == "" || strings.Contains(cookies[0].Value, h.Token()) ||
			!cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Path != "/" {
			t.Fatalf("login set %v, want the session cookie (HttpOnly, SameSite=Strict, Path=/)", resp.Header.Values("Set-Cookie"))
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("login answer without the CSP: %q", csp)
		}

		// A browser follows the 303 with the cookie: the page loads.
		jar, err := cookiejar.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		browser := &http.Client{Transport: c.Transport, Jar: jar}
		if resp, _ := get(t, browser, "/", ""); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("the page without a login: %d, want 401", resp.StatusCode)
		}
		resp, body = get(t, browser, "/login?code="+h.NewLoginCode(), "")
		if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/" || resp.Request.URL.RawQuery != "" ||
			!strings.Contains(body, "<title>hubgate</title>") {
			t.Fatalf("following the login address: %d at %s", resp.StatusCode, resp.Request.URL)
		}

		// One use only.
		resp, body = get(t, c, "/login?code="+code, "")
		refused(t, "the code used again", resp, body)
		resp, body = get(t, c, "/login?code="+strings.Repeat("0", len(code)), "")
		refused(t, "a code never minted", resp, body)
		resp, body = get(t, c, "/login", "")
		refused(t, "no code", resp, body)

		// A foreign Host (DNS rebinding) is refused before the code is
		// looked at: the code stays good for the page's own origin.
		fresh := h.NewLoginCode()
		resp, body = get(t, c, "/login?code="+fresh, "rebound.example:80")
		refused(t, "a foreign Host", resp, body)
		if resp, _ := get(t, c, "/login?code="+fresh, ""); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("the code after a foreign Host's try: %d, want 303", resp.StatusCode)
		}

		log := logs.String()
		if !strings.Contains(log, "logged in with a one-time code") || !strings.Contains(log, "refused a login address") {
			t.Fatalf("the log lacks the logins:\n%s", log)
		}
		for i, secret := range []string{code, fresh, h.Token()} {
			if strings.Contains(log, secret) {
				t.Errorf("secret %d (the codes, the token) is in the log", i)
			}
		}
	})
}

// A code is good for 60 seconds (on the bubble's fake clock).
func TestLoginCodeExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, c, _ := loginPage(t)
		early, late := h.NewLoginCode(), h.NewLoginCode()
		time.Sleep(59 * time.Second)
		if resp, _ := get(t, c, "/login?code="+late, ""); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("a code 59 s old: %d, want 303", resp.StatusCode)
		}
		time.Sleep(2 * time.Second)
		resp, body := get(t, c, "/login?code="+early, "")
		refused(t, "a code 61 s old", resp, body)
	})
}

// At most 16 codes are outstanding: a 17th drops the oldest.
func TestLoginCodesAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, c, _ := loginPage(t)
		var codes []string
		for range 17 {
			codes = append(codes, h.NewLoginCode())
		}
		resp, body := get(t, c, "/login?code="+codes[0], "")
		refused(t, "the oldest of 17 codes", resp, body)
		for i, code := range codes[1:] {
			if resp, _ := get(t, c, "/login?code="+code, ""); resp.StatusCode != http.StatusSeeOther {
				t.Errorf("code %d of 17: %d, want 303", i+2, resp.StatusCode)
			}
		}
	})
}

// Where the page knows its peers' users, the login address holds no
// code: asking for it arms one login, which the owner's connection
// spends; a second needs another `hubgate open`; a browser that already
// holds a session is sent on and spends nothing. Another user's
// connection, or one the kernel cannot name, is refused with 403 on every
// path, the armed login and a valid code included, and spends neither.
func TestCodeFreeLoginAndStrangers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stranger := false
		h, c, logs := pageWithPeers(t, func(netip.AddrPort, netip.AddrPort) (int, error) {
			if stranger {
				return os.Geteuid() + 1, nil
			}
			return os.Geteuid(), nil
		})
		if p := h.NewLoginPath(); p != "/login" {
			t.Fatalf("NewLoginPath() = %q, want the code-free /login", p)
		}
		code := h.NewLoginCode()
		stranger = true
		for _, path := range []string{"/login", "/login?code=" + code, "/", "/api/state", "/api/events"} {
			resp, body := get(t, c, path, "")
			if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 || !strings.Contains(body, "belongs to uid") {
				t.Errorf("another user at %s: %d %q, want 403", strings.SplitN(path, "=", 2)[0], resp.StatusCode, body)
			}
		}
		stranger = false
		resp, _ := get(t, c, "/login", "")
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
			t.Fatalf("the owner's code-free login: %d, want 303 with a cookie", resp.StatusCode)
		}
		session := resp.Cookies()[0]
		resp, body := get(t, c, "/login", "")
		refused(t, "the code-free login spent", resp, body)
		req, _ := http.NewRequest(http.MethodGet, pipeOrigin+"/login", nil)
		req.AddCookie(session)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 0 {
			t.Fatalf("a browser with a session at /login: %d, want 303 and no new cookie", resp.StatusCode)
		}
		if resp, _ := get(t, c, "/login?code="+code, ""); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("the code the stranger was refused with: %d, want 303 for the owner", resp.StatusCode)
		}
		h.NewLoginPath()
		time.Sleep(pastLoginLife)
		resp, body = get(t, c, "/login", "")
		refused(t, "an armed login after 61 s", resp, body)
		if !strings.Contains(logs.String(), "refused a request of another user") {
			t.Errorf("the log lacks the refusals:\n%s", logs.String())
		}
	})
}

// pastLoginLife is just past a login's life.
const pastLoginLife = statuspage.LoginCodeTTL + time.Second

// A login `hubgate open` withdraws (no browser took it) is refused
// afterwards, code-free or with a code; withdrawing a used or unknown
// one reports false.
func TestRevokedLoginIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, c, _ := pageWithPeers(t, func(netip.AddrPort, netip.AddrPort) (int, error) { return os.Geteuid(), nil })
		p := h.NewLoginPath()
		if !h.RevokeLoginPath(p) {
			t.Fatalf("RevokeLoginPath(%q) of an armed login = false", p)
		}
		resp, body := get(t, c, "/login", "")
		refused(t, "a withdrawn code-free login", resp, body)
		if h.RevokeLoginPath(p) {
			t.Error("a second withdrawal reported an outstanding login")
		}
		code := h.NewLoginCode()
		if !h.RevokeLoginPath("/login?code=" + code) {
			t.Fatal("withdrawing an outstanding code = false")
		}
		resp, body = get(t, c, "/login?code="+code, "")
		refused(t, "a withdrawn code", resp, body)
		for _, bad := range []string{"/login?code=nope", "/elsewhere", "%zz"} {
			if h.RevokeLoginPath(bad) {
				t.Errorf("RevokeLoginPath(%q) = true", bad)
			}
		}
	})
}
