package mockhub

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
)

type authCode struct {
	clientID, redirectURI, challenge, scope string
	expires                                 time.Time
	used                                    bool
	grantID                                 string // set once tokens were issued from it
}

// grant is one sign-in: every access and refresh token issued from one
// code, through all its rotations.
type grant struct {
	id, clientID, scope string
	revoked             bool
}

type accessToken struct {
	grantID string
	expires time.Time
}

type refreshToken struct {
	grantID string
	expires time.Time
	used    bool // rotated away
}

// newSecret returns 32 random bytes, base64url without padding.
func newSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// digest is the key under which a secret is kept.
func digest(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// checkRedirect checks a redirect URI: one of Config.RedirectURIs exactly
// when that list is set (the addresses registered in the developer
// portal), else an RFC 8252 loopback redirect.
func (s *Server) checkRedirect(raw string) (*url.URL, error) {
	if len(s.cfg.RedirectURIs) > 0 {
		for _, r := range s.cfg.RedirectURIs {
			if r == raw {
				return url.Parse(raw)
			}
		}
		return nil, fmt.Errorf("redirect_uri %q is not registered for this client", raw)
	}
	return loopbackRedirect(raw)
}

// loopbackRedirect checks an RFC 8252 loopback redirect URI (the vendor's
// samples also use localhost).
func loopbackRedirect(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, fmt.Errorf("redirect_uri is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("redirect_uri is not a URL")
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("redirect_uri must use http on a loopback address, got scheme %q", u.Scheme)
	}
	if u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("redirect_uri must not carry a fragment or user info")
	}
	host, port := u.Hostname(), u.Port()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback() || (host != "127.0.0.1" && host != "::1")) {
		return nil, fmt.Errorf("redirect_uri host must be 127.0.0.1, [::1] or localhost, got %q", host)
	}
	if port == "" {
		return nil, fmt.Errorf("redirect_uri must name its port")
	}
	return u, nil
}

// handleAuthorize is the authorization page: it approves (or, per
// Config.Consent, denies) at once and redirects to the client.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	clientID, redirect, state := q.Get("client_id"), q.Get("redirect_uri"), q.Get("state")
	ev := Event{Source: SourceOAuth, Action: "authorize", Args: map[string]any{
		"clientId": clientID, "redirectUri": redirect, "responseType": q.Get("response_type"),
		"codeChallengeMethod": q.Get("code_challenge_method"), "hasState": state != "", "scope": q.Get("scope"),
	}, Payload: paramsPayload(q)}
	page := func(status int, msg string) {
		ev.Status, ev.Error = status, msg
		s.record(ev)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, "<!doctype html><title>Sign-in error</title><h1>Sign-in error</h1><p>%s</p>\n", html.EscapeString(msg))
	}
	if clientID == "" || subtle.ConstantTimeCompare([]byte(clientID), []byte(s.cfg.ClientID)) != 1 {
		page(http.StatusBadRequest, "unknown client_id")
		return
	}
	ru, err := s.checkRedirectFor(r, redirect)
	if err != nil {
		page(http.StatusBadRequest, err.Error())
		return
	}
	back := func(params url.Values) {
		if state != "" {
			params.Set("state", state)
		}
		u := *ru
		rq := u.Query()
		for k, v := range params {
			rq[k] = v
		}
		u.RawQuery = rq.Encode()
		ev.Status = http.StatusFound
		ev.Result = paramsPayload(params)
		s.record(ev)
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	fail := func(code, desc string) {
		ev.Error = code
		back(url.Values{"error": {code}, "error_description": {desc}})
	}
	if rt := q.Get("response_type"); rt != "code" && rt != "" {
		fail("unsupported_response_type", "response_type must be code")
		return
	}
	challenge, method := q.Get("code_challenge"), q.Get("code_challenge_method")
	if challenge != "" {
		if method != "S256" {
			fail("invalid_request", "code_challenge_method must be S256")
			return
		}
		if b, err := base64.RawURLEncoding.DecodeString(challenge); err != nil || len(b) != sha256.Size {
			fail("invalid_request", "code_challenge is not a base64url SHA-256")
			return
		}
	}
	scope := q.Get("scope")
	if s.cfg.Consent != nil && !s.cfg.Consent(ConsentRequest{ClientID: clientID, RedirectURI: redirect, Scope: scope}) {
		fail("access_denied", "the user denied the request")
		return
	}
	code := newSecret()
	s.mu.Lock()
	s.codes[digest(code)] = &authCode{
		clientID: clientID, redirectURI: redirect, challenge: challenge, scope: scope,
		expires: s.now().Add(s.cfg.CodeTTL),
	}
	s.mu.Unlock()
	back(url.Values{"code": {code}})
}

// tokenResponse is the token endpoint's answer, in the vendor's shape
// (the Unity plugin's TokenResponse): no token_type, no expires_in, the
// two expirations as RFC 3339 UTC strings.
type tokenResponse struct {
	AccessToken            string `json:"access_token"`
	RefreshToken           string `json:"refresh_token"`
	AccessTokenExpiration  string `json:"access_token_expiration"`
	RefreshTokenExpiration string `json:"refresh_token_expiration"`
	Scope                  string `json:"scope,omitempty"`
}

// oauthError is an RFC 6749 5.2 error.
type oauthError struct {
	status int
	Code   string `json:"error"`
	Desc   string `json:"error_description,omitempty"`
}

func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	ev := Event{Source: SourceOAuth, Action: "token", Args: map[string]any{}}
	var params url.Values
	resp, oerr := s.token(r, ev.Args, &params)
	ev.Payload = paramsPayload(params)
	s.saveState() // codes, grants and tokens may have changed
	w.Header().Set("Pragma", "no-cache")
	if oerr != nil {
		if oerr.status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="mock", charset="UTF-8"`)
		}
		ev.Status, ev.Error = oerr.status, oerr.Code
		ev.Result = payload(oerr)
		s.record(ev)
		writeJSON(w, oerr.status, oerr)
		return
	}
	ev.Status = http.StatusOK
	ev.Result = payload(resp)
	s.record(ev)
	writeJSON(w, http.StatusOK, resp)
}

func badRequest(code, desc string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, Code: code, Desc: desc}
}

// token runs the token endpoint; args collects what may be logged.
func (s *Server) token(r *http.Request, args map[string]any, params *url.Values) (*tokenResponse, *oauthError) {
	if r.Method != http.MethodPost {
		return nil, badRequest("invalid_request", "use POST")
	}
	// Parameters come in the query (the browser, C++ and Unity samples) or
	// in a form body (Android, iOS); the body wins where both name one.
	r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
	f := r.URL.Query()
	*params = f
	args["paramsIn"] = "query"
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/x-www-form-urlencoded" {
		if err := r.ParseForm(); err != nil {
			return nil, badRequest("invalid_request", "unreadable form body")
		}
		if len(r.PostForm) > 0 {
			args["paramsIn"] = "body"
			for k, v := range r.PostForm {
				f[k] = v
			}
		}
	}
	grantType := f.Get("grant_type")
	args["grantType"] = grantType

	// Client authentication.
	clientID, secret := f.Get("client_id"), f.Get("client_secret")
	user, pass, basic := r.BasicAuth()
	switch {
	case basic:
		args["clientAuth"] = "basic"
		if secret != "" {
			return nil, badRequest("invalid_request", "use one client authentication method, not Basic and client_secret together")
		}
		if u, err := url.QueryUnescape(user); err == nil {
			user = u
		}
		if p, err := url.QueryUnescape(pass); err == nil {
			pass = p
		}
		if clientID != "" && clientID != user {
			return nil, &oauthError{status: http.StatusUnauthorized, Code: "invalid_client", Desc: "client_id in the body differs from the Basic user"}
		}
		clientID, secret = user, pass
	case secret != "":
		args["clientAuth"] = "client_secret"
	case clientID != "":
		args["clientAuth"] = "none" // a public client, as the vendor's samples are
	default:
		args["clientAuth"] = "none"
		return nil, &oauthError{status: http.StatusUnauthorized, Code: "invalid_client", Desc: "client_id is required"}
	}
	args["clientId"] = clientID
	if subtle.ConstantTimeCompare([]byte(clientID), []byte(s.cfg.ClientID)) != 1 ||
		(secret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(s.cfg.ClientSecret)) != 1) {
		return nil, &oauthError{status: http.StatusUnauthorized, Code: "invalid_client", Desc: "unknown client or wrong client secret"}
	}
	if secret == "" && s.cfg.RequireClientSecret {
		return nil, &oauthError{status: http.StatusUnauthorized, Code: "invalid_client", Desc: "this client must authenticate with its client_secret"}
	}

	switch grantType {
	case "code", "authorization_code":
		return s.redeemCode(clientID, f.Get("code"), f.Get("redirect_uri"), f.Get("code_verifier"), args)
	case "refresh_token":
		return s.redeemRefresh(clientID, f.Get("refresh_token"), args)
	case "":
		return nil, badRequest("invalid_request", "grant_type is required")
	default:
		return nil, badRequest("unsupported_grant_type", "grant_type must be code, authorization_code or refresh_token")
	}
}

// validVerifier checks RFC 7636 4.1: 43 to 128 unreserved characters.
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for _, c := range v {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~", c)) {
			return false
		}
	}
	return true
}

func (s *Server) redeemCode(clientID, code, redirect, verifier string, args map[string]any) (*tokenResponse, *oauthError) {
	if code == "" {
		return nil, badRequest("invalid_request", "code is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ac := s.codes[digest(code)]
	if ac == nil {
		return nil, badRequest("invalid_grant", "unknown authorization code")
	}
	if ac.used {
		revoked := false
		if ac.grantID != "" {
			revoked = s.revokeGrantLocked(ac.grantID)
		}
		args["revokedGrant"] = revoked
		return nil, badRequest("invalid_grant", "the authorization code was already used; tokens issued from it are revoked")
	}
	ac.used = true // consumed by any redemption attempt of its client
	if !s.now().Before(ac.expires) {
		return nil, badRequest("invalid_grant", "the authorization code expired")
	}
	if ac.clientID != clientID {
		return nil, badRequest("invalid_grant", "the authorization code was issued to another client")
	}
	if redirect != ac.redirectURI {
		return nil, badRequest("invalid_grant", "redirect_uri does not match the authorization request")
	}
	if ac.challenge != "" { // PKCE was asked for: the verifier must match
		if verifier == "" {
			return nil, badRequest("invalid_grant", "code_verifier is required (the authorization request carried a code_challenge)")
		}
		if !validVerifier(verifier) {
			return nil, badRequest("invalid_grant", "code_verifier must be 43 to 128 unreserved characters")
		}
		sum := sha256.Sum256([]byte(verifier))
		if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(ac.challenge)) != 1 {
			return nil, badRequest("invalid_grant", "code_verifier does not match the code_challenge")
		}
	}
	g := &grant{id: uuid.NewString(), clientID: clientID, scope: ac.scope}
	s.grants[g.id] = g
	ac.grantID = g.id
	args["grantId"] = g.id
	return s.issueLocked(g), nil
}

func (s *Server) redeemRefresh(clientID, rt string, args map[string]any) (*tokenResponse, *oauthError) {
	if rt == "" {
		return nil, badRequest("invalid_request", "refresh_token is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.refresh[digest(rt)]
	if t == nil {
		return nil, badRequest("invalid_grant", "unknown refresh token")
	}
	g := s.grants[t.grantID]
	args["grantId"] = t.grantID
	if g == nil || g.revoked {
		return nil, badRequest("invalid_grant", "the grant of this refresh token was revoked; sign in again")
	}
	if g.clientID != clientID {
		return nil, badRequest("invalid_grant", "the refresh token was issued to another client")
	}
	if t.used {
		s.revokeGrantLocked(g.id)
		args["revokedGrant"] = true
		return nil, badRequest("invalid_grant", "the refresh token was already used (rotated); the grant is revoked, sign in again")
	}
	if !s.now().Before(t.expires) {
		return nil, badRequest("invalid_grant", "the refresh token expired; sign in again")
	}
	t.used = true
	return s.issueLocked(g), nil
}

// issueLocked issues an access and a refresh token of g.
func (s *Server) issueLocked(g *grant) *tokenResponse {
	now := s.now()
	at, rt := newSecret(), newSecret()
	aexp, rexp := now.Add(s.cfg.AccessTokenTTL), now.Add(s.cfg.RefreshTokenTTL)
	s.access[digest(at)] = &accessToken{grantID: g.id, expires: aexp}
	s.refresh[digest(rt)] = &refreshToken{grantID: g.id, expires: rexp}
	return &tokenResponse{AccessToken: at, RefreshToken: rt,
		AccessTokenExpiration:  aexp.UTC().Format(time.RFC3339Nano),
		RefreshTokenExpiration: rexp.UTC().Format(time.RFC3339Nano),
		Scope:                  g.scope}
}

// revokeGrantLocked revokes g and drops its tokens; it reports whether
// anything was revoked.
func (s *Server) revokeGrantLocked(id string) bool {
	g := s.grants[id]
	if g == nil || g.revoked {
		return false
	}
	g.revoked = true
	for k, t := range s.access {
		if t.grantID == id {
			delete(s.access, k)
		}
	}
	for _, t := range s.refresh {
		if t.grantID == id {
			t.used = true
		}
	}
	return true
}

// userFromRequest checks the user bearer; it returns a problem detail and
// the WWW-Authenticate value on failure.
func (s *Server) userFromRequest(r *http.Request) (detail, challenge string, ok bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, found := strings.Cut(h, " ")
	if h == "" || !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "a user access token is required: Authorization: Bearer <token>", `Bearer realm="mock"`, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.access[digest(strings.TrimSpace(tok))]
	if t == nil {
		return "the access token is unknown or revoked", `Bearer realm="mock", error="invalid_token", error_description="unknown or revoked"`, false
	}
	if !s.now().Before(t.expires) {
		return "the access token expired", `Bearer realm="mock", error="invalid_token", error_description="expired"`, false
	}
	return "", "", true
}
