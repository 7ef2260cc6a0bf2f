package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
	"golang.org/x/oauth2"
)

// loginWith runs a Login whose "browser" loads the authorization page and
// then calls the redirect with the query edit made to it.
func loginWith(t *testing.T, c *Client, edit func(q url.Values)) (*oauth2.Token, string, error) {
	t.Helper()
	var out testutil.SyncBuffer
	tok, err := c.Login(context.Background(), LoginOptions{
		Out: &out, Timeout: 30 * time.Second,
		OpenBrowser: func(authURL string) error {
			loc := authorizeLocation(t, authURL)
			u, _ := url.Parse(loc)
			q := u.Query()
			edit(q)
			u.RawQuery = q.Encode()
			getPage(t, u.String())
			return nil
		},
	})
	return tok, out.String(), err
}

// A redirect without state is refused, naming the setting that accepts it.
func TestLoginRefusesAMissingStateNamingTheSetting(t *testing.T) {
	f := newFakeAuth(t)
	c, _ := New(Config{APIURL: f.srv.URL, ClientID: testClientID, MissingStateHint: "remote.allow_missing_state: true"})
	_, _, err := loginWith(t, c, func(q url.Values) { q.Del("state") })
	if !errors.Is(err, ErrMissingState) || !strings.Contains(err.Error(), "remote.allow_missing_state: true") || !IsSignInError(err) {
		t.Fatalf("err = %v", err)
	}
	if calls, _ := f.counts(); calls != 0 {
		t.Errorf("the code of a state-less redirect was exchanged (%d calls)", calls)
	}
	// With the setting, the same redirect completes the sign-in...
	c, _ = New(Config{APIURL: f.srv.URL, ClientID: testClientID, AllowMissingState: true})
	if tok, _, err := loginWith(t, c, func(q url.Values) { q.Del("state") }); err != nil || tok.AccessToken == "" {
		t.Fatalf("AllowMissingState: %v", err)
	}
	// ...but a wrong state is still refused (ignored until the timeout).
	c, _ = New(Config{APIURL: f.srv.URL, ClientID: testClientID, AllowMissingState: true})
	var out testutil.SyncBuffer
	_, err = c.Login(context.Background(), LoginOptions{Out: &out, Timeout: 2 * time.Second,
		OpenBrowser: func(authURL string) error {
			u, _ := url.Parse(authorizeLocation(t, authURL))
			q := u.Query()
			q.Set("state", "forged")
			u.RawQuery = q.Encode()
			getPage(t, u.String())
			return nil
		}})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(out.String(), "state does not match") {
		t.Fatalf("wrong state with AllowMissingState: %v\n%s", err, out.String())
	}
}

// A fixed redirect address: its port and path are the listener's, and the
// exact address is what the service sees.
func TestLoginOnAFixedRedirectAddress(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	redirect := fmt.Sprintf("http://localhost:%d/", port)
	f := newFakeAuth(t)
	c, err := New(Config{APIURL: f.srv.URL, ClientID: testClientID, RedirectURI: redirect})
	if err != nil {
		t.Fatal(err)
	}
	var sawRedirect string
	var out testutil.SyncBuffer
	tok, err := c.Login(context.Background(), LoginOptions{Out: &out, Timeout: 30 * time.Second,
		OpenBrowser: func(authURL string) error {
			u, _ := url.Parse(authURL)
			sawRedirect = u.Query().Get("redirect_uri")
			// Call the listener directly (127.0.0.1: the listener binds
			// localhost there), as the browser would after the redirect.
			code := "code-" + randHex()
			f.mu.Lock()
			f.codes[code] = &grant{challenge: u.Query().Get("code_challenge"), redirect: sawRedirect}
			f.mu.Unlock()
			if st, _ := getPage(t, fmt.Sprintf("http://127.0.0.1:%d/elsewhere?code=x&state=y", port)); st != 404 {
				t.Errorf("another path answered %d", st)
			}
			st, page := getPage(t, fmt.Sprintf("http://127.0.0.1:%d/?code=%s&state=%s", port, code, url.QueryEscape(u.Query().Get("state"))))
			if st != 200 {
				t.Errorf("callback: %d %s", st, page)
			}
			return nil
		}})
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("Login: %v\n%s", err, out.String())
	}
	f.mu.Lock()
	form := f.lastTokenReq
	f.mu.Unlock()
	if sawRedirect != redirect || form.Get("redirect_uri") != redirect {
		t.Errorf("redirect_uri: authorize %q, exchange %q, want %q", sawRedirect, form.Get("redirect_uri"), redirect)
	}
}

// Without a client secret the exchange carries none and no Basic header;
// the standard grant is sent when configured.
func TestExchangeWithoutSecretSendsNoneAndNoBasic(t *testing.T) {
	for _, grant := range []Grant{"", GrantAuthorizationCode} {
		var mu sync.Mutex
		var form, query url.Values
		var authz string
		srv := newTokenOnly(t, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			query = r.URL.Query()
			r.ParseForm()
			form, authz = r.PostForm, r.Header.Get("Authorization")
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"a","refresh_token":"r","access_token_expiration":"2099-01-01T00:00:00Z","refresh_token_expiration":"2099-02-01T00:00:00Z"}`)
		})
		c, _ := New(Config{APIURL: srv, ClientID: "public-id", Grant: grant})
		tok, err := c.exchange(context.Background(), "the-code", "http://127.0.0.1:51772/", "")
		if err != nil {
			t.Fatal(err)
		}
		want := "code"
		if grant == GrantAuthorizationCode {
			want = "authorization_code"
		}
		mu.Lock()
		if authz != "" || form.Has("client_secret") || len(query) != 0 || form.Get("grant_type") != want ||
			form.Get("code") != "the-code" || form.Get("client_id") != "public-id" || form.Get("redirect_uri") != "http://127.0.0.1:51772/" {
			t.Errorf("grant %q: Authorization=%q query=%v form=%v", grant, authz, query, form)
		}
		mu.Unlock()
		if !tok.Expiry.Equal(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("expiry %v", tok.Expiry)
		}
		if re, _ := tok.Extra(ExtraRefreshExpiry).(time.Time); !re.Equal(time.Date(2099, 2, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("refresh expiry %v", re)
		}
	}
}

func TestParseExpiration(t *testing.T) {
	utc := func(y, mo, d, h, mi, s, ns int) time.Time {
		return time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC)
	}
	for _, tc := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2026-11-24T08:30:00Z", utc(2026, 11, 24, 8, 30, 0, 0), true},
		{"2026-11-24T08:30:00.1234567Z", utc(2026, 11, 24, 8, 30, 0, 123456700), true},
		{"2026-11-24T09:30:00+01:00", utc(2026, 11, 24, 8, 30, 0, 0), true},
		{"2026-11-24T09:30:00+0100", utc(2026, 11, 24, 8, 30, 0, 0), true},
		{"2026-11-24T08:30:00.1234567", utc(2026, 11, 24, 8, 30, 0, 123456700), true}, // .NET, no zone: UTC
		{"2026-11-24 08:30:00", utc(2026, 11, 24, 8, 30, 0, 0), true},
		{"Tue, 24 Nov 2026 08:30:00 GMT", utc(2026, 11, 24, 8, 30, 0, 0), true},
		{"11/24/2026 08:30:00", utc(2026, 11, 24, 8, 30, 0, 0), true},
		{"11/24/2026 8:30:00 AM", utc(2026, 11, 24, 8, 30, 0, 0), true},
		{"/Date(1795509000000)/", time.UnixMilli(1795509000000).UTC(), true},
		{"1795509000", time.Unix(1795509000, 0).UTC(), true},
		{"1795509000000", time.UnixMilli(1795509000000).UTC(), true},
		{"", time.Time{}, false},
		{"soon", time.Time{}, false},
		{"0001-01-01T00:00:00", time.Time{}, false},
		{"42", time.Time{}, false},
	} {
		got, ok := ParseExpiration(tc.in)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("ParseExpiration(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// vendorServer is a token endpoint answering in the vendor's shape: no
// expires_in, access_token_expiration = now + life (on the bubble's clock).
func vendorServer(t *testing.T, life time.Duration, refreshes *int, mu *sync.Mutex, forms *[]url.Values) *Client {
	t.Helper()
	n := 0
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		r.ParseForm()
		*forms = append(*forms, r.PostForm)
		if r.PostForm.Get("grant_type") == "refresh_token" {
			*refreshes++
		}
		n++
		body := fmt.Sprintf(`{"access_token":"at-%d","refresh_token":"rt-%d","access_token_expiration":%q,"refresh_token_expiration":%q}`,
			n, n, time.Now().UTC().Add(life).Format(time.RFC3339Nano), time.Now().UTC().Add(24*time.Hour).Format(time.RFC3339))
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})}
	c, err := New(Config{APIURL: "https://vendor.example", ClientID: "cid", ClientSecret: "csecret", RedirectURI: "http://127.0.0.1:51772/", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A 2-second access token in the vendor's answer shape is refreshed before
// it expires, once per lifetime, with the vendor's refresh parameters, and
// each rotated refresh token is stored before it is used.
func TestRefreshCycleWithATwoSecondVendorToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var refreshes int
		var forms []url.Values
		c := vendorServer(t, 2*time.Second, &refreshes, &mu, &forms)
		tok, err := c.exchange(context.Background(), "code", "http://127.0.0.1:51772/", "")
		if err != nil {
			t.Fatal(err)
		}
		if tok.Expiry.IsZero() {
			t.Fatal("access_token_expiration was not read")
		}
		store := &recordingStore{}
		ts := c.TokenSource(context.Background(), tok, TokenSourceOptions{Store: store})
		seen := map[string]bool{}
		for i := 0; i < 20; i++ { // 10 s in half-second steps
			got, err := ts.Token()
			if err != nil {
				t.Fatal(err)
			}
			if !time.Now().Before(got.Expiry) {
				t.Fatalf("step %d: handed out an expired token (expiry %v, now %v)", i, got.Expiry, time.Now())
			}
			seen[got.AccessToken] = true
			store.mu.Lock()
			stored := store.values[DefaultRefreshTokenAccount]
			store.mu.Unlock()
			if got.RefreshToken != tok.RefreshToken && stored != got.RefreshToken {
				t.Fatalf("step %d: refresh token %q handed out before it was stored (store has %q)", i, got.RefreshToken, stored)
			}
			time.Sleep(500 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		// 10 s of 2 s tokens refreshed at 4/5 of their life: 6 refreshes
		// (at 1.6 s intervals rounded to the half-second steps: 2 s).
		if refreshes < 4 || refreshes > 7 || len(seen) != refreshes+1 {
			t.Errorf("refreshes = %d, distinct tokens = %d", refreshes, len(seen))
		}
		last := forms[len(forms)-1]
		if last.Get("grant_type") != "refresh_token" || last.Get("client_id") != "cid" || last.Get("client_secret") != "csecret" ||
			last.Get("redirect_uri") != "http://127.0.0.1:51772/" || !strings.HasPrefix(last.Get("refresh_token"), "rt-") {
			t.Errorf("refresh form %v", last)
		}
	})
}

// With an unknown expiry the token is used until a call is refused with
// it; Invalidate then makes exactly one refresh.
func TestUnknownExpiryRefreshesOnceAfterInvalidate(t *testing.T) {
	var mu sync.Mutex
	var refreshes int
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		refreshes++
		body := fmt.Sprintf(`{"access_token":"at-%d","refresh_token":"rt-%d","access_token_expiration":"whenever"}`, refreshes, refreshes)
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})}
	c, _ := New(Config{APIURL: "https://vendor.example", ClientID: "cid", HTTPClient: hc})
	ts := c.TokenSource(context.Background(), &oauth2.Token{AccessToken: "at-0", RefreshToken: "rt-0"}, TokenSourceOptions{})
	for range 3 {
		if tok, _ := ts.Token(); tok.AccessToken != "at-0" {
			t.Fatalf("token %q refreshed without a reason", tok.AccessToken)
		}
	}
	if !ts.Invalidate("at-0") || !ts.Invalidate("at-0") {
		t.Fatal("Invalidate refused")
	}
	for range 3 {
		if tok, _ := ts.Token(); tok.AccessToken != "at-1" || !tok.Expiry.IsZero() {
			t.Fatalf("after Invalidate: %q %v", tok.AccessToken, tok.Expiry)
		}
	}
	if ts.Refreshes() != 1 {
		t.Errorf("refreshes = %d, want 1", ts.Refreshes())
	}
	if !ts.Invalidate("at-0") { // a late caller with the old token: retry, no second refresh
		t.Error("Invalidate of a replaced token")
	}
	if tok, _ := ts.Token(); tok.AccessToken != "at-1" || ts.Refreshes() != 1 {
		t.Errorf("a stale Invalidate refreshed again: %q, %d", tok.AccessToken, ts.Refreshes())
	}
}
