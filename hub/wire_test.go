package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/hubgate/hubgate/internal/testutil"
)

const (
	testDevice = "dev-7f3a"
	testToken  = "tok-SECRET-0123456789abcdef"
	// wait bounds every wait of a test, only ever reached by a failing
	// one: in a synctest bubble on its clock, so that what the client does
	// within it (a reconnect, a probe noticing a frozen hub) is part of
	// the assertion; on the real clock for the loopback tests.
	wait = testutil.DefaultTimeout
)

// wireConfig is a Config against the peer with fast timings.
func wireConfig(t testing.TB, p *peer, tok *atomic.Value) Config {
	if tok == nil {
		tok = &atomic.Value{}
		tok.Store(testToken)
	}
	return Config{
		URL:        p.url(),
		HTTPClient: p.client,
		DeviceID:   testDevice,
		TokenSource: func(context.Context) (string, error) {
			return tok.Load().(string), nil
		},
		Logger:        newLogger(t, func() []string { return []string{testToken, tok.Load().(string)} }),
		Backoff:       Backoff{Initial: 10 * time.Millisecond, Max: 200 * time.Millisecond, Jitter: -1, Revoked: 5 * time.Second},
		InvokeTimeout: 5 * time.Second,
		ProbeInterval: -1,
	}
}

func TestWireHandshakeHeadersAndSetup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		cfg := wireConfig(t, p, nil)
		cfg.AutoListen = true
		c := start(t, must(New(cfg)))
		pc := p.nextConn(t, wait)

		// The handshake request as the official clients send it.
		pc.mu.Lock()
		hs := pc.handshake
		pc.mu.Unlock()
		if hs.Protocol != "json" || hs.Version != 1 || !strings.HasSuffix(hs.raw, "\x1e") {
			t.Errorf("handshake request = %q", hs.raw)
		}
		// The token as bearer and X-Device-Token on the negotiate and on the upgrade.
		neg := p.negotiateHeaders()
		up := p.upgradeRequests()
		if len(neg) != 1 || len(up) != 1 {
			t.Fatalf("negotiates %d, upgrades %d", len(neg), len(up))
		}
		for name, h := range map[string]http.Header{"negotiate": neg[0], "upgrade": up[0].Header} {
			if got := h.Get("Authorization"); got != "Bearer "+testToken {
				t.Errorf("%s Authorization = %q", name, got)
			}
			if got := h.Get("X-Device-Token"); got != testToken {
				t.Errorf("%s X-Device-Token = %q", name, got)
			}
		}
		if id := queryOf(up[0]).Get("id"); id != "ctok-1" {
			t.Errorf("upgrade id = %q, want the connection token of negotiate v1", id)
		}
		if strings.Contains(up[0].URL.RawQuery, testToken) {
			t.Errorf("the token is in the upgrade query")
		}

		// VerifySelf, then GetLatestDevice, then DeviceStartedListening (auto-listen).
		got := pc.expect(t, "DeviceStartedListening", wait, func(r rec) bool { return r.Type == 1 })
		if got.Target != "DeviceStartedListening" || got.id() == "" {
			t.Errorf("first non-setup call = %s", got.raw)
		}
		var targets []string
		for _, r := range pc.records() {
			if r.Type == 1 {
				targets = append(targets, r.Target)
			}
		}
		if want := "VerifySelf,GetLatestDevice,DeviceStartedListening"; strings.Join(targets, ",") != want {
			t.Errorf("calls = %v, want %s", targets, want)
		}
		st := waitState(t, c.Client, "listening", wait, isStatus(StatusListening))
		if st.Cause != CauseNone || st.Session == 0 {
			t.Errorf("listening state = %+v", st)
		}
		d := c.Device()
		if d == nil || d.ID != testDevice || string(d.Extra["peerExtra"]) != "7" {
			t.Errorf("Device() = %+v", d)
		}
		if !c.Listening() {
			t.Errorf("Listening() = false")
		}
		pc.checkNoBadCompletion(t)
	})
}

func TestWirePingsBothWays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		p.pingEvery.Store(int64(50 * time.Millisecond))
		cfg := wireConfig(t, p, nil)
		cfg.KeepAlive = 50 * time.Millisecond
		cfg.ServerTimeout = time.Second
		c := start(t, must(New(cfg)))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))

		// The client pings while idle, and the hub's pings keep it connected
		// well past its server timeout.
		time.Sleep(2 * cfg.ServerTimeout)
		synctest.Wait()
		if n := pc.pingCount(); n < 30 {
			t.Fatalf("%d client pings in %s, want 30 or more", n, 2*cfg.ServerTimeout)
		}
		if s := c.Stats(); s.Sessions != 1 || s.Attempts != 1 {
			t.Fatalf("stats after pings = %+v, want one connection", s)
		}

		// The hub goes silent (socket open): the server timeout drops it.
		pc.frozen.Store(true)
		st := waitState(t, c.Client, "reconnecting", wait, isStatus(StatusReconnecting))
		if st.Cause != CauseUnresponsive {
			t.Errorf("state after silence = %v, want cause unresponsive", st)
		}
		p.nextConn(t, wait)
		waitState(t, c.Client, "connected again", wait, func(s State) bool { return s.Connected() && s.Session > 1 })
	})
}

func TestWireInvocationsWithoutIDAndUnexpectedArity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		c := start(t, must(New(wireConfig(t, p, nil))))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))

		macro := `{"id":"6c1e","name":"Open","commands":["open"],"events":[{"eventType":"KeyPress","keys":["A"],"holdTimeMilliseconds":20,"isKeyLatch":false},{"eventType":"MouseMove","x":3}],"color":"red"}`
		device := fmt.Sprintf(`{"id":%q,"nameOverride":"n","isAutoListen":false,"currentProfile":{"id":"p1","name":"P","userId":"u","profileType":"x","configuration":{"profileType":"x","macros":[%s],"hotkeys":[{"k":1}]}}}`, testDevice, macro)
		// One WebSocket message with many records, arities the spec does not
		// show, an unknown target, an unknown message type, a stream
		// invocation and an invocation awaiting a result.
		pc.send(
			invocation("DeviceCommand", `"open"`, macro, `"extra"`, `{"more":true}`),
			invocation("DeviceSettingsUpdate", `1`, `"two"`, `{"three":3}`),
			invocation("DeviceType"),
			invocation("deviceType", `{"name":"keypad"}`, `2`),
			invocation("StartListening", `"now"`, `{"why":"user"}`),
			`{"type":9,"sequenceId":4}`,
			invocation("SomethingNew", `[1,2]`),
			`{"type":4,"invocationId":"s1","target":"Stream","arguments":[]}`,
			`{"type":1,"invocationId":"r1","target":"DeviceCommand","arguments":["with-id"]}`,
			invocation("DeviceCommand", `42`),
			invocation("DeviceProfileUpdate", device, `"x"`),
			invocation("StopListening", `1`, `2`),
		)
		// A record split across two messages.
		split := invocation("DeviceCommand", `"split"`, `null`) + "\x1e"
		pc.sendRaw([]byte(split[:17]), []byte(split[17:]))

		want := []struct {
			kind   Kind
			target string
			nargs  int
		}{
			{KindDeviceCommand, "DeviceCommand", 4},
			{KindDeviceSettingsUpdate, "DeviceSettingsUpdate", 3},
			{KindDeviceType, "DeviceType", 0},
			{KindDeviceType, "deviceType", 2},
			{KindStartListening, "StartListening", 2},
			{KindOther, "SomethingNew", 1},
			{KindDeviceCommand, "DeviceCommand", 1},
			{KindDeviceCommand, "DeviceCommand", 1},
			{KindDeviceProfileUpdate, "DeviceProfileUpdate", 2},
			{KindStopListening, "StopListening", 2},
			{KindDeviceCommand, "DeviceCommand", 2},
		}
		var evs []Event
		for i, w := range want {
			e := nextEvent(t, c.Client, wait)
			evs = append(evs, e)
			if e.Kind != w.kind || e.Target != w.target || len(e.Args) != w.nargs {
				t.Errorf("event %d = %s %q with %d args, want %s %q with %d", i, e.Kind, e.Target, len(e.Args), w.kind, w.target, w.nargs)
			}
			if i > 0 && e.Seq != evs[i-1].Seq+1 {
				t.Errorf("event %d seq %d after %d", i, e.Seq, evs[i-1].Seq)
			}
		}
		// Typed fields and raw arguments.
		cmd := evs[0]
		if cmd.Command != "open" || cmd.Macro == nil || cmd.Macro.Name != "Open" || len(cmd.Macro.Events) != 2 ||
			string(cmd.Macro.Extra["color"]) != `"red"` || string(cmd.Macro.Events[1].Extra["x"]) != "3" {
			t.Errorf("DeviceCommand decoded as %q %+v", cmd.Command, cmd.Macro)
		}
		if string(cmd.Args[3]) != `{"more":true}` || cmd.DecodeErr != nil {
			t.Errorf("DeviceCommand raw args = %s, err %v", cmd.Args, cmd.DecodeErr)
		}
		if string(evs[1].Payload) != "1" || string(evs[1].Args[2]) != `{"three":3}` {
			t.Errorf("DeviceSettingsUpdate payload %s args %s", evs[1].Payload, evs[1].Args)
		}
		if string(evs[3].Payload) != `{"name":"keypad"}` {
			t.Errorf("DeviceType payload %s", evs[3].Payload)
		}
		if evs[6].Command != "with-id" || evs[6].InvocationID != "r1" || evs[6].Macro != nil {
			t.Errorf("invocation with id = %+v", evs[6])
		}
		// Liberal: a number as command is read as its text.
		if evs[7].DecodeErr != nil || evs[7].Command != "42" || string(evs[7].Args[0]) != "42" {
			t.Errorf("a number as command: %q, err %v args %s", evs[7].Command, evs[7].DecodeErr, evs[7].Args)
		}
		if d := evs[8].Device; d == nil || d.CurrentProfile == nil || len(d.CurrentProfile.Configuration.Macros) != 1 ||
			string(d.CurrentProfile.Configuration.Hotkeys[0]) != `{"k":1}` {
			t.Errorf("DeviceProfileUpdate device = %+v", evs[8].Device)
		}
		if d := c.Device(); d == nil || d.CurrentProfile == nil || d.CurrentProfile.ID != "p1" {
			t.Errorf("Device() after DeviceProfileUpdate = %+v", d)
		}
		if evs[10].Command != "split" || evs[10].Macro != nil {
			t.Errorf("split record = %+v", evs[10])
		}

		// The listening handshake answered the hub, in order.
		r := pc.expect(t, "an announcement", wait, func(r rec) bool { return r.Type == 1 && strings.Contains(r.Target, "Listening") })
		if r.Target != "DeviceStartedListening" {
			t.Errorf("first announcement = %s, want DeviceStartedListening", r.raw)
		}
		r = pc.expect(t, "an announcement", wait, func(r rec) bool { return r.Type == 1 && strings.Contains(r.Target, "Listening") })
		if r.Target != "DeviceStoppedListening" {
			t.Errorf("second announcement = %s, want DeviceStoppedListening", r.raw)
		}
		waitState(t, c.Client, "connected, not listening", wait, func(s State) bool { return s.Status == StatusConnected && !c.Listening() })

		// The invocation awaiting a result got an empty completion for its id;
		// the stream invocation a completion with an error.
		synctest.Wait()
		completions := 0
		for _, r := range pc.records() {
			if r.Type == 3 && (r.id() == "r1" || (r.id() == "s1" && r.Error != "")) {
				completions++
			}
		}
		if completions != 2 {
			t.Errorf("%d of the completions r1 and s1", completions)
		}
		// Still the first connection, and never a completion without id.
		if s := c.Stats(); s.Sessions != 1 || s.Attempts != 1 || s.Received != uint64(len(want))+2 { // and the two device records
			t.Errorf("stats = %+v", s)
		}
		if st := c.State(); !st.Connected() || st.Session != evs[0].Session {
			t.Errorf("state = %v", st)
		}
		pc.checkNoBadCompletion(t)
	})
}

func TestWireEventInHandshakeMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		p.handshakeExtra.Store([]byte(invocation("DeviceCommand", `"early"`) + "\x1e{\"type\":6}\x1e"))
		c := start(t, must(New(wireConfig(t, p, nil))))
		e := nextEvent(t, c.Client, wait)
		if e.Kind != KindDeviceCommand || e.Command != "early" || e.Seq != 1 {
			t.Fatalf("event = %+v", e)
		}
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
	})
}

func TestWireOrderUnderBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		c := start(t, must(New(wireConfig(t, p, nil))))
		pc := p.nextConn(t, wait)
		const n = 5000
		go func() {
			for i := 0; i < n; {
				k := 1 + i%7 // records per WebSocket message: 1..7
				var recs []string
				for j := 0; j < k && i < n; j++ {
					recs = append(recs, invocation("DeviceCommand", fmt.Sprintf(`"c%d"`, i)))
					i++
				}
				pc.send(recs...)
			}
		}()
		var first uint64
		for i := 0; i < n; i++ {
			e := nextEvent(t, c.Client, wait)
			if i == 0 {
				first = e.Seq
			}
			if want := fmt.Sprintf("c%d", i); e.Command != want || e.Seq != first+uint64(i) {
				t.Fatalf("event %d = %q seq %d, want %q seq %d", i, e.Command, e.Seq, want, first+uint64(i))
			}
		}
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		if s := c.Stats(); s.Sessions != 1 || s.Dropped != 0 {
			t.Errorf("stats = %+v", s)
		}
		pc.checkNoBadCompletion(t)
	})
}

func TestWireNothingLostOnAbruptClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		c := start(t, must(New(wireConfig(t, p, nil))))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		const n = 300
		for i := 0; i < n; i++ {
			pc.send(invocation("DeviceCommand", fmt.Sprintf(`"c%d"`, i)))
		}
		pc.send(invocation("StopListening"))
		pc.abort() // TCP close right after the writes, no close frame
		for i := 0; i < n; i++ {
			if e := nextEvent(t, c.Client, wait); e.Command != fmt.Sprintf("c%d", i) {
				t.Fatalf("event %d = %+v", i, e)
			}
		}
		if e := nextEvent(t, c.Client, wait); e.Kind != KindStopListening {
			t.Fatalf("last event = %+v", e)
		}
		st := waitState(t, c.Client, "reconnecting", wait, isStatus(StatusReconnecting))
		if st.Cause != CauseNetwork {
			t.Errorf("state = %v, want cause network", st)
		}
		p.nextConn(t, wait)
		waitState(t, c.Client, "connected again", wait, func(s State) bool { return s.Connected() && s.Session > st.Session })
	})
}

func TestWireCloseWithAllowReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		cfg := wireConfig(t, p, nil)
		cfg.AutoListen = true
		c := start(t, must(New(cfg)))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "listening", wait, isStatus(StatusListening))

		pc.send(`{"type":7,"error":"Server is restarting.","allowReconnect":true}`)
		pc.abort()
		st := waitState(t, c.Client, "reconnecting", wait, isStatus(StatusReconnecting))
		if st.Cause != CauseClosed || !strings.Contains(st.Reason, "Server is restarting.") || !errors.Is(st.Err, ErrClosedByHub) {
			t.Errorf("state = %v (err %v)", st, st.Err)
		}
		if d := st.RetryAt.Sub(st.Since); d != 10*time.Millisecond {
			t.Errorf("retry after %s, want the initial backoff 10ms", d)
		}
		pc2 := p.nextConn(t, wait)
		pc2.expect(t, "listening restored", wait, func(r rec) bool { return r.Target == "DeviceStartedListening" })
		again := waitState(t, c.Client, "listening again", wait, func(s State) bool { return s.Status == StatusListening && s.Session > st.Session })
		if !again.Since.Equal(st.RetryAt) {
			t.Errorf("listening again at %s, want the next attempt at the announced %s", again.Since, st.RetryAt)
		}
		if s := c.Stats(); s.ListeningRestored != 1 || s.Reconnects != 1 {
			t.Errorf("stats = %+v", s)
		}
		pc.checkNoBadCompletion(t)
	})
}

func TestWireCloseWithoutAllowReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		c := start(t, must(New(wireConfig(t, p, nil))))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))

		pc.send(`{"type":7,"error":"Connection closed with an error."}`)
		pc.abort()
		st := waitState(t, c.Client, "reconnecting", wait, isStatus(StatusReconnecting))
		if st.Cause != CauseClosed || !strings.Contains(st.Reason, "without allowReconnect") {
			t.Errorf("state = %v", st)
		}
		if d := st.RetryAt.Sub(st.Since); d != 200*time.Millisecond {
			t.Errorf("retry after %s, want Backoff.Max (200ms)", d)
		}
		// It still reconnects: a client that gives up is worse.
		p.nextConn(t, wait)
		again := waitState(t, c.Client, "connected again", wait, func(s State) bool { return s.Connected() && s.Session > st.Session })
		if !again.Since.Equal(st.RetryAt) {
			t.Errorf("connected again at %s, want the next attempt at the announced %s", again.Since, st.RetryAt)
		}
	})
}

func TestWireRevokedTokenThenNewToken(t *testing.T) {
	for _, where := range []string{"negotiate", "upgrade"} {
		t.Run(where, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newPeer(t, testDevice) // the old token is unknown
				tok := &atomic.Value{}
				tok.Store(testToken)
				cfg := wireConfig(t, p, tok)
				if where == "upgrade" {
					p.allow(testToken)
					p.upgradeStatus.Store(http.StatusUnauthorized)
				}
				var hooks atomic.Int32
				release := make(chan struct{})
				cfg.OnRevoked = func(ctx context.Context) error {
					hooks.Add(1)
					select {
					case <-release:
					case <-ctx.Done():
						return ctx.Err()
					}
					const fresh = "tok-FRESH-9876543210"
					p.allow(fresh)
					p.upgradeStatus.Store(0)
					tok.Store(fresh)
					return nil
				}
				c := start(t, must(New(cfg)))
				st := waitState(t, c.Client, "token refused", wait, func(s State) bool { return s.Cause == CauseUnauthorized })
				synctest.Wait()
				if n := hooks.Load(); n != 1 {
					t.Fatalf("OnRevoked called %d times, want once", n)
				}
				if !st.NeedsRepair() || st.Status != StatusConnecting || !errors.Is(st.Err, ErrUnauthorized) || !strings.Contains(st.Reason, "paired again") {
					t.Errorf("state = %v (err %v)", st, st.Err)
				}
				if d := st.RetryAt.Sub(st.Since); d != cfg.Backoff.Revoked {
					t.Errorf("retry after %s while asking for a new token, want %s", d, cfg.Backoff.Revoked)
				}
				sub := c.Subscribe(context.Background())
				close(release)
				// Once a new token is provided it is tried at once.
				for s := range sub {
					if s.Cause == CauseUnauthorized && s.RetryAt.Sub(s.Since) == cfg.Backoff.Initial {
						break
					}
					if s.Connected() {
						t.Fatalf("connected without a fast-retry state first")
					}
				}
				waitState(t, c.Client, "connected with the new token", wait, isStatus(StatusConnected))
				if s := c.Stats(); s.TokenRefusals != 1 {
					t.Errorf("stats = %+v", s)
				}
			})
		})
	}
}

func TestWireRevokedTokenSlowsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice)
		cfg := wireConfig(t, p, nil)
		cfg.OnRevoked = func(context.Context) error { return errors.New("no user session: sign in again") }
		c := start(t, must(New(cfg)))
		st := waitState(t, c.Client, "re-pair state", wait, func(s State) bool { return s.Cause == CauseUnauthorized })
		if d := st.RetryAt.Sub(st.Since); d != cfg.Backoff.Revoked {
			t.Errorf("retry after %s, want Backoff.Revoked %s", d, cfg.Backoff.Revoked)
		}
		if !st.NeedsRepair() {
			t.Errorf("NeedsRepair false")
		}
	})
}

func TestWireUnavailableHonoursRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		p.negotiateStatus.Store(http.StatusServiceUnavailable)
		p.retryAfter.Store("1")
		c := start(t, must(New(wireConfig(t, p, nil))))
		st := waitState(t, c.Client, "unavailable", wait, func(s State) bool { return s.Cause == CauseUnavailable })
		if d := st.RetryAt.Sub(st.Since); d != time.Second {
			t.Errorf("retry after %s, want the hub's Retry-After 1s", d)
		}
		var he *HTTPError
		if !errors.As(st.Err, &he) || he.StatusCode != 503 || he.RetryAfter != time.Second {
			t.Errorf("err = %v", st.Err)
		}
		p.negotiateStatus.Store(0)
		up := waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		if !up.Since.Equal(st.RetryAt) {
			t.Errorf("connected at %s, want the next attempt after Retry-After, at %s", up.Since, st.RetryAt)
		}
	})
}

// TestWireAttemptTimeouts: a hub that never answers one step of a
// connection attempt (the negotiate, VerifySelf) costs the attempt its
// timeout, then the client tries again. (The SignalR handshake: see
// TestWireHandshakeUnanswered.)
func TestWireAttemptTimeouts(t *testing.T) {
	for _, tc := range []struct {
		step    string
		timeout func(Config) time.Duration // the attempt's end, after its start
		cause   Cause
	}{
		{"negotiate", func(c Config) time.Duration { return c.HandshakeTimeout }, CauseUnresponsive},
		{"VerifySelf", func(c Config) time.Duration { return c.InvokeTimeout }, CauseUnresponsive},
	} {
		t.Run(tc.step, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newPeer(t, testDevice, testToken)
				if tc.step == "VerifySelf" {
					p.autoAnswer.Store(false)
				} else {
					p.stall.Store(tc.step)
				}
				cfg := wireConfig(t, p, nil)
				cfg.HandshakeTimeout = 3 * time.Second
				began := time.Now()
				c := start(t, must(New(cfg)))
				st := waitState(t, c.Client, "the first attempt's end", time.Minute, func(s State) bool { return s.Attempt == 1 })
				if st.Cause != tc.cause || st.Status != StatusConnecting {
					t.Errorf("state = %v (err %v), want cause %s", st, st.Err, tc.cause)
				}
				if took, want := st.Since.Sub(began), tc.timeout(c.cfg); took != want {
					t.Errorf("the attempt ended after %s, want its timeout %s", took, want)
				}
				p.stall.Store("")
				p.autoAnswer.Store(true)
				up := waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
				if !up.Since.Equal(st.RetryAt) {
					t.Errorf("connected at %s, want the next attempt at %s", up.Since, st.RetryAt)
				}
			})
		})
	}
}

// TestWireHandshakeUnanswered: a hub that never answers the SignalR
// handshake costs the attempt the handshake timeout and is reported as
// unresponsive. It runs on loopback and the real clock: the library holds
// its client's lock while it waits for the handshake answer, and a
// goroutine waiting for a lock is not durably blocked, so a bubble's clock
// would never reach the timeout.
func TestWireHandshakeUnanswered(t *testing.T) {
	p := newLoopbackPeer(t, testDevice, testToken)
	p.stall.Store("handshake")
	cfg := wireConfig(t, p, nil)
	cfg.HandshakeTimeout = 100 * time.Millisecond
	c := start(t, must(New(cfg)))
	st := waitState(t, c.Client, "the first attempt's end", wait, func(s State) bool { return s.Attempt == 1 })
	if st.Cause != CauseUnresponsive || !errors.Is(st.Err, ErrUnresponsive) || !strings.Contains(st.Reason, "SignalR handshake") {
		t.Errorf("state = %v (err %v), want cause unresponsive", st, st.Err)
	}
	p.stall.Store("")
	waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
}

func TestWireWrongDeviceStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		p.verifyAs.Store("someone-else")
		c := start(t, must(New(wireConfig(t, p, nil))))
		var err error
		select {
		case err = <-c.done:
			c.done <- err
		case <-time.After(wait):
			t.Fatal("Run did not stop")
		}
		if !errors.Is(err, ErrWrongDevice) || !strings.Contains(err.Error(), "someone-else") {
			t.Errorf("Run = %v", err)
		}
		st := c.State()
		if st.Status != StatusStopped || st.Cause != CauseWrongDevice {
			t.Errorf("state = %v", st)
		}
		if _, ok := <-c.Events(); ok {
			t.Errorf("events channel not closed")
		}
	})
}

func TestWireLargeMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		cfg := wireConfig(t, p, nil)
		cfg.MaxMessageSize = 1 << 20
		c := start(t, must(New(cfg)))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))

		// A profile of ~400 KiB (the library's default limit is 32 KiB).
		var macros []string
		for i := 0; len(strings.Join(macros, ",")) < 400<<10; i++ {
			macros = append(macros, fmt.Sprintf(`{"id":"m%d","name":"macro %d","commands":["c%d"],"events":[{"eventType":"Type","text":"%s"}]}`, i, i, i, strings.Repeat("x", 200)))
		}
		dev := fmt.Sprintf(`{"id":%q,"currentProfile":{"id":"big","configuration":{"macros":[%s]}}}`, testDevice, strings.Join(macros, ","))
		pc.send(invocation("DeviceProfileUpdate", dev))
		e := nextEvent(t, c.Client, wait)
		if e.Device == nil || len(e.Device.CurrentProfile.Configuration.Macros) != len(macros) {
			t.Fatalf("big profile not delivered whole: %v", e.DecodeErr)
		}
		if s := c.Stats(); s.Sessions != 1 {
			t.Errorf("reconnected on a big message: %+v", s)
		}
		// Beyond the limit: skipped and reported; the connection stays
		// (toolarge_test.go).
		pc.send(invocation("DeviceSettingsUpdate", `"`+strings.Repeat("y", 1<<20)+`"`))
		if e := nextEvent(t, c.Client, wait); e.Kind != KindTooLarge || e.TooLarge.Of != KindDeviceSettingsUpdate {
			t.Fatalf("over the limit: %+v", e)
		}
		if s, st := c.Stats(), c.State(); s.Sessions != 1 || st.Status != StatusConnected {
			t.Errorf("a message over the limit cost the connection: %+v %v", s, st)
		}
	})
}

func TestWireFrozenHubDetectedByProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		p.pingEvery.Store(int64(50 * time.Millisecond))
		cfg := wireConfig(t, p, nil)
		cfg.ProbeInterval = time.Second
		cfg.ServerTimeout = time.Minute // only the probe can notice
		c := start(t, must(New(cfg)))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		// Probes are answered while the hub lives (the first GetLatestDevice
		// is the resync after VerifySelf; two more are probes, one every
		// half interval).
		time.Sleep(cfg.ProbeInterval + cfg.ProbeInterval/4)
		synctest.Wait()
		n := 0
		for _, r := range pc.records() {
			if r.Target == "GetLatestDevice" {
				n++
			}
		}
		if n < 3 {
			t.Fatalf("%d GetLatestDevice calls, want the resync and two probes", n)
		}
		if s := c.Stats(); s.ProbeFailures != 0 {
			t.Fatalf("a probe failed while the hub lived: %+v", s)
		}
		// ServerTimeout (a minute) is longer than wait: reaching reconnecting
		// at all means the probe noticed, and on the bubble's clock within
		// the two probe intervals docs/hub.md promises.
		frozenAt := time.Now()
		pc.frozen.Store(true)
		st := waitState(t, c.Client, "reconnecting", wait, isStatus(StatusReconnecting))
		if st.Cause != CauseUnresponsive || !errors.Is(st.Err, ErrUnresponsive) {
			t.Errorf("state = %v", st)
		}
		if took := time.Since(frozenAt); took > 2*cfg.ProbeInterval {
			t.Errorf("a frozen hub noticed after %s, want at most %s", took, 2*cfg.ProbeInterval)
		}
		if s := c.Stats(); s.ProbeFailures != 1 {
			t.Errorf("stats = %+v", s)
		}
	})
}

func TestWireCleanShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		c := start(t, must(New(wireConfig(t, p, nil))))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if err := c.StartListening(ctx); err != nil {
			t.Fatalf("StartListening: %v", err)
		}
		if !c.Listening() {
			t.Fatalf("not listening after StartListening")
		}
		if err := c.stop(t); err != nil {
			t.Errorf("Run = %v", err)
		}
		<-pc.done
		var tail []string
		for _, r := range pc.records() {
			if r.Type != 6 && r.Type != 3 {
				tail = append(tail, fmt.Sprintf("%d:%s", r.Type, r.Target))
			}
		}
		if got := strings.Join(tail, ","); !strings.HasSuffix(got, "1:DeviceStartedListening,1:DeviceStoppedListening,7:") {
			t.Errorf("records = %s, want DeviceStoppedListening then a close message at the end", got)
		}
		pc.mu.Lock()
		closeErr := pc.closeErr
		pc.mu.Unlock()
		if websocket.CloseStatus(closeErr) != websocket.StatusNormalClosure {
			t.Errorf("WebSocket close = %v, want a normal closure", closeErr)
		}
		st := c.State()
		if st.Status != StatusStopped || st.Cause != CauseShutdown {
			t.Errorf("state = %v", st)
		}
		if err := c.StartListening(ctx); !errors.Is(err, ErrStopped) {
			t.Errorf("StartListening after Run = %v", err)
		}
		pc.checkNoBadCompletion(t)
	})
}

func TestWireListeningRequestsWhileDisconnected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		p.negotiateStatus.Store(http.StatusBadGateway)
		c := start(t, must(New(wireConfig(t, p, nil))))
		st := waitState(t, c.Client, "refused", wait, func(s State) bool { return s.Cause == CauseRefused })
		if st.Status != StatusConnecting {
			t.Errorf("state = %v", st)
		}
		// The wish is recorded while disconnected and announced on connect.
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := c.StartListening(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("StartListening while disconnected = %v", err)
		}
		p.negotiateStatus.Store(0)
		pc := p.nextConn(t, wait)
		pc.expect(t, "DeviceStartedListening", wait, func(r rec) bool { return r.Target == "DeviceStartedListening" })
		waitState(t, c.Client, "listening", wait, isStatus(StatusListening))
		// A hub StopListening turns auto-listen off across a reconnect.
		pc.send(invocation("StopListening"))
		pc.expect(t, "DeviceStoppedListening", wait, func(r rec) bool { return r.Target == "DeviceStoppedListening" })
		pc.abort()
		pc2 := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, func(s State) bool { return s.Status == StatusConnected && s.Session > 1 })
		ctx, cancel = context.WithTimeout(context.Background(), wait)
		defer cancel()
		if err := c.StartListening(ctx); err != nil {
			t.Fatalf("StartListening: %v", err)
		}
		var calls []string
		for _, r := range pc2.records() {
			if r.Type == 1 {
				calls = append(calls, r.Target)
			}
		}
		if got := strings.Join(calls, ","); got != "VerifySelf,GetLatestDevice,DeviceStartedListening" {
			t.Errorf("calls on the new connection = %s", got)
		}
	})
}

func TestWireSlowConsumerOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		cfg := wireConfig(t, p, nil)
		cfg.QueueLimit = 10
		c := start(t, must(New(cfg)))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		// The device records of VerifySelf and GetLatestDevice come first.
		for _, method := range []string{"VerifySelf", "GetLatestDevice"} {
			if e := nextAny(t, c.Client, wait); e.Kind != KindDeviceRecord || e.Target != method {
				t.Fatalf("event %s %q, want the device record of %s", e.Kind, e.Target, method)
			}
		}
		// Nobody reads: the channel (64) and the queue (10) fill up.
		const n = 200
		for i := 0; i < n; i++ {
			pc.send(invocation("DeviceCommand", fmt.Sprintf(`"c%d"`, i)))
		}
		synctest.Wait()
		if got := c.Stats().Received; got != n+2 {
			t.Fatalf("%d events received, want %d and the two device records", got, n)
		}
		// Now read; once everything queued is delivered, one more event.
		got := make(chan Event, n+1)
		go func() {
			for e := range c.Events() {
				got <- e
				if e.Command == "after" {
					return
				}
			}
		}()
		synctest.Wait()
		if s := c.Stats(); s.Delivered+s.Dropped != n+2 {
			t.Fatalf("the backlog not delivered: %+v", s)
		}
		pc.send(invocation("DeviceCommand", `"after"`))
		// What is delivered is in order, and every drop shows as a gap in Seq.
		var last, gaps, read uint64
		for {
			var e Event
			select {
			case e = <-got:
			case <-time.After(wait):
				t.Fatalf("no event")
			}
			read++
			if e.Seq <= last {
				t.Fatalf("out of order: %d after %d", e.Seq, last)
			}
			gaps += e.Seq - last - 1
			last = e.Seq
			if e.Command == "after" {
				break
			}
		}
		st := c.Stats()
		if st.Dropped == 0 || gaps != st.Dropped || read+st.Dropped != n+1 {
			t.Errorf("read %d, gaps %d, stats %+v", read, gaps, st)
		}
		if s := c.Stats(); s.Sessions != 1 {
			t.Errorf("a slow consumer cost the connection: %+v", s)
		}
	})
}

func TestWireTokenSourceFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		cfg := wireConfig(t, p, nil)
		var fail atomic.Bool
		fail.Store(true)
		cfg.TokenSource = func(context.Context) (string, error) {
			if fail.Load() {
				return "", fmt.Errorf("keyring locked: %w", errTest)
			}
			return testToken, nil
		}
		c := start(t, must(New(cfg)))
		st := waitState(t, c.Client, "token failure", wait, func(s State) bool { return s.Cause == CauseToken })
		if !errors.Is(st.Err, errTest) || st.Status != StatusConnecting {
			t.Errorf("state = %v (%v)", st, st.Err)
		}
		fail.Store(false)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
	})
}

func TestSubscribeSlowReaderGetsLatest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		c := must(New(wireConfig(t, p, nil)))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := c.Subscribe(ctx)
		// Publish more states than the buffer holds without reading.
		for i := 0; i < 100; i++ {
			c.setState(State{Status: StatusReconnecting, Attempt: i})
		}
		var last State
		n := 0
		for len(ch) > 0 {
			last = <-ch
			n++
		}
		if last.Attempt != 99 || n > 16 {
			t.Errorf("read %d states, last attempt %d", n, last.Attempt)
		}
		cancel()
		synctest.Wait()
		select {
		case _, ok := <-ch:
			if ok {
				t.Errorf("a state after the subscription's context ended")
			}
		default:
			t.Errorf("the subscription is still open after its context ended")
		}
	})
}
