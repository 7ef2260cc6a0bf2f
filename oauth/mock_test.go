package oauth_test

// End-to-end tests against the mock remote service (hub/mockhub).

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/oauth"
)

func startMock(t *testing.T, cfg mockhub.Config) (*mockhub.Server, string) {
	t.Helper()
	m, err := mockhub.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(func() { srv.Close(); m.Close() })
	return m, srv.URL
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
	c, err := oauth.New(oauth.Config{APIURL: apiURL, ClientID: mockhub.DefaultClientID, ClientSecret: mockhub.DefaultClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.Login(context.Background(), oauth.LoginOptions{Out: io.Discard, Timeout: time.Minute, OpenBrowser: follow})
	if err != nil {
		t.Fatalf("Login against the mock: %v", err)
	}
	return c, tok
}

func TestLoginAgainstTheMockUsesBasicAuthOnce(t *testing.T) {
	m, apiURL := startMock(t, mockhub.Config{})
	_, tok := login(t, apiURL)
	if tok.AccessToken == "" || tok.RefreshToken == "" || tok.Expiry.IsZero() {
		t.Fatalf("token %+v", tok)
	}
	var tokenCalls int
	for _, e := range m.Events(0) {
		if e.Source == mockhub.SourceOAuth && e.Action == "token" {
			tokenCalls++
			if e.Args["clientAuth"] != "basic" || e.Status != 200 {
				t.Errorf("token call %+v", e)
			}
		}
	}
	if tokenCalls != 1 {
		t.Errorf("%d token calls", tokenCalls)
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
	// An access lifetime below x/oauth2's 10 s early-refresh window: every
	// Token call refreshes.
	_, apiURL := startMock(t, mockhub.Config{AccessTokenTTL: time.Second})
	c, tok := login(t, apiURL)
	store := configs.NewMemoryStore()
	ctx := context.Background()
	ts := c.TokenSource(ctx, tok, oauth.TokenSourceOptions{Store: store})
	t1, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	stored, err := store.Get(ctx, configs.AccountOAuthRefreshToken)
	if err != nil || stored != t1.RefreshToken || stored == tok.RefreshToken {
		t.Fatalf("stored %v (%v)", stored != "", err)
	}
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
	if _, err := ts.Token(); !errors.Is(err, oauth.ErrSignInAgain) {
		t.Fatalf("after revocation: %v", err)
	}
}
