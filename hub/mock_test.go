package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testutil"
)

// mockEnv is the real mock hub (hub/mockhub) served at an address that
// survives a kill: kill closes the listener and drops every hub
// connection, restart serves the same mock (its devices and tokens, as a
// real service keeps them in its database) at the same address again.
// The hub and its SignalR service listen on an in-memory network
// (testutil.PipeNet), so that a test runs them and the client in one
// synctest bubble; on loopback sockets for the official client and the
// benchmarks.
type mockEnv struct {
	t      testing.TB
	mock   *mockhub.Server
	addr   string
	dev    deviceapi.UserDevice
	tok    deviceapi.DeviceToken
	listen func(network, address string) (net.Listener, error)
	client *http.Client // reaches the mock; nil on loopback sockets (any client does)

	mu  sync.Mutex
	srv *http.Server
}

// newMockEnv serves the mock on an in-memory network: call it inside the
// test's synctest bubble.
func newMockEnv(t testing.TB, cfg mockhub.Config) *mockEnv {
	t.Helper()
	pn := &testutil.PipeNet{}
	cfg.Listen = pn.Listen
	// The kernel does not know the network's connections: both ends are
	// this process's (the mock's admin API answers only its own user).
	cfg.PeerUID = func(_, _ netip.AddrPort) (int, error) { return os.Geteuid(), nil }
	return serveMock(t, cfg, pn.Listen, pn.Client(t))
}

// newLoopbackMockEnv serves the mock on loopback sockets, for the
// official client (another process) and the benchmarks (real time).
func newLoopbackMockEnv(t testing.TB, cfg mockhub.Config) *mockEnv {
	t.Helper()
	return serveMock(t, cfg, net.Listen, nil)
}

func serveMock(t testing.TB, cfg mockhub.Config, listen func(network, address string) (net.Listener, error), client *http.Client) *mockEnv {
	t.Helper()
	m, err := mockhub.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &mockEnv{t: t, mock: m, addr: ln.Addr().String(), listen: listen, client: client}
	e.serve(ln)
	e.dev, e.tok, err = m.CreateDevice("", "hub test device")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.kill()
		m.Close()
	})
	return e
}

func (e *mockEnv) serve(ln net.Listener) {
	srv := &http.Server{Handler: e.mock, ReadHeaderTimeout: 10 * time.Second}
	e.mu.Lock()
	e.srv = srv
	e.mu.Unlock()
	go srv.Serve(ln)
}

func (e *mockEnv) url() string { return "http://" + e.addr + mockhub.HubPath }

// kill stops serving: the address refuses connections and every hub
// connection is dropped without a close frame.
func (e *mockEnv) kill() {
	e.mu.Lock()
	srv := e.srv
	e.srv = nil
	e.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
	e.mock.DropConnections()
}

// restart serves again at the same address.
func (e *mockEnv) restart() {
	e.t.Helper()
	ln, err := e.listen("tcp", e.addr)
	if err != nil {
		e.t.Fatalf("restart on %s: %v", e.addr, err)
	}
	e.serve(ln)
}

// config is a client Config for the env's device with fast timings.
func (e *mockEnv) config(t testing.TB) Config {
	return Config{
		URL:           e.url(),
		HTTPClient:    e.client,
		DeviceID:      e.dev.ID,
		TokenSource:   staticToken(e.tok.Token),
		Logger:        newLogger(t, func() []string { return []string{e.tok.Token} }),
		Backoff:       Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond, Revoked: time.Minute},
		InvokeTimeout: 10 * time.Second,
		ProbeInterval: -1,
	}
}

// waitLogged waits for a mock log entry of this device with the action,
// after seq, and returns it.
func (e *mockEnv) waitLogged(t testing.TB, since int64, action string) mockhub.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ev, err := e.mock.WaitEvent(ctx, since, func(ev mockhub.Event) bool {
		return ev.Action == action && ev.DeviceID == e.dev.ID
	})
	if err != nil {
		t.Fatalf("mock log: no %s after #%d: %v", action, since, err)
	}
	return ev
}

func (e *mockEnv) lastSeq() int64 {
	evs := e.mock.Events(0)
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
}

func TestMockHandshakeAndEveryEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newMockEnv(t, mockhub.Config{})
		c := start(t, must(New(env.config(t))))
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		verify := env.waitLogged(t, 0, "VerifySelf")
		latest := env.waitLogged(t, verify.Seq, "GetLatestDevice")
		if latest.ConnectionID != verify.ConnectionID {
			t.Errorf("VerifySelf and GetLatestDevice on different connections")
		}
		if d := c.Device(); d == nil || d.ID != env.dev.ID || !d.IsVerified {
			t.Errorf("Device() = %+v", d)
		}

		macro := &deviceapi.Macro{ID: "5f0c", Name: "Greet", Commands: []string{"hello"}, Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventKeyPress, Keys: []string{"H"}}}}
		if err := env.mock.PushCommand(env.dev.ID, "hello", macro); err != nil {
			t.Fatal(err)
		}
		profile := deviceapi.Profile{ID: "prof-1", Name: "Work", UserID: mockhub.UserID, ProfileType: "Standard",
			Configuration: deviceapi.Configuration{ProfileType: "Standard", Macros: []deviceapi.Macro{*macro}}}
		if _, err := env.mock.PushProfile(env.dev.ID, profile); err != nil {
			t.Fatal(err)
		}
		if err := env.mock.PushSettings(env.dev.ID, map[string]any{"volume": 3}); err != nil {
			t.Fatal(err)
		}
		if err := env.mock.Push(env.dev.ID, "DeviceType", map[string]any{"name": "keypad"}); err != nil {
			t.Fatal(err)
		}
		since := env.lastSeq()
		if err := env.mock.StartListening(env.dev.ID); err != nil {
			t.Fatal(err)
		}
		if err := env.mock.StopListening(env.dev.ID); err != nil {
			t.Fatal(err)
		}

		evs := make([]Event, 6)
		for i := range evs {
			evs[i] = nextEvent(t, c.Client, wait)
			if i > 0 && evs[i].Seq != evs[i-1].Seq+1 {
				t.Errorf("seq %d after %d", evs[i].Seq, evs[i-1].Seq)
			}
		}
		kinds := []Kind{KindDeviceCommand, KindDeviceProfileUpdate, KindDeviceSettingsUpdate, KindDeviceType, KindStartListening, KindStopListening}
		for i, k := range kinds {
			if evs[i].Kind != k {
				t.Errorf("event %d kind %s, want %s", i, evs[i].Kind, k)
			}
		}
		if e := evs[0]; e.Command != "hello" || e.Macro == nil || e.Macro.ID != "5f0c" || len(e.Macro.Events) != 1 || e.Macro.Events[0].Keys[0] != "H" {
			t.Errorf("DeviceCommand = %+v", e)
		}
		if e := evs[1]; e.Device == nil || e.Device.CurrentProfile == nil || e.Device.CurrentProfile.Name != "Work" {
			t.Errorf("DeviceProfileUpdate = %+v", e.Device)
		}
		if d := c.Device(); d.CurrentProfile == nil || d.CurrentProfile.ID != "prof-1" {
			t.Errorf("Device() after the profile update = %+v", d)
		}
		if string(evs[2].Payload) != `{"volume":3}` || string(evs[3].Payload) != `{"name":"keypad"}` {
			t.Errorf("payloads %s %s", evs[2].Payload, evs[3].Payload)
		}
		// The listening handshake reached the hub, in order.
		started := env.waitLogged(t, since, "DeviceStartedListening")
		stopped := env.waitLogged(t, started.Seq, "DeviceStoppedListening")
		if stopped.ConnectionID != verify.ConnectionID {
			t.Errorf("announcements on another connection")
		}
		synctest.Wait()
		if d, _ := env.mock.Device(env.dev.ID); d.IsListening {
			t.Errorf("the mock device still listening")
		}
		if s := c.Stats(); s.Sessions != 1 || s.Received != 6+2 { // and the device records of VerifySelf and GetLatestDevice
			t.Errorf("stats = %+v", s)
		}
	})
}

func TestMockBurstOf1000CommandsKeepsOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newMockEnv(t, mockhub.Config{})
		c := start(t, must(New(env.config(t))))
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		const n = 1000
		for i := 0; i < n; i++ {
			if err := env.mock.PushCommand(env.dev.ID, fmt.Sprintf("cmd-%04d", i), nil); err != nil {
				t.Fatal(err)
			}
		}
		var prev uint64
		for i := 0; i < n; i++ {
			e := nextEvent(t, c.Client, wait)
			if want := fmt.Sprintf("cmd-%04d", i); e.Command != want {
				t.Fatalf("event %d = %q, want %q (order lost)", i, e.Command, want)
			}
			if prev != 0 && e.Seq != prev+1 {
				t.Fatalf("seq %d after %d", e.Seq, prev)
			}
			prev = e.Seq
		}
		if s := c.Stats(); s.Sessions != 1 || s.Dropped != 0 {
			t.Errorf("stats = %+v", s)
		}
	})
}

func TestMockUnexpectedArgumentsTolerated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newMockEnv(t, mockhub.Config{})
		c := start(t, must(New(env.config(t))))
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		connected := env.waitLogged(t, 0, "connected")
		pushes := []struct {
			target string
			args   []any
		}{
			{"DeviceSettingsUpdate", []any{1, "two", map[string]int{"three": 3}}},
			{"DeviceType", []any{"keypad", 2}},
			{"StartListening", []any{"now", true}},
			{"StopListening", []any{nil}},
			{"DeviceCommand", []any{"cmd", nil, "extra", 4}},
			{"DeviceCommand", []any{}},
			{"DeviceProfileUpdate", []any{"not a device"}},
			{"BrandNewMethod", []any{map[string]any{"x": 1}}},
			{"DeviceCommand", []any{"last"}},
		}
		for _, p := range pushes {
			if err := env.mock.Push(env.dev.ID, p.target, p.args...); err != nil {
				t.Fatal(err)
			}
		}
		for i, p := range pushes {
			e := nextEvent(t, c.Client, wait)
			if e.Target != p.target || len(e.Args) != len(p.args) {
				t.Errorf("event %d = %s with %d args, want %s with %d", i, e.Target, len(e.Args), p.target, len(p.args))
			}
		}
		// Same connection throughout: the mock saw no disconnect, and the
		// client is on its first session.
		for _, ev := range env.mock.Events(connected.Seq) {
			if ev.Action == "disconnected" {
				t.Errorf("the hub connection dropped: %+v", ev)
			}
		}
		if s := c.Stats(); s.Sessions != 1 || s.Attempts != 1 {
			t.Errorf("stats = %+v", s)
		}
		if n := env.mock.Connections(env.dev.ID); n != 1 {
			t.Errorf("mock connections = %d", n)
		}
	})
}

func TestMockKilledAndRestartedRestoresListening(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newMockEnv(t, mockhub.Config{})
		cfg := env.config(t)
		cfg.AutoListen = true
		c := start(t, must(New(cfg)))
		waitState(t, c.Client, "listening", wait, isStatus(StatusListening))
		first := env.waitLogged(t, 0, "DeviceStartedListening")

		env.kill()
		st := waitState(t, c.Client, "reconnecting", wait, isStatus(StatusReconnecting))
		if st.Cause != CauseNetwork {
			t.Errorf("state after the kill = %v", st)
		}
		// Attempts fail while the port is closed.
		waitState(t, c.Client, "failed attempts", wait, func(State) bool { return c.Stats().Attempts >= 3 })
		if d, _ := env.mock.Device(env.dev.ID); d.IsListening {
			t.Errorf("the mock still thinks the device listens")
		}
		env.restart()
		waitState(t, c.Client, "listening again", wait, func(s State) bool { return s.Status == StatusListening && s.Session > st.Session })
		again := env.waitLogged(t, first.Seq, "DeviceStartedListening")
		if again.ConnectionID == first.ConnectionID {
			t.Errorf("listening not announced on the new connection")
		}
		synctest.Wait()
		if d, _ := env.mock.Device(env.dev.ID); !d.IsListening {
			t.Errorf("the mock device not listening")
		}
		if s := c.Stats(); s.ListeningRestored != 1 || s.Reconnects != 1 {
			t.Errorf("stats = %+v", s)
		}
		// Events flow on the new connection.
		if err := env.mock.PushCommand(env.dev.ID, "after restart", nil); err != nil {
			t.Fatal(err)
		}
		if e := nextEvent(t, c.Client, wait); e.Command != "after restart" || e.Session != c.State().Session {
			t.Errorf("event = %+v", e)
		}
	})
}

// TestMockFrozenHubDetectedByProbe: the liveness probe, not the library's
// server timeout, notices a frozen mock hub, within two probe intervals on
// the bubble's clock (on the machine's, BenchmarkFrozenHubDetection's
// figure).
func TestMockFrozenHubDetectedByProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newMockEnv(t, mockhub.Config{})
		cfg := env.config(t)
		cfg.ProbeInterval = time.Second
		cfg.HandshakeTimeout = 2 * time.Second
		cfg.ServerTimeout = time.Minute // longer than wait: only the probe can notice
		c := start(t, must(New(cfg)))
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		frozenAt := time.Now()
		env.mock.Freeze(time.Hour)
		st := waitState(t, c.Client, "reconnecting", wait, isStatus(StatusReconnecting))
		if st.Cause != CauseUnresponsive || !errors.Is(st.Err, ErrUnresponsive) {
			t.Errorf("state = %v (err %v)", st, st.Err)
		}
		if took := time.Since(frozenAt); took > 2*cfg.ProbeInterval {
			t.Errorf("a frozen hub noticed after %s, want at most %s", took, 2*cfg.ProbeInterval)
		}
		if s := c.Stats(); s.ProbeFailures != 1 {
			t.Errorf("stats = %+v, want one probe failure", s)
		}
		env.mock.Freeze(0)
		waitState(t, c.Client, "connected again", wait, func(s State) bool { return s.Connected() && s.Session > st.Session })
	})
}

func TestMockTokenDisabledMeansRepair(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newMockEnv(t, mockhub.Config{})
		cfg := env.config(t)
		asked := make(chan struct{}, 10)
		cfg.OnRevoked = func(context.Context) error {
			asked <- struct{}{}
			return errors.New("no user session")
		}
		c := start(t, must(New(cfg)))
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		if _, err := env.mock.DisableToken(env.tok.ID); err != nil {
			t.Fatal(err)
		}
		st := waitState(t, c.Client, "re-pair state", wait, func(s State) bool { return s.NeedsRepair() })
		if st.Status != StatusReconnecting || !errors.Is(st.Err, ErrUnauthorized) {
			t.Errorf("state = %v", st)
		}
		if d := st.RetryAt.Sub(st.Since); d < cfg.Backoff.Revoked/2 {
			t.Errorf("retry after %s: a refused token must not be retried fast", d)
		}
		select {
		case <-asked:
		case <-time.After(wait):
			t.Errorf("OnRevoked was not called")
		}
		ev := env.waitLogged(t, 0, "rejected")
		if ev.Status != http.StatusUnauthorized {
			t.Errorf("mock rejection = %+v", ev)
		}
	})
}

func TestMockCleanShutdownSendsStoppedListening(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newMockEnv(t, mockhub.Config{})
		cfg := env.config(t)
		cfg.AutoListen = true
		c := start(t, must(New(cfg)))
		waitState(t, c.Client, "listening", wait, isStatus(StatusListening))
		started := env.waitLogged(t, 0, "DeviceStartedListening")
		synctest.Wait()
		if d, _ := env.mock.Device(env.dev.ID); !d.IsListening {
			t.Errorf("the mock device not listening")
		}
		if err := c.stop(t); err != nil {
			t.Errorf("Run = %v", err)
		}
		stopped := env.waitLogged(t, started.Seq, "DeviceStoppedListening")
		gone := env.waitLogged(t, stopped.Seq, "disconnected")
		if stopped.ConnectionID != started.ConnectionID || gone.ConnectionID != started.ConnectionID {
			t.Errorf("stopped on %s, disconnected %s, started on %s", stopped.ConnectionID, gone.ConnectionID, started.ConnectionID)
		}
		if st := c.State(); st.Status != StatusStopped {
			t.Errorf("state = %v", st)
		}
	})
}

// The mock completes the WebSocket closing handshake of a client that
// stops, every time (the SignalR library it is built on leaves the
// connection open when its loop ends on the client's Close message first).
func TestMockCompletesTheClosingHandshake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newMockEnv(t, mockhub.Config{})
		for i := range 8 {
			sink := &logSink{}
			cfg := env.config(t)
			cfg.AutoListen = true
			cfg.Logger = slog.New(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: slog.LevelDebug}))
			c := start(t, must(New(cfg)))
			waitState(t, c.Client, "listening", wait, isStatus(StatusListening))
			if err := c.stop(t); err != nil {
				t.Fatalf("Run = %v", err)
			}
			if log := sink.String(); strings.Contains(log, "closing handshake") || !strings.Contains(log, "hub connection closed") {
				t.Fatalf("stop %d: the closing handshake did not complete:\n%s", i, log)
			}
		}
	})
}

// A hub that awaits a client result sends an invocation with an id; one
// that repeats it sends the same id twice on one connection. The client
// delivers both copies with the same (Session, InvocationID) (the bridge
// keys duplicates on it), answers each, and keeps the connection; a
// replacing Client numbers its connections after every earlier one.
func TestMockRepeatedInvocationKeepsItsIdentity(t *testing.T) {
	env := newMockEnv(t, mockhub.Config{})
	cfg := env.config(t)
	c := start(t, must(New(cfg)))
	st := waitState(t, c.Client, "connected", wait, func(s State) bool { return s.Connected() })
	since := env.lastSeq()
	if n, err := env.mock.PushAwaiting(env.dev.ID, "inv-1", 2, "DeviceCommand", "twice", nil); err != nil || n != 1 {
		t.Fatalf("PushAwaiting = %d, %v", n, err)
	}
	if err := env.mock.PushCommand(env.dev.ID, "after", nil); err != nil {
		t.Fatal(err)
	}
	a, b, after := nextEvent(t, c.Client, wait), nextEvent(t, c.Client, wait), nextEvent(t, c.Client, wait)
	if a.Command != "twice" || b.Command != "twice" || a.InvocationID != "inv-1" || b.InvocationID != "inv-1" ||
		a.Session != st.Session || b.Session != st.Session || a.Seq == b.Seq {
		t.Fatalf("the two copies: %+v / %+v", a, b)
	}
	if after.Command != "after" || after.InvocationID != "" || after.Session != st.Session {
		t.Fatalf("the send after them: %+v", after)
	}
	env.waitLogged(t, since, "result") // the client answered; the mock took the completion
	if s := c.Stats(); s.Reconnects != 0 || c.State().Session != st.Session {
		t.Fatalf("the connection did not survive the client results: %+v, state %+v", s, c.State())
	}

	// A second Client (a re-pairing swaps one in) never reuses a number.
	c2 := start(t, must(New(cfg)))
	st2 := waitState(t, c2.Client, "connected", wait, func(s State) bool { return s.Connected() })
	if st2.Session <= st.Session {
		t.Fatalf("the second client's connection is numbered %d, the first's %d", st2.Session, st.Session)
	}
}
