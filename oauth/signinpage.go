package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/hubgate/hubgate/internal/lazyregexp"
)

// ErrSignInPage: the sign-in page itself answered an error (a client id or
// a redirect address the service does not know). A *SignInPageError
// matches it.
var ErrSignInPage = errors.New("the sign-in page refused the request")

// SignInPageError is a sign-in page that answered a 4xx status to the
// address the person was asked to open: nobody can sign in there, so
// Login ends at once instead of waiting for its timeout.
type SignInPageError struct {
	Status      int    // the HTTP status
	Excerpt     string // the start of the page's text, tags removed, cleaned
	ClientID    string // the client id sent
	RedirectURI string // the redirect address sent
}

func (e *SignInPageError) Error() string {
	s := fmt.Sprintf("the sign-in page answered %d %s", e.Status, http.StatusText(e.Status))
	if e.Excerpt != "" {
		s += fmt.Sprintf(" (%q)", e.Excerpt)
	}
	return s + fmt.Sprintf(": the likely cause is a client id (%s) or a redirect address (%s) that the service does not know for this client; check remote.client_id (--client-id) and remote.redirect_uri (--redirect-uri) against the developer portal", e.ClientID, e.RedirectURI)
}

// Is matches ErrSignInPage.
func (e *SignInPageError) Is(target error) bool { return target == ErrSignInPage }

// signInPageProbe GETs the sign-in page with the address's parameters (the
// same client id, redirect address and challenge, but a state of its own,
// so that its answer can never complete or disturb the person's sign-in),
// without following a redirect (a service that signs in at once would
// otherwise send a code to the listener). It returns a *SignInPageError
// for a 4xx answer; a network error or any other status is not a verdict:
// nil, with a note for the person in warn ("" when there is nothing to
// say).
func (c *Client) signInPageProbe(parent context.Context, authURL, redirect string) (warn string, err error) {
	u, perr := url.Parse(authURL)
	if perr != nil {
		return "", nil // the browser will say
	}
	q := u.Query()
	if st, serr := randomState(); serr == nil {
		q.Set("state", st)
	}
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(parent, DefaultProbeTimeout)
	defer cancel()
	req, rerr := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if rerr != nil {
		return "", nil
	}
	req.Header.Set("Accept", "text/html")
	req.Close = true // no idle connection outlives the check
	hc := *c.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, derr := hc.Do(req)
	if derr != nil {
		if parent.Err() != nil {
			return "", nil // the flow ended first
		}
		c.log.Debug("oauth sign-in page probe failed", "err", derr)
		return "could not check the sign-in page (" + clean(derr.Error()) + "); still waiting", nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	c.log.Debug("oauth sign-in page probe", "status", resp.StatusCode)
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return "", &SignInPageError{Status: resp.StatusCode, Excerpt: pageExcerpt(body), ClientID: c.cfg.ClientID, RedirectURI: redirect}
	case resp.StatusCode >= 500:
		return fmt.Sprintf("the sign-in page answered %d %s; if the browser shows an error too, the service has trouble", resp.StatusCode, http.StatusText(resp.StatusCode)), nil
	}
	return "", nil
}

var (
	// Elements whose text is not the page's message.
	pageNoise = lazyregexp.New(`(?is)<(head|script|style|title)\b.*?</(head|script|style|title)\s*>`)
	pageTag   = lazyregexp.New(`(?s)<[^>]*>`)
)

// pageExcerpt is the start of a page's visible text: tags and the head
// removed, entities decoded, white space collapsed, cleaned (control
// characters dropped), at most 200 bytes.
func pageExcerpt(body []byte) string {
	s := pageNoise.ReplaceAllString(string(body), " ")
	s = html.UnescapeString(pageTag.ReplaceAllString(s, " "))
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return clean(s)
}
