package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// SecretSetter is the part of a secret store a TokenSource needs
// (configs.SecretStore satisfies it). Set must return only once the value
// is stored.
type SecretSetter interface {
	Set(ctx context.Context, account, value string) error
}

// DefaultRefreshTokenAccount is the account a TokenSource writes rotated
// refresh tokens to when TokenSourceOptions.Account is empty (the value of
// configs.AccountOAuthRefreshToken).
const DefaultRefreshTokenAccount = "oauth-refresh-token"

// maxExpiryDelta is how early a token with a known expiry is refreshed
// (x/oauth2 uses 10 s); a short-lived token is refreshed after 4/5 of its
// life instead, so that a 2-second token is not refreshed on every call.
const maxExpiryDelta = 10 * time.Second

// TokenSourceOptions configures Client.TokenSource.
type TokenSourceOptions struct {
	// Store receives every new refresh token before the token that
	// carries it is handed out. Zero: rotated refresh tokens are kept in
	// memory only (`hubgate pair` stores the final one itself, at the end).
	Store SecretSetter
	// Account is the account name in Store. Zero:
	// DefaultRefreshTokenAccount.
	Account string
}

// TokenSource hands out the user's access token, refreshing it through
// the token endpoint when it is about to expire, or, when its expiry is
// unknown, once a call was refused with it (Invalidate). It is safe for
// concurrent use; concurrent callers share one refresh.
type TokenSource struct {
	c       *Client
	ctx     context.Context
	store   SecretSetter
	account string
	log     *slog.Logger

	mu        sync.Mutex
	tok       *oauth2.Token // the current token; its AccessToken may be "" (refresh first)
	pending   *oauth2.Token // refreshed, its new refresh token not yet stored
	persisted string        // the refresh token known to be stored (or given at creation)
	stale     string        // an access token a call was refused with
	refreshes int
}

// TokenSource returns a TokenSource starting from tok (at least a refresh
// token). ctx is kept for every future refresh and store write: pass a
// long-lived one. tok's own refresh token is taken as already stored (by
// the caller).
func (c *Client) TokenSource(ctx context.Context, tok *oauth2.Token, o TokenSourceOptions) *TokenSource {
	if o.Account == "" {
		o.Account = DefaultRefreshTokenAccount
	}
	t := *tok
	return &TokenSource{c: c, ctx: ctx, store: o.Store, account: o.Account, log: c.log, tok: &t, persisted: tok.RefreshToken}
}

// Token returns a valid token. When a refresh brought a new refresh
// token, it is written to the store first; if that write fails, Token
// returns the error and no token (the next call tries the write again
// without another refresh). A refresh answered with invalid_grant is a
// *TokenError matching ErrSignInAgain.
func (s *TokenSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil && s.usable(s.tok) {
		t := *s.tok
		return &t, nil
	}
	if s.pending == nil {
		if s.tok.RefreshToken == "" {
			return nil, errors.New("oauth: the access token expired and there is no refresh token; " + ErrSignInAgain.Error())
		}
		nt, err := s.c.refresh(s.ctx, s.tok.RefreshToken)
		if err != nil {
			var te *TokenError
			if !errors.As(err, &te) {
				err = fmt.Errorf("oauth: refresh the access token: %w", err)
			}
			s.log.Debug("oauth refresh failed", "sign_in_again", errors.Is(err, ErrSignInAgain))
			return nil, err
		}
		s.refreshes++
		if nt.RefreshToken == "" {
			nt.RefreshToken = s.tok.RefreshToken // kept when the answer omits one
		}
		s.log.Debug("oauth access token refreshed", "expiry_known", !nt.Expiry.IsZero(), "rotated", nt.RefreshToken != s.tok.RefreshToken)
		s.pending = nt
	}
	if s.pending.RefreshToken != s.persisted && s.store != nil {
		if err := s.store.Set(s.ctx, s.account, s.pending.RefreshToken); err != nil {
			s.log.Debug("oauth: storing the rotated refresh token failed")
			return nil, fmt.Errorf("oauth: store the rotated refresh token (the new access token is withheld until it is stored): %w", err)
		}
		s.log.Debug("oauth: rotated refresh token stored", "account", s.account)
	}
	s.persisted = s.pending.RefreshToken
	s.tok, s.pending, s.stale = s.pending, nil, ""
	t := *s.tok
	return &t, nil
}

// usable reports whether t's access token may still be sent.
func (s *TokenSource) usable(t *oauth2.Token) bool {
	if t.AccessToken == "" || t.AccessToken == s.stale {
		return false
	}
	if t.Expiry.IsZero() {
		return true // unknown: used until a call is refused with it
	}
	delta := maxExpiryDelta
	if obtained, ok := t.Extra(ExtraObtained).(time.Time); ok {
		if life := t.Expiry.Sub(obtained); life > 0 && life/5 < delta {
			delta = life / 5
		}
	}
	return s.c.now().Before(t.Expiry.Add(-delta))
}

// Invalidate tells the source that a call was refused (401) with
// accessToken: the next Token refreshes, once. It reports whether a
// retry may succeed: true when a refresh will follow or already replaced
// accessToken, false when there is no refresh token.
func (s *TokenSource) Invalidate(accessToken string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if accessToken == "" || s.tok.RefreshToken == "" {
		return false
	}
	if s.tok.AccessToken != accessToken {
		return true // already replaced: the next Token hands out the new one
	}
	s.stale = accessToken
	return true
}

// Refreshes returns how many refreshes the source has made.
func (s *TokenSource) Refreshes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshes
}
