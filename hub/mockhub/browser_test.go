package mockhub_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testenv"
)

// browserResult is what the browser device page and its script report.
type browserResult struct {
	Origin       string
	SignedIn     bool
	DeviceID     string
	Verified     string
	Transport    string
	Error        string
	GetNegotiate struct {
		URL            string
		HasAccessToken bool
	}
	ClientLog []string
	Commands  []struct {
		Command string
		Macro   deviceapi.Macro
	}
	Sockets []struct {
		URL            string
		FramesReceived int
		Closed         bool
	}
	HubRequests []struct{ Method, Path, Type string }
	Navigations []string
}

// browserPage serves the browser device page and the official client's
// browser bundle on a loopback origin of its own.
func browserPage(t *testing.T) *httptest.Server {
	t.Helper()
	root := testenv.ModuleRoot(t)
	signalrJS := testenv.NpmBin(t, "@microsoft/signalr/dist/browser/signalr.js")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(root, "hub/mockhub/testdata/browser-device/index.html"))
	})
	mux.HandleFunc("GET /signalr.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, signalrJS) })
	page := httptest.NewServer(mux) // 127.0.0.1, another port than the mock's: another origin
	t.Cleanup(page.Close)
	return page
}

var waveMacro = deviceapi.Macro{ID: "m-wave", Name: "Wave", Commands: []string{"wave"},
	Events: []deviceapi.MacroEvent{{EventType: "Type", Extra: map[string]json.RawMessage{"typedPhrase": json.RawMessage(`"hello"`)}}}}

// runBrowserDevice loads the page (transport: the client's transport
// option, "" for its default) in Chromium against the mock at api; once
// the page is connected it pushes waveMacro to the device it paired. It
// returns what the page reported and the device's id.
func runBrowserDevice(t *testing.T, s *mockhub.Server, api string, page *httptest.Server, transport, shot string) (browserResult, string) {
	t.Helper()
	q := url.Values{"api": {api}, "client_id": {mockhub.DefaultClientID}, "device_type": {mockhub.DefaultDeviceTypeID}}
	if transport != "" {
		q.Set("transport", transport)
	}
	var deviceID string
	var result browserResult
	testenv.RunBrowserScript(t, "mock-browser-device-e2e.cjs",
		[]string{"PAGE_URL=" + page.URL + "/?" + q.Encode(), "SCREENSHOT=" + shot},
		func() {
			devs := s.Devices()
			if len(devs) != 1 {
				t.Fatalf("%d devices after the page paired, want 1", len(devs))
			}
			deviceID = devs[0].Device.ID
			if err := s.PushCommand(deviceID, "wave", &waveMacro); err != nil {
				t.Fatalf("push: %v", err)
			}
		}, &result)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
	if result.Error != "" || len(result.Commands) != 1 || result.Commands[0].Command != "wave" || result.Commands[0].Macro.ID != waveMacro.ID {
		t.Errorf("page error %q, commands received %+v", result.Error, result.Commands)
	}
	if result.DeviceID != deviceID || result.Verified != deviceID {
		t.Errorf("page device %q, verified %q; the mock's %q", result.DeviceID, result.Verified, deviceID)
	}
	return result, deviceID
}

// connectedOver is the transport of the device's last hub connection in
// the mock's journal.
func connectedOver(s *mockhub.Server, deviceID string) any {
	var transport any
	for _, e := range s.Events(0) {
		if e.Action == "connected" && e.DeviceID == deviceID {
			transport = e.Args["transport"]
		}
	}
	return transport
}

// TestBrowserDeviceOnAnotherOrigin: a page of ours, served from its own
// origin as the vendor's browser sample is, signs in through the mock's
// /signin, pairs over REST, negotiates by GET, and connects with the
// official @microsoft/signalr client (its defaults: credentials sent,
// WebSockets first) through the negotiate redirect to the mock's SignalR
// service, over WebSockets, not a fallback; it receives a pushed command.
func TestBrowserDeviceOnAnotherOrigin(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	page := browserPage(t)
	result, deviceID := runBrowserDevice(t, s, ts.URL, page, "", testenv.ArtifactPath(t, "mock-browser-device.png"))
	log := strings.Join(result.ClientLog, "\n")

	// Paired through the sign-in page: the page went to the mock's /signin
	// and came back with a code.
	if result.Origin != page.URL || result.Origin == ts.URL || !result.SignedIn {
		t.Errorf("page origin %q (mock %s), signed in %v", result.Origin, ts.URL, result.SignedIn)
	}
	if len(result.Navigations) < 3 || result.Navigations[1] != ts.URL+"/signin" || result.Navigations[2] != page.URL+"/" {
		t.Errorf("navigations %q, want the page, the mock's /signin, the page", result.Navigations)
	}
	// GET /device/negotiate answered the redirect.
	if u, err := url.Parse(result.GetNegotiate.URL); err != nil || "http://"+u.Host != s.ServiceURL() || u.Path != "/client/" ||
		u.Query().Get("hub") != "devicehub" || !result.GetNegotiate.HasAccessToken {
		t.Errorf("GET negotiate: %+v", result.GetNegotiate)
	}

	// The command arrived over WebSockets to the mock's SignalR service.
	if result.Transport != "WebSocketTransport" || !strings.Contains(log, "Selecting transport 'WebSockets'") {
		t.Errorf("transport %q; log:\n%s", result.Transport, log)
	}
	for _, bad := range []string{"Failed to start the transport", "Selecting transport 'ServerSentEvents'", "Selecting transport 'LongPolling'"} {
		if strings.Contains(log, bad) {
			t.Errorf("the client's log says %q", bad)
		}
	}
	if len(result.Sockets) != 1 || result.Sockets[0].URL != strings.Replace(s.ServiceURL(), "http", "ws", 1)+"/client/" || result.Sockets[0].FramesReceived < 2 {
		t.Errorf("WebSockets opened: %+v", result.Sockets)
	}
	for _, r := range result.HubRequests {
		if r.Type == "eventsource" || r.Path == "/client/" && r.Method == "POST" {
			t.Errorf("a fallback transport's request: %+v", r)
		}
	}
	if got := connectedOver(s, deviceID); got != "websockets" {
		t.Errorf("the mock's journal: connected over %v, want websockets", got)
	}
}

// TestBrowserDeviceOverSSEFromAnAllowedOrigin: with the origins narrowed
// to the page's (--cors-origin), the same page reaches everything, and
// the hub answers the official client's SSE transport cross-origin too
// (a credentialed EventSource, and its sends, which are preflighted).
func TestBrowserDeviceOverSSEFromAnAllowedOrigin(t *testing.T) {
	page := browserPage(t)
	s, ts := newMock(t, mockhub.Config{CORSOrigins: []string{page.URL}})
	result, deviceID := runBrowserDevice(t, s, ts.URL, page, "ServerSentEvents", testenv.ArtifactPath(t, "mock-browser-device-sse.png"))
	if result.Transport != "ServerSentEventsTransport" || len(result.Sockets) != 0 {
		t.Errorf("transport %q, WebSockets %+v", result.Transport, result.Sockets)
	}
	if got := connectedOver(s, deviceID); got != "sse" {
		t.Errorf("the mock's journal: connected over %v, want sse", got)
	}
}
