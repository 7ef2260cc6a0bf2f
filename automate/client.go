package automate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Client defaults.
const (
	DefaultTimeoutMargin    = 30 * time.Second
	DefaultRequestTimeout   = 30 * time.Second
	DefaultSelectTimeout    = 5 * time.Minute
	DefaultCancelTimeout    = 5 * time.Second
	DefaultMaxResponseBytes = 64 << 20
	DefaultHealthPoll       = 2 * time.Second
)

// ClientOptions configures a Client. Zero values are documented per field.
type ClientOptions struct {
	// BaseURL is http://<loopback-ip>:<port> of the server (for example a
	// Discovery's BaseURL); required. A trailing slash is ignored.
	BaseURL string
	// Key is the bearer access key; required. It is sent only in the
	// Authorization header and never appears in a log line or an error.
	Key string
	// HTTPClient sends the requests. Its Timeout should be zero: the client
	// sets a deadline per request. Zero: a client with no global timeout,
	// no proxy (the key must not travel through one) and no redirects
	// (the contract has none; a redirect is reported as an unexpected
	// answer). net/http itself never resends a POST the server may have
	// seen; it resends one only when not a byte of it was written.
	HTTPClient *http.Client
	// Logger receives debug lines per request and a warning when a run is
	// abandoned. Zero: slog.Default().
	Logger *slog.Logger
	// TimeoutMargin is added to a run's timeoutMs (default 900000) to make
	// the HTTP deadline of run and chat requests: the server answers the
	// run timeout itself (400), the margin covers the answer's way back.
	// Zero: 30s.
	TimeoutMargin time.Duration
	// RequestTimeout is the HTTP deadline of /health, /v1/models,
	// /v1/automate/models and /v1/automate/cancel. Zero: 30s.
	RequestTimeout time.Duration
	// SelectTimeout is the HTTP deadline of a model select, which may wait
	// for a model switch. Zero: 5 minutes.
	SelectTimeout time.Duration
	// ResumeTimeout is the HTTP deadline of Resume and ResumeRun, which do
	// not know the run's timeoutMs. Zero: DefaultTimeoutMs + TimeoutMargin.
	// RunWithTools knows the run's timeout and uses what is left of it plus
	// the margin instead.
	ResumeTimeout time.Duration
	// CancelTimeout bounds the explicit cancel sent after the caller gives
	// up on a run (a /health check plus the cancel). Zero: 5s.
	CancelTimeout time.Duration
	// ForceCancelOnGiveUp makes that explicit cancel a force cancel (kills
	// the worker; the next run cold starts). Zero: a soft cancel, which
	// keeps the worker warm but lands only between steps.
	ForceCancelOnGiveUp bool
	// MaxResponseBytes caps a response body (records with events can be
	// hundreds of KB). Zero: 64 MiB.
	MaxResponseBytes int64
	// HealthPoll is how often RunProgress and ResumeRunProgress read
	// /health for the workflow status while a server that does not stream
	// (it answered plain JSON) works on the run. Zero: 2s.
	HealthPoll time.Duration
	// After is the clock of that polling: it returns a channel that
	// receives once d has passed. Zero: time.After.
	After func(d time.Duration) <-chan time.Time
	// Product is the server's product word: Chat sends ChatRequest.Service
	// as the extension object under it and reads the record from it. Zero:
	// DefaultProduct ("service"). ProductAuto is refused: it is resolved by
	// Discover (Discovery.Product).
	Product string
}

// Client speaks the Automate contract to one server. It never retries a
// request. It is safe for concurrent use; the server itself runs one task
// at a time and answers 409 (ErrBusy) to a second.
type Client struct {
	base          *url.URL
	key           string
	http          *http.Client
	log           *slog.Logger
	margin        time.Duration
	reqTimeout    time.Duration
	selectTimeout time.Duration
	resumeTimeout time.Duration
	cancelTimeout time.Duration
	forceOnGiveUp bool
	maxBody       int64
	product       string
	healthPoll    time.Duration
	after         func(time.Duration) <-chan time.Time
}

// NewClient returns a Client for opts.BaseURL.
func NewClient(opts ClientOptions) (*Client, error) {
	if opts.Key == "" {
		return nil, errors.New("automate: client: access key is required")
	}
	if strings.ContainsFunc(opts.Key, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
		// Said without the key: a header value cannot carry it.
		return nil, errors.New("automate: client: access key contains whitespace or control characters")
	}
	base, err := url.Parse(strings.TrimRight(opts.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" ||
		base.User != nil || base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("automate: client: base URL %q must be http://<ip>:<port>", opts.BaseURL)
	}
	c := &Client{
		base:          base,
		key:           opts.Key,
		http:          opts.HTTPClient,
		log:           opts.Logger,
		margin:        opts.TimeoutMargin,
		reqTimeout:    opts.RequestTimeout,
		selectTimeout: opts.SelectTimeout,
		resumeTimeout: opts.ResumeTimeout,
		cancelTimeout: opts.CancelTimeout,
		forceOnGiveUp: opts.ForceCancelOnGiveUp,
		maxBody:       opts.MaxResponseBytes,
		product:       opts.Product,
		healthPoll:    opts.HealthPoll,
		after:         opts.After,
	}
	if c.healthPoll <= 0 {
		c.healthPoll = DefaultHealthPoll
	}
	if c.after == nil {
		c.after = time.After
	}
	if c.product == "" {
		c.product = DefaultProduct
	}
	if !ValidProduct(c.product) {
		return nil, fmt.Errorf("automate: client: invalid product word %q", c.product)
	}
	if c.product == ProductAuto {
		return nil, errors.New(`automate: client: the product word "auto" is a discovery setting: pass the word discovery found (Discovery.Product)`)
	}
	if c.http == nil {
		c.http = defaultHTTPClient()
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.margin <= 0 {
		c.margin = DefaultTimeoutMargin
	}
	if c.reqTimeout <= 0 {
		c.reqTimeout = DefaultRequestTimeout
	}
	if c.selectTimeout <= 0 {
		c.selectTimeout = DefaultSelectTimeout
	}
	if c.resumeTimeout <= 0 {
		c.resumeTimeout = DefaultTimeoutMs*time.Millisecond + c.margin
	}
	if c.cancelTimeout <= 0 {
		c.cancelTimeout = DefaultCancelTimeout
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxResponseBytes
	}
	return c, nil
}

// defaultHTTPClient has no global timeout, no proxy and follows no redirect.
func defaultHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// BaseURL returns the server's base URL.
func (c *Client) BaseURL() string { return c.base.String() }

// Product returns the product word the client speaks.
func (c *Client) Product() string { return c.product }

// Health returns GET /health.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var h Health
	return &h, c.simple(ctx, http.MethodGet, "/health", nil, c.reqTimeout, &h)
}

// Models returns GET /v1/models: "<product>-agent", and "<product>-model"
// from a server with model mode; the newer desktop application adds each
// entry's mode.
func (c *Client) Models(ctx context.Context) (*ModelList, error) {
	var m ModelList
	return &m, c.simple(ctx, http.MethodGet, "/v1/models", nil, c.reqTimeout, &m)
}

// Tools returns the assistant's built-in tools, their groups and the
// server-wide policy (GET /v1/automate/tools; the newer desktop
// application's route, ErrNotFound from a server without it).
func (c *Client) Tools(ctx context.Context) (*ToolCatalog, error) {
	var m ToolCatalog
	return &m, c.simple(ctx, http.MethodGet, "/v1/automate/tools", nil, c.reqTimeout, &m)
}

// Settings returns the server's settings (GET /v1/settings; the newer
// desktop application's route, ErrNotFound from a server without it).
func (c *Client) Settings(ctx context.Context) (*Settings, error) {
	var m Settings
	return &m, c.simple(ctx, http.MethodGet, "/v1/settings", nil, c.reqTimeout, &m)
}

// SpeechStatus returns the state of the server's speech recogniser
// (GET /v1/speech/status; the newer desktop application's route,
// ErrNotFound from a server without it).
func (c *Client) SpeechStatus(ctx context.Context) (*SpeechStatus, error) {
	var m SpeechStatus
	return &m, c.simple(ctx, http.MethodGet, "/v1/speech/status", nil, c.reqTimeout, &m)
}

// Catalog returns the on-device model catalog (GET /v1/automate/models).
// Wait for Catalog.Status "ready" before selecting.
func (c *Client) Catalog(ctx context.Context) (*CatalogResponse, error) {
	var m CatalogResponse
	return &m, c.simple(ctx, http.MethodGet, "/v1/automate/models", nil, c.reqTimeout, &m)
}

// SelectModel pins a model for the server's session
// (POST /v1/automate/models/select); an empty SelectRequest unpins. Errors:
// ErrBusy while a run is in flight, ErrInvalidRequest for no match, an
// ambiguous match, an unusable model or a non-idle workflow.
func (c *Client) SelectModel(ctx context.Context, req SelectRequest) (*SelectResponse, error) {
	var m SelectResponse
	return &m, c.simple(ctx, http.MethodPost, "/v1/automate/models/select", req, c.selectTimeout, &m)
}

// Cancel stops whatever runs, whoever started it (POST /v1/automate/cancel).
// force false asks the agent loop to unwind between steps; force true kills
// the worker. The answer says whether anything was stopped.
func (c *Client) Cancel(ctx context.Context, force bool) (*CancelResponse, error) {
	var m CancelResponse
	return &m, c.simple(ctx, http.MethodPost, "/v1/automate/cancel", CancelRequest{Force: force}, c.reqTimeout, &m)
}

// Run starts a run (POST /v1/runs) and blocks until it completes or parks.
// It asks for the plain answer (req.Stream is not sent); RunProgress asks
// for a streamed one.
//
// Outcomes: a record with status completed or awaiting_tool_results and a
// nil error; for a run that ended failed, canceled or terminated (HTTP 500,
// schemaVersion 1) the record AND a *RunError carrying it; for a failed
// request an *APIError (ErrBusy, ErrInvalidRequest, ErrRunTimedOut,
// ErrUnauthorized) or *ResponseError and a nil record.
//
// The HTTP deadline is the run's timeoutMs plus the margin; ctx may shorten
// it. When ctx ends (or that deadline passes) while the request is in
// flight, the run may still be going on server side: Run then sends an
// explicit cancel if the server is busy and returns an *AbandonedError.
// The request id is unknown until the answer, so "busy" is the best
// available sign that the run is ours. Race: if our run had already ended
// and someone else's (for example one a person started in the application's
// panel) started in the moment between, that run is cancelled too; if our
// request was refused with 409 in flight, the other client's run is
// cancelled. A caller that cannot accept this may pass a ctx without
// cancellation and rely on the timeouts. A request that provably never
// reached the server (ctx already done, or no connection was made) cannot
// have started a run: its error is the plain context error, with no check
// and no cancel.
func (c *Client) Run(ctx context.Context, req RunRequest) (*RunRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, req.EffectiveTimeout()+c.margin)
	defer cancel()
	return c.startRun(ctx, req, nil)
}

// startRun posts req: the plain answer, or, when p is not nil, a streamed
// one whose progress goes to *p.
func (c *Client) startRun(ctx context.Context, req RunRequest, p *Progress) (*RunRecord, error) {
	req.Stream = p != nil
	if p != nil {
		return c.postRunProgress(ctx, "/v1/runs", req, "", *p)
	}
	return c.postRun(ctx, "/v1/runs", req, "")
}

// Resume posts tool results to a parked run
// (POST /v1/runs/{resumeToken}/tool-results) and blocks until the run's next
// outcome, with the same outcomes as Run; an unknown, stale or expired
// token is ErrNotFound. Results match pending calls by id; a result whose id
// matches nothing is ignored, so a resume repeated by the caller is safe.
//
// The HTTP deadline is ClientOptions.ResumeTimeout. The run's id is not
// known from a token alone, so on giving up Resume cancels when the server
// is busy, with the race Run describes; ResumeRun knows the id and avoids
// it.
func (c *Client) Resume(ctx context.Context, resumeToken string, results []ToolResult) (*RunRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, c.resumeTimeout)
	defer cancel()
	return c.resume(ctx, resumeToken, "", results, nil)
}

// ResumeRun is Resume for the parked record a previous Run or Resume
// returned. On giving up it cancels only if /health reports this run
// (activeRequestId equal to parked.RequestID) as the active one.
func (c *Client) ResumeRun(ctx context.Context, parked *RunRecord, results []ToolResult) (*RunRecord, error) {
	if parked == nil || parked.ResumeToken == "" {
		return nil, errors.New("automate: resume: the record carries no resume token (the run is not parked)")
	}
	ctx, cancel := context.WithTimeout(ctx, c.resumeTimeout)
	defer cancel()
	return c.resume(ctx, parked.ResumeToken, parked.RequestID, results, nil)
}

// resume posts results to token; with p it asks for a streamed answer and
// reports progress to *p (RunProgress).
func (c *Client) resume(ctx context.Context, token, requestID string, results []ToolResult, p *Progress) (*RunRecord, error) {
	if token == "" {
		return nil, errors.New("automate: resume: empty resume token")
	}
	if results == nil {
		results = []ToolResult{} // "results" is required on the wire
	}
	path := "/v1/runs/" + url.PathEscape(token) + "/tool-results"
	if p != nil {
		return c.postRunProgress(ctx, path, ResumeRequest{Results: results, Stream: true}, requestID, *p)
	}
	return c.postRun(ctx, path, ResumeRequest{Results: results}, requestID)
}

// postRun sends a run-starting or run-resuming POST and decodes its record.
// requestID is the run's id when known ("" for a new run). A giving-up
// caller abandons the run when the POST may have started it, and always
// when its id is known: a run with an id exists whether or not the POST
// went out.
func (c *Client) postRun(ctx context.Context, path string, body any, requestID string) (*RunRecord, error) {
	resp, sent, err := c.roundTrip(ctx, http.MethodPost, path, body)
	if err != nil {
		if (sent || requestID != "") && ctx.Err() != nil {
			return nil, c.abandon(ctx, "POST "+logPath(path), requestID, err)
		}
		return nil, err
	}
	return c.decodeRecord(resp)
}

// response is a fully read HTTP answer.
type response struct {
	method, path string
	status       int
	contentType  string
	body         []byte
}

// simple sends a request whose 200 answer decodes into out; any other answer
// is an *APIError or *ResponseError.
func (c *Client) simple(ctx context.Context, method, path string, body any, timeout time.Duration, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, _, err := c.roundTrip(ctx, method, path, body)
	if err != nil {
		return err
	}
	if resp.status != http.StatusOK {
		return c.errorFor(resp)
	}
	if err := json.Unmarshal(resp.body, out); err != nil {
		return c.unexpected(resp, "body does not decode: "+err.Error())
	}
	return nil
}

// roundTrip sends one request (never retried) and reads the whole answer up
// to the size cap.
//
// sent reports whether the server may have received the whole request: false
// only when ctx was already done before sending, or when the transport
// reported (through httptrace) that it got as far as asking for a
// connection but never finished writing the request. A transport that does
// not report traces counts as sent.
func (c *Client) roundTrip(ctx context.Context, method, path string, body any) (*response, bool, error) {
	hr, sent, start, err := c.send(ctx, method, path, body, "application/json")
	if err != nil {
		return nil, sent, err
	}
	defer hr.Body.Close()
	resp, err := c.read(hr, method, path, start)
	return resp, true, err
}

// send sends one request (never retried) and returns the answer with its
// body unread; the caller closes it. sent is as roundTrip describes it.
func (c *Client) send(ctx context.Context, method, path string, body any, accept string) (*http.Response, bool, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, time.Time{}, fmt.Errorf("automate: %s %s: not sent: %w", method, logPath(path), err)
	}
	var traced, wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn: func(string) { traced.Store(true) },
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(true)
			}
		},
	})
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, false, time.Time{}, fmt.Errorf("automate: %s %s: encode body: %w", method, logPath(path), err)
		}
		rd = bytes.NewReader(b)
	}
	// path is already escaped (the resume token goes through PathEscape).
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if err != nil {
		return nil, false, time.Time{}, fmt.Errorf("automate: %s %s: %w", method, logPath(path), err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", accept)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	hr, err := c.http.Do(req)
	if err != nil {
		c.log.Debug("automate request failed", "method", method, "path", logPath(path),
			"duration", time.Since(start), "err", err)
		return nil, wrote.Load() || !traced.Load(), start, fmt.Errorf("automate: %s %s: %w", method, logPath(path), err)
	}
	return hr, true, start, nil
}

// read reads a whole answer up to the size cap.
func (c *Client) read(hr *http.Response, method, path string, start time.Time) (*response, error) {
	b, err := io.ReadAll(io.LimitReader(hr.Body, c.maxBody+1))
	resp := &response{method: method, path: logPath(path), status: hr.StatusCode,
		contentType: hr.Header.Get("Content-Type"), body: b}
	if err != nil {
		c.log.Debug("automate answer unreadable", "method", method, "path", logPath(path),
			"status", hr.StatusCode, "duration", time.Since(start), "err", err)
		return nil, fmt.Errorf("automate: %s %s: read answer (HTTP %d): %w", method, logPath(path), hr.StatusCode, err)
	}
	c.log.Debug("automate request", "method", method, "path", logPath(path),
		"status", hr.StatusCode, "bytes", len(b), "duration", time.Since(start))
	if int64(len(b)) > c.maxBody {
		resp.body = b[:0]
		return nil, c.unexpected(resp, fmt.Sprintf("answer exceeds %d bytes", c.maxBody))
	}
	return resp, nil
}

// decodeRecord turns a run route's answer into a record or a typed error.
func (c *Client) decodeRecord(resp *response) (*RunRecord, error) {
	if resp.status == http.StatusOK || resp.status == http.StatusInternalServerError {
		var rec RunRecord
		err := json.Unmarshal(resp.body, &rec)
		switch {
		case err == nil && rec.SchemaVersion == SchemaVersion:
			if resp.status == http.StatusOK {
				return &rec, nil
			}
			return &rec, &RunError{Record: &rec, HTTPStatus: resp.status}
		case err == nil && rec.SchemaVersion != 0:
			return nil, c.unexpected(resp, fmt.Sprintf("record schemaVersion %d, this client speaks %d", rec.SchemaVersion, SchemaVersion))
		case err != nil && resp.status == http.StatusOK:
			return nil, c.unexpected(resp, "record does not decode: "+err.Error())
		}
		if resp.status == http.StatusOK {
			return nil, c.unexpected(resp, "no run record (schemaVersion missing)")
		}
	}
	return nil, c.errorFor(resp)
}

// decodeChat turns a chat answer into a completion or a typed error.
func (c *Client) decodeChat(resp *response) (*ChatCompletion, error) {
	if resp.status == http.StatusOK || resp.status == http.StatusInternalServerError {
		var comp ChatCompletion
		err := json.Unmarshal(resp.body, &comp)
		if err == nil && c.product != DefaultProduct {
			// The record is under the product word, not "service".
			var fields map[string]json.RawMessage
			comp.Service = nil
			if err = json.Unmarshal(resp.body, &fields); err == nil && len(fields[c.product]) > 0 {
				err = json.Unmarshal(fields[c.product], &comp.Service)
			}
		}
		ok := err == nil && comp.Service != nil && comp.Service.SchemaVersion == SchemaVersion
		switch {
		case ok && resp.status == http.StatusOK:
			if len(comp.Choices) == 0 {
				return nil, c.unexpected(resp, "chat completion without choices")
			}
			return &comp, nil
		case ok:
			return &comp, &RunError{Record: comp.Service, Completion: &comp, HTTPStatus: resp.status}
		case err == nil && comp.Service != nil && comp.Service.SchemaVersion != 0:
			return nil, c.unexpected(resp, fmt.Sprintf("record schemaVersion %d, this client speaks %d", comp.Service.SchemaVersion, SchemaVersion))
		case err != nil && resp.status == http.StatusOK:
			return nil, c.unexpected(resp, "chat completion does not decode: "+err.Error())
		}
		if resp.status == http.StatusOK {
			return nil, c.unexpected(resp, "chat completion without a service record")
		}
	}
	return nil, c.errorFor(resp)
}

// errorFor builds the error of a non-success answer: an *APIError for an
// error envelope, else an *ResponseError. A 413 is an *APIError whatever its
// body: the newer desktop application answers it for a body over 1 MiB,
// where the spec answers 400 with an envelope, and its body is not shown.
func (c *Client) errorFor(resp *response) error {
	var env ErrorEnvelope
	if resp.status >= 400 && json.Unmarshal(resp.body, &env) == nil && (env.Error.Type != "" || env.Error.Message != "") {
		return &APIError{Method: resp.method, Path: resp.path, HTTPStatus: resp.status,
			Type: c.redact(env.Error.Type), Message: c.redact(env.Error.Message)}
	}
	if resp.status == http.StatusRequestEntityTooLarge {
		return &APIError{Method: resp.method, Path: resp.path, HTTPStatus: resp.status,
			Message: fmt.Sprintf("request body too large (the contract's limit is %d bytes)", MaxBodyBytes)}
	}
	reason := "not an error envelope"
	if resp.status < 400 {
		reason = "status not part of the contract for this route"
	}
	if resp.status == http.StatusUnauthorized {
		reason = "access key rejected; " + reason
	}
	return c.unexpected(resp, reason)
}

func (c *Client) unexpected(resp *response, reason string) error {
	const max = 200
	snip := resp.body
	if len(snip) > max {
		snip = snip[:max]
	}
	return &ResponseError{Method: resp.method, Path: resp.path, HTTPStatus: resp.status,
		ContentType: resp.contentType, Reason: reason, Snippet: c.redact(strings.ToValidUTF8(string(snip), "?"))}
}

// redact removes the access key from text that came from the server.
func (c *Client) redact(s string) string {
	if c.key == "" {
		return s
	}
	return strings.ReplaceAll(s, c.key, "[redacted]")
}

// logPath shortens a resume path for logs and errors: the resume token is a
// capability for the parked run, so only its first characters are shown.
func logPath(path string) string {
	const prefix = "/v1/runs/"
	rest, ok := strings.CutPrefix(path, prefix)
	if !ok {
		return path
	}
	token, tail, ok := strings.Cut(rest, "/")
	if !ok || len(token) <= 8 {
		return path
	}
	return prefix + token[:8] + "…/" + tail
}
