package deviceapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-resty/resty/v2"
	"golang.org/x/oauth2"

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
// It is built on github.com/go-resty/resty/v2 (the design card's REST
// client): retries, their backoff, Retry-After and the body limit are
// resty's own options, set by New. Choices where the spec is silent:
//   - Only GET is retried (GetRetries times, on a connection error, a 5xx
//     or a 429: resty's retry condition). The two POSTs are never retried,
//     not even on a connection error: a POST that reached the service may
//     have created a device or a token, and a retry would create a second
//     one.
//   - The wait before retry n is resty's capped exponential backoff with
//     jitter: RetryWait doubled n-1 times, at most RetryMaxWait, shortened
//     by up to half at random but never below RetryWait; a Retry-After
//     header (seconds or a date) replaces it, bounded to
//     RetryWait..RetryMaxWait. The context ends a wait.
//   - A connection error is an error of the HTTP client's Do; a body cut
//     short or over MaxResponseBody is not retried (the service answered).
//   - A status outside 2xx is an *APIError carrying the status, the route
//     template and a truncated body with secrets scrubbed.
//   - The get route's response fields are not shown; it is decoded as a
//     UserDevice (unknown members are kept in Extra).
//   - A 2xx whose body lacks the resource's id (or a token's token) is an
//     error: a caller must never store a half-described resource.
//   - resty's own log and debug output are off (its debug dump prints
//     headers, the Authorization among them). The client's log lines, at
//     debug level, carry the route, the status or the error, the attempt
//     and the wait: never a header, so never the Authorization.
type Client struct {
	rc  *resty.Client
	ts  oauth2.TokenSource
	log *slog.Logger
	// getRetries is Config's, defaults applied.
	getRetries              int
	retryWait, retryMaxWait time.Duration
}

// routeKey carries a request's route in its context, for the retry log.
type routeKey struct{}

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
	c := &Client{
		ts:           cfg.TokenSource,
		log:          cfg.Logger,
		getRetries:   cfg.GetRetries,
		retryWait:    cfg.RetryWait,
		retryMaxWait: cfg.RetryMaxWait,
	}
	c.rc = resty.NewWithClient(hc).
		SetLogger(quietLogger{}).
		SetDebug(false).
		SetDisableWarn(true).
		SetBaseURL(strings.TrimRight(cfg.BaseURL, "/")).
		SetHeader("User-Agent", cfg.UserAgent).
		SetHeader("Accept", "application/json").
		SetResponseBodyLimit(MaxResponseBody).
		SetRetryCount(cfg.GetRetries).
		SetRetryWaitTime(cfg.RetryWait).
		SetRetryMaxWaitTime(cfg.RetryMaxWait).
		AddRetryCondition(retryable).
		SetRetryAfter(func(_ *resty.Client, r *resty.Response) (time.Duration, error) {
			return retryAfter(r.RawResponse, time.Now(), c.retryMaxWait), nil
		}).
		AddRetryHook(c.logRetry).
		// The user's access token is asked for on every attempt, so a
		// refreshing source is used as such.
		OnBeforeRequest(func(_ *resty.Client, r *resty.Request) error {
			tok, err := c.ts.Token()
			if err != nil {
				return &tokenError{err}
			}
			if tok == nil || tok.AccessToken == "" {
				return &tokenError{errors.New("the token source returned no access token")}
			}
			r.SetAuthToken(tok.AccessToken)
			return nil
		})
	return c, nil
}

// quietLogger keeps resty's own log lines (its retry warnings and request
// errors) out of the process's output: the client logs through
// Config.Logger.
type quietLogger struct{}

func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Warnf(string, ...any)  {}
func (quietLogger) Debugf(string, ...any) {}

// tokenError is a failure of the TokenSource (it may be oauth's "sign in
// again").
type tokenError struct{ err error }

func (e *tokenError) Error() string { return "get the user's access token: " + e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// retryable is the one retry condition (resty's): a GET that met a
// connection error (an error of the HTTP client's Do, never a cancelled or
// expired context), a 5xx or a 429.
func retryable(r *resty.Response, err error) bool {
	if r == nil || r.Request == nil || r.Request.Method != http.MethodGet {
		return false
	}
	if err != nil {
		var ue *url.Error
		return errors.As(err, &ue) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	return r.StatusCode() >= 500 || r.StatusCode() == http.StatusTooManyRequests
}

// retryAfter is the wait a response's Retry-After asks for (seconds or an
// HTTP date), at most max; zero keeps the jittered backoff.
func retryAfter(resp *http.Response, now time.Time, max time.Duration) time.Duration {
	if resp == nil {
		return 0
	}
	return retryafter.FromHeader(resp.Header, now, max)
}

// logRetry is resty's retry hook: one debug line per retry, with the
// wait when the service asked for one ("backoff" when resty's jittered
// backoff decides it). resty calls it after the last attempt too, when no
// retry follows; that one is not logged.
func (c *Client) logRetry(r *resty.Response, err error) {
	if r == nil || r.Request == nil || r.Request.Attempt > c.getRetries {
		return
	}
	route, _ := r.Request.Context().Value(routeKey{}).(string)
	var wait any = "backoff"
	if d := retryAfter(r.RawResponse, time.Now(), c.retryMaxWait); d > 0 {
		wait = max(d, c.retryWait)
	}
	if err != nil {
		c.log.Debug("deviceapi: retrying", "route", route, "attempt", r.Request.Attempt, "err", err, "wait", wait)
	} else {
		c.log.Debug("deviceapi: retrying", "route", route, "attempt", r.Request.Attempt, "status", r.StatusCode(), "wait", wait)
	}
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
	r, attempts, err := c.send(ctx, route, method, path)
	if err == nil && r.StatusCode() == http.StatusUnauthorized {
		if inv, ok := c.ts.(Invalidator); ok && inv.Invalidate(r.Request.Token) {
			c.log.Debug("deviceapi: 401, refreshing the access token once", "route", route)
			var n int
			r, n, err = c.send(ctx, route, method, path)
			attempts += n
		}
	}
	if err != nil {
		c.log.Debug("deviceapi request failed", "route", route, "attempts", attempts, "duration", time.Since(start), "err", err)
		return fmt.Errorf("deviceapi: %s: %w", route, err)
	}
	c.log.Debug("deviceapi request", "route", route, "status", r.StatusCode(), "attempts", attempts, "duration", time.Since(start))
	if r.StatusCode() < 200 || r.StatusCode() > 299 {
		return &APIError{Status: r.StatusCode(), Route: route, Body: scrubBody(r.Body(), r.Request.Token)}
	}
	if err := json.Unmarshal(r.Body(), out); err != nil {
		// json's messages name types and offsets, never the values.
		return fmt.Errorf("deviceapi: %s: decode the %d response: %w", route, r.StatusCode(), err)
	}
	return nil
}

// send makes the attempts of one request through resty: one for a POST,
// up to 1+getRetries for a GET (retryable). It answers the last response
// (its body read whole, at most MaxResponseBody bytes) and the number of
// attempts; the response is nil when err is not.
func (c *Client) send(ctx context.Context, route, method, path string) (*resty.Response, int, error) {
	req := c.rc.R().SetContext(context.WithValue(ctx, routeKey{}, route))
	r, err := req.Execute(method, path)
	attempts := max(req.Attempt, 1)
	switch {
	case err == nil:
		return r, attempts, nil
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
		// resty answers the last attempt's error when the context ended
		// it; the context's own error says why.
		err = ctx.Err()
	case errors.Is(err, resty.ErrResponseBodyTooLarge):
		err = fmt.Errorf("the %d response: %w", r.StatusCode(), ErrResponseTooLarge)
	}
	var te *tokenError
	if r != nil && r.RawResponse != nil && !errors.As(err, &te) && !errors.Is(err, ErrResponseTooLarge) && ctx.Err() == nil {
		err = fmt.Errorf("read the %d response: %w", r.StatusCode(), err)
	}
	return nil, attempts, err
}
