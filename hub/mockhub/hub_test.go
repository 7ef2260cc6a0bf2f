package mockhub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/philippseith/signalr"

	"github.com/coder/websocket"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
)

type command struct {
	Command string
	Macro   deviceapi.Macro
}

// receiver gets the hub's calls with typed arguments.
type receiver struct {
	signalr.Receiver
	commands chan command
	profiles chan deviceapi.UserDevice
	settings chan json.RawMessage
	starts   chan struct{}
	stops    chan struct{}
}

func newReceiver() *receiver {
	return &receiver{
		commands: make(chan command, 100), profiles: make(chan deviceapi.UserDevice, 10),
		settings: make(chan json.RawMessage, 10), starts: make(chan struct{}, 10), stops: make(chan struct{}, 10),
	}
}

func (r *receiver) DeviceCommand(c string, m deviceapi.Macro)     { r.commands <- command{c, m} }
func (r *receiver) DeviceProfileUpdate(d deviceapi.UserDevice)    { r.profiles <- d }
func (r *receiver) DeviceSettingsUpdate(settings json.RawMessage) { r.settings <- settings }
func (r *receiver) StartListening()                               { r.starts <- struct{}{} }
func (r *receiver) StopListening()                                { r.stops <- struct{}{} }

type nopLogger struct{}

func (nopLogger) Log(...any) error { return nil }

// dial connects the philippseith Go client with the device token as
// bearer and X-Device-Token, over WebSockets, and waits until connected.
func dial(t *testing.T, base, tok string, r any, opts ...func(signalr.Party) error) signalr.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	all := append([]func(signalr.Party) error{
		signalr.WithConnector(func() (signalr.Connection, error) {
			// The client holds its mutex (State() blocks) while the
			// connector runs: bound it, as a frozen hub never answers.
			cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
			defer ccancel()
			// The library does not follow a negotiate redirect: follow it
			// here, afresh on every connect.
			u, h, err := serviceEndpoint(cctx, base, hubHeaders(tok))
			if err != nil {
				return nil, err
			}
			return signalr.NewHTTPConnection(cctx, u,
				signalr.WithHTTPHeaders(func() http.Header { return h }),
				signalr.WithTransports(signalr.TransportWebSockets))
		}),
		signalr.WithReceiver(r),
		signalr.MaximumReceiveMessageSize(1 << 20),
		signalr.WithBackoff(func() backoff.BackOff {
			b := backoff.NewExponentialBackOff()
			b.InitialInterval, b.MaxInterval, b.MaxElapsedTime = 50*time.Millisecond, 500*time.Millisecond, 0
			return b
		}),
		signalr.Logger(nopLogger{}, false),
	}, opts...)
	c, err := signalr.NewClient(ctx, all...)
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	t.Cleanup(func() { cancel(); c.Stop() })
	wctx, wcancel := context.WithTimeout(ctx, wait)
	defer wcancel()
	if err := <-c.WaitForState(wctx, signalr.ClientConnected); err != nil {
		t.Fatalf("connect: %v (%v)", err, c.Err())
	}
	return c
}

// invoke calls a hub method with a deadline and decodes the result.
// The library's result channel may carry an empty InvokeResult (its nil
// error) before the value, and closes without anything for a void
// method: read it to the end.
func invoke(c signalr.Client, timeout time.Duration, out any, method string, args ...any) error {
	ch := c.Invoke(method, args...)
	deadline := time.After(timeout)
	var value any
	for {
		select {
		case res, ok := <-ch:
			if !ok {
				if out != nil {
					if value == nil {
						return fmt.Errorf("%s: no result", method)
					}
					b, _ := json.Marshal(value)
					return json.Unmarshal(b, out)
				}
				return nil
			}
			if res.Error != nil {
				return res.Error
			}
			if res.Value != nil {
				value = res.Value
			}
		case <-deadline:
			return context.DeadlineExceeded
		}
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("no %s received", what)
		var zero T
		return zero
	}
}

func TestHubWithGoClient(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	dev, tok, err := s.CreateDevice("", "Go client")
	if err != nil {
		t.Fatal(err)
	}
	r := newReceiver()
	c := dial(t, ts.URL, tok.Token, r)

	var self deviceapi.UserDevice
	if err := invoke(c, wait, &self, "VerifySelf"); err != nil {
		t.Fatal(err)
	}
	if self.ID != dev.ID || !self.IsVerified || !self.IsConnected || self.IsListening || self.NameOverride != "Go client" {
		t.Fatalf("VerifySelf = %+v", self)
	}
	info := deviceInfo(t, ts.URL, dev.ID)
	if !info.Connected || info.Connections != 1 || !info.Device.IsVerified || !info.Device.IsConnected {
		t.Errorf("admin view after VerifySelf: %+v", info)
	}

	// A command with a macro, through the admin API, decodes into typed args.
	hold := 120.0
	latch := true
	macro := deviceapi.Macro{ID: "6f1c1f64-1b7e-4b8e-9d43-1f2f3c4d5e6f", Name: "Copy", Commands: []string{"copy that"},
		Events: []deviceapi.MacroEvent{
			{EventType: deviceapi.EventKeyPress, Keys: []string{"ControlLeft", "C"}, HoldTimeMilliseconds: &hold, IsKeyLatch: &latch},
			{EventType: deviceapi.EventType, Extra: map[string]json.RawMessage{"text": json.RawMessage(`"hello"`)}},
		}}
	var pr mockhub.PushResult
	if st, _, body := call(t, "POST", ts.URL+"/mock/devices/"+dev.ID+"/command", "", mockhub.CommandRequest{Command: "copy that", Macro: &macro}, &pr); st != 200 || pr.Delivered != 1 {
		t.Fatalf("command: %d %s", st, body)
	}
	got := recv(t, r.commands, "DeviceCommand")
	if got.Command != "copy that" || got.Macro.ID != macro.ID || len(got.Macro.Events) != 2 ||
		!reflect.DeepEqual(got.Macro.Events[0].Keys, []string{"ControlLeft", "C"}) || *got.Macro.Events[0].HoldTimeMilliseconds != 120 ||
		!*got.Macro.Events[0].IsKeyLatch || got.Macro.Events[1].Text() != "hello" {
		t.Errorf("DeviceCommand = %+v", got)
	}
	// Without a macro, one is made from the command.
	call(t, "POST", ts.URL+"/mock/devices/"+dev.ID+"/command", "", `{"command":"paste"}`, nil)
	got = recv(t, r.commands, "DeviceCommand")
	if got.Command != "paste" || got.Macro.Name != "paste" || !reflect.DeepEqual(got.Macro.Commands, []string{"paste"}) || got.Macro.ID == "" {
		t.Errorf("synthesised macro: %+v", got)
	}

	// Listening handshake.
	if st, _, _ := call(t, "POST", ts.URL+"/mock/devices/"+dev.ID+"/start-listening", "", nil, nil); st != 200 {
		t.Fatalf("start-listening: %d", st)
	}
	recv(t, r.starts, "StartListening")
	if err := <-c.Send("DeviceStartedListening"); err != nil {
		t.Fatal(err)
	}
	mockhubtest.WaitEvent(t, s, 0, "DeviceStartedListening", action("DeviceStartedListening", dev.ID))
	if !deviceInfo(t, ts.URL, dev.ID).Device.IsListening {
		t.Fatal("DeviceStartedListening did not set isListening")
	}
	call(t, "POST", ts.URL+"/mock/devices/"+dev.ID+"/stop-listening", "", nil, nil)
	recv(t, r.stops, "StopListening")
	if err := invoke(c, wait, nil, "DeviceStoppedListening"); err != nil {
		t.Fatal(err)
	}
	if deviceInfo(t, ts.URL, dev.ID).Device.IsListening {
		t.Error("still listening after DeviceStoppedListening returned")
	}

	// Settings: any JSON, delivered as posted.
	call(t, "POST", ts.URL+"/mock/devices/"+dev.ID+"/settings", "", `{"volume": 7, "names": ["a"]}`, nil)
	settings := recv(t, r.settings, "DeviceSettingsUpdate")
	var sv map[string]any
	json.Unmarshal(settings, &sv)
	if sv["volume"] != 7.0 {
		t.Errorf("settings %s", settings)
	}

	// Profile: stored and pushed with the device, unknown members kept.
	profile := `{"id":"p1","name":"Gaming","userId":"mock-user","profileType":"Custom","configuration":{"profileType":"Custom",
		"commandKeyMappings":[{"command":"jump","key":"Space"}],"macros":[{"id":"m1","name":"Jump","commands":["jump"],"events":[{"eventType":"KeyPress","keys":["Space"]}]}],
		"hotkeys":[],"dictationCommands":[],"audioEvents":[],"futureField":1}}`
	var prof mockhub.ProfileResult
	if st, _, body := call(t, "POST", ts.URL+"/mock/devices/"+dev.ID+"/profile", "", profile, &prof); st != 200 || prof.Delivered != 1 {
		t.Fatalf("profile: %d %s", st, body)
	}
	pushed := recv(t, r.profiles, "DeviceProfileUpdate")
	if pushed.ID != dev.ID || pushed.CurrentProfile == nil || pushed.CurrentProfile.Name != "Gaming" ||
		len(pushed.CurrentProfile.Configuration.Macros) != 1 || string(pushed.CurrentProfile.Configuration.Extra["futureField"]) != "1" {
		t.Errorf("DeviceProfileUpdate = %+v", pushed)
	}
	var latest deviceapi.UserDevice
	if err := invoke(c, wait, &latest, "GetLatestDevice"); err != nil || latest.CurrentProfile == nil || latest.CurrentProfile.ID != "p1" {
		b, _ := json.Marshal(s.Events(0))
		t.Errorf("GetLatestDevice = %+v, %v; events %s", latest, err, b)
	}

	// The journal holds the client's hub calls in order.
	var actions []string
	for _, e := range s.Events(0) {
		if e.Source == mockhub.SourceHub && e.Direction == mockhub.DirectionIn && e.DeviceID == dev.ID {
			actions = append(actions, e.Action)
		}
	}
	want := []string{"negotiate-redirect", "service-negotiate", "connected", "VerifySelf", "DeviceStartedListening", "DeviceStoppedListening", "GetLatestDevice"}
	if !reflect.DeepEqual(actions, want) {
		t.Errorf("hub events %v, want %v", actions, want)
	}

	// Disconnecting clears isConnected and isListening.
	since := lastSeq(s)
	c.Send("DeviceStartedListening")
	since = mockhubtest.WaitEvent(t, s, since, "DeviceStartedListening again", action("DeviceStartedListening", dev.ID)).Seq
	c.Stop()
	mockhubtest.WaitEvent(t, s, since, "the disconnect", action("disconnected", dev.ID))
	if i := deviceInfo(t, ts.URL, dev.ID); i.Connected || i.Device.IsConnected || i.Device.IsListening || !i.Device.IsVerified {
		t.Errorf("after the disconnect: %+v", i)
	}
	if st, _, _ := call(t, "POST", ts.URL+"/mock/devices/"+dev.ID+"/command", "", `{"command":"x"}`, nil); st != 409 {
		t.Errorf("command without a connection: %d", st)
	}
}

func TestHubPushesArriveInOrderWithExactWireShape(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	dev, tok, _ := s.CreateDevice("", "")
	c, err := rawDial(t, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	mockhubtest.WaitEvent(t, s, 0, "the connection", action("connected", dev.ID))
	const n = 300
	for i := range n {
		switch i % 3 {
		case 0:
			if err := s.PushCommand(dev.ID, fmt.Sprint("cmd-", i), nil); err != nil {
				t.Fatal(err)
			}
		case 1:
			s.StartListening(dev.ID)
		case 2:
			s.PushSettings(dev.ID, map[string]int{"i": i})
		}
	}
	for i := range n {
		f, err := c.next(wait)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		switch i % 3 {
		case 0:
			var cmd string
			var m map[string]any
			if f.Target != "DeviceCommand" || len(f.Arguments) != 2 || json.Unmarshal(f.Arguments[0], &cmd) != nil || cmd != fmt.Sprint("cmd-", i) ||
				json.Unmarshal(f.Arguments[1], &m) != nil || m["name"] != cmd {
				t.Fatalf("frame %d: %s %s", i, f.Target, f.Arguments)
			}
		case 1:
			if f.Target != "StartListening" || len(f.Arguments) != 0 {
				t.Fatalf("frame %d: %s %s", i, f.Target, f.Arguments)
			}
		case 2:
			if f.Target != "DeviceSettingsUpdate" || len(f.Arguments) != 1 || string(f.Arguments[0]) != fmt.Sprintf(`{"i":%d}`, i) {
				t.Fatalf("frame %d: %s %s", i, f.Target, f.Arguments)
			}
		}
	}
	// Push sends anything, e.g. a DeviceType with arguments a client may
	// not expect.
	s.Push(dev.ID, "DeviceType", map[string]string{"id": "mock-controller"})
	if f, _ := c.next(wait); f.Target != "DeviceType" || string(f.Arguments[0]) != `{"id":"mock-controller"}` {
		t.Errorf("Push: %+v", f)
	}
	// Hub results on the wire: VerifySelf's completion carries the device.
	c.invoke("7", "VerifySelf")
	f, err := c.next(wait)
	var d deviceapi.UserDevice
	if err != nil || f.Type != 3 || f.InvocationID != "7" || json.Unmarshal(f.Result, &d) != nil || d.ID != dev.ID || !d.IsVerified {
		t.Errorf("completion %+v %v", f, err)
	}
}

// TestHubSpeaksJSONOnly: the mock, like the real service, speaks the
// JSON hub protocol only (its negotiate offers the Text transfer format);
// a MessagePack handshake gets SignalR's error record, and the connection
// ends.
func TestHubSpeaksJSONOnly(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	_, tok, _ := s.CreateDevice("", "")
	n, err := negotiateWith(noRedirect, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, n.wsURL(), &websocket.DialOptions{HTTPHeader: n.header.Clone()})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	hs, err := handshake(ctx, ws, "messagepack")
	if err != nil || hs != `{"error":"protocol messagepack not supported"}`+"\x1e" {
		t.Fatalf("MessagePack handshake answered %q (%v)", hs, err)
	}
	if _, msg, err := ws.Read(ctx); err == nil {
		t.Errorf("the connection went on after the refused handshake: %q", msg)
	}
}

// TestHubRefusesOtherProtocols: the refusal of a handshake for another
// protocol than JSON is the mock's (the SignalR library has MessagePack and
// no option to leave it out): it answers any protocol name, however long,
// with the error record, and journals it for the device.
func TestHubRefusesOtherProtocols(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	dev, tok, _ := s.CreateDevice("", "")
	for _, protocol := range []string{"messagepack", strings.Repeat("p", 300)} {
		n, err := negotiateWith(noRedirect, ts.URL, hubHeaders(tok.Token))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		ws, _, err := websocket.Dial(ctx, n.wsURL(), &websocket.DialOptions{HTTPHeader: n.header.Clone()})
		if err != nil {
			t.Fatal(err)
		}
		want := "protocol " + protocol + " not supported"
		if hs, err := handshake(ctx, ws, protocol); err != nil || hs != `{"error":"`+want+`"}`+"\x1e" {
			t.Errorf("%.20s: handshake answered %q (%v)", protocol, hs, err)
		}
		e, err := s.WaitEvent(ctx, 0, func(e mockhub.Event) bool { return e.Action == "handshake" && e.Error == want })
		if err != nil || e.DeviceID != dev.ID {
			t.Errorf("%.20s: journal %+v %v", protocol, e, err)
		}
		ws.CloseNow()
		cancel()
	}
}

func TestHubAuthentication(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	dev, tok, _ := s.CreateDevice("", "")
	_, other, _ := s.CreateDevice("", "")
	h := func(kv ...string) http.Header {
		hd := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			hd.Set(kv[i], kv[i+1])
		}
		return hd
	}
	for name, hd := range map[string]http.Header{
		"none":           {},
		"unknown bearer": h("Authorization", "Bearer nope"),
		"unknown header": h("X-Device-Token", "nope"),
		"disagreeing":    h("Authorization", "Bearer "+tok.Token, "X-Device-Token", other.Token),
		"basic":          h("Authorization", "Basic eDp5"),
	} {
		_, err := rawDial(t, ts.URL, hd)
		var se *statusError
		if !errors.As(err, &se) || se.code != 401 {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Each way of passing the token alone is enough.
	for name, u := range map[string]struct {
		hd    http.Header
		query string
	}{
		"bearer only": {h("Authorization", "Bearer "+tok.Token), ""},
		"header only": {h("X-Device-Token", tok.Token), ""},
		"both":        {hubHeaders(tok.Token), ""},
	} {
		c, err := rawDial(t, ts.URL, u.hd)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		c.invoke("1", "VerifySelf")
		if f, err := c.next(wait); err != nil || f.Type != 3 {
			t.Errorf("%s: VerifySelf %+v %v", name, f, err)
		}
		c.close()
	}
	// access_token in the query (how the JS client sends it on SSE and in
	// browsers) is accepted on negotiate.
	req, _ := http.NewRequest("POST", ts.URL+"/device/negotiate?negotiateVersion=1&access_token="+tok.Token, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("access_token query: %d", resp.StatusCode)
	}
	// Rejections are logged, without token material.
	var rejected []mockhub.Event
	for _, e := range s.Events(0) {
		if e.Action == "rejected" {
			rejected = append(rejected, e)
		}
	}
	if len(rejected) != 5 {
		t.Errorf("%d rejections logged", len(rejected))
	}
	b, _ := json.Marshal(s.Events(0))
	if strings.Contains(string(b), tok.Token) || strings.Contains(string(b), other.Token) {
		t.Error("a device token reached the event log")
	}
	_ = dev
}

func TestDisabledTokenDropsAndIsRefused(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	dev, tok, _ := s.CreateDevice("", "")
	r := newReceiver()
	c := dial(t, ts.URL, tok.Token, r)
	if err := invoke(c, wait, nil, "VerifySelf"); err != nil {
		t.Fatal(err)
	}
	states := make(chan signalr.ClientState, 100)
	c.ObserveStateChanged(states)

	var res mockhub.DisableResult
	if st, _, body := call(t, "POST", ts.URL+"/mock/tokens/"+tok.ID+"/disable", "", nil, &res); st != 200 || res.Dropped != 1 || !res.Token.IsDisabled || res.Token.UserDeviceID != dev.ID {
		t.Fatalf("disable: %d %s", st, body)
	}
	if strings.Contains(fmt.Sprint(res), tok.Token) {
		t.Error("the disable answer shows the token")
	}
	// The client loses its connection...
	waitLeft(t, states)
	mockhubtest.WaitEvent(t, s, 0, "the dropped connection", action("disconnected", dev.ID))
	// ...and reconnecting is refused with 401.
	_, err := signalr.NewHTTPConnection(context.Background(), ts.URL+"/device",
		signalr.WithHTTPHeaders(func() http.Header { return hubHeaders(tok.Token) }))
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("reconnect with a disabled token: %v", err)
	}
	if deviceInfo(t, ts.URL, dev.ID).Tokens[0].IsDisabled != true {
		t.Error("admin view does not show the token disabled")
	}
	// Another token of the same device still works.
	tok2, err := func() (deviceapi.DeviceToken, error) {
		at := signIn(t, ts.URL).AccessToken
		var tk deviceapi.DeviceToken
		st, _, body := call(t, "POST", ts.URL+"/api/Device/userDevices/"+dev.ID+"/tokens", at, nil, &tk)
		if st != 200 {
			return tk, errors.New(body)
		}
		return tk, nil
	}()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rawDial(t, ts.URL, hubHeaders(tok2.Token)); err != nil {
		t.Errorf("second token: %v", err)
	}
	if st, _, _ := call(t, "POST", ts.URL+"/mock/tokens/no-such/disable", "", nil, nil); st != 404 {
		t.Errorf("unknown token: %d", st)
	}
}

// waitLeft waits until the client reports a state other than Connected.
func waitLeft(t *testing.T, states <-chan signalr.ClientState) {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case st := <-states:
			if st != signalr.ClientConnected {
				return
			}
		case <-deadline:
			t.Fatal("the client never left the connected state")
		}
	}
}
