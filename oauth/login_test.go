package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

// noRedirect is an HTTP client that does not follow redirects.
var noRedirect = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       30 * time.Second,
}

// authorizeLocation fetches the authorization URL and returns where the
// server redirects the browser.
func authorizeLocation(t *testing.T, authURL string) string {
	t.Helper()
	resp, err := noRedirect.Get(authURL)
	if err != nil {
		t.Error(err)
		return ""
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("authorize: %d", resp.StatusCode)
		return ""
	}
	return resp.Header.Get("Location")
}

func getPage(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := noRedirect.Get(u)
	if err != nil {
		t.Errorf("GET callback: %v", err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// requireCurl: curl plays the browser; outside CI a machine without it
// skips, in CI (scripts/test installs it) its absence fails.
func requireCurl(t *testing.T) {
	t.Helper()
	testenv.RequireProgram(t, "curl")
}

// loginGoroutines are the goroutines Login runs or started: in oauth's
// code or the loopback server's (internal/localhttp). Not the whole
// process's count, which other goroutines change meanwhile.
func loginGoroutines() testutil.Goroutines {
	return testutil.GoroutinesIn("github.com/hubgate/hubgate/oauth", "github.com/hubgate/hubgate/internal/localhttp")
}

// waitGoroutines waits until Login's goroutines are back to at most n.
// A goroutine's end is no event: a bounded poll of the stacks.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	var last testutil.Goroutines
	testutil.Until(t, fmt.Sprintf("at most %d goroutines of oauth", n), testutil.NoEvent,
		func() bool { last = loginGoroutines(); return last.N <= n },
		func() string { return fmt.Sprintf("%d left:\n%s", last.N, last.Stacks) })
}

// waitAuthURL waits until Login has printed the authorization URL to out
// (woken at each write) and returns it; "" with the error when it never
// does. It runs on a goroutine of the test, which reports the error.
func waitAuthURL(out *testutil.SyncBuffer) (string, error) {
	var u string
	err := testutil.Wait(context.Background(), "the authorization URL in Login's output", out.Written(),
		func() bool { u, _ = authURLFrom(out.String()); return u != "" })
	return u, err
}

// The whole flow with BROWSER set to curl, which follows the redirect to
// the loopback listener like a browser would.
func TestLoginWithBrowserCommand(t *testing.T) {
	requireCurl(t)
	f := newFakeAuth(t)
	c := f.client(t)
	var out testutil.SyncBuffer
	http.DefaultClient.CloseIdleConnections()
	before := loginGoroutines().N
	tok, err := c.Login(context.Background(), LoginOptions{
		Out:     &out,
		Timeout: time.Minute,
		Getenv: func(k string) string {
			if k == "BROWSER" {
				return "curl -fsSL"
			}
			return ""
		},
	})
	if err != nil {
		t.Fatalf("Login: %v\nout: %s", err, out.String())
	}
	if !strings.HasPrefix(tok.AccessToken, "at-") || !strings.HasPrefix(tok.RefreshToken, "rt-") || tok.Expiry.IsZero() {
		t.Fatalf("token %+v", tok)
	}
	// The exchange was sent once, as the vendor's clients send it:
	// grant_type=code, code, client_id, redirect_uri as form parameters,
	// the secret (this client has one) as client_secret, never Basic.
	f.mu.Lock()
	basic, calls, form := f.basicAuth, f.tokenCalls, f.lastTokenReq
	f.mu.Unlock()
	if basic || calls != 1 || form.Get("grant_type") != "code" || form.Get("client_id") != testClientID ||
		form.Get("client_secret") != testClientSecret || form.Get("redirect_uri") == "" || form.Get("code") == "" || form.Get("code_verifier") == "" {
		t.Errorf("exchange: basic=%v calls=%d grant=%q client_id=%q has secret=%v verifier=%v", basic, calls, form.Get("grant_type"), form.Get("client_id"), form.Get("client_secret") != "", form.Get("code_verifier") != "")
	}
	printed := out.String()
	authURL, err := authURLFrom(printed)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	redirect, _ := url.Parse(q.Get("redirect_uri"))
	if redirect.Hostname() != "127.0.0.1" || redirect.Path != "/callback" {
		t.Errorf("redirect_uri %q", redirect)
	}
	if raw, _ := decodeState(q.Get("state")); len(raw) < 32 {
		t.Errorf("state of %d bytes", len(raw))
	}
	f.assertNoSecrets(t, "the printed text", printed)
	if strings.Contains(printed, form.Get("code_verifier")) {
		t.Error("the verifier was printed")
	}
	// The listener is gone.
	if _, err := http.Get(redirect.String()); err == nil {
		t.Error("the redirect listener still answers after Login returned")
	}
	http.DefaultClient.CloseIdleConnections()
	waitGoroutines(t, before)
}

func decodeState(s string) ([]byte, error) {
	return base64RawURL(s)
}

// A callback with the wrong state is answered and ignored; the right one
// then completes the flow.
func TestLoginIgnoresWrongStateThenAcceptsTheRightOne(t *testing.T) {
	f := newFakeAuth(t)
	c := f.client(t)
	var wrongStatus int
	var wrongPage string
	browsed := make(chan struct{})
	var out testutil.SyncBuffer
	tok, err := c.Login(context.Background(), LoginOptions{
		Out:     &out,
		Timeout: time.Minute,
		OpenBrowser: func(authURL string) error {
			go func() {
				defer close(browsed)
				loc := authorizeLocation(t, authURL)
				u, _ := url.Parse(loc)
				q := u.Query()
				good := q.Get("state")
				// A wrong state, then the real one.
				q.Set("state", good+"x")
				u.RawQuery = q.Encode()
				wrongStatus, wrongPage = getPage(t, u.String())
				status, page := getPage(t, loc)
				if status != 200 || !strings.Contains(page, "Signed in") {
					t.Errorf("right state: %d %s", status, page)
				}
			}()
			return nil
		},
	})
	<-browsed
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	if tok.AccessToken == "" {
		t.Fatal("no token")
	}
	if !strings.Contains(out.String(), "Ignored a sign-in response") {
		t.Errorf("the ignored response was not reported: %q", out.String())
	}
	if wrongStatus != 400 || !strings.Contains(wrongPage, "ignored") {
		t.Errorf("wrong state: %d %s", wrongStatus, wrongPage)
	}
}

// A second callback after the flow ended is not used.
func TestLoginAcceptsOneCallbackOnly(t *testing.T) {
	f := newFakeAuth(t)
	c := f.client(t)
	var loc string
	browsed := make(chan struct{})
	_, err := c.Login(context.Background(), LoginOptions{
		Out: io.Discard, Timeout: time.Minute,
		OpenBrowser: func(authURL string) error {
			go func() {
				defer close(browsed)
				loc = authorizeLocation(t, authURL)
				getPage(t, loc)
			}()
			return nil
		},
	})
	<-browsed
	if err != nil {
		t.Fatal(err)
	}
	// After Login the listener is closed: nothing can deliver a second code.
	if _, err := http.Get(loc); err == nil {
		t.Error("a second callback reached a listener after the flow ended")
	}
}

func TestLoginAccessDenied(t *testing.T) {
	requireCurl(t)
	f := newFakeAuth(t)
	f.mu.Lock()
	f.deny = true
	f.mu.Unlock()
	c := f.client(t)
	var out testutil.SyncBuffer
	_, err := c.Login(context.Background(), LoginOptions{
		Out: &out, Timeout: time.Minute,
		Getenv: func(k string) string { return map[string]string{"BROWSER": "curl -sSL"}[k] },
	})
	var ae *AuthorizationError
	if !errors.As(err, &ae) || !errors.Is(err, ErrAccessDenied) || !IsSignInError(err) {
		t.Fatalf("err %v", err)
	}
	if ae.Code != "access_denied" || !strings.Contains(err.Error(), "The user declined <b>access</b>[31m") {
		t.Errorf("error %q", err)
	}
	if strings.Contains(err.Error(), "\x1b") {
		t.Error("a terminal escape reached the error message")
	}
	if n, _ := f.counts(); n != 0 {
		t.Errorf("%d token calls after a denial", n)
	}
}

func TestLoginShowsTheErrorPageEscaped(t *testing.T) {
	f := newFakeAuth(t)
	f.mu.Lock()
	f.deny = true
	f.mu.Unlock()
	c := f.client(t)
	var status int
	var page string
	browsed := make(chan struct{})
	_, err := c.Login(context.Background(), LoginOptions{
		Out: io.Discard, Timeout: time.Minute,
		OpenBrowser: func(authURL string) error {
			go func() { defer close(browsed); status, page = getPage(t, authorizeLocation(t, authURL)) }()
			return nil
		},
	})
	<-browsed
	if !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("err %v", err)
	}
	if status != 200 || !strings.Contains(page, "access_denied") || strings.Contains(page, "<b>access</b>") || !strings.Contains(page, "&lt;b&gt;") {
		t.Errorf("page %d %s", status, page)
	}
}

// A code that was already exchanged is refused with invalid_grant: the
// flow ends with "sign in again", after exactly one token request (no
// AutoDetect resend).
func TestLoginReusedCode(t *testing.T) {
	f := newFakeAuth(t)
	c := f.client(t)
	var firstLoc string
	browsed := make(chan struct{})
	if _, err := c.Login(context.Background(), LoginOptions{
		Out: io.Discard, Timeout: time.Minute,
		OpenBrowser: func(authURL string) error {
			go func() { defer close(browsed); firstLoc = authorizeLocation(t, authURL); getPage(t, firstLoc) }()
			return nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	<-browsed
	oldCode, _ := url.Parse(firstLoc)
	f.mu.Lock()
	f.tokenCalls = 0 // under f.mu
	f.mu.Unlock()
	var page string
	browsed = make(chan struct{})
	_, err := c.Login(context.Background(), LoginOptions{
		Out: io.Discard, Timeout: time.Minute,
		OpenBrowser: func(authURL string) error {
			go func() {
				defer close(browsed)
				u, _ := url.Parse(authURL)
				state, redirect := u.Query().Get("state"), u.Query().Get("redirect_uri")
				_, page = getPage(t, redirect+"?"+url.Values{"code": {oldCode.Query().Get("code")}, "state": {state}}.Encode())
			}()
			return nil
		},
	})
	<-browsed
	var te *TokenError
	if !errors.As(err, &te) || !errors.Is(err, ErrSignInAgain) || te.Op != "exchange" || te.Status != 400 {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), "already used") || !strings.Contains(err.Error(), "sign in again") {
		t.Errorf("message %q", err)
	}
	f.assertNoSecrets(t, "the error", err.Error())
	f.assertNoSecrets(t, "the page", page)
	if !strings.Contains(page, "could not be completed") {
		t.Errorf("page %s", page)
	}
	if n, _ := f.counts(); n != 1 {
		t.Errorf("%d token requests for one exchange", n)
	}
}

func TestLoginWrongClientSecretIsSentOnce(t *testing.T) {
	f := newFakeAuth(t)
	c, err := New(Config{APIURL: f.srv.URL, ClientID: testClientID, ClientSecret: "bad-secret-4711"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Login(context.Background(), LoginOptions{
		Out: io.Discard, Timeout: time.Minute,
		OpenBrowser: func(authURL string) error {
			go getPage(t, authorizeLocation(t, authURL))
			return nil
		},
	})
	var te *TokenError
	if !errors.As(err, &te) || te.Code != "invalid_client" || errors.Is(err, ErrSignInAgain) {
		t.Fatalf("err %v", err)
	}
	if n, _ := f.counts(); n != 1 {
		t.Errorf("%d token requests: the exchange was resent", n)
	}
	if strings.Contains(err.Error(), "bad-secret-4711") {
		t.Errorf("the secret reached the error: %v", err)
	}
}

func TestLoginTimeout(t *testing.T) {
	f := newFakeAuth(t)
	c := f.client(t)
	var out testutil.SyncBuffer
	before := loginGoroutines().N
	_, err := c.Login(context.Background(), LoginOptions{
		Out: &out, Timeout: 300 * time.Millisecond,
		OpenBrowser: func(string) error { return nil },
	})
	if !errors.Is(err, ErrTimeout) || !IsSignInError(err) || !strings.Contains(err.Error(), "300ms") {
		t.Fatalf("err %v", err)
	}
	authURL, perr := authURLFrom(out.String())
	if perr != nil {
		t.Fatal(perr)
	}
	u, _ := url.Parse(authURL)
	if _, err := http.Get(u.Query().Get("redirect_uri")); err == nil {
		t.Error("the listener still answers after the timeout")
	}
	waitGoroutines(t, before)
}

func TestLoginCanceled(t *testing.T) {
	c := newFakeAuth(t).client(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := c.Login(ctx, LoginOptions{Out: io.Discard, OpenBrowser: func(string) error { cancel(); return nil }})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v", err)
	}
}

// A browser that cannot be started is reported, and the flow still
// waits (here: for a pasted address... none; it times out).
func TestLoginBrowserFailureIsReportedNotFatal(t *testing.T) {
	f := newFakeAuth(t)
	c := f.client(t)
	var out testutil.SyncBuffer
	_, err := c.Login(context.Background(), LoginOptions{
		Out: &out, Timeout: 200 * time.Millisecond,
		Getenv: func(k string) string { return map[string]string{"BROWSER": "/nonexistent/browser --new-window"}[k] },
	})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v", err)
	}
	if _, perr := authURLFrom(out.String()); perr != nil || !strings.Contains(out.String(), "Could not open a browser") {
		t.Errorf("out %q", out.String())
	}
}

// The no-browser path: the person pastes the address the browser was sent
// to; junk and a wrong state are explained and ignored.
func TestLoginPastedRedirect(t *testing.T) {
	f := newFakeAuth(t)
	c := f.client(t)
	var out testutil.SyncBuffer
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		authURL, err := waitAuthURL(&out)
		if err != nil {
			t.Error(err)
			pw.Close()
			return
		}
		loc := authorizeLocation(t, authURL)
		u, _ := url.Parse(loc)
		q := u.Query()
		q.Set("state", "not-the-state")
		wrong := *u
		wrong.RawQuery = q.Encode()
		io.WriteString(pw, "\nhello\n"+wrong.String()+"\n")
		// Only the query, as some people copy it.
		io.WriteString(pw, "  ?"+u.RawQuery+"  \n")
	}()
	tok, err := c.Login(context.Background(), LoginOptions{
		Out: &out, In: pr, NoBrowser: true, Timeout: time.Minute,
		OpenBrowser: func(string) error { t.Error("a browser was opened with NoBrowser"); return nil },
	})
	if err != nil {
		t.Fatalf("Login: %v\n%s", err, out.String())
	}
	if tok.AccessToken == "" {
		t.Fatal("no token")
	}
	printed := out.String()
	for _, want := range []string{"carries no sign-in response", "does not match", "paste it here"} {
		if !strings.Contains(printed, want) {
			t.Errorf("output lacks %q:\n%s", want, printed)
		}
	}
	f.assertNoSecrets(t, "the printed text", printed)
}

// With NoBrowser the listener still completes the flow when the browser
// runs on the same machine.
func TestLoginNoBrowserListenerStillWorks(t *testing.T) {
	f := newFakeAuth(t)
	c := f.client(t)
	var out testutil.SyncBuffer
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		u, err := waitAuthURL(&out)
		if err != nil {
			t.Error(err)
			return
		}
		getPage(t, authorizeLocation(t, u))
	}()
	if _, err := c.Login(context.Background(), LoginOptions{Out: &out, In: pr, NoBrowser: true, Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
}

func TestLoginPastedDenial(t *testing.T) {
	f := newFakeAuth(t)
	f.mu.Lock()
	f.deny = true
	f.mu.Unlock()
	c := f.client(t)
	var out testutil.SyncBuffer
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		u, err := waitAuthURL(&out)
		if err != nil {
			t.Error(err)
			return
		}
		io.WriteString(pw, authorizeLocation(t, u)+"\n")
	}()
	_, err := c.Login(context.Background(), LoginOptions{Out: &out, In: pr, NoBrowser: true, Timeout: time.Minute})
	if !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("err %v", err)
	}
}

func TestParsePasted(t *testing.T) {
	for _, tc := range []struct {
		in      string
		code    string
		wantErr bool
	}{
		{"http://127.0.0.1:5/callback?code=abc&state=s", "abc", false},
		{"code=abc&state=s", "abc", false},
		{"?state=s&error=access_denied", "", false},
		{"http://127.0.0.1:5/callback?state=s", "", true},
		{"just words", "", true},
		{"http://127.0.0.1:5/callback?code=abc", "abc", false}, // the state is judged by the flow
	} {
		q, err := parsePasted(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err %v", tc.in, err)
			continue
		}
		if err == nil && q.Get("code") != tc.code {
			t.Errorf("%q: code %q", tc.in, q.Get("code"))
		}
		if err != nil && strings.Contains(err.Error(), "abc") {
			t.Errorf("%q: the error repeats the code", tc.in)
		}
	}
	if q, err := parsePasted("   "); q != nil || err != nil {
		t.Errorf("blank: %v %v", q, err)
	}
}

func TestNewDefaultsAndValidation(t *testing.T) {
	c, err := New(Config{APIURL: "https://api.example.com/", ClientID: "id", ClientSecret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if c.AuthURL() != "https://api.example.com/signin" || c.TokenURL() != "https://api.example.com/signin/token" || c.cfg.Grant != GrantCode {
		t.Errorf("%s %s %s", c.AuthURL(), c.TokenURL(), c.cfg.Grant)
	}
	c, _ = New(Config{APIURL: "https://api.example.com", AuthURL: "https://login.example.com/authorize", ClientID: "id", Grant: GrantAuthorizationCode})
	if c.AuthURL() != "https://login.example.com/authorize" || c.cfg.Grant != GrantAuthorizationCode {
		t.Errorf("%s %v", c.AuthURL(), c.cfg.Grant)
	}
	for _, cfg := range []Config{
		{APIURL: "https://a"},
		{ClientID: "id"},
		{ClientID: "id", APIURL: "not a url"},
		{ClientID: "id", AuthURL: "https://a/x", TokenURL: "/relative"},
		{ClientID: "id", APIURL: "https://a", Grant: "password"},
		{ClientID: "id", APIURL: "https://a", RedirectURI: "http://example.com:80/"},
		{ClientID: "id", APIURL: "https://a", RedirectURI: "http://127.0.0.1/"},
		{ClientID: "id", APIURL: "https://a", RedirectURI: "https://127.0.0.1:5/"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

// A public client (no secret) sends its client_id in the body.
func TestPublicClientSendsClientIDInBody(t *testing.T) {
	var mu sync.Mutex
	var form url.Values
	var basic bool
	srv := newTokenOnly(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		r.ParseForm()
		form = r.PostForm
		_, _, basic = r.BasicAuth()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"a","token_type":"Bearer","refresh_token":"r","expires_in":60}`)
	})
	c, _ := New(Config{APIURL: srv, ClientID: "public-id"})
	_, err := c.Login(context.Background(), LoginOptions{
		Out: io.Discard, Timeout: time.Minute,
		OpenBrowser: func(authURL string) error {
			u, _ := url.Parse(authURL)
			go getPage(t, u.Query().Get("redirect_uri")+"?code=c&state="+url.QueryEscape(u.Query().Get("state")))
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if basic || form.Get("client_id") != "public-id" || form.Get("client_secret") != "" {
		t.Errorf("basic=%v form=%v", basic, form)
	}
}

// With NoBrowser and an input that is closed (stdin at EOF), nobody can
// paste the address: Login fails at once, long before its timeout.
func TestLoginNoBrowserClosedInputFailsAtOnce(t *testing.T) {
	f := newFakeAuth(t)
	c := f.client(t)
	var out testutil.SyncBuffer
	_, err := c.Login(context.Background(), LoginOptions{Out: &out, In: strings.NewReader(""), NoBrowser: true, Timeout: time.Hour})
	if !errors.Is(err, ErrInputClosed) {
		t.Fatalf("Login with a closed input: %v, want ErrInputClosed", err)
	}
}
