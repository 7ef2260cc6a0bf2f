package mockhub_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/localhttp"
	"github.com/hubgate/hubgate/internal/testutil"
)

// testClock is a Config.Now the test moves forward.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) now() time.Time             { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *testClock) advance(d time.Duration)    { c.offset.Add(int64(d)) }
func (c *testClock) config(cfg *mockhub.Config) { cfg.Now = c.now }
func redirectOf(t *testing.T, base string, h http.Header) negotiateAnswer {
	t.Helper()
	var neg negotiateAnswer
	if err := postNegotiate(base+"/device/negotiate?negotiateVersion=1", h, &neg); err != nil {
		t.Fatalf("hub negotiate: %v", err)
	}
	return neg
}

// serviceNegotiateURL is the service's negotiate for a redirect url, as
// the official client builds it.
func serviceNegotiateURL(redirect string) string {
	u, _ := url.Parse(redirect)
	u.Path = strings.TrimSuffix(u.Path, "/") + "/negotiate"
	return u.String()
}

// TestServiceRedirectAsTheRealService: the hub's negotiate answers the
// redirect the real service answers (docs/real-service.md),
// the service negotiates with the redirect's access token, and the
// WebSocket opens with id and access_token.
func TestServiceRedirectAsTheRealService(t *testing.T) {
	var logged testutil.SyncBuffer
	s, ts := newMock(t, mockhub.Config{Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	dev, tok, _ := s.CreateDevice("", "")

	// The raw answer: exactly the members the real service sends.
	var raw map[string]any
	if st, _, body := call(t, "POST", ts.URL+"/device/negotiate?negotiateVersion=1", tok.Token, nil, &raw); st != 200 {
		t.Fatalf("negotiate: %d %s", st, body)
	}
	if raw["negotiateVersion"] != 0.0 || raw["accessToken"] == "" || len(raw) != 4 {
		t.Errorf("redirect answer %v", raw)
	}
	if tr, ok := raw["availableTransports"].([]any); !ok || len(tr) != 0 {
		t.Errorf("availableTransports %v, want []", raw["availableTransports"])
	}
	u, err := url.Parse(raw["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Scheme != "http" || u.Host != strings.TrimPrefix(s.ServiceURL(), "http://") || u.Path != "/client/" ||
		q.Get("hub") != "devicehub" || q.Get("asrs.op") != "/device" || q.Get("negotiateVersion") != "1" || q.Get("asrs_request_id") == "" {
		t.Errorf("redirect url %s (service %s)", u, s.ServiceURL())
	}
	if !strings.Contains(u.RawQuery, "asrs.op=%2Fdevice") {
		t.Errorf("asrs.op not escaped as Azure's: %s", u.RawQuery)
	}
	if u.Host == strings.TrimPrefix(ts.URL, "http://") {
		t.Error("the redirect points at the application itself, not a second listener")
	}

	// The service's negotiate: the access token as bearer, X-Device-Token kept.
	neg := redirectOf(t, ts.URL, hubHeaders(tok.Token))
	sh := hubHeaders(tok.Token)
	sh.Set("Authorization", "Bearer "+neg.AccessToken)
	var conn struct {
		NegotiateVersion    int    `json:"negotiateVersion"`
		ConnectionID        string `json:"connectionId"`
		ConnectionToken     string `json:"connectionToken"`
		AvailableTransports []struct {
			Transport string `json:"transport"`
		} `json:"availableTransports"`
	}
	if err := postNegotiate(serviceNegotiateURL(neg.URL), sh, &conn); err != nil {
		t.Fatal(err)
	}
	if conn.NegotiateVersion != 1 || conn.ConnectionID == "" || conn.ConnectionToken == "" || len(conn.AvailableTransports) == 0 {
		t.Errorf("service negotiate %+v", conn)
	}

	// Refusals at the service.
	other, otherTok, _ := s.CreateDevice("", "")
	otherNeg := redirectOf(t, ts.URL, hubHeaders(otherTok.Token))
	for name, h := range map[string]http.Header{
		"no access token":            {"X-Device-Token": {tok.Token}},
		"the device token as bearer": hubHeaders(tok.Token),
		"unknown access token":       {"Authorization": {"Bearer nope"}},
		"another device's header":    {"Authorization": {"Bearer " + neg.AccessToken}, "X-Device-Token": {otherTok.Token}},
		"basic":                      {"Authorization": {"Basic eDp5"}},
	} {
		var se *statusError
		if err := postNegotiate(serviceNegotiateURL(neg.URL), h, &conn); !errors.As(err, &se) || se.code != 401 {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Two valid access tokens of different devices: refused.
	var se *statusError
	if err := postNegotiate(serviceNegotiateURL(neg.URL)+"&access_token="+url.QueryEscape(otherNeg.AccessToken), sh, &conn); !errors.As(err, &se) || se.code != 401 {
		t.Errorf("access tokens of two devices: %v", err)
	}
	// Liberal: the device token as bearer (or any stale bearer) with the
	// redirect's access token in the query is admitted; one valid access
	// token among those presented is enough, none is refused.
	for name, bearer := range map[string]string{"the device token": tok.Token, "an unknown token": "nope"} {
		h := hubHeaders(tok.Token)
		h.Set("Authorization", "Bearer "+bearer)
		if err := postNegotiate(serviceNegotiateURL(neg.URL)+"&access_token="+url.QueryEscape(neg.AccessToken), h, &conn); err != nil {
			t.Errorf("%s as bearer, the access token in the query: %v", name, err)
		}
		if err := postNegotiate(serviceNegotiateURL(neg.URL)+"&access_token=nope2", h, &conn); !errors.As(err, &se) || se.code != 401 {
			t.Errorf("%s as bearer, an unknown token in the query: %v", name, err)
		}
	}
	{
		// The same on the WebSocket: the device token as bearer, the
		// access token in the query.
		n, err := negotiate(ts.URL, hubHeaders(tok.Token))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		ws, _, err := websocket.Dial(ctx, n.wsURL(), &websocket.DialOptions{HTTPHeader: hubHeaders(tok.Token)})
		cancel()
		if err != nil {
			t.Errorf("WebSocket with the device token as bearer and access_token: %v", err)
		} else {
			ws.CloseNow()
		}
	}
	// The access token alone (in the query, as browsers send it) is enough.
	if err := postNegotiate(serviceNegotiateURL(neg.URL)+"&access_token="+url.QueryEscape(neg.AccessToken), http.Header{}, &conn); err != nil {
		t.Errorf("access_token query alone: %v", err)
	}
	// Another hub name.
	bad := strings.Replace(serviceNegotiateURL(neg.URL), "hub=devicehub", "hub=chat", 1)
	if err := postNegotiate(bad, sh, &conn); !errors.As(err, &se) || se.code != 404 {
		t.Errorf("hub=chat: %v", err)
	}
	// The hub path itself serves only the negotiate.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+"/device", &websocket.DialOptions{HTTPHeader: hubHeaders(tok.Token)}); err == nil || resp == nil || resp.StatusCode != 404 {
		t.Errorf("a WebSocket at /device: %v", err)
	}

	// A whole connection; the device is the one the token was issued for.
	c, err := rawDial(t, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	c.invoke("1", "VerifySelf")
	if f, err := c.next(wait); err != nil || f.Type != 3 || !strings.Contains(string(f.Result), dev.ID) {
		t.Errorf("VerifySelf %+v %v", f, err)
	}
	_ = other

	// Nothing secret reaches the event log or the mock's log.
	b, _ := json.Marshal(s.Events(0))
	c.close()
	s.Close()
	for _, sec := range []string{tok.Token, otherTok.Token, neg.AccessToken, otherNeg.AccessToken} {
		if strings.Contains(string(b), sec) {
			t.Error("a token reached the event log")
		}
		if strings.Contains(logged.String(), sec) {
			t.Error("a token reached the mock's log")
		}
	}
	// The mock's own debug records (its event log mirrored into slog) name
	// the service negotiate: the log saw the requests that carried tokens.
	if !strings.Contains(logged.String(), "action=service-negotiate") {
		t.Errorf("the mock's debug log has no service negotiate: the check above proves nothing: %q", logged.String())
	}
}

// TestServiceTokensExpire: a redirect's access token lives
// ServiceTokenTTL; once expired the service refuses it on negotiate and on
// the WebSocket, and a new negotiate at the hub gives a new one.
func TestServiceTokensExpire(t *testing.T) {
	var clock testClock
	cfg := mockhub.Config{ServiceTokenTTL: time.Minute}
	clock.config(&cfg)
	s, ts := newMock(t, cfg)
	_, tok, _ := s.CreateDevice("", "")

	n, err := negotiate(ts.URL, hubHeaders(tok.Token)) // negotiated while valid
	if err != nil {
		t.Fatal(err)
	}
	live, err := rawDial(t, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Minute)

	// Negotiate and WebSocket with the expired token: 401.
	var se *statusError
	var ignored negotiateAnswer
	if err := postNegotiate(serviceNegotiateURL(n.url), n.header, &ignored); !errors.As(err, &se) || se.code != 401 || !strings.Contains(se.body, "expired") {
		t.Errorf("service negotiate with an expired token: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	noHeader := http.Header{"X-Device-Token": {tok.Token}}
	if _, resp, err := websocket.Dial(ctx, n.wsURL(), &websocket.DialOptions{HTTPHeader: noHeader}); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("WebSocket with an expired access_token: %v", err)
	}
	// A connection made before keeps working (the service checks the token
	// when a client connects).
	live.invoke("1", "VerifySelf")
	if f, err := live.next(wait); err != nil || f.Type != 3 {
		t.Errorf("the open connection: %+v %v", f, err)
	}
	// A fresh negotiate at the hub works.
	if _, err := rawDial(t, ts.URL, hubHeaders(tok.Token)); err != nil {
		t.Errorf("after a fresh negotiate: %v", err)
	}
	expired := 0
	for _, e := range s.Events(0) {
		if e.Action == "rejected" && e.Args["at"] == "service" && strings.Contains(e.Error, "expired") {
			expired++
		}
	}
	if expired != 2 {
		t.Errorf("%d expired-token rejections logged, want 2", expired)
	}
}

// TestServiceFaults: the admin API expires every redirect token at once
// and makes the service's negotiate answer an error for a while.
func TestServiceFaults(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	_, tok, _ := s.CreateDevice("", "")
	n1, err := negotiate(ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	n2 := redirectOf(t, ts.URL, hubHeaders(tok.Token))
	live, err := rawDial(t, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}

	var st mockhub.FaultState
	if code, _, body := call(t, "POST", ts.URL+"/mock/faults", "", `{"expireServiceTokens":true}`, &st); code != 200 || st.ExpiredServiceTokens != 3 {
		t.Fatalf("expire: %d %s", code, body)
	}
	var se *statusError
	var ignored negotiateAnswer
	for _, at := range []string{n1.accessToken, n2.AccessToken} {
		h := hubHeaders(tok.Token)
		h.Set("Authorization", "Bearer "+at)
		if err := postNegotiate(serviceNegotiateURL(n2.URL), h, &ignored); !errors.As(err, &se) || se.code != 401 {
			t.Errorf("an expired token: %v", err)
		}
	}
	live.invoke("1", "VerifySelf")
	if f, err := live.next(wait); err != nil || f.Type != 3 {
		t.Errorf("the open connection after the expiry: %+v %v", f, err)
	}
	if _, err := rawDial(t, ts.URL, hubHeaders(tok.Token)); err != nil {
		t.Errorf("a fresh negotiate: %v", err)
	}

	// The service's negotiate answers {"error"} while the fault lasts.
	if code, _, body := call(t, "POST", ts.URL+"/mock/faults", "", `{"serviceErrorFor":"1m"}`, &st); code != 200 || st.ServiceErrorUntil == nil {
		t.Fatalf("service error: %d %s", code, body)
	}
	neg := redirectOf(t, ts.URL, hubHeaders(tok.Token))
	h := hubHeaders(tok.Token)
	h.Set("Authorization", "Bearer "+neg.AccessToken)
	var answer struct {
		Error           string `json:"error"`
		ConnectionToken string `json:"connectionToken"`
	}
	if err := postNegotiate(serviceNegotiateURL(neg.URL), h, &answer); err != nil || answer.Error == "" || answer.ConnectionToken != "" {
		t.Errorf("service negotiate during the fault: %+v %v", answer, err)
	}
	var ended mockhub.FaultState
	if code, _, _ := call(t, "POST", ts.URL+"/mock/faults", "", `{"serviceErrorFor":"0s"}`, &ended); code != 200 || ended.ServiceErrorUntil != nil {
		t.Fatalf("end of the service error: %+v", ended)
	}
	if _, err := rawDial(t, ts.URL, hubHeaders(tok.Token)); err != nil {
		t.Errorf("after the fault: %v", err)
	}
	// Through the Go admin client too.
	ac := &mockhub.AdminClient{BaseURL: ts.URL}
	got, err := ac.Faults(context.Background(), mockhub.Faults{ExpireServiceTokens: true})
	if err != nil || got.ExpiredServiceTokens == 0 {
		t.Errorf("AdminClient expire: %+v %v", got, err)
	}
	if code, _, _ := call(t, "POST", ts.URL+"/mock/faults", "", `{"serviceErrorFor":"soon"}`, nil); code != 400 {
		t.Errorf("a bad duration: %d", code)
	}
}

// TestDirectHub: Config.DirectHub serves the hub at /device itself, as
// before the redirect: the negotiate answers the connection, and there is
// no second listener.
func TestDirectHub(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{DirectHub: true})
	_, tok, _ := s.CreateDevice("", "")
	if s.ServiceURL() != "" {
		t.Errorf("ServiceURL = %q with DirectHub", s.ServiceURL())
	}
	neg := redirectOf(t, ts.URL, hubHeaders(tok.Token))
	if neg.URL != "" || neg.AccessToken != "" || neg.ConnectionToken == "" {
		t.Errorf("direct negotiate %+v", neg)
	}
	c, err := rawDial(t, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	c.invoke("1", "VerifySelf")
	if f, err := c.next(wait); err != nil || f.Type != 3 {
		t.Errorf("VerifySelf %+v %v", f, err)
	}
	r := newReceiver()
	gc := dial(t, ts.URL, tok.Token, r)
	if err := invoke(gc, wait, nil, "VerifySelf"); err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Events(0) {
		if e.Action == "negotiate-redirect" || e.Action == "service-negotiate" {
			t.Errorf("a direct hub logged %s", e.Action)
		}
	}
	if st := s.Faults(mockhub.Faults{ExpireServiceTokens: true}); st.ExpiredServiceTokens != 0 {
		t.Errorf("expired %d service tokens without a service", st.ExpiredServiceTokens)
	}
}

// TestServiceListenerClosesWithTheMock: Close stops the second listener.
func TestServiceListenerClosesWithTheMock(t *testing.T) {
	s, err := mockhub.New(mockhub.Config{})
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(s.ServiceURL(), "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("the service does not listen: %v", err)
	}
	c.Close()
	s.Close()
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("the service still listens after Close")
	}
	// A service address that cannot be bound is an error of New.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := mockhub.New(mockhub.Config{ServiceAddr: ln.Addr().String()}); err == nil {
		t.Error("New with a taken service address succeeded")
	}
	if _, err := mockhub.New(mockhub.Config{ServiceTokenTTL: -time.Second}); err == nil {
		t.Error("a negative ServiceTokenTTL was accepted")
	}
}

// TestMockServersAreHardened: the mock's HTTP servers (the SignalR
// service's listener, and NewHTTPServer for the main handler) are
// internal/localhttp's: a request with 100 KiB of headers is refused with
// 431 (net/http's default accepts 1 MiB), and idle connections time out.
func TestMockServersAreHardened(t *testing.T) {
	s, err := mockhub.New(mockhub.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := s.NewHTTPServer()
	if hs.IdleTimeout != localhttp.DefaultIdleTimeout || hs.MaxHeaderBytes != localhttp.DefaultMaxHeaderBytes {
		t.Errorf("NewHTTPServer: idle timeout %s, max header bytes %d", hs.IdleTimeout, hs.MaxHeaderBytes)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()

	big := strings.Repeat("x", 100<<10)
	for name, u := range map[string]string{
		"main":    "http://" + ln.Addr().String() + "/mock/events",
		"service": s.ServiceURL() + "/client/negotiate?hub=devicehub",
	} {
		req, _ := http.NewRequest("POST", u, nil)
		req.Header.Set("X-Big", big)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("%s: 100 KiB of headers answered %d, want 431", name, resp.StatusCode)
		}
	}
}
