package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/oauth2"
)

// Defaults.
const (
	DefaultLoginTimeout = 5 * time.Minute
	DefaultHTTPTimeout  = 30 * time.Second
	// DefaultProbeTimeout bounds Client.Probe.
	DefaultProbeTimeout = 5 * time.Second
	// AuthorizePath and TokenPath are appended to Config.APIURL when
	// AuthURL or TokenURL is empty (the vendor's clients: /signin and
	// /signin/token).
	AuthorizePath = "/signin"
	TokenPath     = "/signin/token"
	// CallbackPath is the redirect listener's path when Config.RedirectURI
	// is empty.
	CallbackPath = "/callback"
)

// Grant is the grant_type the code exchange sends.
type Grant string

const (
	// GrantCode is grant_type=code, what the vendor's clients send (the
	// default).
	GrantCode Grant = "code"
	// GrantAuthorizationCode is the standard grant_type=authorization_code
	// (RFC 6749 4.1.3), for services that want it.
	GrantAuthorizationCode Grant = "authorization_code"
)

// Config configures New.
type Config struct {
	// APIURL is {api_url}, the base of the default AuthURL and TokenURL.
	// Required unless both are set.
	APIURL string
	// AuthURL is the authorization (login) page. Zero: {APIURL}/signin.
	AuthURL string
	// TokenURL is the token endpoint. Zero: {APIURL}/signin/token.
	TokenURL string
	// ClientID is the OAuth client id. Required.
	ClientID string
	// ClientSecret is the OAuth client secret. Zero: none is sent (the
	// vendor's clients send none on the exchange). When set it is sent as
	// the client_secret form parameter, never with HTTP Basic.
	ClientSecret string
	// Grant is the exchange's grant_type. Zero: GrantCode.
	Grant Grant
	// RedirectURI is the redirect address registered for the client (for
	// example http://127.0.0.1:51772/); the listener binds its host and
	// port and answers on its path. The host must be a loopback address
	// or localhost. Zero: http://127.0.0.1:<a port chosen by the OS>/callback.
	RedirectURI string
	// AllowMissingState accepts a redirect that carries no state (a
	// service that does not echo it). A wrong state is always refused.
	// Zero: refused.
	AllowMissingState bool
	// MissingStateHint names, in the refusal of a redirect without state,
	// the setting that accepts it. Zero: "oauth.Config.AllowMissingState".
	MissingStateHint string
	// Scopes are requested when set. Zero: no scope parameter.
	Scopes []string
	// HTTPClient sends the token requests (exchange and refresh) and the
	// probe. Zero: a client with a DefaultHTTPTimeout timeout.
	HTTPClient *http.Client
	// Logger receives debug lines about the flow (never a code, a token,
	// the verifier or the secret). Zero: discard.
	Logger *slog.Logger
	// Now is the clock token lifetimes are judged on. Zero: time.Now.
	Now func() time.Time
}

// Client runs sign-ins and makes token sources for one OAuth client.
type Client struct {
	cfg  Config
	conf oauth2.Config // RedirectURL is set per login; used for AuthCodeURL only
	hc   *http.Client
	log  *slog.Logger
	now  func() time.Time

	mu           sync.Mutex
	lastRedirect string // the redirect_uri of the last Login, sent again on refreshes
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
	switch cfg.Grant {
	case "":
		cfg.Grant = GrantCode
	case GrantCode, GrantAuthorizationCode:
	default:
		return nil, fmt.Errorf("oauth: Config.Grant must be %q or %q; got %q", GrantCode, GrantAuthorizationCode, cfg.Grant)
	}
	if cfg.RedirectURI != "" {
		if _, _, err := ParseRedirectURI(cfg.RedirectURI); err != nil {
			return nil, err
		}
	}
	if cfg.MissingStateHint == "" {
		cfg.MissingStateHint = "oauth.Config.AllowMissingState"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{
		cfg: cfg,
		conf: oauth2.Config{
			ClientID: cfg.ClientID,
			Scopes:   append([]string(nil), cfg.Scopes...),
			Endpoint: oauth2.Endpoint{AuthURL: cfg.AuthURL, TokenURL: cfg.TokenURL},
		},
		hc:           cfg.HTTPClient,
		log:          cfg.Logger,
		now:          cfg.Now,
		lastRedirect: cfg.RedirectURI,
	}, nil
}

// ParseRedirectURI checks a fixed redirect address and returns the address
// the listener binds (host:port, "localhost" bound as 127.0.0.1) and the
// path it answers on ("/" when the address has none). Only http on a
// loopback host with an explicit port can be served by hubgate itself.
func ParseRedirectURI(raw string) (listen, path string, err error) {
	u, perr := url.Parse(raw)
	if perr != nil || u.Scheme != "http" || u.Host == "" {
		return "", "", fmt.Errorf("oauth: the redirect address must be an http://127.0.0.1:<port>/... address; got %q", raw)
	}
	if u.Fragment != "" || u.User != nil || u.RawQuery != "" {
		return "", "", fmt.Errorf("oauth: the redirect address %q must not carry a query, a fragment or user info", raw)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		return "", "", fmt.Errorf("oauth: the redirect address %q must name its port", raw)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", "", fmt.Errorf("oauth: the redirect address %q has an invalid port", raw)
	}
	switch ip := net.ParseIP(host); {
	case strings.EqualFold(host, "localhost"):
		host = "127.0.0.1"
	case ip == nil || !ip.IsLoopback():
		return "", "", fmt.Errorf("oauth: the redirect address %q must be on this machine (127.0.0.1, [::1] or localhost): hubgate answers it itself", raw)
	}
	path = u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return net.JoinHostPort(host, port), path, nil
}

// Probe checks that the service answers at {api_url} (any HTTP answer
// counts) within DefaultProbeTimeout, so that a wrong address fails in
// seconds rather than after the sign-in timeout. Its error matches
// ErrUnreachable.
func (c *Client) Probe(ctx context.Context) error {
	target := strings.TrimRight(c.cfg.APIURL, "/") + "/"
	if c.cfg.APIURL == "" {
		target = c.cfg.TokenURL
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &UnreachableError{URL: target, Err: err}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	c.log.Debug("oauth probe", "url", target, "status", resp.StatusCode)
	return nil
}

// AuthURL returns the authorization page address in use.
func (c *Client) AuthURL() string { return c.conf.Endpoint.AuthURL }

// TokenURL returns the token endpoint in use.
func (c *Client) TokenURL() string { return c.conf.Endpoint.TokenURL }

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
