package deviceapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

const bearer = "user-access-token-0123456789"

// recorder is a fake remote service that records every request.
type recorder struct {
	mu       sync.Mutex
	requests []*http.Request
	handler  func(w http.ResponseWriter, r *http.Request, n int) // n: 1-based request count
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	rec.requests = append(rec.requests, r.Clone(context.Background()))
	n := len(rec.requests)
	rec.mu.Unlock()
	rec.handler(w, r, n)
}

func (rec *recorder) count() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.requests)
}

func (rec *recorder) last() *http.Request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.requests[len(rec.requests)-1]
}

func serve(t *testing.T, h func(w http.ResponseWriter, r *http.Request, n int)) (*recorder, *httptest.Server) {
	t.Helper()
	rec := &recorder{handler: h}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return rec, srv
}

func newClient(t *testing.T, baseURL string, logs io.Writer) *Client {
	t.Helper()
	if logs == nil {
		logs = io.Discard
	}
	c, err := New(Config{
		BaseURL:      baseURL,
		TokenSource:  oauth2.StaticTokenSource(&oauth2.Token{AccessToken: bearer}),
		Logger:       slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		RetryWait:    time.Millisecond,
		RetryMaxWait: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func TestCreateDeviceSendsTheRouteQueryAndBearer(t *testing.T) {
	rec, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		writeJSON(w, 200, `{"id":"dev-1","nameOverride":"desk pad","isVerified":false,"isConnected":false,
			"isListening":false,"isAutoListen":false,"isOptimisticModel":false,"currentProfile":null,"ownerId":"u-9"}`)
	})
	c := newClient(t, srv.URL+"/", nil)
	d, err := c.CreateDevice(context.Background(), "type/x y", "desk pad & co")
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != "dev-1" || d.NameOverride != "desk pad" || d.CurrentProfile != nil || string(d.Extra["ownerId"]) != `"u-9"` {
		t.Fatalf("device %+v", d)
	}
	r := rec.last()
	if r.Method != "POST" || r.URL.EscapedPath() != "/api/Device/userDevices/new/type%2Fx%20y" {
		t.Errorf("request %s %s", r.Method, r.URL.EscapedPath())
	}
	if got := r.URL.Query().Get("name"); got != "desk pad & co" {
		t.Errorf("name = %q", got)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+bearer {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.Header.Get("User-Agent"); got != DefaultUserAgent {
		t.Errorf("User-Agent = %q", got)
	}
}

func TestCreateTokenAndGetDevice(t *testing.T) {
	rec, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch {
		case r.Method == "POST" && r.URL.Path == "/base/api/Device/userDevices/dev-1/tokens":
			writeJSON(w, 200, `{"id":"tok-1","userDeviceId":"dev-1","token":"device-secret-xyz","isDisabled":false}`)
		case r.Method == "GET" && r.URL.Path == "/base/api/Device/userDevices/dev-1":
			writeJSON(w, 200, `{"id":"dev-1","nameOverride":"n","isVerified":true,"isConnected":false,"isListening":false,
				"isAutoListen":true,"isOptimisticModel":false,"currentProfile":{"id":"p","name":"P","userId":"u","profileType":"x",
				"configuration":{"profileType":"x","commandKeyMappings":[],"macros":[],"hotkeys":[{"k":1}],"dictationCommands":[],"audioEvents":[]}}}`)
		default:
			http.NotFound(w, r)
		}
	})
	c := newClient(t, srv.URL+"/base", nil)
	tok, err := c.CreateToken(context.Background(), "dev-1")
	if err != nil {
		t.Fatal(err)
	}
	if tok.ID != "tok-1" || tok.UserDeviceID != "dev-1" || tok.Token != "device-secret-xyz" {
		t.Fatalf("token %v", tok)
	}
	d, err := c.GetDevice(context.Background(), "dev-1")
	if err != nil {
		t.Fatal(err)
	}
	if !d.IsVerified || !d.IsAutoListen || d.CurrentProfile == nil || string(d.CurrentProfile.Configuration.Hotkeys[0]) != `{"k":1}` {
		t.Fatalf("device %+v", d)
	}
	if rec.count() != 2 {
		t.Errorf("%d requests", rec.count())
	}
}

// The two POSTs are never retried, whatever the failure: a retry could
// create a second device or token.
func TestPostsAreNeverRetried(t *testing.T) {
	for _, status := range []int{500, 502, 503, 429} {
		rec, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Retry-After", "0")
			writeJSON(w, status, `{"error":"busy"}`)
		})
		c := newClient(t, srv.URL, nil)
		_, err := c.CreateDevice(context.Background(), "t", "n")
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != status || ae.Route != RouteCreateDevice {
			t.Fatalf("%d: err %v", status, err)
		}
		_, err = c.CreateToken(context.Background(), "dev")
		if !errors.As(err, &ae) || ae.Status != status || ae.Route != RouteCreateToken {
			t.Fatalf("%d: err %v", status, err)
		}
		if n := rec.count(); n != 2 {
			t.Errorf("status %d: %d requests for two POSTs (a POST was retried)", status, n)
		}
	}
}

// A POST that fails on the connection (the service may have acted on it)
// is not retried either.
func TestPostIsNotRetriedOnAConnectionError(t *testing.T) {
	rec, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		// Read the request, then drop the connection without an answer.
		hj, ok := w.(http.Hijacker)
		if !ok {
			t.Error("no hijacker")
			return
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			conn.Close()
		}
	})
	c := newClient(t, srv.URL, nil)
	_, err := c.CreateDevice(context.Background(), "t", "n")
	if err == nil {
		t.Fatal("no error")
	}
	var ae *APIError
	if errors.As(err, &ae) {
		t.Fatalf("a dropped connection became an APIError: %v", err)
	}
	if n := rec.count(); n != 1 {
		t.Errorf("%d requests: the POST was retried after a dropped connection", n)
	}
}

func TestGetIsRetriedOn503ThenSucceeds(t *testing.T) {
	rec, srv := serve(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n < 3 {
			writeJSON(w, 503, `{"error":"warming up"}`)
			return
		}
		writeJSON(w, 200, `{"id":"dev-1"}`)
	})
	c := newClient(t, srv.URL, nil)
	d, err := c.GetDevice(context.Background(), "dev-1")
	if err != nil || d.ID != "dev-1" {
		t.Fatalf("GetDevice: %v %v", d, err)
	}
	if n := rec.count(); n != 3 {
		t.Errorf("%d requests, want 3 (two retries)", n)
	}
}

func TestGetRetriesAreCapped(t *testing.T) {
	rec, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		writeJSON(w, 502, `bad gateway`)
	})
	c := newClient(t, srv.URL, nil)
	_, err := c.GetDevice(context.Background(), "dev-1")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 502 || ae.Body != "bad gateway" {
		t.Fatalf("err %v", err)
	}
	if n := rec.count(); n != 1+DefaultGetRetries {
		t.Errorf("%d requests, want %d", n, 1+DefaultGetRetries)
	}
}

func TestGetIsRetriedOnAConnectionError(t *testing.T) {
	var dropped atomic.Bool
	rec, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		if dropped.CompareAndSwap(false, true) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		writeJSON(w, 200, `{"id":"dev-1"}`)
	})
	c := newClient(t, srv.URL, nil)
	if _, err := c.GetDevice(context.Background(), "dev-1"); err != nil {
		t.Fatal(err)
	}
	if n := rec.count(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestGetIsNotRetriedOnClientErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		target error
	}{{401, ErrUnauthorized}, {403, ErrForbidden}, {404, ErrNotFound}, {400, nil}} {
		rec, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			writeJSON(w, tc.status, `{"title":"nope"}`)
		})
		c := newClient(t, srv.URL, nil)
		_, err := c.GetDevice(context.Background(), "dev-1")
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != tc.status || ae.Route != RouteGetDevice {
			t.Fatalf("%d: %v", tc.status, err)
		}
		for _, s := range []error{ErrUnauthorized, ErrForbidden, ErrNotFound} {
			if errors.Is(err, s) != (s == tc.target) {
				t.Errorf("%d: errors.Is(%v) = %v", tc.status, s, errors.Is(err, s))
			}
		}
		if rec.count() != 1 {
			t.Errorf("%d: %d requests", tc.status, rec.count())
		}
	}
}

func TestGetStopsRetryingWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	_, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		cancel()
		writeJSON(w, 503, `{}`)
	})
	c, err := New(Config{BaseURL: srv.URL, TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: bearer}),
		GetRetries: 50, RetryWait: time.Second, RetryMaxWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.GetDevice(ctx, "dev-1"); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("no error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("GetDevice kept retrying after its context ended")
	}
}

// No token (the user's bearer or a device token) ever reaches an error
// message or a log line.
func TestNoTokenInErrorsOrLogs(t *testing.T) {
	var logs bytes.Buffer
	_, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.Method {
		case "POST":
			// A careless service echoing secrets in an error body.
			writeJSON(w, 400, `{"error":"bad","token":"device-secret-xyz","detail":"got bearer `+bearer+`",
				"nested":{"refresh_token":"rt-123","clientSecret":"cs-456"}}`)
		default:
			writeJSON(w, 401, `unauthorized: `+bearer)
		}
	})
	c := newClient(t, srv.URL, &logs)
	_, err1 := c.CreateToken(context.Background(), "dev")
	_, err2 := c.GetDevice(context.Background(), "dev")
	for _, err := range []error{err1, err2} {
		if err == nil {
			t.Fatal("no error")
		}
		msg := err.Error()
		for _, secret := range []string{bearer, "device-secret-xyz", "rt-123", "cs-456"} {
			if strings.Contains(msg, secret) {
				t.Errorf("error %q contains a secret", msg)
			}
		}
		if !strings.Contains(msg, "[REDACTED]") {
			t.Errorf("error %q: nothing redacted", msg)
		}
	}
	if !errors.Is(err2, ErrUnauthorized) {
		t.Errorf("err2 %v", err2)
	}
	if logs.Len() == 0 {
		t.Fatal("no debug log lines at all")
	}
	if strings.Contains(logs.String(), bearer) || strings.Contains(logs.String(), "device-secret-xyz") {
		t.Errorf("a token reached the log:\n%s", logs.String())
	}
}

func TestSuccessfulTokenNeverInLogs(t *testing.T) {
	var logs bytes.Buffer
	_, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		writeJSON(w, 200, `{"id":"tok-1","userDeviceId":"dev","token":"device-secret-xyz","isDisabled":false}`)
	})
	c := newClient(t, srv.URL, &logs)
	tok, err := c.CreateToken(context.Background(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	if s := tok.String(); strings.Contains(s, "device-secret-xyz") {
		t.Errorf("String() shows the token: %s", s)
	}
	if strings.Contains(logs.String(), "device-secret-xyz") || strings.Contains(logs.String(), bearer) {
		t.Errorf("a token reached the log:\n%s", logs.String())
	}
}

func TestErrorBodyIsTruncated(t *testing.T) {
	long := strings.Repeat("é", 2000)
	_, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		writeJSON(w, 400, long)
	})
	_, err := newClient(t, srv.URL, nil).CreateDevice(context.Background(), "t", "n")
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatal(err)
	}
	if len(ae.Body) > MaxErrorBody+len("…(truncated)") || !strings.HasSuffix(ae.Body, "…(truncated)") {
		t.Fatalf("body of %d bytes: %q...", len(ae.Body), ae.Body[:40])
	}
	if !strings.HasPrefix(ae.Body, "éé") || strings.ContainsRune(ae.Body, '\uFFFD') {
		t.Error("truncation split a rune")
	}
}

func TestIncompleteResponsesAreErrors(t *testing.T) {
	_, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/tokens"):
			writeJSON(w, 200, `{"id":"tok-1","userDeviceId":"dev"}`)
		case r.Method == "POST":
			writeJSON(w, 200, `{"nameOverride":"n"}`)
		default:
			writeJSON(w, 200, `not json`)
		}
	})
	c := newClient(t, srv.URL, nil)
	if _, err := c.CreateDevice(context.Background(), "t", "n"); err == nil || !strings.Contains(err.Error(), "no device id") {
		t.Errorf("device without id: %v", err)
	}
	if _, err := c.CreateToken(context.Background(), "dev"); err == nil || !strings.Contains(err.Error(), "lacks") {
		t.Errorf("token without token: %v", err)
	}
	if _, err := c.GetDevice(context.Background(), "dev"); err == nil || !strings.Contains(err.Error(), "decode") {
		t.Errorf("not json: %v", err)
	}
}

func TestTokenSourceFailureIsWrappedAndNothingIsSent(t *testing.T) {
	rec, srv := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) { writeJSON(w, 200, `{"id":"x"}`) })
	signInAgain := errors.New("sign in again")
	c, err := New(Config{BaseURL: srv.URL, TokenSource: failingSource{signInAgain}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetDevice(context.Background(), "dev")
	if !errors.Is(err, signInAgain) {
		t.Fatalf("err %v", err)
	}
	if rec.count() != 0 {
		t.Errorf("%d requests sent without a token", rec.count())
	}
}

type failingSource struct{ err error }

func (f failingSource) Token() (*oauth2.Token, error) { return nil, f.err }

func TestNewValidatesConfig(t *testing.T) {
	ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "x"})
	for _, cfg := range []Config{
		{TokenSource: ts},
		{BaseURL: "api.example.com", TokenSource: ts},
		{BaseURL: "ftp://x", TokenSource: ts},
		{BaseURL: "https://api.example.com"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestNewDoesNotModifyTheCallersHTTPClient(t *testing.T) {
	hc := &http.Client{}
	if _, err := New(Config{BaseURL: "https://api.example.com", TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "x"}), HTTPClient: hc}); err != nil {
		t.Fatal(err)
	}
	if hc.Transport != nil {
		t.Error("New set a transport on the caller's client")
	}
}

// The connection-refused case: nothing listens; GET retries and fails
// with a transport error, not an APIError.
func TestGetAgainstNothingListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = newClient(t, "http://"+addr, nil).GetDevice(context.Background(), "dev")
	var ae *APIError
	if err == nil || errors.As(err, &ae) || !strings.Contains(err.Error(), RouteGetDevice) {
		t.Fatalf("err %v", err)
	}
}
