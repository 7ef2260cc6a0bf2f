package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
)

// seenRequest is what a scripted redirecting service received.
type seenRequest struct {
	method, path, rawQuery string
	header                 http.Header
}

// redirector is a scripted application + SignalR service on one server
// of an in-memory network (create it inside the test's synctest bubble):
// handle answers each request (n counts from 1).
type redirector struct {
	base   string       // http://host:port
	client *http.Client // reaches the server
	mu     sync.Mutex
	seen   []seenRequest
	handle func(w http.ResponseWriter, r *http.Request, n int)
}

func newRedirector(t testing.TB, handle func(rd *redirector, w http.ResponseWriter, r *http.Request, n int)) *redirector {
	rd := &redirector{}
	var pn testutil.PipeNet
	ln, err := pn.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rd.mu.Lock()
		rd.seen = append(rd.seen, seenRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone()})
		n := len(rd.seen)
		rd.mu.Unlock()
		handle(rd, w, r, n)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	rd.base, rd.client = "http://"+ln.Addr().String(), pn.Client(t)
	return rd
}

func (rd *redirector) requests() []seenRequest {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return append([]seenRequest(nil), rd.seen...)
}

func writeJSONText(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, body)
}

// closeUpgrade ends a WebSocket upgrade without an answer (a network
// error at the client, whose text quotes the URL).
func closeUpgrade(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			c.Close()
			return
		}
	}
	w.WriteHeader(http.StatusServiceUnavailable)
}

const azureQuery = "hub=devicehub&asrs.op=%2Fdevice&negotiateVersion=1&asrs_request_id=g1vFtD4AAAA%3D&asrs_lang=en-US"

// redirectConfig is a Config against a redirector that retries slowly, so
// that a test sees one attempt at a time.
func redirectConfig(t testing.TB, rd *redirector, secrets ...string) Config {
	return Config{
		URL:           rd.base + "/device",
		HTTPClient:    rd.client,
		DeviceID:      testDevice,
		TokenSource:   staticToken(testToken),
		Logger:        newLogger(t, func() []string { return append([]string{testToken}, secrets...) }),
		Backoff:       Backoff{Initial: 300 * time.Millisecond, Max: 300 * time.Millisecond, Jitter: -1, Revoked: time.Minute},
		InvokeTimeout: 5 * time.Second,
		ProbeInterval: -1,
	}
}

// TestRedirectRequestsAsTheOfficialClient: each request of a redirected
// connection carries what the official client and the vendor's raw
// protocol steps send, the access token never shows in a state, and every
// attempt starts again at the hub's negotiate.
func TestRedirectRequestsAsTheOfficialClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rd := newRedirector(t, func(rd *redirector, w http.ResponseWriter, r *http.Request, n int) {
			attempt := (n-1)/3 + 1
			switch {
			case r.Method == "POST" && r.URL.Path == "/device/negotiate":
				writeJSONText(w, fmt.Sprintf(`{"negotiateVersion":0,"url":"%s/client/?%s","accessToken":"at-SECRET-%d","availableTransports":[]}`, rd.base, azureQuery, attempt))
			case r.Method == "POST" && r.URL.Path == "/client/negotiate":
				// Version 1 on the first attempt, version 0 (no connection
				// token) on the second.
				if attempt == 1 {
					writeJSONText(w, `{"negotiateVersion":1,"connectionId":"cid-1","connectionToken":"ctok-1","availableTransports":[{"transport":"WebSockets","transferFormats":["Text","Binary"]}]}`)
				} else {
					writeJSONText(w, `{"negotiateVersion":0,"connectionId":"cid-2","availableTransports":[{"transport":"WebSockets","transferFormats":["Text","Binary"]}]}`)
				}
			default:
				closeUpgrade(w)
			}
		})
		// The connection tokens (ctok-1; cid-2 stands for one under version
		// 0) are private to the connection: no more in the log than the
		// access tokens.
		c := start(t, must(New(redirectConfig(t, rd, "at-SECRET-1", "at-SECRET-2", "ctok-1", "cid-2"))))
		var states []State
		waitState(t, c.Client, "two failed attempts", wait, func(s State) bool {
			if s.Cause != CauseNone {
				states = append(states, s)
			}
			return len(rd.requests()) >= 6 && s.Attempt >= 2
		})
		seen := rd.requests()[:6]

		want := []struct{ method, path, bearer string }{
			{"POST", "/device/negotiate", testToken},
			{"POST", "/client/negotiate", "at-SECRET-1"},
			{"GET", "/client/", "at-SECRET-1"},
			{"POST", "/device/negotiate", testToken}, // a fresh negotiate at the hub
			{"POST", "/client/negotiate", "at-SECRET-2"},
			{"GET", "/client/", "at-SECRET-2"},
		}
		for i, w := range want {
			s := seen[i]
			if s.method != w.method || s.path != w.path {
				t.Errorf("request %d: %s %s, want %s %s", i+1, s.method, s.path, w.method, w.path)
			}
			if got := s.header.Get("Authorization"); got != "Bearer "+w.bearer {
				t.Errorf("request %d Authorization = %q, want the bearer %q", i+1, got, w.bearer)
			}
			if got := s.header.Get("X-Device-Token"); got != testToken {
				t.Errorf("request %d X-Device-Token = %q, want the device token", i+1, got)
			}
		}
		if seen[0].rawQuery != "negotiateVersion=1" {
			t.Errorf("hub negotiate query %q", seen[0].rawQuery)
		}
		// The service's negotiate keeps the redirect's query as it came
		// (negotiateVersion already in it: not added twice).
		if seen[1].rawQuery != azureQuery {
			t.Errorf("service negotiate query %q, want %q", seen[1].rawQuery, azureQuery)
		}
		for i, id := range map[int]string{2: "ctok-1", 5: "cid-2"} {
			q, _ := url.ParseQuery(seen[i].rawQuery)
			if q.Get("id") != id || q.Get("access_token") != fmt.Sprintf("at-SECRET-%d", i/3+1) || q.Get("hub") != "devicehub" || q.Get("asrs.op") != "/device" {
				t.Errorf("upgrade %d query %q: want id=%s and the access token", i+1, seen[i].rawQuery, id)
			}
			if !strings.HasPrefix(seen[i].rawQuery, azureQuery+"&") {
				t.Errorf("upgrade %d query %q does not keep the redirect's", i+1, seen[i].rawQuery)
			}
		}
		// The failure is reported, with the URL's access token and
		// connection token redacted.
		if len(states) == 0 {
			t.Fatal("no failed state")
		}
		for _, s := range states {
			text := s.Reason
			if s.Err != nil {
				text += " " + s.Err.Error()
			}
			for _, sec := range []string{"at-SECRET", testToken, "ctok-1", "cid-2"} {
				if strings.Contains(text, sec) {
					t.Errorf("a token (%s) in the state: %q", sec, text)
				}
			}
			if s.Cause != CauseNetwork || !strings.Contains(text, "access_token=[redacted]") || !strings.Contains(text, "id=[redacted]") {
				t.Errorf("state %s: %q", s.Cause, text)
			}
		}
		if st := c.Stats(); st.Redirects < 2 || st.TokenRefusals != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}

// TestRedirectCapAndLoop: the client follows up to 99 redirects (100
// negotiate requests, as the official clients), fails one more with
// ErrTooManyRedirects, and a service redirecting to itself fails after 100
// negotiate requests.
func TestRedirectCapAndLoop(t *testing.T) {
	chain := func(redirects int) func(rd *redirector, w http.ResponseWriter, r *http.Request, n int) {
		return func(rd *redirector, w http.ResponseWriter, r *http.Request, n int) {
			if r.Method == "GET" {
				closeUpgrade(w)
				return
			}
			hop := 0
			if h, ok := strings.CutPrefix(r.URL.Path, "/hop/"); ok {
				fmt.Sscanf(h, "%d/negotiate", &hop)
			}
			if hop < redirects {
				writeJSONText(w, fmt.Sprintf(`{"url":"%s/hop/%d","accessToken":"at-hop-%d"}`, rd.base, hop+1, hop+1))
				return
			}
			writeJSONText(w, `{"negotiateVersion":1,"connectionId":"c","connectionToken":"t","availableTransports":[{"transport":"WebSockets","transferFormats":["Text"]}]}`)
		}
	}
	loop := func(rd *redirector, w http.ResponseWriter, r *http.Request, n int) {
		writeJSONText(w, fmt.Sprintf(`{"url":"%s/device","accessToken":"at-loop-%d"}`, rd.base, n))
	}
	for _, tc := range []struct {
		name      string
		handle    func(rd *redirector, w http.ResponseWriter, r *http.Request, n int)
		negotiate int  // negotiate requests in the first attempt
		tooMany   bool // the attempt fails with ErrTooManyRedirects
	}{
		{"99 redirects", chain(99), 100, false},
		{"100 redirects", chain(100), 100, true},
		{"loop", loop, 100, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rd := newRedirector(t, tc.handle)
				cfg := redirectConfig(t, rd)
				cfg.Backoff = Backoff{Initial: time.Minute, Max: time.Minute, Jitter: -1, Revoked: time.Minute}
				c := start(t, must(New(cfg)))
				st := waitState(t, c.Client, "the first attempt's end", wait, func(s State) bool { return s.Attempt == 1 })
				negotiates, upgrades := 0, 0
				for _, r := range rd.requests() {
					if r.method == "POST" {
						negotiates++
					} else {
						upgrades++
					}
				}
				if negotiates != tc.negotiate {
					t.Errorf("%d negotiate requests, want %d", negotiates, tc.negotiate)
				}
				if tc.tooMany {
					if !errors.Is(st.Err, ErrTooManyRedirects) || st.Cause != CauseRefused || upgrades != 0 {
						t.Errorf("state %+v (err %v), %d upgrades", st, st.Err, upgrades)
					}
					if strings.Contains(st.Reason, "at-") {
						t.Errorf("a token in the reason: %s", st.Reason)
					}
				} else if errors.Is(st.Err, ErrTooManyRedirects) || upgrades != 1 {
					t.Errorf("99 redirects refused: %+v, %d upgrades", st, upgrades)
				}
			})
		})
	}
}

// TestRedirectRefusals: an error answer, a refused access token at the
// service (not the device token: no repair, no slow pace), and redirect
// targets that are not followed.
func TestRedirectRefusals(t *testing.T) {
	t.Run("error member", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rd := newRedirector(t, func(rd *redirector, w http.ResponseWriter, r *http.Request, n int) {
				if r.URL.Path == "/device/negotiate" {
					writeJSONText(w, fmt.Sprintf(`{"url":"%s/client/?hub=devicehub","accessToken":"at-err"}`, rd.base))
					return
				}
				writeJSONText(w, `{"error":"This connection is not allowed."}`)
			})
			c := start(t, must(New(redirectConfig(t, rd, "at-err"))))
			st := waitState(t, c.Client, "refused", wait, func(s State) bool { return s.Attempt == 1 })
			if st.Cause != CauseRefused || !strings.Contains(st.Reason, "This connection is not allowed.") {
				t.Errorf("state %+v", st)
			}
		})
	})
	t.Run("service 401", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rd := newRedirector(t, func(rd *redirector, w http.ResponseWriter, r *http.Request, n int) {
				if r.URL.Path == "/device/negotiate" {
					writeJSONText(w, fmt.Sprintf(`{"url":"%s/client/?hub=devicehub","accessToken":"at-expired"}`, rd.base))
					return
				}
				w.WriteHeader(http.StatusUnauthorized)
			})
			cfg := redirectConfig(t, rd, "at-expired")
			var revokedCalls atomic.Int32
			cfg.OnRevoked = func(context.Context) error { revokedCalls.Add(1); return nil }
			c := start(t, must(New(cfg)))
			var first State
			waitState(t, c.Client, "two attempts", wait, func(s State) bool {
				if s.Attempt == 1 {
					first = s
				}
				return s.Attempt >= 2
			})
			if first.Cause != CauseRefused || first.NeedsRepair() || errors.Is(first.Err, ErrUnauthorized) {
				t.Errorf("a refused access token at the service: %+v", first)
			}
			if revokedCalls.Load() != 0 || c.Stats().TokenRefusals != 0 {
				t.Errorf("OnRevoked called %d times, %d token refusals", revokedCalls.Load(), c.Stats().TokenRefusals)
			}
			hub := 0
			for _, r := range rd.requests() {
				if r.path == "/device/negotiate" {
					hub++
				}
			}
			if hub < 2 {
				t.Errorf("%d negotiates at the hub, want a fresh one per attempt", hub)
			}
		})
	})
}

func TestRedirectTarget(t *testing.T) {
	https, _ := url.Parse("https://api.example.com/device")
	plain, _ := url.Parse("http://127.0.0.1:5000/device")
	for _, tc := range []struct {
		from *url.URL
		to   string
		ok   bool
	}{
		{https, "https://x.service.signalr.net/client/?hub=devicehub&asrs.op=%2Fdevice", true},
		{https, "http://x.service.signalr.net/client/", false}, // https down to http
		{https, "http://127.0.0.1:8080/client/", true},         // loopback
		{plain, "http://127.0.0.1:8081/client/?hub=devicehub", true},
		{plain, "/client/?hub=devicehub", false},
		{plain, "ftp://x/client", false},
		{plain, "https:///client", false},
		{plain, "%zz", false},
	} {
		_, err := redirectTarget(tc.from, tc.to)
		if (err == nil) != tc.ok {
			t.Errorf("%s -> %s: %v", tc.from, tc.to, err)
		}
	}
}

func TestNegotiateURLAndRedaction(t *testing.T) {
	for raw, want := range map[string]string{
		"http://h/device":  "http://h/device/negotiate?negotiateVersion=1",
		"http://h/device/": "http://h/device/negotiate?negotiateVersion=1",
		"https://x/client/?hub=devicehub&asrs.op=%2Fdevice&negotiateVersion=1": "https://x/client/negotiate?hub=devicehub&asrs.op=%2Fdevice&negotiateVersion=1",
		"https://x/client/?hub=devicehub&asrs.op=%2Fdevice":                    "https://x/client/negotiate?hub=devicehub&asrs.op=%2Fdevice&negotiateVersion=1",
	} {
		u, _ := url.Parse(raw)
		if got := (endpoint{url: u}).negotiateURL(); got != want {
			t.Errorf("%s: %s, want %s", raw, got, want)
		}
	}
	text := `Get "ws://h/client/?hub=devicehub&id=t&access_token=eyJ.abc-_%2B": EOF; Access_Token=x y`
	got := redactText(text, "tok-12345")
	if strings.Contains(got, "eyJ") || strings.Contains(got, "=x ") || !strings.Contains(got, "access_token=[redacted]") {
		t.Errorf("redacted %q", got)
	}
	if got := redactText("device tok-12345 here", "tok-12345"); got != "device [redacted] here" {
		t.Errorf("redacted %q", got)
	}
	if got := redactURL("https://u:p@x/client/?hub=d&access_token=s"); got != "https://x/client/" {
		t.Errorf("redactURL = %q", got)
	}
}

// TestRedirectWithoutAccessToken: a redirect without an access token keeps
// the device token as bearer (as the official client keeps its token
// factory), and the device token never goes into the WebSocket URL.
func TestRedirectWithoutAccessToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rd := newRedirector(t, func(rd *redirector, w http.ResponseWriter, r *http.Request, n int) {
			switch r.URL.Path {
			case "/device/negotiate":
				writeJSONText(w, fmt.Sprintf(`{"url":"%s/elsewhere"}`, rd.base))
			case "/elsewhere/negotiate":
				writeJSONText(w, `{"negotiateVersion":1,"connectionId":"c","connectionToken":"t","availableTransports":[]}`)
			default:
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		})
		c := start(t, must(New(redirectConfig(t, rd))))
		waitState(t, c.Client, "the first attempt", wait, func(s State) bool { return s.Attempt == 1 })
		seen := rd.requests()
		if len(seen) < 3 || seen[1].path != "/elsewhere/negotiate" || seen[2].path != "/elsewhere" {
			t.Fatalf("requests %+v", seen)
		}
		for _, r := range seen[:3] {
			if r.header.Get("Authorization") != "Bearer "+testToken || r.header.Get("X-Device-Token") != testToken {
				t.Errorf("%s %s: headers %v", r.method, r.path, r.header)
			}
		}
		if q := seen[2].rawQuery; q != "id=t" {
			t.Errorf("upgrade query %q, want only the id", q)
		}
	})
}
