package mockhub_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/hub/mockhub"
)

const pageOrigin = "http://localhost:3000" // the vendor's browser sample's own server

// send sends method u with the headers h and returns the answer's
// status, headers and body.
func send(t *testing.T, method, u string, h http.Header) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// preflight is the OPTIONS a browser sends before the official client's
// negotiate (or a page's POST with a bearer).
func preflight(origin, method string) http.Header {
	return http.Header{
		"Origin":                         {origin},
		"Access-Control-Request-Method":  {method},
		"Access-Control-Request-Headers": {"authorization,x-device-token,x-requested-with,x-signalr-user-agent"},
	}
}

func varies(h http.Header, name string) bool {
	for _, v := range h.Values("Vary") {
		for n := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(n), name) {
				return true
			}
		}
	}
	return false
}

// wantCORS checks an answer to origin allowed with credentials: the exact
// origin echoed (never *), credentials allowed, Vary: Origin.
func wantCORS(t *testing.T, what string, h http.Header, origin string) {
	t.Helper()
	if got := h.Values("Access-Control-Allow-Origin"); len(got) != 1 || got[0] != origin {
		t.Errorf("%s: Access-Control-Allow-Origin %q, want exactly %q", what, got, origin)
	}
	if h.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("%s: Access-Control-Allow-Credentials %q", what, h.Get("Access-Control-Allow-Credentials"))
	}
	if !varies(h, "Origin") {
		t.Errorf("%s: Vary %q lacks Origin", what, h.Values("Vary"))
	}
}

func wantNoCORS(t *testing.T, what string, h http.Header) {
	t.Helper()
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "access-control-") {
			t.Errorf("%s: CORS header %s: %q", what, k, h.Values(k))
		}
	}
}

// TestCORSPreflight: every route a browser page of another origin calls
// (sign-in, REST, the application's negotiate, the service's negotiate)
// answers the preflight of what the official client and the vendor's
// page send: the origin echoed with credentials, the method and the
// headers asked for.
func TestCORSPreflight(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	svc := s.ServiceURL()
	for _, u := range []string{
		ts.URL + "/signin/token?grant_type=code",
		ts.URL + "/api/Device/userDevices/new/mock-controller?name=x",
		ts.URL + "/device/negotiate?negotiateVersion=1",
		svc + "/client/negotiate?hub=devicehub&negotiateVersion=1",
	} {
		st, h, body := send(t, http.MethodOptions, u, preflight(pageOrigin, "POST"))
		if st != http.StatusNoContent {
			t.Errorf("preflight %s: %d %s", u, st, body)
		}
		wantCORS(t, "preflight "+u, h, pageOrigin)
		if h.Get("Access-Control-Allow-Methods") != "POST" {
			t.Errorf("preflight %s: methods %q", u, h.Get("Access-Control-Allow-Methods"))
		}
		allowed := strings.Split(strings.ToLower(h.Get("Access-Control-Allow-Headers")), ", ")
		for _, want := range []string{"authorization", "x-device-token", "x-requested-with", "x-signalr-user-agent"} {
			if !slices.Contains(allowed, want) {
				t.Errorf("preflight %s: headers %q lack %s", u, allowed, want)
			}
		}
		if !varies(h, "Access-Control-Request-Headers") {
			t.Errorf("preflight %s: Vary %q", u, h.Values("Vary"))
		}
	}
	// A header list that is not a list of names is not echoed.
	bad := preflight(pageOrigin, "POST")
	bad.Set("Access-Control-Request-Headers", "x-ok, bad header")
	if _, h, _ := send(t, http.MethodOptions, ts.URL+"/signin/token", bad); h.Get("Access-Control-Allow-Headers") != "" {
		t.Errorf("echoed %q", h.Get("Access-Control-Allow-Headers"))
	}
}

// TestCORSAnswers: the answers themselves carry the exact origin with
// credentials, errors included (a page reads why it was refused), and a
// request without Origin gets no CORS header but Vary: Origin.
func TestCORSAnswers(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	_, tok, _ := s.CreateDevice("", "")
	user := signIn(t, ts.URL)
	origin := http.Header{"Origin": {pageOrigin}}

	h := origin.Clone()
	h.Set("Authorization", "Bearer "+user.AccessToken)
	st, hdr, body := send(t, "POST", ts.URL+"/api/Device/userDevices/new/mock-controller?name=Pad", h)
	if st != 200 {
		t.Fatalf("create: %d %s", st, body)
	}
	wantCORS(t, "create device", hdr, pageOrigin)

	st, hdr, _ = send(t, "POST", ts.URL+"/signin/token?grant_type=code&code=nope&client_id=mock-client", origin)
	if st != 400 {
		t.Errorf("bad code: %d", st)
	}
	wantCORS(t, "a refused token request", hdr, pageOrigin)

	h = origin.Clone()
	h.Set("X-DEVICE-TOKEN", tok.Token)
	st, hdr, body = send(t, "GET", ts.URL+"/device/negotiate?negotiateVersion=1", h)
	if st != 200 {
		t.Fatalf("GET negotiate: %d %s", st, body)
	}
	wantCORS(t, "negotiate", hdr, pageOrigin)

	st, hdr, _ = send(t, "GET", ts.URL+"/device/negotiate?negotiateVersion=1", http.Header{"Origin": {"null"}})
	if st != 401 {
		t.Errorf("no token: %d", st)
	}
	wantCORS(t, "a refused negotiate from a sandboxed page", hdr, "null")

	_, hdr, _ = send(t, "GET", ts.URL+"/signin?client_id=mock-client&redirect_uri=http://127.0.0.1:1/", nil)
	wantNoCORS(t, "no Origin", hdr)
	if !varies(hdr, "Origin") {
		t.Errorf("no Origin: Vary %q", hdr.Values("Vary"))
	}
}

// TestCORSLeavesTheAdminAPIOut: the admin API, its console, the journal
// stream and the explorer never answer another origin, and a preflight
// there is not answered as CORS.
func TestCORSLeavesTheAdminAPIOut(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{})
	for _, p := range []string{"/mock/devices", "/mock/journal", "/mock/console", "/swagger/", "/mock/devices/x/command"} {
		st, h, _ := send(t, http.MethodOptions, ts.URL+p, preflight(pageOrigin, "POST"))
		wantNoCORS(t, "preflight "+p, h)
		if st == http.StatusNoContent || st/100 == 2 {
			t.Errorf("preflight %s: %d", p, st)
		}
		_, h, _ = send(t, "GET", ts.URL+p, http.Header{"Origin": {pageOrigin}})
		wantNoCORS(t, "GET "+p, h)
	}
}

// TestCORSOriginNarrowed: with CORSOrigins, another origin gets no CORS
// header (its preflight is refused) and its WebSocket upgrade is refused
// and journaled, at the service and at a direct hub; an allowed origin
// (written with its default port, which a browser omits) connects over
// WebSockets, and so does a client that sends no Origin.
func TestCORSOriginNarrowed(t *testing.T) {
	for _, direct := range []bool{false, true} {
		s, ts := newMock(t, mockhub.Config{CORSOrigins: []string{"HTTP://LocalHost:3000/", "https://app.example:443"}, DirectHub: direct})
		_, tok, _ := s.CreateDevice("", "")
		name := map[bool]string{false: "service", true: "direct hub"}[direct]
		const evil = "http://evil.example"

		st, h, _ := send(t, http.MethodOptions, ts.URL+"/device/negotiate", preflight(evil, "POST"))
		if st != http.StatusForbidden {
			t.Errorf("%s: preflight of another origin: %d", name, st)
		}
		wantNoCORS(t, name+": preflight of another origin", h)
		if st, h, _ = send(t, http.MethodOptions, ts.URL+"/device/negotiate", preflight("https://app.example", "POST")); st != 204 {
			t.Errorf("%s: preflight of an allowed origin: %d", name, st)
		}
		wantCORS(t, name+": the second allowed origin", h, "https://app.example")

		hh := hubHeaders(tok.Token)
		hh.Set("Origin", evil)
		if st, h, _ = send(t, "POST", ts.URL+"/device/negotiate?negotiateVersion=1", hh); st != 200 {
			t.Errorf("%s: negotiate of another origin: %d", name, st) // served, but the browser withholds it
		}
		wantNoCORS(t, name+": negotiate of another origin", h)

		before := lastSeq(s)
		_, err := rawDial(t, ts.URL, hh)
		var se *statusError
		if !errors.As(err, &se) || se.code != http.StatusForbidden {
			t.Errorf("%s: a WebSocket from another origin: %v, want 403", name, err)
		}
		refused := false
		for _, e := range s.Events(before) {
			if e.Action == "rejected" && e.Status == 403 && e.Args["origin"] == evil && strings.Contains(e.Error, "--cors-origin") {
				refused = true
			}
		}
		if !refused {
			t.Errorf("%s: the refused WebSocket is not journaled: %+v", name, s.Events(before))
		}

		for _, o := range []string{pageOrigin, ""} {
			h := hubHeaders(tok.Token)
			if o != "" {
				h.Set("Origin", o)
			}
			c, err := rawDial(t, ts.URL, h)
			if err != nil {
				t.Fatalf("%s: a WebSocket from %q: %v", name, o, err)
			}
			c.invoke("1", "VerifySelf")
			if f, err := c.next(wait); err != nil || f.Type != 3 || f.Error != "" {
				t.Errorf("%s: VerifySelf from %q: %+v %v", name, o, f, err)
			}
		}
	}
}

// TestNegotiateByGETAndPOST: the application's negotiate (redirect and
// direct hub) and the service's answer GET as POST: the vendor's raw
// browser sample and C++ client negotiate by GET.
func TestNegotiateByGETAndPOST(t *testing.T) {
	for _, direct := range []bool{false, true} {
		s, ts := newMock(t, mockhub.Config{DirectHub: direct})
		_, tok, _ := s.CreateDevice("", "")
		for _, method := range []string{"GET", "POST"} {
			// The raw sample sends X-DEVICE-TOKEN alone.
			st, _, body := send(t, method, ts.URL+"/device/negotiate?negotiateVersion=1", http.Header{"X-Device-Token": {tok.Token}})
			if st != 200 {
				t.Fatalf("direct=%v: %s /device/negotiate: %d %s", direct, method, st, body)
			}
			var neg negotiateAnswer
			decodeJSON(t, body, &neg)
			if direct {
				if neg.ConnectionToken == "" {
					t.Errorf("%s direct negotiate: %s", method, body)
				}
				continue
			}
			if neg.URL == "" || neg.AccessToken == "" {
				t.Fatalf("%s redirect: %s", method, body)
			}
			h := http.Header{"Authorization": {"Bearer " + neg.AccessToken}, "X-Device-Token": {tok.Token}}
			st, _, body = send(t, method, serviceNegotiateURL(neg.URL), h)
			var sneg negotiateAnswer
			if st == 200 {
				decodeJSON(t, body, &sneg)
			}
			if st != 200 || sneg.ConnectionToken == "" {
				t.Errorf("%s /client/negotiate: %d %s", method, st, body)
			}
		}
		kinds := 0
		for _, e := range s.Events(0) {
			if e.Action == "negotiate-redirect" || e.Action == "service-negotiate" {
				kinds++
			}
		}
		if want := map[bool]int{false: 4, true: 0}[direct]; kinds != want {
			t.Errorf("direct=%v: %d negotiations journaled, want %d", direct, kinds, want)
		}
	}
}

func TestParseCORSOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"*":                       "*",
		"http://localhost:3000":   "http://localhost:3000",
		" HTTP://LocalHost:3000/": "http://localhost:3000",
		"https://app.example:443": "https://app.example",
		"http://app.example:80":   "http://app.example",
		"http://[::1]:8080":       "http://[::1]:8080",
	} {
		if got, err := mockhub.ParseCORSOrigin(in); err != nil || got != want {
			t.Errorf("ParseCORSOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "localhost:3000", "ftp://x", "http://", "http://x/path", "http://x?q", "http://u:p@x", "http://x#f", "null"} {
		if _, err := mockhub.ParseCORSOrigin(in); !errors.Is(err, mockhub.ErrBadCORSOrigin) {
			t.Errorf("ParseCORSOrigin(%q): %v, want ErrBadCORSOrigin", in, err)
		}
	}
	if _, err := mockhub.New(mockhub.Config{CORSOrigins: []string{"localhost"}}); !errors.Is(err, mockhub.ErrBadCORSOrigin) {
		t.Errorf("New with a bad origin: %v", err)
	}
}

func decodeJSON(t *testing.T, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
}
