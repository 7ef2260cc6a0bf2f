package hub

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// staticToken returns a TokenSource that always returns token.
func staticToken(token string) TokenSource {
	return func(context.Context) (string, error) { return token, nil }
}

func TestConfigDefaultsAndValidation(t *testing.T) {
	good := Config{URL: "https://api.example/device", DeviceID: "d", TokenSource: staticToken("t")}
	c, err := New(good)
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.cfg
	if cfg.KeepAlive != 15*time.Second || cfg.ServerTimeout != 30*time.Second || cfg.HandshakeTimeout != 15*time.Second ||
		cfg.MaxMessageSize != 16<<20 || cfg.ProbeInterval != 60*time.Second || cfg.InvokeTimeout != 15*time.Second ||
		cfg.Backoff != (Backoff{Initial: 500 * time.Millisecond, Max: 30 * time.Second, Jitter: 0.5, Revoked: 5 * time.Minute}) ||
		cfg.QueueLimit != 1<<16 || cfg.HTTPClient == nil || cfg.Logger == nil || cfg.Now == nil {
		t.Errorf("defaults = %+v", cfg)
	}
	if st := c.State(); st.Status != StatusConnecting {
		t.Errorf("initial state = %v", st)
	}
	for name, mod := range map[string]func(*Config){
		"no url":        func(c *Config) { c.URL = "" },
		"ws scheme":     func(c *Config) { c.URL = "ws://x/device" },
		"no device":     func(c *Config) { c.DeviceID = "" },
		"no token":      func(c *Config) { c.TokenSource = nil },
		"negative":      func(c *Config) { c.InvokeTimeout = -1 },
		"negative size": func(c *Config) { c.MaxMessageSize = -1 },
	} {
		cfg := good
		mod(&cfg)
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}

func TestBackoffGrowsCapsAndJitters(t *testing.T) {
	c := must(New(Config{URL: "http://x/device", DeviceID: "d", TokenSource: staticToken("t"),
		Backoff: Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Jitter: -1}}))
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := c.backoff(i + 1); got != w*time.Millisecond {
			t.Errorf("attempt %d: %s, want %s", i+1, got, w*time.Millisecond)
		}
	}
	c.cfg.Backoff.Jitter = 0.5
	for i := 0; i < 200; i++ {
		if d := c.backoff(3); d <= 200*time.Millisecond || d > 400*time.Millisecond {
			t.Fatalf("jittered %s outside (200ms, 400ms]", d)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"7":                             7 * time.Second,
		"-1":                            0,
		"soon":                          0,
		"Fri, 02 Jan 2026 03:04:35 GMT": 30 * time.Second,
		"Fri, 02 Jan 2026 03:00:00 GMT": 0,
	} {
		h := http.Header{}
		if v != "" {
			h.Set("Retry-After", v)
		}
		if got := retryAfter(h, now); got != want {
			t.Errorf("Retry-After %q = %s, want %s", v, got, want)
		}
	}
}

func TestScrubAndHTTPError(t *testing.T) {
	tok := "secret-token-value"
	err := scrub(errors.New("dial http://x?access_token="+tok+": refused"), tok)
	if strings.Contains(err.Error(), tok) || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("scrub = %v", err)
	}
	he := &HTTPError{Op: "negotiate", StatusCode: 401}
	if !errors.Is(he, ErrUnauthorized) || errors.Is(&HTTPError{StatusCode: 500}, ErrUnauthorized) {
		t.Errorf("HTTPError.Is wrong")
	}
	if !errors.Is(&HTTPError{StatusCode: 403}, ErrUnauthorized) {
		t.Errorf("403 is not unauthorized")
	}
	if scrub(he, tok) != error(he) {
		t.Errorf("scrub changed an HTTPError")
	}
}

func TestDecodeEventTable(t *testing.T) {
	raw := func(s ...string) []json.RawMessage {
		out := make([]json.RawMessage, len(s))
		for i, v := range s {
			out[i] = json.RawMessage(v)
		}
		return out
	}
	for _, tc := range []struct {
		target  string
		args    []json.RawMessage
		kind    Kind
		cmd     string
		macro   bool
		device  bool
		payload string
		err     bool
	}{
		{"DeviceCommand", raw(`"x"`, `{"id":"m","events":[{"eventType":"Pause","ms":5}]}`), KindDeviceCommand, "x", true, false, "", false},
		{"devicecommand", raw(`"x"`), KindDeviceCommand, "x", false, false, "", false},
		{"DeviceCommand", nil, KindDeviceCommand, "", false, false, "", false},
		{"DeviceCommand", raw(`null`, `null`), KindDeviceCommand, "", false, false, "", false},
		// A macro of an unexpected shape is kept as it came (odd), never an error.
		{"DeviceCommand", raw(`"x"`, `[1]`), KindDeviceCommand, "x", true, false, "", false},
		{"DeviceCommand", raw(`"x"`, `{"id":1,"events":[{"eventType":0,"holdTimeMilliseconds":"100"}]}`), KindDeviceCommand, "x", true, false, "", false},
		{"DeviceCommand", raw(`42`), KindDeviceCommand, "42", false, false, "", false},
		{"DeviceCommand", raw(`{"text":"x"}`), KindDeviceCommand, "", false, false, "", true},
		{"DeviceProfileUpdate", raw(`{"id":"d"}`), KindDeviceProfileUpdate, "", false, true, "", false},
		{"DeviceProfileUpdate", raw(`"nope"`), KindDeviceProfileUpdate, "", false, false, "", true},
		{"DeviceProfileUpdate", raw(`{"id":"d","currentProfile":42}`), KindDeviceProfileUpdate, "", false, true, "", false},
		{"DeviceSettingsUpdate", raw(`{"a":1}`, `2`), KindDeviceSettingsUpdate, "", false, false, `{"a":1}`, false},
		{"DEVICETYPE", raw(`"pad"`), KindDeviceType, "", false, false, `"pad"`, false},
		{"StartListening", raw(`1`), KindStartListening, "", false, false, "", false},
		{"stopListening", nil, KindStopListening, "", false, false, "", false},
		{"Other", raw(`[]`), KindOther, "", false, false, `[]`, false},
	} {
		e := Event{Target: tc.target, Kind: kindOf(tc.target), Args: tc.args}
		decodeEvent(&e)
		if e.Kind != tc.kind || e.Command != tc.cmd || (e.Macro != nil) != tc.macro || (e.Device != nil) != tc.device ||
			string(e.Payload) != tc.payload || (e.DecodeErr != nil) != tc.err {
			t.Errorf("%s %s: %+v", tc.target, tc.args, e)
		}
	}
}

func TestAnnouncementRefusedKeepsConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		c := start(t, must(New(wireConfig(t, p, nil))))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		p.autoAnswer.Store(false) // answer by hand from now on
		errc := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			errc <- c.StartListening(ctx)
		}()
		r := pc.expect(t, "DeviceStartedListening", wait, func(r rec) bool { return r.Target == "DeviceStartedListening" })
		pc.send(`{"type":3,"invocationId":"` + r.id() + `","error":"device not allowed to listen"}`)
		err := <-errc
		var he *HubError
		if !errors.As(err, &he) || !strings.Contains(he.Message, "not allowed") {
			t.Errorf("StartListening = %v", err)
		}
		if c.Listening() {
			t.Errorf("listening although refused")
		}
		if st := c.State(); !st.Connected() || c.Stats().Sessions != 1 {
			t.Errorf("a refused announcement cost the connection: %v", st)
		}
	})
}

// process feeds one WebSocket message to the record tap, as readMessage
// does.
func (w *wsConn) process(msg []byte) error {
	w.beginMessage()
	if err := w.feed(msg, false); err != nil {
		return err
	}
	return w.endMessage()
}

// FuzzRecordTap feeds arbitrary WebSocket messages to the record tap: it
// must never panic, must hand the library only whole records, and must
// queue every invocation it accepted, in order.
func FuzzRecordTap(f *testing.F) {
	f.Add([]byte("{}\x1e"), []byte(`{"type":1,"target":"DeviceCommand","arguments":["a",{}]}`+"\x1e{\"type\":6}\x1e"))
	f.Add([]byte("{}\x1e{\"type\":1,\"target\":\"X\""), []byte(",\"arguments\":[]}\x1e"))
	f.Add([]byte("{}\x1e{\"type\":7,\"error\":\"bye\",\"allowReconnect\":true}\x1e"), []byte("{\"type\":9}\x1e\x1e\x1e"))
	f.Add([]byte("{}\x1e{\"type\":1,\"invocationId\":\"5\",\"target\":\"StartListening\",\"arguments\":[1]}\x1e"), []byte("not json\x1e"))
	big := `{"type":1,"target":"DeviceCommand","arguments":["a","` + strings.Repeat("b", 1<<16) + `"]}`
	f.Add([]byte("{}\x1e"+big[:1<<15]), []byte(big[1<<15:]+"\x1e{\"type\":6}\x1e")) // joined over the limit
	f.Add([]byte("{}\x1e"+big), []byte(`"]}`+"\x1e"))                               // cut, and its rest
	f.Fuzz(func(t *testing.T, a, b []byte) {
		c := must(New(Config{URL: "http://x/device", DeviceID: "d", TokenSource: staticToken("t"), MaxMessageSize: 1 << 16}))
		w := newWSConn(c, 1, nil, "id")
		w.writeClosed.Store(true) // completions are not written anywhere
		for _, msg := range [][]byte{a, b} {
			if err := w.process(msg); err != nil {
				t.Fatalf("a record cost the connection: %v", err)
			}
		}
		for _, rec := range w.out {
			if len(rec) == 0 || rec[len(rec)-1] != recordSeparator || strings.Count(string(rec), "\x1e") != 1 {
				t.Fatalf("forwarded %q", rec)
			}
		}
		events, _ := c.q.take()
		for i, e := range events {
			if e.Seq != uint64(i+1) {
				t.Fatalf("event %d has seq %d", i, e.Seq)
			}
		}
		if uint64(len(events)) != c.stats.received.Load() {
			t.Fatalf("%d queued, %d received", len(events), c.stats.received.Load())
		}
	})
}
