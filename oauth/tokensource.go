package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

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
// the token endpoint when it is about to expire. It is safe for concurrent
// use.
type TokenSource struct {
	ctx     context.Context
	base    oauth2.TokenSource
	store   SecretSetter
	account string
	log     *slog.Logger

	mu        sync.Mutex
	persisted string // the refresh token known to be stored (or given at creation)
}

// TokenSource returns a TokenSource starting from tok (at least a refresh
// token; an access token without an expiry is never refreshed). ctx is
// kept for every future refresh and store write: pass a long-lived one.
// tok's own refresh token is taken as already stored (by the caller).
func (c *Client) TokenSource(ctx context.Context, tok *oauth2.Token, o TokenSourceOptions) *TokenSource {
	if o.Account == "" {
		o.Account = DefaultRefreshTokenAccount
	}
	t := *tok
	return &TokenSource{
		ctx:       ctx,
		base:      c.conf.TokenSource(c.httpCtx(ctx), &t),
		store:     o.Store,
		account:   o.Account,
		log:       c.log,
		persisted: tok.RefreshToken,
	}
}

// Token returns a valid token. When a refresh brought a new refresh
// token, it is written to the store first; if that write fails, Token
// returns the error and no token (the next call tries the write again
// without another refresh). A refresh answered with invalid_grant is a
// *TokenError matching ErrSignInAgain.
func (s *TokenSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, err := s.base.Token()
	if err != nil {
		err = tokenError("refresh", err)
		var te *TokenError
		if !errors.As(err, &te) {
			err = fmt.Errorf("oauth: refresh the access token: %w", err)
		}
		s.log.Debug("oauth refresh failed", "sign_in_again", errors.Is(err, ErrSignInAgain))
		return nil, err
	}
	if tok.RefreshToken != "" && tok.RefreshToken != s.persisted {
		if s.store != nil {
			if err := s.store.Set(s.ctx, s.account, tok.RefreshToken); err != nil {
				s.log.Debug("oauth: storing the rotated refresh token failed")
				return nil, fmt.Errorf("oauth: store the rotated refresh token (the new access token is withheld until it is stored): %w", err)
			}
			s.log.Debug("oauth: rotated refresh token stored", "account", s.account)
		}
		s.persisted = tok.RefreshToken
	}
	return tok, nil
}
