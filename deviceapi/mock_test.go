package deviceapi_test

// End-to-end tests of the REST client against the mock remote service
// (hub/mockhub), signed in through package oauth.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
	"github.com/hubgate/hubgate/oauth"
)

func startMock(t *testing.T, wrap func(http.Handler) http.Handler) (*mockhub.Server, string) {
	t.Helper()
	m := mockhubtest.Start(t, mockhubtest.Options{Wrap: wrap})
	return m.Server, m.URL
}

// userToken signs in at the mock.
func userToken(t *testing.T, apiURL string) oauth2.TokenSource {
	t.Helper()
	c, err := oauth.New(oauth.Config{APIURL: apiURL, ClientID: mockhub.DefaultClientID, ClientSecret: mockhub.DefaultClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.Login(context.Background(), oauth.LoginOptions{
		Out: io.Discard, Timeout: time.Minute,
		OpenBrowser: func(u string) error {
			go func() {
				if resp, err := http.Get(u); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c.TokenSource(context.Background(), tok, oauth.TokenSourceOptions{})
}

func TestClientAgainstTheMock(t *testing.T) {
	m, apiURL := startMock(t, nil)
	c, err := deviceapi.New(deviceapi.Config{BaseURL: apiURL, TokenSource: userToken(t, apiURL)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dev, err := c.CreateDevice(ctx, mockhub.DefaultDeviceTypeID, "desk & pad")
	if err != nil {
		t.Fatal(err)
	}
	if dev.NameOverride != "desk & pad" || dev.IsVerified || dev.IsConnected || dev.IsListening || dev.IsAutoListen || dev.IsOptimisticModel || dev.CurrentProfile != nil {
		t.Fatalf("new device %+v", dev)
	}
	tok, err := c.CreateToken(ctx, dev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tok.UserDeviceID != dev.ID || tok.Token == "" || tok.IsDisabled {
		t.Fatalf("token %v", tok)
	}
	got, err := c.GetDevice(ctx, dev.ID)
	if err != nil || got.ID != dev.ID {
		t.Fatalf("get %+v %v", got, err)
	}
	devs := m.Devices()
	if len(devs) != 1 || devs[0].DeviceTypeID != mockhub.DefaultDeviceTypeID || len(devs[0].Tokens) != 1 || devs[0].Tokens[0].ID != tok.ID {
		t.Fatalf("mock devices %+v", devs)
	}

	_, err = c.GetDevice(ctx, "no-such-device")
	if !errors.Is(err, deviceapi.ErrNotFound) {
		t.Errorf("unknown device: %v", err)
	}
	_, err = c.CreateDevice(ctx, "no-such-type", "x")
	if !errors.Is(err, deviceapi.ErrNotFound) {
		t.Errorf("unknown type: %v", err)
	}

	bogus, _ := deviceapi.New(deviceapi.Config{BaseURL: apiURL, TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "not-a-token-123"})})
	_, err = bogus.GetDevice(ctx, dev.ID)
	if !errors.Is(err, deviceapi.ErrUnauthorized) || strings.Contains(err.Error(), "not-a-token-123") {
		t.Errorf("bogus bearer: %v", err)
	}
}

// A 503 on the POST is never retried against the real routes either: the
// mock ends up with exactly as many devices as accepted requests.
func TestPostNotRetriedAgainstTheMock(t *testing.T) {
	fail := true
	m, apiURL := startMock(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == "POST" && strings.Contains(r.URL.Path, "/new/") && fail {
				// Let the mock create the device, then lose the answer.
				h.ServeHTTP(httptest.NewRecorder(), r)
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	c, _ := deviceapi.New(deviceapi.Config{BaseURL: apiURL, TokenSource: userToken(t, apiURL), RetryWait: time.Millisecond})
	_, err := c.CreateDevice(context.Background(), mockhub.DefaultDeviceTypeID, "once")
	var ae *deviceapi.APIError
	if !errors.As(err, &ae) || ae.Status != 503 {
		t.Fatalf("err %v", err)
	}
	if n := len(m.Devices()); n != 1 {
		t.Errorf("%d devices on the service after one failed POST", n)
	}
}
