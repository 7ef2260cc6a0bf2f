package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/oauth2"
)

// Defaults.
const (
	DefaultLoginTimeout = 5 * time.Minute
	DefaultHTTPTimeout  = 30 * time.Second
	// AuthorizePath and TokenPath are appended to Config.APIURL when
	// AuthURL or TokenURL is empty.
	AuthorizePath = "/signin/authorize"
	TokenPath     = "/signin/token"
	// CallbackPath is the redirect listener's path.
	CallbackPath = "/callback"
)

// Config configures New.
type Config struct {
	// APIURL is {api_url}, the base of the default AuthURL and TokenURL.
	// Required unless both are set.
	APIURL string
	// AuthURL is the authorization (login) page. Zero:
	// {APIURL}/signin/authorize.
	AuthURL string
	// TokenURL is the token endpoint. Zero: {APIURL}/signin/token.
	TokenURL string
	// ClientID is the OAuth client id. Required.
	ClientID string
	// ClientSecret is the OAuth client secret. Zero: a public client (the
	// client_id goes in the request body, no Basic authentication).
	ClientSecret string
	// Scopes are requested when set. Zero: no scope parameter.
	Scopes []string
	// HTTPClient sends the token requests (exchange and refresh). Zero: a
	// client with a DefaultHTTPTimeout timeout.
	HTTPClient *http.Client
	// Logger receives debug lines about the flow (never a code, a token,
	// the verifier or the secret). Zero: discard.
	Logger *slog.Logger
}

// Client runs sign-ins and makes token sources for one OAuth client.
type Client struct {
	conf oauth2.Config // RedirectURL is set per login
	hc   *http.Client
	log  *slog.Logger
}

// New returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.ClientID == "" {
		return nil, errors.New("oauth: Config.ClientID is required")
	}
	base := strings.TrimRight(cfg.APIURL, "/")
	if cfg.AuthURL == "" || cfg.TokenURL == "" {
		if base == "" {
			return nil, errors.New("oauth: Config.APIURL is required unless AuthURL and TokenURL are both set")
		}
	}
	if cfg.AuthURL == "" {
		cfg.AuthURL = base + AuthorizePath
	}
	if cfg.TokenURL == "" {
		cfg.TokenURL = base + TokenPath
	}
	for name, raw := range map[string]string{"AuthURL": cfg.AuthURL, "TokenURL": cfg.TokenURL} {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("oauth: Config.%s must be an absolute http(s) URL; got %q", name, raw)
		}
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	style := oauth2.AuthStyleInHeader
	if cfg.ClientSecret == "" {
		style = oauth2.AuthStyleInParams
	}
	return &Client{
		conf: oauth2.Config{
			ClientID:     cfg.ClientID,
			ClientSecret: cfg.ClientSecret,
			Scopes:       append([]string(nil), cfg.Scopes...),
			Endpoint: oauth2.Endpoint{
				AuthURL:   cfg.AuthURL,
				TokenURL:  cfg.TokenURL,
				AuthStyle: style,
			},
		},
		hc:  cfg.HTTPClient,
		log: cfg.Logger,
	}, nil
}

// AuthURL returns the authorization page address in use.
func (c *Client) AuthURL() string { return c.conf.Endpoint.AuthURL }

// TokenURL returns the token endpoint in use.
func (c *Client) TokenURL() string { return c.conf.Endpoint.TokenURL }

// httpCtx makes x/oauth2 use the client's HTTP client.
func (c *Client) httpCtx(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, c.hc)
}

// clean makes a server-supplied string safe to print: control characters
// (terminal escapes) dropped, at most 300 bytes.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
	if len(s) > 300 {
		cut := 300
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
