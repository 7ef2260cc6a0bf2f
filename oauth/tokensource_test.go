package oauth

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/hubgate/hubgate/configs"
)

func base64RawURL(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }

func newTokenOnly(t *testing.T, h http.HandlerFunc) string {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /signin/token", h)
	// The sign-in page, as a real service serves it: Login checks it while
	// the person signs in, and a 404 there would end the sign-in.
	mux.HandleFunc("GET /signin", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "<html><body>Sign in</body></html>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// recordingStore is a SecretSetter that records writes and can fail.
type recordingStore struct {
	mu     sync.Mutex
	values map[string]string
	writes int
	fail   error
}

func (s *recordingStore) Set(_ context.Context, account, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	if s.values == nil {
		s.values = map[string]string{}
	}
	s.values[account] = value
	s.writes++
	return nil
}

func expired(rt string) *oauth2.Token {
	return &oauth2.Token{AccessToken: "old-access", RefreshToken: rt, TokenType: "Bearer", Expiry: time.Now().Add(-time.Minute)}
}

func TestDefaultAccountMatchesConfigs(t *testing.T) {
	if DefaultRefreshTokenAccount != configs.AccountOAuthRefreshToken {
		t.Fatalf("%q != configs %q", DefaultRefreshTokenAccount, configs.AccountOAuthRefreshToken)
	}
	var _ SecretSetter = configs.NewMemoryStore()
}

func TestTokenSourcePersistsARotatedRefreshTokenBeforeUse(t *testing.T) {
	f := newFakeAuth(t)
	f.addRefresh("rt-initial")
	c := f.client(t)
	store := &recordingStore{}
	ts := c.TokenSource(context.Background(), expired("rt-initial"), TokenSourceOptions{Store: store})

	// The store refuses: the refreshed token is withheld.
	store.mu.Lock()
	store.fail = errors.New("keyring locked")
	store.mu.Unlock()
	tok, err := ts.Token()
	if err == nil || tok != nil || !strings.Contains(err.Error(), "keyring locked") || !strings.Contains(err.Error(), "withheld") {
		t.Fatalf("token %v err %v", tok, err)
	}
	f.assertNoSecrets(t, "the error", err.Error())
	if _, n := f.counts(); n != 1 {
		t.Fatalf("%d refreshes", n)
	}

	// The store works again: the same (already refreshed) token is stored
	// then handed out, without a second refresh.
	store.mu.Lock()
	store.fail = nil
	store.mu.Unlock()
	tok, err = ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	stored := store.values[configs.AccountOAuthRefreshToken]
	if !strings.HasPrefix(tok.AccessToken, "at-") || stored != tok.RefreshToken || stored == "rt-initial" {
		t.Fatalf("token %q/%q stored %q", tok.AccessToken, tok.RefreshToken, stored)
	}
	if _, n := f.counts(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
	// A valid token: no refresh, no write.
	if _, err := ts.Token(); err != nil || store.writes != 1 {
		t.Errorf("err %v writes %d", err, store.writes)
	}
	if _, n := f.counts(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
}

func TestTokenSourceDoesNotWriteWhenTheRefreshTokenIsKept(t *testing.T) {
	f := newFakeAuth(t)
	f.mu.Lock()
	f.rotate = false
	f.mu.Unlock()
	f.addRefresh("rt-kept")
	store := &recordingStore{}
	ts := f.client(t).TokenSource(context.Background(), expired("rt-kept"), TokenSourceOptions{Store: store, Account: "custom"})
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken != "rt-kept" || store.writes != 0 {
		t.Errorf("refresh %q writes %d", tok.RefreshToken, store.writes)
	}
}

func TestTokenSourceInvalidGrantMeansSignInAgain(t *testing.T) {
	f := newFakeAuth(t)
	store := &recordingStore{}
	ts := f.client(t).TokenSource(context.Background(), expired("rt-revoked"), TokenSourceOptions{Store: store})
	tok, err := ts.Token()
	var te *TokenError
	if tok != nil || !errors.Is(err, ErrSignInAgain) || !errors.As(err, &te) || te.Op != "refresh" || !IsSignInError(err) {
		t.Fatalf("token %v err %v", tok, err)
	}
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		t.Error("the RetrieveError is not reachable")
	}
	if !strings.Contains(err.Error(), "sign in again: run hubgate pair") || strings.Contains(err.Error(), "rt-revoked") {
		t.Errorf("message %q", err)
	}
	if store.writes != 0 {
		t.Error("something was stored")
	}
}

func TestTokenSourceNetworkErrorIsNotSignInAgain(t *testing.T) {
	f := newFakeAuth(t)
	c := f.client(t)
	f.srv.Close()
	_, err := c.TokenSource(context.Background(), expired("rt"), TokenSourceOptions{}).Token()
	if err == nil || errors.Is(err, ErrSignInAgain) || IsSignInError(err) {
		t.Fatalf("err %v", err)
	}
}

// Without a store the rotated token stays in memory and is handed out.
func TestTokenSourceWithoutStore(t *testing.T) {
	f := newFakeAuth(t)
	f.addRefresh("rt-1")
	ts := f.client(t).TokenSource(context.Background(), expired("rt-1"), TokenSourceOptions{})
	tok, err := ts.Token()
	if err != nil || tok.RefreshToken == "rt-1" {
		t.Fatalf("%v %v", tok, err)
	}
}

// Concurrent callers share one refresh.
func TestTokenSourceConcurrentCallersRefreshOnce(t *testing.T) {
	f := newFakeAuth(t)
	f.addRefresh("rt-1")
	store := &recordingStore{}
	ts := f.client(t).TokenSource(context.Background(), expired("rt-1"), TokenSourceOptions{Store: store})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ts.Token(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if _, n := f.counts(); n != 1 || store.writes != 1 {
		t.Errorf("refreshes %d writes %d", n, store.writes)
	}
}
