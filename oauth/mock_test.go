package oauth_test

// End-to-end tests against the mock remote service (hub/mockhub).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
	"github.com/hubgate/hubgate/oauth"
)

func startMock(t *testing.T, cfg mockhub.Config) (*mockhub.Server, string) {
	t.Helper()
	m := mockhubtest.Start(t, mockhubtest.Options{Config: cfg})
	return m.Server, m.URL
}

// follow is a browser that follows the authorization page's redirect.
func follow(u string) error {
	go func() {
		if resp, err := http.Get(u); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	return nil
}

func login(t *testing.T, apiURL string) (*oauth.Client, *oauth2.Token) {
	t.Helper()
	return loginWith(t, oauth.Config{APIURL: apiURL, ClientID: mockhub.DefaultClientID})
}

func loginWith(t *testing.T, cfg oauth.Config) (*oauth.Client, *oauth2.Token) {
	t.Helper()
	c, err := oauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.Login(context.Background(), oauth.LoginOptions{Out: io.Discard, Timeout: time.Minute, OpenBrowser: follow})
	if err != nil {
		t.Fatalf("Login against the mock: %v", err)
	}
	return c, tok
}

// The exchange as the vendor's clients send it, once: grant_type=code in a
// form body, no secret and no Basic without one, client_secret (never
// Basic) with one; the standard grant when configured. The mock's vendor
// answer (access_token_expiration, no expires_in) gives the expiry.
func TestLoginAgainstTheMockAsTheVendorsClients(t *testing.T) {
	for _, tc := range []struct {
		secret, auth string
		grant        oauth.Grant
		wantGrant    string
	}{
		{"", "none", "", "code"},
		{mockhub.DefaultClientSecret, "client_secret", "", "code"},
		{"", "none", oauth.GrantAuthorizationCode, "authorization_code"},
	} {
		m, apiURL := startMock(t, mockhub.Config{})
		_, tok := loginWith(t, oauth.Config{APIURL: apiURL, ClientID: mockhub.DefaultClientID, ClientSecret: tc.secret, Grant: tc.grant})
		if tok.AccessToken == "" || tok.RefreshToken == "" || time.Until(tok.Expiry) < 59*time.Minute {
			t.Fatalf("token expiry %v", tok.Expiry)
		}
		var calls []string
		for _, e := range m.Events(0) {
			if e.Source == mockhub.SourceOAuth && e.Action == "token" {
				calls = append(calls, fmt.Sprint(e.Args["grantType"], " ", e.Args["clientAuth"], " ", e.Args["paramsIn"], " ", e.Status))
			}
		}
		if want := tc.wantGrant + " " + tc.auth + " body 200"; len(calls) != 1 || calls[0] != want {
			t.Errorf("secret %q grant %q: token calls %q, want [%s]", tc.secret, tc.grant, calls, want)
		}
	}
}

func TestLoginAgainstTheMockDenied(t *testing.T) {
	_, apiURL := startMock(t, mockhub.Config{Consent: func(mockhub.ConsentRequest) bool { return false }})
	c, _ := oauth.New(oauth.Config{APIURL: apiURL, ClientID: mockhub.DefaultClientID, ClientSecret: mockhub.DefaultClientSecret})
	_, err := c.Login(context.Background(), oauth.LoginOptions{Out: io.Discard, Timeout: time.Minute, OpenBrowser: follow})
	if !errors.Is(err, oauth.ErrAccessDenied) {
		t.Fatalf("err %v", err)
	}
}

// The mock rotates refresh tokens and revokes the whole grant when a
// rotated one is presented again: the token source stores each new one
// before use, and a stale one means "sign in again".
func TestTokenSourceAgainstTheMockRotatesAndDetectsReuse(t *testing.T) {
	_, apiURL := startMock(t, mockhub.Config{})
	c, tok := login(t, apiURL)
	store := configs.NewMemoryStore()
	ctx := context.Background()
	ts := c.TokenSource(ctx, tok, oauth.TokenSourceOptions{Store: store})
	ts.Invalidate(tok.AccessToken) // as after a 401: the next Token refreshes
	t1, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	stored, err := store.Get(ctx, configs.AccountOAuthRefreshToken)
	if err != nil || stored != t1.RefreshToken || stored == tok.RefreshToken {
		t.Fatalf("stored %v (%v)", stored != "", err)
	}
	ts.Invalidate(t1.AccessToken)
	t2, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if stored, _ = store.Get(ctx, configs.AccountOAuthRefreshToken); stored != t2.RefreshToken || t2.RefreshToken == t1.RefreshToken {
		t.Fatal("the second rotation was not stored")
	}

	// Presenting the first, rotated-away refresh token again: invalid_grant.
	stale := c.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Hour)}, oauth.TokenSourceOptions{})
	_, err = stale.Token()
	if !errors.Is(err, oauth.ErrSignInAgain) {
		t.Fatalf("stale refresh token: %v", err)
	}
	// The mock revoked the grant: the live source must sign in again too.
	ts.Invalidate(t2.AccessToken)
	if _, err := ts.Token(); !errors.Is(err, oauth.ErrSignInAgain) {
		t.Fatalf("after revocation: %v", err)
	}
}

// clock is a settable clock shared by the mock and the client.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func refreshCount(m *mockhub.Server) int {
	n := 0
	for _, e := range m.Events(0) {
		if e.Action == "token" && e.Args["grantType"] == "refresh_token" && e.Status == 200 {
			n++
		}
	}
	return n
}

// Over real HTTP against the mock, on a shared fake clock: 2-second access
// tokens in the vendor's answer shape are refreshed as they run out, and
// the REST calls keep working; no call is refused.
func TestRefreshCycleAgainstTheMockWithTwoSecondTokens(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)}
	m, apiURL := startMock(t, mockhub.Config{AccessTokenTTL: 2 * time.Second, Now: clk.Now})
	c, tok := loginWith(t, oauth.Config{APIURL: apiURL, ClientID: mockhub.DefaultClientID, Now: clk.Now})
	if !tok.Expiry.Equal(clk.Now().Add(2 * time.Second)) {
		t.Fatalf("expiry %v, want now+2s", tok.Expiry)
	}
	store := configs.NewMemoryStore()
	ts := c.TokenSource(context.Background(), tok, oauth.TokenSourceOptions{Store: store})
	api, err := deviceapi.New(deviceapi.Config{BaseURL: apiURL, TokenSource: ts})
	if err != nil {
		t.Fatal(err)
	}
	dev, err := api.CreateDevice(context.Background(), mockhub.DefaultDeviceTypeID, "cycle")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ { // 5 s in half-second steps
		clk.Add(500 * time.Millisecond)
		if _, err := api.GetDevice(context.Background(), dev.ID); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	n := refreshCount(m)
	if n < 2 || n > 4 {
		t.Errorf("%d refreshes in 5 s of 2 s tokens", n)
	}
	for _, e := range m.Events(0) {
		if e.Status == 401 {
			t.Errorf("a call was refused: %+v", e)
		}
	}
	if stored, _ := store.Get(context.Background(), configs.AccountOAuthRefreshToken); stored == tok.RefreshToken || stored == "" {
		t.Error("the rotated refresh token was not stored")
	}
}

// When the service refuses a token hubgate believed valid (its clock or
// the service disagree, or the expiry was unknown), the 401 is answered by
// exactly one refresh and one more attempt.
func TestA401IsAnsweredByOneRefresh(t *testing.T) {
	// The mock's clock starts at the client's now (the client reads
	// time.Now): only the jump below makes them disagree.
	mockClock := &clock{t: time.Now()}
	m, apiURL := startMock(t, mockhub.Config{AccessTokenTTL: time.Hour, Now: mockClock.Now})
	c, tok := login(t, apiURL) // the client's own clock: time.Now
	ts := c.TokenSource(context.Background(), tok, oauth.TokenSourceOptions{})
	api, _ := deviceapi.New(deviceapi.Config{BaseURL: apiURL, TokenSource: ts})
	dev, err := api.CreateDevice(context.Background(), mockhub.DefaultDeviceTypeID, "401")
	if err != nil {
		t.Fatal(err)
	}
	mockClock.Add(2 * time.Hour) // the service now finds the token expired
	if _, err := api.GetDevice(context.Background(), dev.ID); err != nil {
		t.Fatalf("after one refresh: %v", err)
	}
	if n := refreshCount(m); n != 1 || ts.Refreshes() != 1 {
		t.Errorf("refreshes: mock %d, source %d; want 1", n, ts.Refreshes())
	}
	var refused int
	for _, e := range m.Events(0) {
		if e.Status == 401 {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d refused calls, want 1", refused)
	}
	// A service that refuses every token: one refresh per call, no loop.
	var rest, refreshes int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/signin/token" {
			refreshes++
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"access_token":"at-%d","refresh_token":"rt","access_token_expiration":"unknown"}`, refreshes)
			return
		}
		rest++
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	c2, _ := oauth.New(oauth.Config{APIURL: srv.URL, ClientID: "x"})
	ts2 := c2.TokenSource(context.Background(), &oauth2.Token{AccessToken: "at-0", RefreshToken: "rt"}, oauth.TokenSourceOptions{})
	api2, _ := deviceapi.New(deviceapi.Config{BaseURL: srv.URL, TokenSource: ts2})
	var ae *deviceapi.APIError
	if _, err := api2.GetDevice(context.Background(), "d"); !errors.As(err, &ae) || ae.Status != 401 {
		t.Fatalf("always refused: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if rest != 2 || refreshes != 1 {
		t.Errorf("always refused: %d REST calls, %d refreshes; want 2 and 1", rest, refreshes)
	}
}
