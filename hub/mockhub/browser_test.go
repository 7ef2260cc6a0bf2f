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

// TestBrowserDeviceOnAnotherOrigin: a page of ours, served from its own
// origin as the vendor's browser sample is, signs in through the mock's
// /signin, pairs over REST, negotiates by GET, and connects with the
// official @microsoft/signalr client (its defaults: credentials sent,
// WebSockets first) through the negotiate redirect to the mock's SignalR
// service, over WebSockets, not a fallback; it receives a pushed command.
func TestBrowserDeviceOnAnotherOrigin(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	root := testenv.ModuleRoot(t)
	signalrJS := testenv.NpmBin(t, "@microsoft/signalr/dist/browser/signalr.js")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(root, "hub/mockhub/testdata/browser-device/index.html"))
	})
	mux.HandleFunc("GET /signalr.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, signalrJS) })
	page := httptest.NewServer(mux) // 127.0.0.1, another port: another origin
	t.Cleanup(page.Close)

	shot := testenv.ArtifactPath(t, "mock-browser-device.png")
	q := url.Values{"api": {ts.URL}, "client_id": {mockhub.DefaultClientID}, "device_type": {mockhub.DefaultDeviceTypeID}}
	macro := deviceapi.Macro{ID: "m-wave", Name: "Wave", Commands: []string{"wave"},
		Events: []deviceapi.MacroEvent{{EventType: "Type", Extra: map[string]json.RawMessage{"typedPhrase": json.RawMessage(`"hello"`)}}}}
	var deviceID string
	var result struct {
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
	testenv.RunBrowserScript(t, "mock-browser-device-e2e.cjs",
		[]string{"PAGE_URL=" + page.URL + "/?" + q.Encode(), "SCREENSHOT=" + shot},
		func() {
			devs := s.Devices()
			if len(devs) != 1 {
				t.Fatalf("%d devices after the page paired, want 1", len(devs))
			}
			deviceID = devs[0].Device.ID
			if err := s.PushCommand(deviceID, "wave", &macro); err != nil {
				t.Fatalf("push: %v", err)
			}
		}, &result)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
	log := strings.Join(result.ClientLog, "\n")

	// Paired through the sign-in page: the page went to the mock's /signin
	// and came back with a code.
	if result.Origin != page.URL || result.Origin == ts.URL || !result.SignedIn || result.Error != "" {
		t.Errorf("page origin %q (mock %s), signed in %v, error %q", result.Origin, ts.URL, result.SignedIn, result.Error)
	}
	if len(result.Navigations) < 3 || result.Navigations[1] != ts.URL+"/signin" || result.Navigations[2] != page.URL+"/" {
		t.Errorf("navigations %q, want the page, the mock's /signin, the page", result.Navigations)
	}
	if result.DeviceID != deviceID || result.Verified != deviceID {
		t.Errorf("page device %q, verified %q; the mock's %q", result.DeviceID, result.Verified, deviceID)
	}
	// GET /device/negotiate answered the redirect.
	if u, err := url.Parse(result.GetNegotiate.URL); err != nil || "http://"+u.Host != s.ServiceURL() || u.Path != "/client/" ||
		u.Query().Get("hub") != "devicehub" || !result.GetNegotiate.HasAccessToken {
		t.Errorf("GET negotiate: %+v", result.GetNegotiate)
	}

	// The command arrived, over WebSockets to the mock's SignalR service.
	if len(result.Commands) != 1 || result.Commands[0].Command != "wave" || result.Commands[0].Macro.ID != macro.ID {
		t.Errorf("commands received %+v", result.Commands)
	}
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
		if r.Type == "eventsource" || r.Path == "/client" && r.Method == "POST" {
			t.Errorf("a fallback transport's request: %+v", r)
		}
	}
	var transport any
	for _, e := range s.Events(0) {
		if e.Action == "connected" && e.DeviceID == deviceID {
			transport = e.Args["transport"]
		}
	}
	if transport != "websockets" {
		t.Errorf("the mock's journal: connected over %v, want websockets", transport)
	}
}
