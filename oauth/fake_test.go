package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

const (
	testClientID     = "test-client"
	testClientSecret = "test-secret-value"
)

// fakeAuth is an authorization server for the tests: GET
// /signin/authorize and POST /signin/token, checking what a strict
// server checks (client, redirect URI on loopback, PKCE S256, one-time
// codes, Basic client authentication).
type fakeAuth struct {
	t   *testing.T
	srv *httptest.Server

	mu           sync.Mutex
	deny         bool              // answer error=access_denied
	codes        map[string]*grant // issued codes
	refresh      map[string]bool   // valid refresh tokens
	issued       []string          // every code, access and refresh token issued
	tokenCalls   int
	refreshCalls int
	rotate       bool // issue a new refresh token on refresh
	lastTokenReq url.Values
	basicAuth    bool
	// answer, when set, replaces the lifetime members of a token answer
	// (the vendor's shape: access_token_expiration, no expires_in).
	answer func(resp map[string]any)
}

type grant struct {
	challenge, redirect string
	used                bool
}

func newFakeAuth(t *testing.T) *fakeAuth {
	f := &fakeAuth{t: t, codes: map[string]*grant{}, refresh: map[string]bool{}, rotate: true}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /signin", f.authorize)
	mux.HandleFunc("POST /signin/token", f.token)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func randHex() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (f *fakeAuth) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case q.Get("response_type") != "code", q.Get("client_id") != testClientID:
		http.Error(w, "bad client or response_type", 400)
		return
	case err != nil || redirect.Scheme != "http" || redirect.Hostname() != "localhost" && (net.ParseIP(redirect.Hostname()) == nil || !net.ParseIP(redirect.Hostname()).IsLoopback()):
		http.Error(w, "redirect_uri must be loopback", 400)
		return
	case q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43:
		http.Error(w, "PKCE S256 required", 400)
		return
	case q.Get("state") == "":
		http.Error(w, "state required", 400)
		return
	}
	back := url.Values{"state": {q.Get("state")}}
	f.mu.Lock()
	if f.deny {
		back.Set("error", "access_denied")
		back.Set("error_description", "The user declined <b>access</b>\x1b[31m")
	} else {
		code := "code-" + randHex()
		f.codes[code] = &grant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
		f.issued = append(f.issued, code)
		back.Set("code", code)
	}
	f.mu.Unlock()
	http.Redirect(w, r, redirect.String()+"?"+back.Encode(), http.StatusFound)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func (f *fakeAuth) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokenCalls++
	if err := r.ParseForm(); err != nil {
		oauthError(w, 400, "invalid_request", "bad form")
		return
	}
	f.lastTokenReq = r.PostForm
	_, _, ok := r.BasicAuth()
	f.basicAuth = ok
	if ok {
		oauthError(w, 400, "invalid_request", "HTTP Basic is not accepted here")
		return
	}
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if id != testClientID || (secret != "" && secret != testClientSecret) {
		oauthError(w, 401, "invalid_client", "unknown client or wrong secret")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "code", "authorization_code":
		g := f.codes[r.PostForm.Get("code")]
		if g == nil || g.used {
			oauthError(w, 400, "invalid_grant", "the code is unknown or was already used")
			return
		}
		g.used = true
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			oauthError(w, 400, "invalid_grant", "PKCE verification failed")
			return
		}
		if r.PostForm.Get("redirect_uri") != g.redirect {
			oauthError(w, 400, "invalid_grant", "redirect_uri mismatch")
			return
		}
		f.issueLocked(w, "")
	case "refresh_token":
		f.refreshCalls++
		rt := r.PostForm.Get("refresh_token")
		if !f.refresh[rt] {
			oauthError(w, 400, "invalid_grant", "the refresh token expired or was revoked")
			return
		}
		if f.rotate {
			delete(f.refresh, rt)
			f.issueLocked(w, "")
		} else {
			f.issueLocked(w, rt)
		}
	default:
		oauthError(w, 400, "unsupported_grant_type", "")
	}
}

// issueLocked answers with new tokens; keepRefresh != "" omits a new
// refresh token (the client keeps the old one).
func (f *fakeAuth) issueLocked(w http.ResponseWriter, keepRefresh string) {
	at := "at-" + randHex()
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600}
	if f.answer != nil {
		f.answer(resp)
	}
	f.issued = append(f.issued, at)
	if keepRefresh == "" {
		rt := "rt-" + randHex()
		f.refresh[rt] = true
		f.issued = append(f.issued, rt)
		resp["refresh_token"] = rt
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// counts returns the token and refresh request counts.
func (f *fakeAuth) counts() (token, refresh int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenCalls, f.refreshCalls
}

// addRefresh registers a valid refresh token.
func (f *fakeAuth) addRefresh(rt string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refresh[rt] = true
	f.issued = append(f.issued, rt)
}

func (f *fakeAuth) secrets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string{testClientSecret}, f.issued...)
}

func (f *fakeAuth) client(t *testing.T) *Client {
	t.Helper()
	c, err := New(Config{APIURL: f.srv.URL, ClientID: testClientID, ClientSecret: testClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// assertNoSecrets fails when s contains any code or token the server
// issued, or the client secret.
func (f *fakeAuth) assertNoSecrets(t *testing.T, where, s string) {
	t.Helper()
	for _, sec := range f.secrets() {
		if strings.Contains(s, sec) {
			t.Errorf("%s contains a secret (%s...)", where, sec[:5])
		}
	}
}

// authURLFrom returns the authorization URL printed in out.
func authURLFrom(out string) (string, error) {
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "http") && strings.Contains(line, "/signin?") {
			return line, nil
		}
	}
	return "", fmt.Errorf("no authorization URL in %q", out)
}
