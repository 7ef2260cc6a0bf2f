package deviceapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/hubgate/hubgate/internal/backoff"
	"github.com/hubgate/hubgate/internal/retryafter"
)

// Routes of the REST client, as method and template (the Route of an
// *APIError and of log lines; ids are never part of a route).
const (
	RouteCreateDevice = "POST /api/Device/userDevices/new/{deviceTypeId}"
	RouteCreateToken  = "POST /api/Device/userDevices/{userDeviceId}/tokens"
	RouteGetDevice    = "GET /api/Device/userDevices/{userDeviceId}"
)

// Defaults of Config.
const (
	DefaultUserAgent    = "hubgate"
	DefaultTimeout      = 30 * time.Second
	DefaultGetRetries   = 2
	DefaultRetryWait    = 250 * time.Millisecond
	DefaultRetryMaxWait = 3 * time.Second
	// MaxResponseBody bounds every response body the client reads; a
	// longer one is ErrResponseTooLarge.
	MaxResponseBody = 4 << 20
)

// Config configures New.
type Config struct {
	// BaseURL is {api_url}, e.g. https://api.example.com (a path prefix
	// is kept). Required.
	BaseURL string
	// TokenSource supplies the user's access token, sent as
	// "Authorization: Bearer <token>" on every request (asked again on
	// every attempt, so a refreshing source is used as such). Required.
	TokenSource oauth2.TokenSource
	// HTTPClient sends the requests; it is copied, never modified. Zero: a
	// client with a DefaultTimeout overall timeout.
	HTTPClient *http.Client
	// Logger receives one debug line per request (route, status,
	// attempts, duration); never a token or a response body. Zero:
	// discard.
	Logger *slog.Logger
	// UserAgent is sent as User-Agent. Zero: DefaultUserAgent.
	UserAgent string
	// GetRetries is how many times a GET is retried after a connection
	// error, a 5xx or a 429. Zero: DefaultGetRetries; negative: none. POSTs
	// are never retried.
	GetRetries int
	// RetryWait and RetryMaxWait bound the jittered exponential backoff
	// between GET attempts (a Retry-After header is honoured, bounded to
	// RetryWait..RetryMaxWait). Zero: DefaultRetryWait, DefaultRetryMaxWait.
	RetryWait, RetryMaxWait time.Duration
}

// Client is the REST client of the remote device service's four routes
// (the token exchange lives in package oauth). It is safe for concurrent
// use.
//
// Choices where the spec is silent:
//   - Only GET is retried (GetRetries times, on a connection error, a 5xx
//     or a 429). The two POSTs are never retried, not even on a
//     connection error: a POST that reached the service may have created a
//     device or a token, and a retry would create a second one.
//   - The wait before retry n is RetryWait doubled n-1 times, at most
//     RetryMaxWait, shortened by up to half at random but never below
//     RetryWait; a Retry-After header (seconds or a date) replaces it,
//     bounded to RetryWait..RetryMaxWait. The context ends a wait.
//   - A connection error is an error of the HTTP client's Do; a body cut
//     short or over MaxResponseBody is not retried (the service answered).
//   - A status outside 2xx is an *APIError carrying the status, the route
//     template and a truncated body with secrets scrubbed.
//   - The get route's response fields are not shown; it is decoded as a
//     UserDevice (unknown members are kept in Extra).
//   - A 2xx whose body lacks the resource's id (or a token's token) is an
//     error: a caller must never store a half-described resource.
//   - It is built on net/http alone (no REST library: each one linked
//     costs the idle daemon resident memory, docs/performance.md). Its log
//     lines, at debug level, carry the route, the status or the error, the
//     attempt and the wait: never a header, so never the Authorization.
type Client struct {
	hc        *http.Client
	base      string // BaseURL without its trailing slashes
	ts        oauth2.TokenSource
	log       *slog.Logger
	userAgent string
	// getRetries, retryWait and retryMaxWait are Config's, defaults
	// applied.
	getRetries              int
	retryWait, retryMaxWait time.Duration
}

// New returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("deviceapi: Config.BaseURL is required")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("deviceapi: Config.BaseURL must be an absolute http(s) URL; got %q", cfg.BaseURL)
	}
	if cfg.TokenSource == nil {
		return nil, errors.New("deviceapi: Config.TokenSource is required")
	}
	hc := &http.Client{Timeout: DefaultTimeout}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		hc = &c
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	switch {
	case cfg.GetRetries == 0:
		cfg.GetRetries = DefaultGetRetries
	case cfg.GetRetries < 0:
		cfg.GetRetries = 0
	}
	if cfg.RetryWait <= 0 {
		cfg.RetryWait = DefaultRetryWait
	}
	if cfg.RetryMaxWait <= 0 {
		cfg.RetryMaxWait = DefaultRetryMaxWait
	}
	if cfg.RetryMaxWait < cfg.RetryWait {
		cfg.RetryMaxWait = cfg.RetryWait
	}
	return &Client{
		hc:           hc,
		base:         strings.TrimRight(cfg.BaseURL, "/"),
		ts:           cfg.TokenSource,
		log:          cfg.Logger,
		userAgent:    cfg.UserAgent,
		getRetries:   cfg.GetRetries,
		retryWait:    cfg.RetryWait,
		retryMaxWait: cfg.RetryMaxWait,
	}, nil
}

// tokenError is a failure of the TokenSource (it may be oauth's "sign in
// again").
type tokenError struct{ err error }

func (e *tokenError) Error() string { return "get the user's access token: " + e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// answer is one response (its body closed) and its body, read whole.
type answer struct {
	*http.Response
	body []byte
}

// retryable is the one retry condition of a GET: a connection error (an
// error of the HTTP client's Do, never a cancelled or expired context), a
// 5xx or a 429.
func retryable(a *answer, err error) bool {
	if err != nil {
		var ue *url.Error
		return errors.As(err, &ue) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	return a.StatusCode >= 500 || a.StatusCode == http.StatusTooManyRequests
}

// retryAfter is the wait a response's Retry-After asks for (seconds or an
// HTTP date), at most max; zero keeps the jittered backoff.
func retryAfter(resp *http.Response, now time.Time, max time.Duration) time.Duration {
	if resp == nil {
		return 0
	}
	return retryafter.FromHeader(resp.Header, now, max)
}

// retryWaitFor is the wait before retry n (n >= 1) after answer a (nil
// after a connection error).
func (c *Client) retryWaitFor(a *answer, n int) time.Duration {
	var d time.Duration
	if a != nil {
		d = retryAfter(a.Response, time.Now(), c.retryMaxWait)
	}
	if d == 0 {
		d = backoff.Jitter(backoff.Exponential(c.retryWait, c.retryMaxWait, n), 0.5)
	}
	return max(d, c.retryWait)
}

// CreateDevice creates a User Device of the device type with the given
// display name (POST /api/Device/userDevices/new/{deviceTypeId}?name=).
// Never retried.
func (c *Client) CreateDevice(ctx context.Context, deviceTypeID, name string) (*UserDevice, error) {
	if deviceTypeID == "" || name == "" {
		return nil, fmt.Errorf("deviceapi: %s: the device type id and the name are required", RouteCreateDevice)
	}
	var d UserDevice
	path := "/api/Device/userDevices/new/" + url.PathEscape(deviceTypeID) + "?" + url.Values{"name": {name}}.Encode()
	err := c.do(ctx, RouteCreateDevice, path, &d)
	if err != nil {
		return nil, err
	}
	if d.ID == "" {
		return nil, fmt.Errorf("deviceapi: %s: the response has no device id", RouteCreateDevice)
	}
	return &d, nil
}

// CreateToken creates a device token for the device (POST
// /api/Device/userDevices/{userDeviceId}/tokens). Never retried. The
// returned token's Token is a secret.
func (c *Client) CreateToken(ctx context.Context, deviceID string) (*DeviceToken, error) {
	if deviceID == "" {
		return nil, fmt.Errorf("deviceapi: %s: the device id is required", RouteCreateToken)
	}
	var t DeviceToken
	err := c.do(ctx, RouteCreateToken, "/api/Device/userDevices/"+url.PathEscape(deviceID)+"/tokens", &t)
	if err != nil {
		return nil, err
	}
	if t.ID == "" || t.Token == "" {
		return nil, fmt.Errorf("deviceapi: %s: the response lacks the token id or the token", RouteCreateToken)
	}
	return &t, nil
}

// GetDevice returns the device (GET /api/Device/userDevices/{userDeviceId}),
// retried as Config describes.
func (c *Client) GetDevice(ctx context.Context, deviceID string) (*UserDevice, error) {
	if deviceID == "" {
		return nil, fmt.Errorf("deviceapi: %s: the device id is required", RouteGetDevice)
	}
	var d UserDevice
	err := c.do(ctx, RouteGetDevice, "/api/Device/userDevices/"+url.PathEscape(deviceID), &d)
	if err != nil {
		return nil, err
	}
	if d.ID == "" {
		return nil, fmt.Errorf("deviceapi: %s: the response has no device id", RouteGetDevice)
	}
	return &d, nil
}

// Invalidator is the optional part of a TokenSource that learns of a
// refused access token (oauth.TokenSource has it): a 401 answered with
// token t makes the client call Invalidate(t) and, when it returns true,
// send the request once more with the token the source then hands out.
type Invalidator interface {
	Invalidate(accessToken string) bool
}

// do sends the request of route to path (ids escaped, with its query)
// and decodes a 2xx JSON body into out. A 401 is answered by one refresh
// of the user's access token and one more attempt when the TokenSource is
// an Invalidator (a 401 created nothing, so even a POST may be sent
// again; a service whose token expiry is unknown is refreshed this way).
func (c *Client) do(ctx context.Context, route, path string, out any) error {
	method, _, _ := strings.Cut(route, " ")
	start := time.Now()
	a, bearer, attempts, err := c.send(ctx, route, method, path)
	if err == nil && a.StatusCode == http.StatusUnauthorized {
		if inv, ok := c.ts.(Invalidator); ok && inv.Invalidate(bearer) {
			c.log.Debug("deviceapi: 401, refreshing the access token once", "route", route)
			var n int
			a, bearer, n, err = c.send(ctx, route, method, path)
			attempts += n
		}
	}
	if err != nil {
		c.log.Debug("deviceapi request failed", "route", route, "attempts", attempts, "duration", time.Since(start), "err", err)
		return fmt.Errorf("deviceapi: %s: %w", route, err)
	}
	c.log.Debug("deviceapi request", "route", route, "status", a.StatusCode, "attempts", attempts, "duration", time.Since(start))
	if a.StatusCode < 200 || a.StatusCode > 299 {
		return &APIError{Status: a.StatusCode, Route: route, Body: scrubBody(a.body, bearer)}
	}
	if err := json.Unmarshal(a.body, out); err != nil {
		// json's messages name types and offsets, never the values.
		return fmt.Errorf("deviceapi: %s: decode the %d response: %w", route, a.StatusCode, err)
	}
	return nil
}

// send makes the attempts of one request: one for a POST, up to
// 1+getRetries for a GET. It answers the last answer, the access token it
// carried (for scrubbing and Invalidate) and the number of attempts.
func (c *Client) send(ctx context.Context, route, method, path string) (*answer, string, int, error) {
	retries := 0
	if method == http.MethodGet {
		retries = c.getRetries
	}
	for n := 1; ; n++ {
		a, bearer, err := c.attempt(ctx, method, path)
		if n > retries || ctx.Err() != nil || !retryable(a, err) {
			return a, bearer, n, err
		}
		wait := c.retryWaitFor(a, n)
		if err != nil {
			c.log.Debug("deviceapi: retrying", "route", route, "attempt", n, "err", err, "wait", wait)
		} else {
			c.log.Debug("deviceapi: retrying", "route", route, "attempt", n, "status", a.StatusCode, "wait", wait)
		}
		if err := backoff.Sleep(ctx, wait); err != nil {
			return a, bearer, n, err
		}
	}
}

// attempt sends the request once with the TokenSource's current access
// token and reads the whole answer (at most MaxResponseBody bytes). The
// answer is nil when err is.
func (c *Client) attempt(ctx context.Context, method, path string) (*answer, string, error) {
	tok, err := c.ts.Token()
	if err != nil {
		return nil, "", &tokenError{err}
	}
	if tok == nil || tok.AccessToken == "" {
		return nil, "", &tokenError{errors.New("the token source returned no access token")}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		// %v: a *url.Error here is no connection error to retry.
		return nil, "", fmt.Errorf("build the request: %v", err)
	}
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, tok.AccessToken, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody+1))
	if err != nil {
		return nil, tok.AccessToken, fmt.Errorf("read the %d response: %w", resp.StatusCode, err)
	}
	if len(body) > MaxResponseBody {
		return nil, tok.AccessToken, fmt.Errorf("the %d response: %w", resp.StatusCode, ErrResponseTooLarge)
	}
	return &answer{resp, body}, tok.AccessToken, nil
}
