package toolkit

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/hubgate/hubgate/automate"
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

// fakeAS is a loopback authorization server: metadata, dynamic client
// registration, an authorization endpoint that approves at once, and a
// token endpoint (authorization_code with PKCE, refresh_token) whose
// tokens the MCP server accepts.
type fakeAS struct {
	srv *httptest.Server

	mu        sync.Mutex
	n         int
	challenge map[string]string // code -> code_challenge
	refresh   map[string]bool
	valid     map[string]bool
	refreshes int
}

func newFakeAS(t *testing.T) *fakeAS {
	a := &fakeAS{challenge: map[string]string{}, refresh: map[string]bool{}, valid: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		u := a.srv.URL
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": u, "authorization_endpoint": u + "/authorize", "token_endpoint": u + "/token",
			"registration_endpoint": u + "/register", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "scopes_supported": []string{"tools", "offline_access"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var md map[string]any
		json.NewDecoder(r.Body).Decode(&md)
		md["client_id"] = "client-1"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(md)
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("client_id") != "client-1" {
			http.Error(w, "bad request", 400)
			return
		}
		a.mu.Lock()
		a.n++
		code := fmt.Sprintf("code-%d", a.n)
		a.challenge[code] = q.Get("code_challenge")
		a.mu.Unlock()
		to, _ := url.Parse(q.Get("redirect_uri"))
		v := url.Values{"code": {code}, "state": {q.Get("state")}}
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		a.mu.Lock()
		defer a.mu.Unlock()
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			ch, ok := a.challenge[r.Form.Get("code")]
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != ch {
				http.Error(w, `{"error":"invalid_grant"}`, 400)
				return
			}
			delete(a.challenge, r.Form.Get("code"))
		case "refresh_token":
			if !a.refresh[r.Form.Get("refresh_token")] {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(400)
				fmt.Fprint(w, `{"error":"invalid_grant"}`)
				return
			}
			delete(a.refresh, r.Form.Get("refresh_token"))
			a.refreshes++
		default:
			http.Error(w, `{"error":"unsupported_grant_type"}`, 400)
			return
		}
		a.n++
		at, rt := fmt.Sprintf("access-%d", a.n), fmt.Sprintf("refresh-%d", a.n)
		a.valid[at], a.refresh[rt] = true, true
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt, "expires_in": 3600})
	})
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAS) accepts(tok string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.valid[tok]
}

// protectedMCP is a streamable HTTP SDK server behind the SDK's
// RequireBearerToken, with its protected resource metadata naming as.
func protectedMCP(t *testing.T, as *fakeAS) string {
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "says who is signed in"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in"}}}, nil, nil
	})
	var base string
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if !as.accepts(tok) {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: []string{"tools"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: base + "/mcp", AuthorizationServers: []string{as.srv.URL}, ScopesSupported: []string{"tools"},
		}).ServeHTTP(w, r)
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	srv := httptest.NewUnstartedServer(mux)
	srv.Start()
	t.Cleanup(srv.Close)
	base = srv.URL
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: base + "/.well-known/oauth-protected-resource/mcp"})(h))
	return base + "/mcp"
}

func TestMcpOAuthLoginRunRefresh(t *testing.T) {
	as := newFakeAS(t)
	mcpURL := protectedMCP(t, as)
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
	if !strings.HasPrefix(shown, as.srv.URL+"/authorize?") {
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
	if as.refreshes != 1 || after.Token.AccessToken == rec.Token.AccessToken || after.Token.RefreshToken == rec.Token.RefreshToken || !as.accepts(after.Token.AccessToken) {
		t.Fatalf("after refresh: refreshes=%d stored access changed=%v refresh rotated=%v", as.refreshes,
			after.Token.AccessToken != rec.Token.AccessToken, after.Token.RefreshToken != rec.Token.RefreshToken)
	}

	// The refresh token is revoked and the access token expired: the run
	// is told to sign in again, and opens no browser.
	as.mu.Lock()
	clear(as.refresh)
	as.mu.Unlock()
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
