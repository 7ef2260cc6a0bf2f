package pairing_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
	"github.com/hubgate/hubgate/oauth"
)

func startMock(t *testing.T, cfg mockhub.Config) (*mockhub.Server, string) {
	t.Helper()
	m := mockhubtest.Start(t, mockhubtest.Options{Config: cfg})
	return m.Server, m.URL
}

// follow plays a browser that approves at once.
func follow(u string) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil
}

func options(apiURL string, steps *[]pairing.Step) pairing.Options {
	return pairing.Options{
		OAuth:        oauth.Config{APIURL: apiURL, ClientID: mockhub.DefaultClientID},
		Login:        oauth.LoginOptions{Out: io.Discard, OpenBrowser: follow, Timeout: 30 * time.Second},
		DeviceTypeID: mockhub.DefaultDeviceTypeID,
		DeviceName:   "pad",
		Progress:     func(p pairing.Progress) { *steps = append(*steps, p.Step) },
	}
}

func TestPairCreatesTheDeviceAndReportsEachStep(t *testing.T) {
	m, apiURL := startMock(t, mockhub.Config{AccessTokenTTL: time.Second})
	var steps []pairing.Step
	o := options(apiURL, &steps)
	res, err := pairing.Pair(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	devs := m.Devices()
	if len(devs) != 1 || res.Device.ID != devs[0].Device.ID || res.Token.ID != devs[0].Tokens[0].ID || res.Token.Token == "" || res.RefreshToken == "" || res.Reused {
		t.Fatalf("result %+v, mock %+v", res, devs)
	}
	want := []pairing.Step{pairing.StepSignIn, pairing.StepSignedIn, pairing.StepDevice, pairing.StepDevice, pairing.StepDeviceToken, pairing.StepConfirmed}
	if len(steps) != len(want) {
		t.Fatalf("steps %v, want %v", steps, want)
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Fatalf("steps %v, want %v", steps, want)
		}
	}
	// Reuse: only a new token.
	steps = nil
	o = options(apiURL, &steps)
	o.ReuseDeviceID = res.Device.ID
	again, err := pairing.Pair(context.Background(), o)
	if err != nil || !again.Reused || again.Device.ID != res.Device.ID || len(m.Devices()) != 1 || len(m.Devices()[0].Tokens) != 2 {
		t.Fatalf("reuse: %+v %v", again, err)
	}
}

func TestPairErrors(t *testing.T) {
	// A dead address: refused before any browser, matching ErrUnreachable.
	var steps []pairing.Step
	o := options("http://127.0.0.1:1", &steps)
	opened := false
	o.Login.OpenBrowser = func(string) error { opened = true; return nil }
	_, err := pairing.Pair(context.Background(), o)
	var se *pairing.SignInError
	if !errors.As(err, &se) || !errors.Is(err, oauth.ErrUnreachable) || !oauth.IsSignInError(err) || opened || len(steps) != 0 {
		t.Fatalf("dead address: %v (browser %v, steps %v)", err, opened, steps)
	}

	// An unknown device type: a *StepError after the sign-in.
	_, apiURL := startMock(t, mockhub.Config{})
	o = options(apiURL, &steps)
	o.DeviceTypeID = "nope"
	_, err = pairing.Pair(context.Background(), o)
	var ste *pairing.StepError
	if !errors.As(err, &ste) || ste.Step != "creating the device" || !errors.Is(err, deviceapi.ErrNotFound) || len(ste.Created) != 0 {
		t.Fatalf("unknown type: %v", err)
	}

	// A reused device that no longer exists.
	o = options(apiURL, &steps)
	o.ReuseDeviceID = "gone"
	if _, err = pairing.Pair(context.Background(), o); !errors.As(err, &ste) || ste.Step != "creating the device token" {
		t.Fatalf("gone device: %v", err)
	}
}

// A device token the service creates disabled stops the pairing: the hub
// would refuse it, so nothing is returned to store, and the error says
// disabled and what to do.
func TestPairStopsOnADisabledNewToken(t *testing.T) {
	m := mockhubtest.Start(t, mockhubtest.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/tokens") {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			var tok map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &tok); err != nil || rec.Code != http.StatusOK {
				t.Errorf("the mock's token answer: %d %v", rec.Code, err)
			}
			tok["isDisabled"] = true // as a service would answer for a disabled device
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(tok)
		})
	}})
	var steps []pairing.Step
	dev, _, err := m.CreateDevice(mockhub.DefaultDeviceTypeID, "pad")
	if err != nil {
		t.Fatal(err)
	}
	o := options(m.URL, &steps)
	o.ReuseDeviceID = dev.ID
	res, err := pairing.Pair(context.Background(), o)
	var ste *pairing.StepError
	if res != nil || !errors.As(err, &ste) || !errors.Is(err, pairing.ErrTokenDisabled) || ste.Step != "creating the device token" ||
		!strings.Contains(err.Error(), "disabled") || !strings.Contains(err.Error(), "pair --replace") || len(ste.Created) != 1 {
		t.Fatalf("a disabled new token: %v %v", res, err)
	}
}
