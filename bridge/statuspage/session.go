package statuspage

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// sessions mints and checks the page's session cookies and their CSRF
// tokens without a table: a cookie is a random nonce and its MAC under a
// key made per start; the session's CSRF token is another MAC of the
// nonce. So the cookie (which browsers also send to other servers on
// 127.0.0.1, whatever their port) does not give the CSRF token away, and
// the token is never a cookie: the page embeds it and sends it in the
// X-Hubgate-CSRF header.
type sessions struct{ key []byte }

func newSessions() sessions {
	key := make([]byte, 32)
	rand.Read(key) // never fails (since Go 1.24 a failure ends the program)
	return sessions{key: key}
}

func (s sessions) mac(purpose string, nonce []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	m.Write(nonce)
	return m.Sum(nil)
}

// mint returns a new session's cookie value and CSRF token.
func (s sessions) mint() (cookie, csrf string) {
	nonce := make([]byte, 16)
	rand.Read(nonce)
	return hex.EncodeToString(nonce) + "." + hex.EncodeToString(s.mac("session", nonce)), s.csrf(nonce)
}

// check returns the CSRF token of the session a cookie value names, or
// ok false when the value is not one of this start's sessions.
func (s sessions) check(cookie string) (csrf string, ok bool) {
	n, m, found := strings.Cut(cookie, ".")
	nonce, err1 := hex.DecodeString(n)
	sum, err2 := hex.DecodeString(m)
	if !found || err1 != nil || err2 != nil || len(nonce) != 16 || !hmac.Equal(sum, s.mac("session", nonce)) {
		return "", false
	}
	return s.csrf(nonce), true
}

func (s sessions) csrf(nonce []byte) string { return hex.EncodeToString(s.mac("csrf", nonce)) }

// csrfHeader carries the session's CSRF token on state-changing requests.
const csrfHeader = "X-Hubgate-CSRF"

// csrfKey is the context key of the request's session CSRF token.
type csrfKey struct{}

func withCSRF(r *http.Request, csrf string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), csrfKey{}, csrf))
}

func csrfOf(r *http.Request) string { s, _ := r.Context().Value(csrfKey{}).(string); return s }

// csrfValid reports whether r carries its session's CSRF token (compared
// in constant time).
func csrfValid(r *http.Request, csrf string) bool {
	got := r.Header.Get(csrfHeader)
	return got != "" && csrf != "" && subtle.ConstantTimeCompare([]byte(got), []byte(csrf)) == 1
}

// setSession sets the session cookie (HttpOnly, SameSite=Strict, Path=/).
func setSession(w http.ResponseWriter, name, value string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
}
