package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/hubgate/hubgate/internal/localhttp"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/oauth"
)

// mock is the demo's mock remote service, served on 127.0.0.1:<any port>.
type mock struct {
	srv  *mockhub.Server
	base string
	stop func()
}

// startMock serves a mock remote service on 127.0.0.1:0.
func startMock(log *slog.Logger) (*mock, error) {
	srv, err := mockhub.New(mockhub.Config{Logger: log.With("component", "mock")})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("demo: mock: %w", err)
	}
	serving := localhttp.Serve(srv.NewHTTPServer(), ln)
	go func() {
		<-serving.Done()
		if err := serving.Err(); err != nil {
			log.Error("mock server", "err", err)
		}
	}()
	stop := func() {
		srv.Close()
		_ = serving.Stop(context.Background(), 10*time.Second)
	}
	return &mock{srv: srv, base: "http://" + ln.Addr().String(), stop: stop}, nil
}

// paired is what pairing left: the device and the store of its secrets.
type paired struct {
	device *deviceapi.UserDevice
	store  configs.SecretStore
}

// pair pairs a new User Device with the mock as `hubgate pair` does
// (package pairing), keeping the refresh token and the device token in a
// memory store.
func (r *run) pair(ctx context.Context, m *mock) (*paired, error) {
	ctx, cancelStart := context.WithTimeout(ctx, r.o.StartTimeout)
	defer cancelStart()
	httpClient := &http.Client{Timeout: 30 * time.Second}
	mc := m.srv.Config()
	r.say("pair", nil, "2. pairing, as 'hubgate pair' does, with every secret kept in memory")

	loginCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	res, err := pairing.Pair(loginCtx, pairing.Options{
		OAuth: oauth.Config{APIURL: m.base, ClientID: mc.ClientID, // no secret, as the vendor's clients
			HTTPClient: httpClient, Logger: r.log.With("component", "oauth")},
		Login: oauth.LoginOptions{Out: io.Discard, OpenBrowser: inProcessBrowser(httpClient, cancel),
			Getenv: func(string) string { return "" }, Timeout: r.o.StartTimeout},
		DeviceTypeID: mc.DeviceTypeID,
		DeviceName:   DeviceName,
		UserAgent:    "hubgate/" + r.o.Version + " (demo)",
		Progress:     func(p pairing.Progress) { r.pairingStep(p, mc.DeviceTypeID) },
	})
	if err != nil {
		if c := context.Cause(loginCtx); c != nil && ctx.Err() == nil {
			err = c
		}
		return nil, fmt.Errorf("demo: %w", err)
	}
	// Nothing is paired in the demo's memory store: the secrets take the
	// base account names; there is no state file to commit.
	store := configs.NewMemoryStore()
	if _, _, err := res.Commit(ctx, pairing.CommitOptions{
		Store: store, Committed: pairing.SlotB, Save: func(string) error { return nil },
	}); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	return &paired{device: res.Device, store: store}, nil
}

// inProcessBrowser opens the sign-in page with httpClient, following its
// redirect to the loopback callback like a browser; a failure ends the
// sign-in (fail) with the reason.
func inProcessBrowser(httpClient *http.Client, fail context.CancelCauseFunc) func(string) error {
	return func(u string) error {
		go func() {
			resp, err := httpClient.Get(u)
			if err != nil {
				var ue *url.Error
				if errors.As(err, &ue) {
					err = ue.Err // the URL carries the state or the code
				}
				fail(fmt.Errorf("the in-process browser could not load the sign-in pages: %w", err))
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
		return nil
	}
}

// pairingStep narrates one step of the pairing.
func (r *run) pairingStep(p pairing.Progress, deviceTypeID string) {
	switch p.Step {
	case pairing.StepSignIn:
		r.say("sign-in", p.Fields, "   signing in at %s; an in-process client plays the browser and the mock approves", p.Fields["authUrl"])
	case pairing.StepSignedIn:
		r.say("signed-in", p.Fields, "   signed in: the code was exchanged at %s for an access and a refresh token (in memory)", p.Fields["tokenUrl"])
	case pairing.StepDevice:
		if _, ok := p.Fields["deviceId"]; ok {
			r.say("device", p.Fields, "   created User Device %s (%q, device type %s)", p.Fields["deviceId"], DeviceName, deviceTypeID)
		}
	case pairing.StepDeviceToken:
		r.say("device-token", p.Fields, "   created device token %s (the token itself stays in memory)", p.Fields["tokenId"])
	case pairing.StepConfirmed:
		r.say("confirmed", p.Fields, "   confirmed: GET /api/Device/userDevices/%s answers the device (not yet connected)", p.Fields["deviceId"])
	}
}
