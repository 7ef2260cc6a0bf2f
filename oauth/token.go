package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/hubgate/hubgate/internal/lazyregexp"
)

// maxTokenBody bounds a token endpoint answer.
const maxTokenBody = 1 << 20

// Extra keys of a returned *oauth2.Token (tok.Extra(key)).
const (
	// ExtraRefreshExpiry holds the refresh token's expiry as a time.Time
	// when the answer carried a readable refresh_token_expiration.
	ExtraRefreshExpiry = "hubgate_refresh_expiry"
	// ExtraObtained holds the time.Time the token was received.
	ExtraObtained = "hubgate_obtained"
)

// exchange redeems an authorization code.
func (c *Client) exchange(ctx context.Context, code, redirect, verifier string) (*oauth2.Token, error) {
	v := url.Values{
		"grant_type":   {string(c.cfg.Grant)},
		"code":         {code},
		"client_id":    {c.cfg.ClientID},
		"redirect_uri": {redirect},
	}
	if verifier != "" {
		v.Set("code_verifier", verifier)
	}
	return c.tokenRequest(ctx, "exchange", v)
}

// refresh redeems a refresh token, as the vendor's Unity client does:
// grant_type=refresh_token, refresh_token, client_id, client_secret (when
// known) and redirect_uri.
func (c *Client) refresh(ctx context.Context, refreshToken string) (*oauth2.Token, error) {
	v := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {refreshToken},
		"client_id":     {c.cfg.ClientID},
	}
	c.mu.Lock()
	if c.lastRedirect != "" {
		v.Set("redirect_uri", c.lastRedirect)
	}
	c.mu.Unlock()
	return c.tokenRequest(ctx, "refresh", v)
}

// tokenRequest POSTs v as a form body to the token endpoint, once (never
// retried: a code is single-use, a refresh token may rotate), with the
// client secret as the client_secret parameter when there is one and
// never with HTTP Basic.
func (c *Client) tokenRequest(ctx context.Context, op string, v url.Values) (*oauth2.Token, error) {
	if c.cfg.ClientSecret != "" {
		v.Set("client_secret", c.cfg.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.TokenURL, strings.NewReader(v.Encode()))
	if err != nil {
		return nil, fmt.Errorf("oauth: %s: %w", op, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL carries no secret, but keep the message short
		}
		return nil, fmt.Errorf("oauth: %s at %s: %w", op, c.cfg.TokenURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenBody))
	if err != nil {
		return nil, fmt.Errorf("oauth: %s: read the answer: %w", op, err)
	}
	now := c.now()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		re := &oauth2.RetrieveError{Response: resp, Body: body}
		var e struct {
			Code string `json:"error"`
			Desc string `json:"error_description"`
			URI  string `json:"error_uri"`
		}
		if json.Unmarshal(body, &e) == nil {
			re.ErrorCode, re.ErrorDescription, re.ErrorURI = e.Code, e.Desc, e.URI
		} else if q, err := url.ParseQuery(string(body)); err == nil {
			re.ErrorCode, re.ErrorDescription = q.Get("error"), q.Get("error_description")
		}
		return nil, tokenError(op, re)
	}
	tok, err := parseTokenAnswer(resp.Header.Get("Content-Type"), body, now)
	if err != nil {
		return nil, fmt.Errorf("oauth: %s: %w", op, err)
	}
	return tok, nil
}

// parseTokenAnswer reads a token answer: JSON (or, from older servers,
// a form-encoded body) with access_token, refresh_token, token_type and
// the lifetime as expires_in (seconds) or access_token_expiration (a date;
// see ParseExpiration). An unreadable lifetime leaves Expiry zero:
// unknown.
func parseTokenAnswer(contentType string, body []byte, now time.Time) (*oauth2.Token, error) {
	raw := map[string]any{}
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/x-www-form-urlencoded" || mt == "text/plain" {
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, errors.New("the token answer is not readable")
		}
		for k := range q {
			raw[k] = q.Get(k)
		}
	} else {
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		if err := d.Decode(&raw); err != nil {
			return nil, errors.New("the token answer is not a JSON object")
		}
	}
	str := func(k string) string {
		switch v := raw[k].(type) {
		case string:
			return v
		case json.Number:
			return v.String()
		}
		return ""
	}
	tok := &oauth2.Token{AccessToken: str("access_token"), TokenType: str("token_type"), RefreshToken: str("refresh_token")}
	if tok.AccessToken == "" {
		return nil, errors.New("the token answer has no access_token")
	}
	if secs, err := strconv.ParseFloat(strings.TrimSpace(str("expires_in")), 64); err == nil && secs > 0 {
		tok.Expiry = now.Add(time.Duration(secs * float64(time.Second)))
		tok.ExpiresIn = int64(secs)
	} else if t, ok := ParseExpiration(str("access_token_expiration")); ok {
		tok.Expiry = t
	}
	extra := map[string]any{ExtraObtained: now}
	for k, v := range raw {
		extra[k] = v
	}
	if t, ok := ParseExpiration(str("refresh_token_expiration")); ok {
		extra[ExtraRefreshExpiry] = t
	}
	return tok.WithExtra(extra), nil
}

var msDate = lazyregexp.New(`^/Date\((-?\d+)([+-]\d{4})?\)/$`)

// expirationLayouts are the date forms ParseExpiration reads, the zoned
// ones first. A form without a zone is read as UTC (what .NET's
// DateTime.UtcNow serialises without a "Z").
var expirationLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999 -0700 MST",
	time.RFC1123Z, time.RFC1123, time.RFC850, time.ANSIC, time.UnixDate,
	"Mon, 2 Jan 2006 15:04:05 MST",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"01/02/2006 15:04:05",
	"1/2/2006 3:04:05 PM",
}

// ParseExpiration reads an expiry as services write it: ISO 8601 / RFC
// 3339 (with or without fraction and zone; no zone means UTC), RFC 1123
// and the other HTTP date forms, .NET's "/Date(ms)/", US "M/D/YYYY h:mm:ss
// PM" as .NET's invariant culture writes it, or Unix time in seconds or
// milliseconds. ok is false for anything else, including "" and the
// zero-year dates .NET writes for "none".
func ParseExpiration(s string) (t time.Time, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	if m := msDate.FindStringSubmatch(s); m != nil {
		ms, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return time.Time{}, false
		}
		return time.UnixMilli(ms).UTC(), true
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		switch {
		case n > 1e11 && n < 1e14: // milliseconds
			return time.UnixMilli(int64(n)).UTC(), true
		case n > 1e8 && n <= 1e11: // seconds
			return time.Unix(int64(n), int64((n-float64(int64(n)))*1e9)).UTC(), true
		}
		return time.Time{}, false
	}
	for _, layout := range expirationLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 1971 {
				return time.Time{}, false
			}
			return t, true
		}
	}
	return time.Time{}, false
}
