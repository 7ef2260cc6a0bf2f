package mockhub_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// serveReal serves s on a loopback socket the way `hubgate mock` does
// (NewHTTPServer: the admin API's user asked once per connection) and
// returns its base URL.
func serveReal(t *testing.T, s *mockhub.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serving := localhttp.Serve(s.NewHTTPServer(), ln)
	t.Cleanup(func() {
		s.Close()
		_ = serving.Stop(t.Context(), wait)
	})
	return "http://" + ln.Addr().String()
}

// mockPaths is every route of the route table with its parameters filled
// in (a real device and token, a console file), plus the routes outside
// the table: the negotiates, the hub, the explorer and a route that does
// not exist.
func mockPaths(s *mockhub.Server, deviceID, tokenID string) [][2]string {
	fill := strings.NewReplacer("{id}", deviceID, "{userDeviceId}", deviceID, "{tokenId}", tokenID,
		"{deviceTypeId}", mockhub.DefaultDeviceTypeID, "{file}", "console.js")
	var out [][2]string
	for _, rt := range mockhub.RouteTable(s) {
		out = append(out, [2]string{rt[0], fill.Replace(rt[1])})
	}
	return append(out,
		[2]string{"POST", mockhub.HubPath + "/negotiate?negotiateVersion=1"},
		[2]string{"GET", mockhub.HubPath + "/negotiate?negotiateVersion=1"},
		[2]string{"GET", mockhub.HubPath},
		[2]string{"GET", "/swagger/"},
		[2]string{"GET", "/swagger/swagger-ui.css"},
		[2]string{"GET", mockhub.OpenAPIPath},
		[2]string{"GET", "/no/such/route"},
		[2]string{"OPTIONS", "/signin/token"},
	)
}

// A DNS rebinding page names its own host: every route of the mock, on
// both of its listeners, answers it 403 and does nothing, while the same
// requests naming the mock are not refused.
func TestAForeignHostIsRefusedEverywhere(t *testing.T) {
	s, err := mockhub.New(mockhub.Config{Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	base := serveReal(t, s)
	dev, tok, err := s.CreateDevice(mockhub.DefaultDeviceTypeID, "rebound")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	svc := s.ServiceURL()
	_, svcPort, _ := net.SplitHostPort(strings.TrimPrefix(svc, "http://"))
	send := func(method, u, host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(`{"command":"#!write /etc/x"}`))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok.Token)
		req.Header.Set("Origin", "http://"+host)
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatalf("%s %s (Host %s): %v", method, u, host, err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return resp.StatusCode, b.String()
	}
	before := len(s.Events(0))
	paths := mockPaths(s, dev.ID, tok.ID)
	svcPaths := [][2]string{
		{"POST", mockhub.ServicePath + "/negotiate?hub=" + mockhub.ServiceHubName},
		{"GET", mockhub.ServicePath + "/?hub=" + mockhub.ServiceHubName},
		{"GET", "/no/such/route"},
	}
	for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1.evil.example:" + port, "localhost:1"} {
		for _, p := range paths {
			if code, body := send(p[0], base+p[1], host); code != http.StatusForbidden || !strings.Contains(body, "Host header") {
				t.Errorf("%s %s with Host %q: %d %s, want 403", p[0], p[1], host, code, body)
			}
		}
		h := strings.Replace(host, port, svcPort, 1)
		for _, p := range svcPaths {
			if code, body := send(p[0], svc+p[1], h); code != http.StatusForbidden || !strings.Contains(body, "Host header") {
				t.Errorf("service %s %s with Host %q: %d %s, want 403", p[0], p[1], h, code, body)
			}
		}
	}
	if got := s.Events(0); len(got) != before {
		t.Errorf("refused requests changed the journal: %+v", got[before:])
	}
	if d, _ := s.Device(dev.ID); d.ID == "" {
		t.Fatal("the device is gone")
	}
	for _, d := range s.Devices() {
		for _, tk := range d.Tokens {
			if tk.IsDisabled {
				t.Errorf("a refused request disabled token %s", tk.ID)
			}
		}
	}
	// The names the mock serves pass the check.
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port} {
		for _, p := range paths {
			if code, body := send(p[0], base+p[1], host); code == http.StatusForbidden && strings.Contains(body, "Host header") {
				t.Errorf("%s %s with Host %q refused: %s", p[0], p[1], host, body)
			}
		}
	}
	if code, body := send("GET", svc+svcPaths[2][1], "localhost:"+svcPort); code != http.StatusNotFound {
		t.Errorf("the service under its own name: %d %s", code, body)
	}
}

// A public URL adds its host to the names served: the explorer's
// redirect rule holds for it (and only for names served).
func TestAPublicURLIsServed(t *testing.T) {
	if _, err := mockhub.New(mockhub.Config{PublicURLs: []string{"http://mock.lan/path"}}); err == nil {
		t.Error("a public URL with a path was accepted")
	}
	s, err := mockhub.New(mockhub.Config{Logger: testLogger(), PublicURLs: []string{"HTTPS://Mock.Example/"}})
	if err != nil {
		t.Fatal(err)
	}
	base := serveReal(t, s)
	get := func(host, path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", base+path, nil)
		req.Host = host
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, host := range []string{"mock.example", "mock.example:443", "MOCK.example"} {
		if resp := get(host, mockhub.OpenAPIPath); resp.StatusCode != 200 {
			t.Errorf("Host %q: %d", host, resp.StatusCode)
		}
	}
	if resp := get("mock.example:8443", mockhub.OpenAPIPath); resp.StatusCode != 403 {
		t.Errorf("the public name on another port: %d", resp.StatusCode)
	}
	q := "/signin?response_type=code&client_id=" + mockhub.DefaultClientID + "&state=s&redirect_uri="
	resp := get("mock.example", q+"https://mock.example/swagger/")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "https://mock.example/swagger/?code=") {
		t.Errorf("the explorer's sign-in behind the public URL: %d %q", resp.StatusCode, loc)
	}
	resp = get("mock.example", q+"https://evil.example/swagger/")
	if loc := resp.Header.Get("Location"); strings.Contains(loc, "evil.example") {
		t.Errorf("the sign-in sent a code to another origin: %d %q", resp.StatusCode, loc)
	}
}
