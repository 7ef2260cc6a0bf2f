package mockhub_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
	"github.com/hubgate/hubgate/internal/testutil"
)

// wait is the generous deadline for anything that should happen.
const wait = 20 * time.Second

func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return nil
}

// pipeMock serves a mock with cfg on an in-memory network (call it inside
// the test's synctest bubble, where every goroutine it starts lives): the
// mock, its base URL, a client of that network, and stop, which closes
// the mock, its HTTP server and the client's idle connections.
func pipeMock(t testing.TB, cfg mockhub.Config) (s *mockhub.Server, base string, hc *http.Client, stop func()) {
	t.Helper()
	var pn testutil.PipeNet
	hc = pn.Client(t)
	cfg.Listen = pn.Listen
	if cfg.PeerUID == nil {
		cfg.PeerUID = pipePeer
	}
	s, err := mockhub.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := pn.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: s}
	go hs.Serve(ln)
	return s, "http://" + ln.Addr().String(), hc, func() {
		s.Close()
		hs.Close()
		hc.CloseIdleConnections()
	}
}

// pipePeer is Config.PeerUID on an in-memory network, whose connections
// the kernel does not know: both ends are this process's.
func pipePeer(_, _ netip.AddrPort) (int, error) { return os.Geteuid(), nil }

// newMock starts a mock on a real loopback listener.
func newMock(t testing.TB, cfg mockhub.Config) (*mockhub.Server, *httptest.Server) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger()
	}
	m := mockhubtest.Start(t, mockhubtest.Options{Config: cfg})
	return m.Server, m.HTTP
}

// noRedirect is an HTTP client that shows redirects instead of following.
var noRedirect = &http.Client{
	Timeout:       wait,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

type pkce struct{ verifier, challenge string }

func newPKCE() pkce {
	b := make([]byte, 32)
	rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(v))
	return pkce{v, base64.RawURLEncoding.EncodeToString(sum[:])}
}

const redirectURI = "http://127.0.0.1:40123/callback"

func authParams(p pkce) url.Values {
	return url.Values{
		"response_type":         {"code"},
		"client_id":             {mockhub.DefaultClientID},
		"redirect_uri":          {redirectURI},
		"state":                 {"state-123"},
		"code_challenge":        {p.challenge},
		"code_challenge_method": {"S256"},
	}
}

// authorize calls the authorization page and returns the status and the
// parsed Location (nil when none).
func authorize(t testing.TB, base string, q url.Values) (int, *url.URL, string) {
	t.Helper()
	resp, err := noRedirect.Get(base + "/signin?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var loc *url.URL
	if l := resp.Header.Get("Location"); l != "" {
		if loc, err = url.Parse(l); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, loc, string(body)
}

// code runs the authorization page and returns the code.
func code(t testing.TB, base string, p pkce) string {
	t.Helper()
	st, loc, body := authorize(t, base, authParams(p))
	if st != http.StatusFound || loc == nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorize: %d %v %s", st, loc, body)
	}
	return loc.Query().Get("code")
}

type tokenAnswer struct {
	status int
	header http.Header
	raw    string

	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	// The vendor's shape.
	AccessTokenExpiration  string `json:"access_token_expiration"`
	RefreshTokenExpiration string `json:"refresh_token_expiration"`
	RefreshToken           string `json:"refresh_token"`
	Error                  string `json:"error"`
	Description            string `json:"error_description"`
}

// token posts to /signin/token; basic selects HTTP Basic client
// authentication, otherwise the credentials go in the body.
func token(t testing.TB, base string, form url.Values, basic bool, secret string) tokenAnswer {
	t.Helper()
	form = cloneValues(form)
	if !basic {
		form.Set("client_id", mockhub.DefaultClientID)
		form.Set("client_secret", secret)
	}
	req, _ := http.NewRequest("POST", base+"/signin/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(url.QueryEscape(mockhub.DefaultClientID), url.QueryEscape(secret))
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := tokenAnswer{status: resp.StatusCode, header: resp.Header, raw: string(b)}
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("token answer is not JSON: %d %s", resp.StatusCode, b)
	}
	return a
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func codeForm(code string, p pkce) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}, "code_verifier": {p.verifier}}
}

// signIn runs the whole flow and returns the tokens.
func signIn(t testing.TB, base string) tokenAnswer {
	t.Helper()
	p := newPKCE()
	a := token(t, base, codeForm(code(t, base, p), p), true, mockhub.DefaultClientSecret)
	if a.status != 200 || a.AccessToken == "" {
		t.Fatalf("sign in: %d %s", a.status, a.raw)
	}
	return a
}

// call sends a request with an optional bearer and JSON body and decodes
// the JSON answer into out (when not nil).
func call(t testing.TB, method, u, bearer string, body any, out any) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		default:
			enc, _ := json.Marshal(b)
			rd = bytes.NewReader(enc)
		}
	}
	req, _ := http.NewRequest(method, u, rd)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, u, err, b)
		}
	}
	return resp.StatusCode, resp.Header, string(b)
}

func deviceInfo(t testing.TB, base, id string) mockhub.DeviceInfo {
	t.Helper()
	var list []mockhub.DeviceInfo
	if st, _, body := call(t, "GET", base+"/mock/devices", "", nil, &list); st != 200 {
		t.Fatalf("GET /mock/devices: %d %s", st, body)
	}
	for _, d := range list {
		if d.Device.ID == id {
			return d
		}
	}
	t.Fatalf("device %s not listed", id)
	return mockhub.DeviceInfo{}
}

// ---- a raw SignalR JSON client over WebSockets, to see frames as sent ----

type frame struct {
	Type         int               `json:"type"`
	Target       string            `json:"target,omitempty"`
	InvocationID string            `json:"invocationId,omitempty"`
	Arguments    []json.RawMessage `json:"arguments,omitempty"`
	Result       json.RawMessage   `json:"result,omitempty"`
	Error        string            `json:"error,omitempty"`
	received     time.Time
}

type rawConn struct {
	ws     *websocket.Conn
	frames chan frame
	mu     sync.Mutex
	err    error
	cancel context.CancelFunc
}

// statusError is a refused negotiation.
type statusError struct {
	code   int
	header http.Header
	body   string
}

func (e *statusError) Error() string { return fmt.Sprintf("negotiate: %d %s", e.code, e.body) }

func hubHeaders(tok string) http.Header {
	h := http.Header{}
	if tok != "" {
		h.Set("Authorization", "Bearer "+tok)
		h.Set("X-Device-Token", tok)
	}
	return h
}

// negotiation is where a negotiate sent a client: the hub's own
// connection (direct hub), or the service a redirect points to.
type negotiation struct {
	url          string      // the endpoint to connect to (the hub, or the redirect's url)
	header       http.Header // the headers to send there
	accessToken  string      // the redirect's access token, "" for a direct hub
	connectToken string      // the connection token
}

// postNegotiate posts a negotiate and decodes its answer.
func postNegotiate(u string, h http.Header, out any) error {
	return postNegotiateCtx(context.Background(), u, h, out)
}

func postNegotiateCtx(ctx context.Context, u string, h http.Header, out any) error {
	return postNegotiateWith(ctx, noRedirect, u, h, out)
}

// postNegotiateWith is postNegotiateCtx over hc (a client of the bubble's
// in-memory network, say).
func postNegotiateWith(ctx context.Context, hc *http.Client, u string, h http.Header, out any) error {
	req, _ := http.NewRequestWithContext(ctx, "POST", u, nil)
	req.Header = h.Clone()
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return &statusError{resp.StatusCode, resp.Header, string(b)}
	}
	return json.Unmarshal(b, out)
}

type negotiateAnswer struct {
	URL             string `json:"url"`
	AccessToken     string `json:"accessToken"`
	ConnectionToken string `json:"connectionToken"`
}

// negotiate posts the hub's negotiate and, when it answers a redirect,
// the service's (the access token as bearer, X-Device-Token kept), as the
// official clients follow it.
func negotiate(base string, h http.Header) (negotiation, error) {
	return negotiateWith(noRedirect, base, h)
}

// negotiateWith is negotiate over hc.
func negotiateWith(hc *http.Client, base string, h http.Header) (negotiation, error) {
	ctx := context.Background()
	var neg negotiateAnswer
	if err := postNegotiateWith(ctx, hc, base+"/device/negotiate?negotiateVersion=1", h, &neg); err != nil {
		return negotiation{}, err
	}
	if neg.URL == "" {
		return negotiation{url: base + "/device", header: h.Clone(), connectToken: neg.ConnectionToken}, nil
	}
	n := negotiation{url: neg.URL, header: h.Clone(), accessToken: neg.AccessToken}
	n.header.Set("Authorization", "Bearer "+neg.AccessToken)
	nu, _ := url.Parse(neg.URL)
	nu.Path = strings.TrimSuffix(nu.Path, "/") + "/negotiate"
	if err := postNegotiateWith(ctx, hc, nu.String(), n.header, &neg); err != nil {
		return negotiation{}, err
	}
	n.connectToken = neg.ConnectionToken
	return n, nil
}

// serviceEndpoint follows the hub's negotiate redirect: the URL to give a
// SignalR client and the headers it sends there. For a direct hub it is
// the hub and the same headers.
func serviceEndpoint(ctx context.Context, base string, h http.Header) (string, http.Header, error) {
	var neg negotiateAnswer
	if err := postNegotiateCtx(ctx, base+"/device/negotiate?negotiateVersion=1", h, &neg); err != nil {
		return "", nil, err
	}
	if neg.URL == "" {
		return base + "/device", h, nil
	}
	sh := h.Clone()
	sh.Set("Authorization", "Bearer "+neg.AccessToken)
	return neg.URL, sh, nil
}

// wsURL is the WebSocket address of a negotiated connection.
func (n negotiation) wsURL() string {
	u, _ := url.Parse(n.url)
	u.Scheme = "ws" + strings.TrimPrefix(u.Scheme, "http")
	q := u.Query()
	q.Set("id", n.connectToken)
	if n.accessToken != "" {
		q.Set("access_token", n.accessToken)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// rawDial negotiates (following the redirect) and opens a WebSocket hub
// connection.
func rawDial(t testing.TB, base string, h http.Header) (*rawConn, error) {
	t.Helper()
	return rawDialWith(t, nil, base, h)
}

// rawDialWith is rawDial over hc (nil: the default clients).
func rawDialWith(t testing.TB, hc *http.Client, base string, h http.Header) (*rawConn, error) {
	t.Helper()
	ws, err := dialHandshaken(t, hc, base, h)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &rawConn{ws: ws, frames: make(chan frame, 4096), cancel: cancel}
	t.Cleanup(c.close)
	go c.readLoop(ctx)
	return c, nil
}

// dialHandshaken opens a hub WebSocket through hc (nil: loopback) and
// completes SignalR's JSON handshake; nothing reads it afterwards until
// the caller does.
func dialHandshaken(t testing.TB, hc *http.Client, base string, h http.Header) (*websocket.Conn, error) {
	t.Helper()
	nc := hc
	if nc == nil {
		nc = noRedirect
	}
	n, err := negotiateWith(nc, base, h)
	if err != nil {
		return nil, err
	}
	dctx, dcancel := context.WithTimeout(context.Background(), wait)
	defer dcancel()
	ws, resp, err := websocket.Dial(dctx, n.wsURL(), &websocket.DialOptions{HTTPHeader: n.header.Clone(), HTTPClient: hc})
	if err != nil {
		if resp != nil {
			return nil, &statusError{resp.StatusCode, resp.Header, err.Error()}
		}
		return nil, err
	}
	ws.SetReadLimit(4 << 20)
	if hs, err := handshake(dctx, ws, "json"); err != nil || hs != "{}\x1e" {
		ws.CloseNow()
		return nil, fmt.Errorf("handshake answer %q: %v", hs, err)
	}
	return ws, nil
}

// handshake sends SignalR's handshake request for protocol on ws and
// returns the answer record.
func handshake(ctx context.Context, ws *websocket.Conn, protocol string) (string, error) {
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"protocol":"`+protocol+`","version":1}`+"\x1e")); err != nil {
		return "", err
	}
	_, hs, err := ws.Read(ctx)
	return string(hs), err
}

func (c *rawConn) readLoop(ctx context.Context) {
	defer close(c.frames)
	for {
		_, msg, err := c.ws.Read(ctx)
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		now := time.Now()
		for _, rec := range bytes.Split(msg, []byte{0x1e}) {
			if len(rec) == 0 {
				continue
			}
			var f frame
			if json.Unmarshal(rec, &f) == nil {
				f.received = now
				c.frames <- f
			}
		}
	}
}

func (c *rawConn) close() {
	c.cancel()
	c.ws.CloseNow()
}

func (c *rawConn) send(v any) error {
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, append(b, 0x1e))
}

func (c *rawConn) invoke(id, target string, args ...any) error {
	if args == nil {
		args = []any{}
	}
	return c.send(map[string]any{"type": 1, "invocationId": id, "target": target, "arguments": args})
}

var errClosed = errors.New("connection closed")

// next returns the next frame that is not a ping, within timeout.
func (c *rawConn) next(timeout time.Duration) (frame, error) {
	deadline := time.After(timeout)
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				return frame{}, errClosed
			}
			if f.Type == 6 {
				continue
			}
			return f, nil
		case <-deadline:
			return frame{}, context.DeadlineExceeded
		}
	}
}

// closed waits until the connection ends.
func (c *rawConn) closed(timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		select {
		case _, ok := <-c.frames:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// action matches a journal entry of the action for the device.
func action(name, deviceID string) func(mockhub.Event) bool {
	return func(e mockhub.Event) bool { return e.Action == name && e.DeviceID == deviceID }
}

// lastSeq is the sequence number of s's latest journal entry (0: none).
func lastSeq(s *mockhub.Server) int64 {
	evs := s.Events(0)
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
}
