// Package mcpauthfake is a test helper: a loopback OAuth authorization
// server (metadata, dynamic client registration, an authorization endpoint
// that approves at once, PKCE-checked code and refresh grants) and a
// streamable HTTP MCP server of the official SDK behind its
// RequireBearerToken, for the tests of MCP sign-in (automate/toolkit,
// cmd/hubgate).
package mcpauthfake

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// AuthServer is a loopback authorization server: metadata, dynamic client
// registration, an authorization endpoint that approves at once, and a
// token endpoint (authorization_code with PKCE, refresh_token) whose
// tokens the MCP server accepts.
type AuthServer struct {
	srv *httptest.Server

	mu        sync.Mutex
	n         int
	challenge map[string]string // code -> code_challenge
	refresh   map[string]bool
	valid     map[string]bool
	refreshes int
}

// NewAuthServer starts one, closed at the test's end.
func NewAuthServer(t testing.TB) *AuthServer {
	a := &AuthServer{challenge: map[string]string{}, refresh: map[string]bool{}, valid: map[string]bool{}}
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

// Accepts reports whether tok is an access token it issued.
func (a *AuthServer) Accepts(tok string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.valid[tok]
}

// ProtectedMCP starts a streamable HTTP SDK server (one tool, whoami,
// answering "signed in") behind the SDK's RequireBearerToken, with its
// protected resource metadata naming as, and returns its endpoint URL.
func ProtectedMCP(t testing.TB, as *AuthServer) string {
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "says who is signed in"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in"}}}, nil, nil
	})
	var base string
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if !as.Accepts(tok) {
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

// URL is the authorization server's issuer URL.
func (a *AuthServer) URL() string { return a.srv.URL }

// Refreshes counts the refresh_token grants it answered.
func (a *AuthServer) Refreshes() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refreshes
}

// RevokeRefreshTokens forgets every refresh token it issued.
func (a *AuthServer) RevokeRefreshTokens() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.refresh)
}
