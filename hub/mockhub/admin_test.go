package mockhub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
	"github.com/hubgate/hubgate/internal/testutil"
)

func TestAdminDevices(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{DeviceTypeID: "pad"})
	var created mockhub.CreatedDevice
	if st, _, body := call(t, "POST", ts.URL+"/mock/devices", "", nil, &created); st != 201 {
		t.Fatalf("create with no body: %d %s", st, body)
	}
	if created.Device.NameOverride != "Mock device" || created.Token.UserDeviceID != created.Device.ID || len(created.Token.Token) != 43 {
		t.Errorf("created %+v", created)
	}
	var named mockhub.CreatedDevice
	if st, _, body := call(t, "POST", ts.URL+"/mock/devices", "", `{"deviceTypeId":"pad","name":"Named"}`, &named); st != 201 || named.Device.NameOverride != "Named" {
		t.Fatalf("create named: %d %s", st, body)
	}
	for body, want := range map[string]int{
		`{"deviceTypeId":"other"}`: 404,
		`{"nmae":"typo"}`:          400,
		`{"name":`:                 400,
		`{"name":"a"} {}`:          400,
	} {
		if st, _, _ := call(t, "POST", ts.URL+"/mock/devices", "", body, nil); st != want {
			t.Errorf("create %s: %d, want %d", body, st, want)
		}
	}

	st, _, raw := call(t, "GET", ts.URL+"/mock/devices", "", nil, nil)
	var list []mockhub.DeviceInfo
	json.Unmarshal([]byte(raw), &list)
	if st != 200 || len(list) != 2 || list[0].Device.ID != created.Device.ID || list[1].Device.ID != named.Device.ID {
		t.Fatalf("list: %d %s", st, raw)
	}
	if list[0].DeviceTypeID != "pad" || list[0].Connected || len(list[0].Tokens) != 1 || list[0].Tokens[0].ID != created.Token.ID {
		t.Errorf("info %+v", list[0])
	}
	if strings.Contains(raw, created.Token.Token) {
		t.Error("GET /mock/devices shows a token")
	}
	if got := s.Devices(); len(got) != 2 {
		t.Errorf("Devices() = %d", len(got))
	}

	// Pushes: unknown device 404, bad bodies 400, no connection 409.
	id := created.Device.ID
	for _, tc := range []struct {
		path, body string
		want       int
	}{
		{"/mock/devices/nope/command", `{"command":"x"}`, 404},
		{"/mock/devices/" + id + "/command", `{}`, 400},
		{"/mock/devices/" + id + "/command", ``, 400},
		{"/mock/devices/" + id + "/command", `{"command":"x","extra":1}`, 400},
		{"/mock/devices/" + id + "/command", `{"command":"x"}`, 409},
		{"/mock/devices/" + id + "/start-listening", ``, 409},
		{"/mock/devices/" + id + "/stop-listening", ``, 409},
		{"/mock/devices/nope/start-listening", ``, 404},
		{"/mock/devices/" + id + "/settings", `{"a":`, 400},
		{"/mock/devices/" + id + "/settings", `{"a":1}`, 409},
		{"/mock/devices/" + id + "/profile", `[]`, 400},
		{"/mock/devices/nope/profile", `{"id":"p"}`, 404},
	} {
		st, h, body := call(t, "POST", ts.URL+tc.path, "", tc.body, nil)
		if st != tc.want || h.Get("Content-Type") != "application/problem+json" {
			t.Errorf("POST %s %s: %d %s, want %d", tc.path, tc.body, st, body, tc.want)
		}
	}

	// A profile is stored even without a connection, and REST shows it.
	var pr mockhub.ProfileResult
	if st, _, body := call(t, "POST", ts.URL+"/mock/devices/"+id+"/profile", "", `{"id":"p1","name":"Office","configuration":{"macros":[]}}`, &pr); st != 200 || pr.Delivered != 0 {
		t.Fatalf("profile: %d %s", st, body)
	}
	var dev deviceapi.UserDevice
	call(t, "GET", ts.URL+"/api/Device/userDevices/"+id, signIn(t, ts.URL).AccessToken, nil, &dev)
	if dev.CurrentProfile == nil || dev.CurrentProfile.Name != "Office" {
		t.Errorf("REST after profile: %+v", dev)
	}
}

func TestAdminAnswersLoopbackOnly(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	for _, addr := range []string{"192.0.2.10:5555", "[2001:db8::1]:5555"} {
		req := httptest.NewRequest("GET", "/mock/devices", nil)
		req.RemoteAddr, req.Host = addr, "127.0.0.1:5080"
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != 403 {
			t.Errorf("admin from %s: %d", addr, rec.Code)
		}
	}
	// A loopback peer of the mock's own user (the kernel tells: a real
	// connection).
	var devs []mockhub.DeviceInfo
	if code, _, body := call(t, "GET", ts.URL+"/mock/devices", "", nil, &devs); code != 200 {
		t.Errorf("admin from the owner on loopback: %d %s", code, body)
	}
	// The service routes answer anyone who names the mock.
	req := httptest.NewRequest("GET", "/swagger/v1/swagger.json", nil)
	req.RemoteAddr, req.Host = "192.0.2.10:5555", "127.0.0.1:5080"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("swagger from a remote peer: %d", rec.Code)
	}
}

// TestAdminRefusesWebPages: a page in the developer's browser can reach
// the admin API on loopback, by DNS rebinding (its own name in Host) or by
// a plain cross-origin POST; neither may push a command.
//
// The device has no hub connection: a request the admin API accepts gets
// its 409, a refused one the 403 before any handler.
func TestAdminRefusesWebPages(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{})
	var created mockhub.CreatedDevice
	if st, _, body := call(t, "POST", ts.URL+"/mock/devices", "", nil, &created); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	cases := []struct {
		name   string
		host   string
		header map[string]string
		want   int
	}{
		{"a tool", "127.0.0.1:" + port, nil, 409}, // the device has no hub connection
		{"localhost", "localhost:" + port, nil, 409},
		{"the swagger page of the mock itself", "127.0.0.1:" + port,
			map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": ts.URL}, 409},
		{"DNS rebinding", "rebind.example:" + port, map[string]string{"Sec-Fetch-Site": "same-origin"}, 403},
		{"a cross-site page", "127.0.0.1:" + port,
			map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403},
		{"an old browser's cross-origin page", "127.0.0.1:" + port, map[string]string{"Origin": "https://evil.example"}, 403},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("POST", ts.URL+"/mock/devices/"+created.Device.ID+"/command", strings.NewReader(`{"command":"rm -rf"}`))
		req.Host = c.host
		req.Header.Set("Content-Type", "text/plain")
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
}

func TestAdminClosesAStalledBody(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{AdminBodyTimeout: 200 * time.Millisecond})
	c, err := net.Dial("tcp4", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The bound of the test, 100 times the deadline, is never reached when
	// the mock behaves.
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, "POST /mock/devices HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{\"name\":")
	if b, err := io.ReadAll(c); err != nil {
		t.Fatalf("the stalled connection was not closed: %v (got %q)", err, b)
	}
}

func TestEventLogOrderAndRedaction(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	var secrets []string

	// OAuth: a sign-in, a refresh, a reused code, a bad secret.
	p := newPKCE()
	c := code(t, ts.URL, p)
	a := token(t, ts.URL, codeForm(c, p), true, mockhub.DefaultClientSecret)
	r := token(t, ts.URL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {a.RefreshToken}}, false, mockhub.DefaultClientSecret)

	// REST: device and token.
	var dev deviceapi.UserDevice
	call(t, "POST", ts.URL+"/api/Device/userDevices/new/mock-controller?name=Log", r.AccessToken, nil, &dev)
	var tok deviceapi.DeviceToken
	call(t, "POST", ts.URL+"/api/Device/userDevices/"+dev.ID+"/tokens", r.AccessToken, nil, &tok)
	call(t, "GET", ts.URL+"/api/Device/userDevices/"+dev.ID, "not-a-token", nil, nil)
	secrets = append(secrets, tok.Token, "not-a-token")

	token(t, ts.URL, codeForm(c, p), true, mockhub.DefaultClientSecret)
	token(t, ts.URL, codeForm("x", p), true, "wrong-client-secret")
	secrets = append(secrets, c, p.verifier, p.challenge, a.AccessToken, a.RefreshToken, r.AccessToken, r.RefreshToken,
		mockhub.DefaultClientSecret, "wrong-client-secret")

	// Hub: a connection with the token, a call, a rejection.
	hc, err := rawDial(t, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	hc.invoke("1", "VerifySelf")
	hc.next(wait)
	rawDial(t, ts.URL, hubHeaders("wrong-device-token"))
	secrets = append(secrets, "wrong-device-token")

	st, _, raw := call(t, "GET", ts.URL+"/mock/events", "", nil, nil)
	if st != 200 {
		t.Fatalf("events: %d", st)
	}
	for _, sec := range secrets {
		if strings.Contains(raw, sec) {
			t.Errorf("the event log contains a secret (%d chars)", len(sec))
		}
	}
	var page mockhub.EventsPage
	json.Unmarshal([]byte(raw), &page)
	var got []string
	for i, e := range page.Events {
		if e.Seq != int64(i+1) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
		if e.Time.IsZero() {
			t.Errorf("event %d has no time", i)
		}
		got = append(got, e.Source+" "+e.Action)
	}
	want := []string{
		"oauth authorize", "oauth token", "oauth token",
		"rest CreateUserDevice", "rest CreateDeviceToken", "rest GET /api/Device/userDevices/" + dev.ID,
		"oauth token", "oauth token",
		"hub negotiate-redirect", "hub service-negotiate", "hub connected", "hub VerifySelf", "hub rejected",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ev := page.Events
	if ev[1].Status != 200 || ev[1].Args["grantType"] != "authorization_code" || ev[1].Args["clientAuth"] != "basic" {
		t.Errorf("token event %+v", ev[1])
	}
	if ev[2].Status != 200 || ev[2].Args["grantType"] != "refresh_token" || ev[2].Args["clientAuth"] != "client_secret" {
		t.Errorf("refresh event %+v", ev[2])
	}
	if ev[3].DeviceID != dev.ID || ev[3].Status != 200 || ev[3].Args["name"] != "Log" {
		t.Errorf("create event %+v", ev[3])
	}
	if ev[4].TokenID != tok.ID || ev[4].DeviceID != dev.ID {
		t.Errorf("token event %+v", ev[4])
	}
	if ev[5].Status != 401 {
		t.Errorf("unauthorised REST event %+v", ev[5])
	}
	if ev[6].Status != 400 || ev[6].Error != "invalid_grant" || ev[6].Args["revokedGrant"] != true {
		t.Errorf("reused code event %+v", ev[6])
	}
	if ev[7].Status != 401 || ev[7].Error != "invalid_client" {
		t.Errorf("bad client event %+v", ev[7])
	}
	// The hub's negotiate redirected (the service's address, no token),
	// then the service negotiated and connected.
	if ev[8].DeviceID != dev.ID || ev[8].TokenID != tok.ID || !strings.HasSuffix(fmt.Sprint(ev[8].Args["service"]), "/client/") || ev[9].DeviceID != dev.ID {
		t.Errorf("negotiate events %+v %+v", ev[8], ev[9])
	}
	if ev[11].DeviceID != dev.ID || ev[11].ConnectionID == "" || ev[11].ConnectionID != ev[10].ConnectionID || ev[10].Args["transport"] != "websockets" {
		t.Errorf("hub events %+v %+v", ev[10], ev[11])
	}
	if ev[12].Status != 401 || ev[12].Error != "unknown device token" {
		t.Errorf("rejection %+v", ev[12])
	}

	// since filters; a bad since is refused.
	var later mockhub.EventsPage
	call(t, "GET", ts.URL+"/mock/events?since=11", "", nil, &later)
	if len(later.Events) != 2 || later.Events[0].Seq != 12 || later.Last != 13 {
		t.Errorf("since=11: %+v", later)
	}
	call(t, "GET", ts.URL+"/mock/events?since=13", "", nil, &later)
	if len(later.Events) != 0 || later.Last != 13 {
		t.Errorf("since=last: %+v", later)
	}
	for _, q := range []string{"since=-1", "since=x", "wait=2m", "wait=soon"} {
		if st, _, _ := call(t, "GET", ts.URL+"/mock/events?"+q, "", nil, nil); st != 400 {
			t.Errorf("%s: %d", q, st)
		}
	}
	if evs := s.Events(12); len(evs) != 1 || evs[0].Action != "rejected" {
		t.Errorf("Events(12) = %+v", evs)
	}
}

// The long poll waits while nothing happens and returns once a client
// does something. In a bubble: synctest.Wait proves the call is waiting
// before the client acts, without a sleep.
func TestEventsLongPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// DirectHub: no SignalR service on a real socket, which would
		// keep the bubble from ever being idle.
		s, err := mockhub.New(mockhub.Config{Logger: testLogger(), DirectHub: true, PeerUID: pipePeer})
		if err != nil {
			t.Fatal(err)
		}
		hc := testutil.ServePipe(t, s)
		t.Cleanup(func() { s.Close() })
		admin := &mockhub.AdminClient{BaseURL: "http://127.0.0.1", HTTPClient: hc}
		got := make(chan mockhub.EventsPage, 1)
		go func() {
			page, err := admin.Events(context.Background(), 0, 50*time.Second)
			if err != nil {
				t.Error(err)
			}
			got <- page
		}()
		synctest.Wait()
		if len(got) != 0 {
			t.Fatalf("the long poll returned with nothing to say: %+v", <-got)
		}
		resp, err := hc.Get("http://127.0.0.1/api/Device/userDevices/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if page := <-got; len(page.Events) == 0 || page.Events[0].Source != mockhub.SourceREST {
			t.Errorf("long poll: %+v", page)
		}
		// WaitEvent finds a later match.
		go func() {
			if resp, err := hc.Get("http://127.0.0.1/api/Device/userDevices/y"); err == nil {
				resp.Body.Close()
			}
		}()
		e, err := s.WaitEvent(t.Context(), 0, func(e mockhub.Event) bool { return strings.HasSuffix(e.Action, "/y") })
		if err != nil || e.Status != 401 {
			t.Errorf("WaitEvent: %+v %v", e, err)
		}
	})
}

func TestEventLogIsBounded(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{MaxEvents: 5})
	for range 12 {
		call(t, "GET", ts.URL+"/api/Device/userDevices/x", "", nil, nil)
	}
	evs := s.Events(0)
	if len(evs) != 5 || evs[0].Seq != 8 || evs[4].Seq != 12 {
		t.Errorf("kept %d events from %d", len(evs), evs[0].Seq)
	}
}

func TestAdminClient(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	ctx := context.Background()
	admin := &mockhub.AdminClient{BaseURL: ts.URL + "/"}
	created, err := admin.CreateDevice(ctx, mockhub.CreateDeviceRequest{Name: "via client"})
	if err != nil || created.Device.NameOverride != "via client" {
		t.Fatalf("CreateDevice: %+v %v", created, err)
	}
	_, err = admin.Command(ctx, created.Device.ID, "x", nil)
	var ae *mockhub.AdminError
	if !errors.As(err, &ae) || ae.Status != 409 || !strings.Contains(err.Error(), "no hub connection") {
		t.Errorf("Command without a connection: %v", err)
	}
	c, err := rawDial(t, ts.URL, hubHeaders(created.Token.Token))
	if err != nil {
		t.Fatal(err)
	}
	mockhubtest.WaitEvent(t, s, 0, "the connection", action("connected", created.Device.ID))
	macro := &deviceapi.Macro{ID: "m", Name: "M", Commands: []string{"go"}, Events: []deviceapi.MacroEvent{{EventType: "Pause", Extra: map[string]json.RawMessage{"milliseconds": json.RawMessage("50")}}}}
	if res, err := admin.Command(ctx, created.Device.ID, "go", macro); err != nil || res.Delivered != 1 {
		t.Fatalf("Command: %+v %v", res, err)
	}
	f, _ := c.next(wait)
	if f.Target != "DeviceCommand" || !strings.Contains(string(f.Arguments[1]), `"milliseconds":50`) {
		t.Errorf("pushed %+v", f)
	}
	if _, err := admin.StartListening(ctx, created.Device.ID); err != nil {
		t.Error(err)
	}
	if _, err := admin.StopListening(ctx, created.Device.ID); err != nil {
		t.Error(err)
	}
	if _, err := admin.Settings(ctx, created.Device.ID, json.RawMessage(`[1,2]`)); err != nil {
		t.Error(err)
	}
	if _, err := admin.Profile(ctx, created.Device.ID, json.RawMessage(`{"id":"p"}`)); err != nil {
		t.Error(err)
	}
	for _, want := range []string{"StartListening", "StopListening", "DeviceSettingsUpdate", "DeviceProfileUpdate"} {
		if f, err := c.next(wait); err != nil || f.Target != want {
			t.Errorf("want %s, got %+v %v", want, f, err)
		}
	}
	list, err := admin.Devices(ctx)
	if err != nil || len(list) != 1 || !list[0].Connected {
		t.Errorf("Devices: %+v %v", list, err)
	}
	d := mockhub.Duration(time.Minute)
	st, err := admin.Faults(ctx, mockhub.Faults{RefuseFor: &d})
	if err != nil || st.RefusingUntil == nil {
		t.Errorf("Faults: %+v %v", st, err)
	}
	res, err := admin.DisableToken(ctx, created.Token.ID)
	if err != nil || res.Dropped != 1 {
		t.Errorf("DisableToken: %+v %v", res, err)
	}
	page, err := admin.Events(ctx, 0, 0)
	if err != nil || len(page.Events) == 0 {
		t.Errorf("Events: %v", err)
	}
	if _, err := (&mockhub.AdminClient{BaseURL: "http://127.0.0.1:1"}).Devices(ctx); err == nil {
		t.Error("no error from a closed port")
	}
}

func TestCloseEndsHubConnections(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	_, tok, _ := s.CreateDevice("", "")
	c, err := rawDial(t, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if !c.closed(wait) {
		t.Fatal("connection survived Close")
	}
	_, err = rawDial(t, ts.URL, hubHeaders(tok.Token))
	var se *statusError
	if !errors.As(err, &se) || se.code != http.StatusServiceUnavailable {
		t.Errorf("dial after Close: %v", err)
	}
}

// TestCloseLeavesNoGoroutines: after connections come and go, faults and
// Close, the mock's goroutines (hub loops, senders, the library's reaper)
// are all gone. In a bubble over an in-memory network: once synctest.Wait
// says every goroutine of the bubble is blocked or gone, the count is
// final; no poll. It counts the bubble's goroutines only (what the rest
// of the process starts or ends meanwhile is not the mock's: the whole
// process's count failed once under go test -race ./hub/...).
func TestCloseLeavesNoGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := testutil.BubbleGoroutines()
		func() {
			s, base, hc, stop := pipeMock(t, mockhub.Config{KeepAliveInterval: 50 * time.Millisecond})
			var conns []*rawConn
			for i := range 10 {
				_, tok, _ := s.CreateDevice("", "")
				c, err := rawDialWith(t, hc, base, hubHeaders(tok.Token))
				if err != nil {
					t.Fatal(err)
				}
				c.invoke("1", "VerifySelf")
				c.next(wait)
				if i%2 == 0 {
					c.close()
				} else {
					conns = append(conns, c)
				}
			}
			s.Freeze(time.Minute)
			s.DropConnections()
			s.Freeze(0)
			stop()
			for _, c := range conns {
				c.closed(wait)
			}
		}()
		synctest.Wait()
		if after := testutil.BubbleGoroutines(); after.N > before.N || before.N == 0 {
			t.Errorf("%d goroutines of the bubble before, %d after Close:\n%s", before.N, after.N, after.Stacks)
		}
	})
}

// A profile set while the device is offline is in the answer to
// VerifySelf (the real service hands the current profile over there), and
// a command sent with noMacro arrives as the real service may send a voice
// phrase: DeviceCommand(command, null).
func TestVerifySelfCarriesTheProfileAndNoMacroSendsNull(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	ctx := context.Background()
	admin := &mockhub.AdminClient{BaseURL: ts.URL + "/"}
	created, err := admin.CreateDevice(ctx, mockhub.CreateDeviceRequest{Name: "voice"})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Device.ID
	profile := json.RawMessage(`{"id":"p-garden","name":"Garden","configuration":{"macros":[{"id":"7","name":"Water Plants","commands":["water the plants"],"events":[]}]}}`)
	if res, err := admin.Profile(ctx, id, profile); err != nil || res.Delivered != 0 {
		t.Fatalf("the profile of the offline device: %+v %v", res, err)
	}
	c, err := rawDial(t, ts.URL, hubHeaders(created.Token.Token))
	if err != nil {
		t.Fatal(err)
	}
	mockhubtest.WaitEvent(t, s, 0, "the connection", action("connected", id))
	c.invoke("1", "VerifySelf")
	f, err := c.next(wait)
	var dev deviceapi.UserDevice
	if err != nil || json.Unmarshal(f.Result, &dev) != nil || dev.ID != id || dev.CurrentProfile == nil ||
		len(dev.CurrentProfile.Configuration.Macros) != 1 || dev.CurrentProfile.Configuration.Macros[0].Name != "Water Plants" {
		t.Fatalf("VerifySelf answered %s (%v), want the device with its profile", f.Result, err)
	}

	if res, err := admin.Send(ctx, id, mockhub.CommandRequest{Command: "Water Plants", NoMacro: true}); err != nil || res.Delivered != 1 {
		t.Fatalf("a command with no macro: %+v %v", res, err)
	}
	f, err = c.next(wait)
	if err != nil || f.Target != "DeviceCommand" || len(f.Arguments) != 2 || string(f.Arguments[0]) != `"Water Plants"` || string(f.Arguments[1]) != "null" {
		t.Errorf("pushed %+v (%v), want DeviceCommand(\"Water Plants\", null)", f, err)
	}
	// noMacro with a macro is a contradiction.
	var ae *mockhub.AdminError
	_, err = admin.Send(ctx, id, mockhub.CommandRequest{Command: "x", MacroName: "Water Plants", NoMacro: true})
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(err.Error(), "noMacro") {
		t.Errorf("noMacro with macroName: %v", err)
	}
}
