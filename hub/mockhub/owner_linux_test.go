package mockhub_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testenv"
)

// The admin API, the console and the journal stream belong to the user
// who started the mock: a second local user (created for the test, for
// real: the kernel names the peer's socket) is refused 403 on every
// /mock route, and nothing they asked for happens; the owner is served.
func TestAnotherUserIsRefusedTheAdminAPI(t *testing.T) {
	stranger := testenv.NewUser(t)
	s, err := mockhub.New(mockhub.Config{Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	base := serveReal(t, s)
	dev, tok, err := s.CreateDevice(mockhub.DefaultDeviceTypeID, "owner's")
	if err != nil {
		t.Fatal(err)
	}
	before := len(s.Events(0))
	var admin [][2]string
	for _, p := range mockPaths(s, dev.ID, tok.ID) {
		if strings.HasPrefix(p[1], "/mock") {
			admin = append(admin, p)
		}
	}
	if len(admin) != len(s.AdminRoutes()) {
		t.Fatalf("%d admin routes to try, the mock lists %d", len(admin), len(s.AdminRoutes()))
	}
	stream := http.Header{"Accept": {"text/event-stream"}}
	json := http.Header{"Content-Type": {"application/json"}}
	for _, p := range admin {
		if got := testenv.CurlAs(t, stranger, p[0], base+p[1], json); got != http.StatusForbidden {
			t.Errorf("uid %d, %s %s: %d, want 403", stranger.UID, p[0], p[1], got)
		}
	}
	for _, path := range []string{"/mock/journal", "/mock/events"} {
		if got := testenv.CurlAs(t, stranger, "GET", base+path, stream); got != http.StatusForbidden {
			t.Errorf("uid %d, the journal stream at %s: %d, want 403", stranger.UID, path, got)
		}
	}
	// The service's routes answer anyone who names the mock.
	if got := testenv.CurlAs(t, stranger, "GET", base+mockhub.OpenAPIPath, nil); got != http.StatusOK {
		t.Errorf("uid %d, the explorer's document: %d, want 200", stranger.UID, got)
	}
	if got := s.Events(0); len(got) != before {
		t.Errorf("the stranger's requests reached the journal: %+v", got[before:])
	}
	if len(s.Devices()) != 1 || s.Devices()[0].Tokens[0].IsDisabled || len(s.Devices()[0].Tokens) != 1 {
		t.Errorf("the stranger changed the devices: %+v", s.Devices())
	}

	// The owner: every read is served, the console and the stream too.
	for _, p := range admin {
		if p[0] != "GET" {
			continue
		}
		if code, _, body := call(t, "GET", base+p[1], "", nil, nil); code != http.StatusOK {
			t.Errorf("the owner, GET %s: %d %s", p[1], code, body)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/mock/journal", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("the owner's journal stream: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if code, _, body := call(t, "POST", base+"/mock/tokens/"+tok.ID+"/disable", "", nil, nil); code != http.StatusOK {
		t.Errorf("the owner disabling a token: %d %s", code, body)
	}
}
