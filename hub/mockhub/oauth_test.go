package mockhub_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/hub/mockhub"
)

// fakeClock is a settable clock for token lifetimes.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestCodeFlowWithPKCE(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{})
	p := newPKCE()
	q := authParams(p)
	q.Set("state", "opaque state/with+chars")
	q.Set("scope", "devices")
	st, loc, body := authorize(t, ts.URL, q)
	if st != http.StatusFound || loc == nil {
		t.Fatalf("authorize: %d %s", st, body)
	}
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != redirectURI {
		t.Errorf("redirected to %s", got)
	}
	if loc.Query().Get("state") != "opaque state/with+chars" {
		t.Errorf("state not echoed verbatim: %q", loc.Query().Get("state"))
	}
	c := loc.Query().Get("code")
	if len(c) != 43 {
		t.Errorf("code %q is not 32 bytes base64url", c)
	}

	for _, basic := range []bool{true, false} {
		p := newPKCE()
		a := token(t, ts.URL, codeForm(code(t, ts.URL, p), p), basic, mockhub.DefaultClientSecret)
		// The vendor's answer shape: the two expirations, no expires_in.
		aexp, err1 := time.Parse(time.RFC3339Nano, a.AccessTokenExpiration)
		rexp, err2 := time.Parse(time.RFC3339Nano, a.RefreshTokenExpiration)
		if a.status != 200 || err1 != nil || err2 != nil || time.Until(aexp) < 59*time.Minute || time.Until(aexp) > time.Hour ||
			time.Until(rexp) < 29*24*time.Hour || strings.Contains(a.raw, "expires_in") || len(a.AccessToken) != 43 || len(a.RefreshToken) != 43 {
			t.Fatalf("basic=%v: %d %s", basic, a.status, a.raw)
		}
		if a.header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control %q", a.header.Get("Cache-Control"))
		}
		// The access token works on a device route.
		if st, _, body := call(t, "GET", ts.URL+"/api/Device/userDevices/nope", a.AccessToken, nil, nil); st != 404 {
			t.Errorf("with a fresh token: %d %s", st, body)
		}
	}

	// The scope asked for is echoed.
	a := token(t, ts.URL, codeForm(c, p), true, mockhub.DefaultClientSecret)
	if a.status != 200 || !strings.Contains(a.raw, `"scope":"devices"`) {
		t.Errorf("scope: %s", a.raw)
	}
}

func TestAuthorizeChecks(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{})
	p := newPKCE()
	// Problems found before the redirect URI is trusted: 400, no redirect.
	for name, mod := range map[string]func(url.Values){
		"unknown client":  func(q url.Values) { q.Set("client_id", "other") },
		"no client":       func(q url.Values) { q.Del("client_id") },
		"https redirect":  func(q url.Values) { q.Set("redirect_uri", "https://127.0.0.1:5000/cb") },
		"remote redirect": func(q url.Values) { q.Set("redirect_uri", "http://example.com:5000/cb") },
		"no port":         func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1/cb") },
		"no redirect":     func(q url.Values) { q.Del("redirect_uri") },
	} {
		q := authParams(p)
		mod(q)
		st, loc, _ := authorize(t, ts.URL, q)
		if st != 400 || loc != nil {
			t.Errorf("%s: %d %v", name, st, loc)
		}
	}
	// IPv6 loopback and localhost (the vendor's C++ and browser samples)
	// are loopback redirects.
	for _, r := range []string{"http://[::1]:5000/cb", "http://localhost:5000/cb"} {
		q := authParams(p)
		q.Set("redirect_uri", r)
		if st, loc, _ := authorize(t, ts.URL, q); st != 302 || loc.Scheme+"://"+loc.Host+loc.Path != r || loc.Query().Get("code") == "" {
			t.Errorf("%s: %d %v", r, st, loc)
		}
	}
	// As the vendor's samples ask: no response_type, no PKCE, no state.
	q := url.Values{"client_id": {mockhub.DefaultClientID}, "redirect_uri": {redirectURI}}
	if st, loc, _ := authorize(t, ts.URL, q); st != 302 || loc.Query().Get("code") == "" || loc.Query().Has("state") {
		t.Errorf("vendor-style request: %d %v", st, loc)
	}
	// Problems after: redirect with error and state.
	for name, tc := range map[string]struct {
		mod  func(url.Values)
		want string
	}{
		"response_type token": {func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		"plain PKCE":          {func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
		"bad challenge":       {func(q url.Values) { q.Set("code_challenge", "short") }, "invalid_request"},
	} {
		q := authParams(p)
		tc.mod(q)
		st, loc, _ := authorize(t, ts.URL, q)
		if st != 302 || loc == nil || loc.Query().Get("error") != tc.want || loc.Query().Get("state") != "state-123" || loc.Query().Get("code") != "" {
			t.Errorf("%s: %d %v", name, st, loc)
		}
	}
}

func TestDeniedConsent(t *testing.T) {
	var asked mockhub.ConsentRequest
	_, ts := newMock(t, mockhub.Config{Consent: func(r mockhub.ConsentRequest) bool { asked = r; return false }})
	st, loc, _ := authorize(t, ts.URL, authParams(newPKCE()))
	if st != 302 || loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "state-123" || loc.Query().Get("code") != "" {
		t.Fatalf("deny: %d %v", st, loc)
	}
	if asked.ClientID != mockhub.DefaultClientID || asked.RedirectURI != redirectURI {
		t.Errorf("consent asked %+v", asked)
	}
}

func TestTokenErrors(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{})

	t.Run("wrong verifier", func(t *testing.T) {
		p := newPKCE()
		c := code(t, ts.URL, p)
		a := token(t, ts.URL, codeForm(c, newPKCE()), true, mockhub.DefaultClientSecret)
		if a.status != 400 || a.Error != "invalid_grant" {
			t.Fatalf("%d %s", a.status, a.raw)
		}
		// The failed attempt consumed the code.
		if a := token(t, ts.URL, codeForm(c, p), true, mockhub.DefaultClientSecret); a.Error != "invalid_grant" {
			t.Errorf("code usable after a failed attempt: %s", a.raw)
		}
	})
	t.Run("missing verifier", func(t *testing.T) {
		p := newPKCE()
		f := codeForm(code(t, ts.URL, p), p)
		f.Del("code_verifier")
		if a := token(t, ts.URL, f, true, mockhub.DefaultClientSecret); a.status != 400 || a.Error != "invalid_grant" {
			t.Errorf("%d %s", a.status, a.raw)
		}
	})
	t.Run("redirect mismatch", func(t *testing.T) {
		p := newPKCE()
		f := codeForm(code(t, ts.URL, p), p)
		f.Set("redirect_uri", "http://127.0.0.1:40123/other")
		if a := token(t, ts.URL, f, true, mockhub.DefaultClientSecret); a.status != 400 || a.Error != "invalid_grant" {
			t.Errorf("%d %s", a.status, a.raw)
		}
	})
	t.Run("reused code revokes its tokens", func(t *testing.T) {
		p := newPKCE()
		c := code(t, ts.URL, p)
		first := token(t, ts.URL, codeForm(c, p), true, mockhub.DefaultClientSecret)
		if first.status != 200 {
			t.Fatal(first.raw)
		}
		again := token(t, ts.URL, codeForm(c, p), true, mockhub.DefaultClientSecret)
		if again.status != 400 || again.Error != "invalid_grant" {
			t.Fatalf("reuse: %d %s", again.status, again.raw)
		}
		if st, _, _ := call(t, "GET", ts.URL+"/api/Device/userDevices/x", first.AccessToken, nil, nil); st != 401 {
			t.Errorf("access token of a reused code still works: %d", st)
		}
		r := token(t, ts.URL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}}, true, mockhub.DefaultClientSecret)
		if r.Error != "invalid_grant" {
			t.Errorf("refresh token of a reused code still works: %s", r.raw)
		}
	})
	t.Run("unknown code", func(t *testing.T) {
		p := newPKCE()
		if a := token(t, ts.URL, codeForm("not-a-code", p), false, mockhub.DefaultClientSecret); a.status != 400 || a.Error != "invalid_grant" {
			t.Errorf("%d %s", a.status, a.raw)
		}
	})
	t.Run("bad client secret", func(t *testing.T) {
		for _, basic := range []bool{true, false} {
			p := newPKCE()
			a := token(t, ts.URL, codeForm(code(t, ts.URL, p), p), basic, "wrong-secret")
			if a.status != 401 || a.Error != "invalid_client" || !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Basic") {
				t.Errorf("basic=%v: %d %s %v", basic, a.status, a.raw, a.header)
			}
		}
	})
	t.Run("no client authentication", func(t *testing.T) {
		req, _ := http.NewRequest("POST", ts.URL+"/signin/token", strings.NewReader("grant_type=refresh_token&refresh_token=x"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("%d", resp.StatusCode)
		}
	})
	t.Run("two authentication methods", func(t *testing.T) {
		req, _ := http.NewRequest("POST", ts.URL+"/signin/token", strings.NewReader("grant_type=refresh_token&refresh_token=x&client_secret=mock-secret"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("mock-client", "mock-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("%d", resp.StatusCode)
		}
	})
	t.Run("grant types and body", func(t *testing.T) {
		if a := token(t, ts.URL, url.Values{"grant_type": {"password"}}, true, mockhub.DefaultClientSecret); a.Error != "unsupported_grant_type" {
			t.Errorf("password grant: %s", a.raw)
		}
		if a := token(t, ts.URL, url.Values{}, true, mockhub.DefaultClientSecret); a.Error != "invalid_request" {
			t.Errorf("no grant type: %s", a.raw)
		}
		req, _ := http.NewRequest("POST", ts.URL+"/signin/token", strings.NewReader(`{"grant_type":"refresh_token"}`))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth("mock-client", "mock-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("JSON body: %d", resp.StatusCode)
		}
	})
}

func TestRefreshRotation(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{})
	first := signIn(t, ts.URL)
	refresh := func(rt string) tokenAnswer {
		return token(t, ts.URL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}, false, mockhub.DefaultClientSecret)
	}
	second := refresh(first.RefreshToken)
	if second.status != 200 || second.RefreshToken == "" || second.RefreshToken == first.RefreshToken || second.AccessToken == first.AccessToken {
		t.Fatalf("refresh: %d %s", second.status, second.raw)
	}
	// Both access tokens still work (rotation does not revoke access tokens).
	for _, at := range []string{first.AccessToken, second.AccessToken} {
		if st, _, _ := call(t, "GET", ts.URL+"/api/Device/userDevices/x", at, nil, nil); st != 404 {
			t.Errorf("access token: %d", st)
		}
	}
	third := refresh(second.RefreshToken)
	if third.status != 200 {
		t.Fatalf("second refresh: %s", third.raw)
	}
	// Replaying a rotated refresh token fails and revokes the grant.
	replay := refresh(first.RefreshToken)
	if replay.status != 400 || replay.Error != "invalid_grant" {
		t.Fatalf("replay: %d %s", replay.status, replay.raw)
	}
	if r := refresh(third.RefreshToken); r.Error != "invalid_grant" {
		t.Errorf("grant not revoked after a replay: %s", r.raw)
	}
	if st, _, _ := call(t, "GET", ts.URL+"/api/Device/userDevices/x", third.AccessToken, nil, nil); st != 401 {
		t.Errorf("access token of a revoked grant: %d", st)
	}
	// Another sign-in is unaffected.
	other := signIn(t, ts.URL)
	if r := refresh(other.RefreshToken); r.status != 200 {
		t.Errorf("independent grant: %s", r.raw)
	}
}

func TestTokenLifetimes(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	_, ts := newMock(t, mockhub.Config{Now: clock.Now, AccessTokenTTL: 90 * time.Second, RefreshTokenTTL: time.Hour, CodeTTL: time.Minute})
	a := signIn(t, ts.URL)
	if want := clock.Now().Add(90 * time.Second).Format(time.RFC3339Nano); a.AccessTokenExpiration != want {
		t.Errorf("access_token_expiration %q, want %q", a.AccessTokenExpiration, want)
	}
	if want := clock.Now().Add(time.Hour).Format(time.RFC3339Nano); a.RefreshTokenExpiration != want {
		t.Errorf("refresh_token_expiration %q, want %q", a.RefreshTokenExpiration, want)
	}
	clock.Add(89 * time.Second)
	if st, _, _ := call(t, "GET", ts.URL+"/api/Device/userDevices/x", a.AccessToken, nil, nil); st != 404 {
		t.Errorf("before expiry: %d", st)
	}
	clock.Add(time.Second)
	st, h, body := call(t, "GET", ts.URL+"/api/Device/userDevices/x", a.AccessToken, nil, nil)
	if st != 401 || !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_token"`) || !strings.Contains(body, "expired") {
		t.Errorf("after expiry: %d %v %s", st, h, body)
	}
	// The refresh token outlives it.
	r := token(t, ts.URL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {a.RefreshToken}}, true, mockhub.DefaultClientSecret)
	if r.status != 200 {
		t.Fatalf("refresh: %s", r.raw)
	}
	clock.Add(time.Hour)
	if r := token(t, ts.URL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r.RefreshToken}}, true, mockhub.DefaultClientSecret); r.Error != "invalid_grant" {
		t.Errorf("expired refresh token: %s", r.raw)
	}
	// Codes expire too.
	p := newPKCE()
	c := code(t, ts.URL, p)
	clock.Add(time.Minute)
	if a := token(t, ts.URL, codeForm(c, p), true, mockhub.DefaultClientSecret); a.Error != "invalid_grant" {
		t.Errorf("expired code: %s", a.raw)
	}
}

func TestSubSecondAccessLifetimeKeepsItsPrecision(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	_, ts := newMock(t, mockhub.Config{Now: clock.Now, AccessTokenTTL: 200 * time.Millisecond})
	if a := signIn(t, ts.URL); a.AccessTokenExpiration != "2026-11-21T10:00:00.2Z" {
		t.Errorf("access_token_expiration %q", a.AccessTokenExpiration)
	}
}

// The exchange as the vendor's clients send it: grant_type=code, the
// parameters in the query string (browser, C++, Unity) or the form body
// (Android, iOS), no client secret, no PKCE.
func TestVendorStyleExchange(t *testing.T) {
	m, ts := newMock(t, mockhub.Config{})
	for _, inQuery := range []bool{true, false} {
		q := url.Values{"client_id": {mockhub.DefaultClientID}, "redirect_uri": {redirectURI}, "state": {"s"}}
		_, loc, _ := authorize(t, ts.URL, q)
		params := url.Values{"grant_type": {"code"}, "code": {loc.Query().Get("code")}, "client_id": {mockhub.DefaultClientID}, "redirect_uri": {redirectURI}}
		var req *http.Request
		if inQuery {
			req, _ = http.NewRequest("POST", ts.URL+"/signin/token?"+params.Encode(), nil)
		} else {
			req, _ = http.NewRequest("POST", ts.URL+"/signin/token", strings.NewReader(params.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var a tokenAnswer
		json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		if resp.StatusCode != 200 || a.AccessToken == "" || a.AccessTokenExpiration == "" {
			t.Fatalf("inQuery=%v: %d %+v", inQuery, resp.StatusCode, a)
		}
		// Refresh as the Unity client does: everything in the query.
		rq := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {a.RefreshToken}, "client_id": {mockhub.DefaultClientID},
			"client_secret": {mockhub.DefaultClientSecret}, "redirect_uri": {redirectURI}}
		resp, err = http.Post(ts.URL+"/signin/token?"+rq.Encode(), "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("inQuery=%v: Unity-style refresh %d", inQuery, resp.StatusCode)
		}
	}
	var auths []any
	for _, e := range m.Events(0) {
		if e.Action == "token" {
			auths = append(auths, e.Args["clientAuth"], e.Args["paramsIn"])
		}
	}
	if fmt.Sprint(auths) != "[none query client_secret query none body client_secret query]" {
		t.Errorf("clientAuth/paramsIn %v", auths)
	}
}

// A secret is checked when sent; RequireClientSecret demands one;
// RedirectURIs restricts the redirect to the registered addresses.
func TestClientSecretAndRegisteredRedirects(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{})
	p := newPKCE()
	if a := token(t, ts.URL, codeForm(code(t, ts.URL, p), p), false, "wrong"); a.status != 401 || a.Error != "invalid_client" {
		t.Errorf("wrong secret: %d %s", a.status, a.raw)
	}
	_, strict := newMock(t, mockhub.Config{RequireClientSecret: true})
	p = newPKCE()
	if a := token(t, strict.URL, codeForm(code(t, strict.URL, p), p), false, ""); a.status != 401 {
		t.Errorf("no secret with RequireClientSecret: %d %s", a.status, a.raw)
	}
	_, reg := newMock(t, mockhub.Config{RedirectURIs: []string{"http://127.0.0.1:51772/"}})
	q := url.Values{"client_id": {mockhub.DefaultClientID}, "redirect_uri": {"http://127.0.0.1:51772/"}}
	if st, loc, _ := authorize(t, reg.URL, q); st != 302 || loc.Query().Get("code") == "" {
		t.Errorf("registered redirect: %d %v", st, loc)
	}
	q.Set("redirect_uri", "http://127.0.0.1:51773/")
	if st, loc, body := authorize(t, reg.URL, q); st != 400 || loc != nil || !strings.Contains(body, "not registered") {
		t.Errorf("unregistered redirect: %d %v %s", st, loc, body)
	}
}

func TestCustomClient(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{ClientID: "my client", ClientSecret: "s3cr:t&"})
	p := newPKCE()
	q := authParams(p)
	q.Set("client_id", "my client")
	st, loc, _ := authorize(t, ts.URL, q)
	if st != 302 {
		t.Fatalf("authorize: %d", st)
	}
	// Basic with RFC 6749 2.3.1 form-encoding of id and secret.
	req, _ := http.NewRequest("POST", ts.URL+"/signin/token", strings.NewReader(codeForm(loc.Query().Get("code"), p).Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape("my client"), url.QueryEscape("s3cr:t&"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("custom client: %d", resp.StatusCode)
	}
}
