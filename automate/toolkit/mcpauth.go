package toolkit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/hubgate/hubgate/automate"
)

// McpSecretStore keeps the OAuth state of remote MCP servers (one secret
// per server: its client registration and tokens, as JSON). configs'
// SecretStore satisfies it; the toolkit does not import configs. Get of an
// account that holds nothing returns an error for which
// errors.Is(err, fs.ErrNotExist) is true.
type McpSecretStore interface {
	Get(ctx context.Context, account string) (string, error)
	Set(ctx context.Context, account, value string) error
}

// ErrMcpLoginRequired: a remote MCP server answered 401 and hubgate holds
// no usable tokens for it. A run never opens a browser; the error names the
// command that signs in (McpLogin).
var ErrMcpLoginRequired = errors.New("MCP server needs authorization")

// McpAccount is the secret store account that holds the OAuth state of the
// MCP server at serverURL: derived from its scheme, host and path (a query
// may hold a key and never reaches the store's account names).
func McpAccount(serverURL string) string {
	key := serverURL
	if u, err := url.Parse(serverURL); err == nil {
		key = u.Scheme + "://" + u.Host + u.Path
	}
	sum := sha256.Sum256([]byte(key))
	return "mcp-oauth-" + hex.EncodeToString(sum[:12])
}

// mcpOAuthRecord is what the store keeps for one server.
type mcpOAuthRecord struct {
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	AuthURL      string        `json:"auth_url"`
	TokenURL     string        `json:"token_url"`
	AuthStyle    int           `json:"auth_style,omitempty"`
	RedirectURL  string        `json:"redirect_url"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
}

func (r *mcpOAuthRecord) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID: r.ClientID, ClientSecret: r.ClientSecret,
		Endpoint:    oauth2.Endpoint{AuthURL: r.AuthURL, TokenURL: r.TokenURL, AuthStyle: oauth2.AuthStyle(r.AuthStyle)},
		RedirectURL: r.RedirectURL, Scopes: r.Scopes,
	}
}

func recordFrom(cfg *oauth2.Config, tok *oauth2.Token) *mcpOAuthRecord {
	return &mcpOAuthRecord{
		ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		AuthURL: cfg.Endpoint.AuthURL, TokenURL: cfg.Endpoint.TokenURL, AuthStyle: int(cfg.Endpoint.AuthStyle),
		RedirectURL: cfg.RedirectURL, Scopes: cfg.Scopes, Token: tok,
	}
}

// persistingSource hands out the tokens of base and writes every new one
// (a refresh, which may rotate the refresh token) to the store.
type persistingSource struct {
	ctx     context.Context
	base    oauth2.TokenSource
	store   McpSecretStore
	account string
	log     *slog.Logger

	mu   sync.Mutex
	rec  mcpOAuthRecord
	last string // the access token last stored
}

func (p *persistingSource) Token() (*oauth2.Token, error) {
	t, err := p.base.Token()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.AccessToken != p.last {
		if serr := p.save(t); serr != nil {
			// The token still serves this run; the next run refreshes
			// again (or is told to sign in if the refresh token rotated).
			p.log.Warn("toolkit: could not store a refreshed MCP token", "account", p.account, "err", serr)
		}
	}
	return t, nil
}

func (p *persistingSource) save(t *oauth2.Token) error {
	p.rec.Token = t
	b, err := json.Marshal(&p.rec)
	if err != nil {
		return err
	}
	if err := p.store.Set(p.ctx, p.account, string(b)); err != nil {
		return err
	}
	p.last = t.AccessToken
	return nil
}

// loginNeeded is the OAuth handler of a server with nothing stored: no
// token, and a 401 ends in ErrMcpLoginRequired.
type loginNeeded struct{ err error }

func (h loginNeeded) TokenSource(context.Context) (oauth2.TokenSource, error) { return nil, nil }
func (h loginNeeded) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	return h.err
}

func loginRequired(name string) error {
	return fmt.Errorf("%w: run \"hubgate mcp login %s\" to sign in", ErrMcpLoginRequired, name)
}

// mcpOAuthHandler is the OAuth handler of a run's streamable HTTP server
// s: the SDK's authorization-code handler seeded with the stored tokens
// (refreshed through x/oauth2 and stored again), whose authorization step
// refuses with ErrMcpLoginRequired instead of opening a browser.
func mcpOAuthHandler(ctx context.Context, s automate.InlineMcpServer, cfg McpConfig) (auth.OAuthHandler, error) {
	account := McpAccount(s.URL)
	raw, err := cfg.Secrets.Get(ctx, account)
	if errors.Is(err, fs.ErrNotExist) {
		return loginNeeded{err: loginRequired(s.Name)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading its OAuth tokens: %w", err)
	}
	var rec mcpOAuthRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil || rec.Token == nil || rec.ClientID == "" {
		return loginNeeded{err: fmt.Errorf("%w: the stored tokens are unreadable; run \"hubgate mcp login %s\" again", ErrMcpLoginRequired, s.Name)}, nil
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	tctx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, hc)
	ps := &persistingSource{ctx: tctx, store: cfg.Secrets, account: account, log: cfg.Logger, rec: rec, last: rec.Token.AccessToken}
	ps.base = rec.config().TokenSource(tctx, rec.Token)
	pre := &oauthex.ClientCredentials{ClientID: rec.ClientID}
	if rec.ClientSecret != "" {
		pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: rec.ClientSecret}
	}
	return auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: pre,
		RedirectURL:         rec.RedirectURL,
		AuthorizationCodeFetcher: func(context.Context, *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return nil, loginRequired(s.Name)
		},
		Client:             hc,
		InitialTokenSource: oauth2.ReuseTokenSource(nil, ps),
	})
}

// McpLoginConfig configures McpLogin.
type McpLoginConfig struct {
	// Secrets receives the server's client registration and tokens.
	// Required.
	Secrets McpSecretStore
	// ShowURL shows the person the sign-in address (print it, open a
	// browser). Required.
	ShowURL func(url string)
	// HTTPClient talks to the MCP server and its authorization server.
	// Nil: http.DefaultClient.
	HTTPClient *http.Client
	// ClientName is the name registered with the authorization server
	// (dynamic client registration). Zero: "hubgate".
	ClientName string
	// Logger: nil is slog.Default().
	Logger *slog.Logger
}

// McpLogin signs in to the remote (streamable HTTP) MCP server s through
// the SDK's authorization-code handler: it discovers the authorization
// server from the server's 401, registers a client dynamically, shows the
// person the sign-in address, takes the code on a loopback redirect
// (127.0.0.1, a port the OS chooses), exchanges it with PKCE, and stores
// the registration and tokens under McpAccount(s.URL). It returns once a
// session with the server has been initialised with the new token.
func McpLogin(ctx context.Context, s automate.InlineMcpServer, cfg McpLoginConfig) error {
	if s.Transport != "http" || s.URL == "" {
		return fmt.Errorf("mcp server %q: sign-in needs a streamable HTTP server (transport http with a url)", s.Name)
	}
	if cfg.Secrets == nil || cfg.ShowURL == nil {
		return errors.New("toolkit: McpLogin needs Secrets and ShowURL")
	}
	if cfg.ClientName == "" {
		cfg.ClientName = "hubgate"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("mcp login: listening for the redirect: %w", err)
	}
	redirect := fmt.Sprintf("http://%s/callback", ln.Addr())
	results := make(chan *auth.AuthorizationResult, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if e := q.Get("error"); e != "" || q.Get("code") == "" {
			http.Error(w, "Sign-in did not complete; see the terminal.", http.StatusBadRequest)
			select {
			case results <- &auth.AuthorizationResult{State: q.Get("state")}:
			default:
			}
			return
		}
		select {
		case results <- &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}:
			fmt.Fprintln(w, "Signed in. You can close this window and return to hubgate.")
		default:
			http.Error(w, "This sign-in was already answered.", http.StatusConflict)
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()

	account := McpAccount(s.URL)
	var stored error = errors.New("no token was issued")
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: cfg.ClientName,
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			TokenEndpointAuthMethod: "none",
		}},
		RequestRefreshToken: true,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			cfg.ShowURL(args.URL)
			select {
			case r := <-results:
				if r.Code == "" {
					return nil, errors.New("the authorization server refused the sign-in")
				}
				return r, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		Client: hc,
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			ps := &persistingSource{ctx: ctx, store: cfg.Secrets, account: account, log: cfg.Logger, rec: *recordFrom(oc, tok)}
			if stored = ps.save(tok); stored != nil {
				return nil, fmt.Errorf("storing the tokens: %w", stored)
			}
			ps.base = oc.TokenSource(ctx, tok)
			return oauth2.ReuseTokenSource(tok, ps), nil
		},
	})
	if err != nil {
		return fmt.Errorf("mcp login %q: %w", s.Name, err)
	}
	transport := &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: httpClientWithHeaders(hc, s.Headers), OAuthHandler: h, MaxEventSize: MaxMcpMessage}
	client := mcp.NewClient(&mcp.Implementation{Name: cfg.ClientName, Version: "login"}, nil)
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("mcp login %q: %w", s.Name, redactURL(err, s.URL))
	}
	session.Close()
	if stored != nil {
		return fmt.Errorf("mcp login %q: the server let us in without signing in (%v); nothing was stored", s.Name, stored)
	}
	return nil
}
