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
	// MaxResponseBody bounds every response body the client reads.
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
	// between GET attempts (a Retry-After header is honoured up to
	// RetryMaxWait). Zero: DefaultRetryWait, DefaultRetryMaxWait.
	RetryWait, RetryMaxWait time.Duration
}

// Client is the REST client of the remote device service's four routes
// (the token exchange lives in package oauth). It is safe for concurrent
// use.
//
// Choices where the spec is silent:
//   - Only GET is retried (GetRetries times, on a connection error, a 5xx
//     or a 429, with jittered exponential backoff between RetryWait and
//     RetryMaxWait). The two POSTs are never retried, not even on a
//     connection error: a POST that reached the service may have created a
//     device or a token, and a retry would create a second one.
//   - A status outside 2xx is an *APIError carrying the status, the route
//     template and a truncated body with secrets scrubbed.
//   - The get route's response fields are not shown; it is decoded as a
//     UserDevice (unknown members are kept in Extra).
//   - A 2xx whose body lacks the resource's id (or a token's token) is an
//     error: a caller must never store a half-described resource.
//   - resty's debug mode stays off and its own logger goes to Logger at
//     debug level; the Authorization header is redacted from resty's
//     request log should debug ever be switched on.
type Client struct {
	r   *resty.Client
	ts  oauth2.TokenSource
	log *slog.Logger
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
		c := *cfg.HTTPClient // resty sets a transport on a client that has none
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

	c := &Client{ts: cfg.TokenSource, log: cfg.Logger}
	r := resty.NewWithClient(hc).
		SetBaseURL(strings.TrimRight(cfg.BaseURL, "/")).
		SetDebug(false).
		SetDisableWarn(true).
		SetLogger(restyLogger{cfg.Logger}).
		SetHeader("User-Agent", cfg.UserAgent).
		SetHeader("Accept", "application/json").
		SetResponseBodyLimit(MaxResponseBody).
		SetRetryCount(cfg.GetRetries).
		SetRetryWaitTime(cfg.RetryWait).
		SetRetryMaxWaitTime(cfg.RetryMaxWait).
		SetRetryAfter(func(_ *resty.Client, resp *resty.Response) (time.Duration, error) {
			return retryAfter(resp, time.Now(), cfg.RetryMaxWait), nil
		}).
		AddRetryCondition(retryable)
	r.OnBeforeRequest(func(_ *resty.Client, req *resty.Request) error {
		tok, err := c.ts.Token()
		if err != nil {
			return &tokenError{err}
		}
		if tok == nil || tok.AccessToken == "" {
			return &tokenError{errors.New("the token source returned no access token")}
		}
		req.SetHeader("Authorization", "Bearer "+tok.AccessToken)
		return nil
	})
	r.OnRequestLog(func(rl *resty.RequestLog) error {
		if rl.Header.Get("Authorization") != "" {
			rl.Header.Set("Authorization", redacted)
		}
		return nil
	})
	c.r = r
	return c, nil
}

// tokenError is a failure of the TokenSource (it may be oauth's "sign in
// again").
type tokenError struct{ err error }

func (e *tokenError) Error() string { return "get the user's access token: " + e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// retryable is the one retry condition: only GET, and only on a transport
// error (never a cancelled or expired context), a 5xx or a 429.
func retryable(resp *resty.Response, err error) bool {
	if resp == nil || resp.Request == nil || resp.Request.Method != http.MethodGet {
		return false
	}
	if err != nil {
		var te *tokenError
		if errors.As(err, &te) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return false
		}
		var ue *url.Error
		return errors.As(err, &ue)
	}
	st := resp.StatusCode()
	return st >= 500 || st == http.StatusTooManyRequests
}

// retryAfter is the wait a response's Retry-After asks for (seconds or an
// HTTP date), at most max; zero keeps resty's jittered backoff.
func retryAfter(resp *resty.Response, now time.Time, max time.Duration) time.Duration {
	if resp == nil {
		return 0
	}
	return retryafter.FromHeader(resp.Header(), now, max)
}

// CreateDevice creates a User Device of the device type with the given
// display name (POST /api/Device/userDevices/new/{deviceTypeId}?name=).
// Never retried.
func (c *Client) CreateDevice(ctx context.Context, deviceTypeID, name string) (*UserDevice, error) {
	if deviceTypeID == "" || name == "" {
		return nil, fmt.Errorf("deviceapi: %s: the device type id and the name are required", RouteCreateDevice)
	}
	var d UserDevice
	err := c.do(ctx, RouteCreateDevice, &d, func(r *resty.Request) *resty.Request {
		return r.SetPathParam("deviceTypeId", deviceTypeID).SetQueryParam("name", name)
	})
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
	err := c.do(ctx, RouteCreateToken, &t, func(r *resty.Request) *resty.Request {
		return r.SetPathParam("userDeviceId", deviceID)
	})
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
	err := c.do(ctx, RouteGetDevice, &d, func(r *resty.Request) *resty.Request {
		return r.SetPathParam("userDeviceId", deviceID)
	})
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

// do sends the request of route and decodes a 2xx JSON body into out. A
// 401 is answered by one refresh of the user's access token and one more
// attempt when the TokenSource is an Invalidator (a 401 created nothing,
// so even a POST may be sent again; a service whose token expiry is
// unknown is refreshed this way).
func (c *Client) do(ctx context.Context, route string, out any, build func(*resty.Request) *resty.Request) error {
	method, path, _ := strings.Cut(route, " ")
	start := time.Now()
	req := build(c.r.R().SetContext(ctx))
	resp, err := req.Execute(method, path)
	attempts := req.Attempt
	if err == nil && resp.StatusCode() == http.StatusUnauthorized {
		if inv, ok := c.ts.(Invalidator); ok && inv.Invalidate(bearerOf(req)) {
			c.log.Debug("deviceapi: 401, refreshing the access token once", "route", route)
			req = build(c.r.R().SetContext(ctx))
			resp, err = req.Execute(method, path)
			attempts += req.Attempt
		}
	}
	if err != nil {
		c.log.Debug("deviceapi request failed", "route", route, "attempts", attempts, "duration", time.Since(start), "err", err)
		return fmt.Errorf("deviceapi: %s: %w", route, err)
	}
	status := resp.StatusCode()
	c.log.Debug("deviceapi request", "route", route, "status", status, "attempts", attempts, "duration", time.Since(start))
	if status < 200 || status > 299 {
		return &APIError{Status: status, Route: route, Body: scrubBody(resp.Body(), bearerOf(req))}
	}
	if err := json.Unmarshal(resp.Body(), out); err != nil {
		// json's messages name types and offsets, never the values.
		return fmt.Errorf("deviceapi: %s: decode the %d response: %w", route, status, err)
	}
	return nil
}

// bearerOf returns the access token a request carried, for scrubbing.
func bearerOf(req *resty.Request) string {
	tok, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	return tok
}

// restyLogger sends resty's own messages to slog at debug level (errors
// are reported to the caller by the client; resty's messages never carry
// headers while debug is off).
type restyLogger struct{ l *slog.Logger }

func (r restyLogger) Errorf(format string, v ...any) {
	r.l.Debug("resty: " + fmt.Sprintf(format, v...))
}
func (r restyLogger) Warnf(format string, v ...any) {
	r.l.Debug("resty: " + fmt.Sprintf(format, v...))
}
func (r restyLogger) Debugf(format string, v ...any) {
	r.l.Debug("resty: " + fmt.Sprintf(format, v...))
}
