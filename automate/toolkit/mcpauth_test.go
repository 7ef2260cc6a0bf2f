package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/testutil/mcpauthfake"
)

// memSecrets is an in-memory McpSecretStore for this package's tests.
type memSecrets struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *memSecrets) Get(_ context.Context, k string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	if !ok {
		return "", fs.ErrNotExist
	}
	return v, nil
}

func (s *memSecrets) Set(_ context.Context, k, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[k] = v
	return nil
}

func TestMcpOAuthLoginRunRefresh(t *testing.T) {
	as := mcpauthfake.NewAuthServer(t)
	mcpURL := mcpauthfake.ProtectedMCP(t, as)
	s := automate.InlineMcpServer{Name: "prot", Transport: "http", URL: mcpURL}
	store := &memSecrets{}
	ctx := context.Background()

	// No tokens: the run's connection fails, naming the command.
	pool := ConnectMcp(ctx, []automate.InlineMcpServer{s}, McpConfig{Secrets: store, ConnectTimeout: 10 * time.Second})
	err := pool.Errors()["prot"]
	pool.Close()
	if !errors.Is(err, ErrMcpLoginRequired) || !strings.Contains(err.Error(), `hubgate mcp login prot`) {
		t.Fatalf("connect without tokens: err = %v, want ErrMcpLoginRequired naming the command", err)
	}

	// Login: the person is shown the address (here a client follows it).
	var shown string
	err = McpLogin(ctx, s, McpLoginConfig{Secrets: store, ShowURL: func(u string) {
		shown = u
		go func() {
			resp, err := http.Get(u)
			if err == nil {
				resp.Body.Close()
			}
		}()
	}})
	if err != nil {
		t.Fatalf("McpLogin: %v", err)
	}
	if !strings.HasPrefix(shown, as.URL()+"/authorize?") {
		t.Fatalf("shown URL %q is not the authorization endpoint", shown)
	}
	raw, err := store.Get(ctx, McpAccount(mcpURL))
	if err != nil {
		t.Fatalf("nothing stored after login: %v", err)
	}
	var rec mcpOAuthRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil || rec.Token == nil || rec.Token.RefreshToken == "" || rec.ClientID != "client-1" {
		t.Fatalf("stored record = %s (%v)", raw, err)
	}

	callWhoami := func() {
		t.Helper()
		pool := ConnectMcp(ctx, []automate.InlineMcpServer{s}, McpConfig{Secrets: store, ConnectTimeout: 10 * time.Second})
		defer pool.Close()
		if err := pool.Errors()["prot"]; err != nil {
			t.Fatalf("connect with stored tokens: %v", err)
		}
		res, err := pool.Call(ctx, "prot", "whoami", json.RawMessage(`{}`))
		if err != nil || !strings.Contains(res.Text, "signed in") {
			t.Fatalf("whoami = %+v, %v", res, err)
		}
	}
	callWhoami()

	// The access token expires: the run refreshes it and stores the new one.
	rec.Token.Expiry = time.Now().Add(-time.Minute)
	b, _ := json.Marshal(&rec)
	store.Set(ctx, McpAccount(mcpURL), string(b))
	callWhoami()
	raw, _ = store.Get(ctx, McpAccount(mcpURL))
	var after mcpOAuthRecord
	json.Unmarshal([]byte(raw), &after)
	if as.Refreshes() != 1 || after.Token.AccessToken == rec.Token.AccessToken || after.Token.RefreshToken == rec.Token.RefreshToken || !as.Accepts(after.Token.AccessToken) {
		t.Fatalf("after refresh: refreshes=%d stored access changed=%v refresh rotated=%v", as.Refreshes(),
			after.Token.AccessToken != rec.Token.AccessToken, after.Token.RefreshToken != rec.Token.RefreshToken)
	}

	// The refresh token is revoked and the access token expired: the run
	// is told to sign in again, and opens no browser.
	as.RevokeRefreshTokens()
	after.Token.Expiry = time.Now().Add(-time.Minute)
	b, _ = json.Marshal(&after)
	store.Set(ctx, McpAccount(mcpURL), string(b))
	pool = ConnectMcp(ctx, []automate.InlineMcpServer{s}, McpConfig{Secrets: store, ConnectTimeout: 10 * time.Second})
	err = pool.Errors()["prot"]
	pool.Close()
	if !errors.Is(err, ErrMcpLoginRequired) {
		t.Fatalf("connect with revoked tokens: err = %v, want ErrMcpLoginRequired", err)
	}
	if strings.Contains(err.Error(), after.Token.AccessToken) || strings.Contains(err.Error(), after.Token.RefreshToken) {
		t.Fatal("a token reached an error")
	}
}
