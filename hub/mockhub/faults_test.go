package mockhub_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/philippseith/signalr"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
	"github.com/hubgate/hubgate/internal/testutil"
)

func TestDropFault(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	d1, t1, _ := s.CreateDevice("", "one")
	d2, t2, _ := s.CreateDevice("", "two")
	c1, err := rawDial(t, ts.URL, hubHeaders(t1.Token))
	if err != nil {
		t.Fatal(err)
	}
	c2, err := rawDial(t, ts.URL, hubHeaders(t2.Token))
	if err != nil {
		t.Fatal(err)
	}
	mockhubtest.WaitEvent(t, s, 0, "the first connection", action("connected", d1.ID))
	mockhubtest.WaitEvent(t, s, 0, "the second connection", action("connected", d2.ID))

	var st mockhub.FaultState
	if code, _, body := call(t, "POST", ts.URL+"/mock/faults", "", `{"drop":true}`, &st); code != 200 || st.Dropped != 2 {
		t.Fatalf("drop: %d %s", code, body)
	}
	for _, c := range []*rawConn{c1, c2} {
		if !c.closed(wait) {
			t.Fatal("a connection survived the drop")
		}
		// Abrupt: no SignalR close message, no WebSocket close frame.
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		if websocket.CloseStatus(err) != -1 {
			t.Errorf("the drop sent a close frame: %v", err)
		}
	}
	mockhubtest.WaitEvent(t, s, 0, "the first disconnect", action("disconnected", d1.ID))
	mockhubtest.WaitEvent(t, s, 0, "the second disconnect", action("disconnected", d2.ID))
	// New connections are welcome at once.
	if _, err := rawDial(t, ts.URL, hubHeaders(t1.Token)); err != nil {
		t.Errorf("reconnect after a drop: %v", err)
	}
	// The Go client reconnects by itself after a drop. The mock journals
	// a connection once it registered it, which may be after the client
	// saw its handshake answer: since is that entry, so that the wait
	// below is for the reconnection only.
	before := lastSeq(s)
	r := newReceiver()
	c := dial(t, ts.URL, t2.Token, r)
	states := make(chan signalr.ClientState, 100)
	c.ObserveStateChanged(states)
	since := mockhubtest.WaitEvent(t, s, before, "the Go client's connection", action("connected", d2.ID)).Seq
	s.DropConnections()
	waitLeft(t, states)
	wctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := <-c.WaitForState(wctx, signalr.ClientConnected); err != nil {
		t.Fatal(err)
	}
	mockhubtest.WaitEvent(t, s, since, "the reconnection", action("connected", d2.ID))
	if err := s.PushCommand(d2.ID, "after drop", nil); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, r.commands, "DeviceCommand"); got.Command != "after drop" {
		t.Errorf("got %+v", got)
	}
}

// TestDropWritesWhatWasQueuedFirst: a push the mock accepted before a
// drop reaches the client before the drop closes its connection, even
// when the client is slow to read it (a developer's "push, then drop"
// happens in that order); a client that does not read it at all loses it
// after a second, and the journal says so; a frozen hub drops at once. In
// a bubble over an in-memory network, where a write waits for the
// client's read and synctest.Wait says the drop is waiting.
func TestDropWritesWhatWasQueuedFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, base, hc, stop := pipeMock(t, mockhub.Config{})
		defer stop()
		dev, tok, _ := s.CreateDevice("", "")
		ctx := t.Context()

		// A slow reader: the drop waits for the push to be written.
		ws, err := dialHandshaken(t, hc, base, hubHeaders(tok.Token))
		if err != nil {
			t.Fatal(err)
		}
		mockhubtest.WaitEvent(t, s, 0, "the connection", action("connected", dev.ID))
		if err := s.PushCommand(dev.ID, "before the drop", nil); err != nil {
			t.Fatal(err)
		}
		dropped := make(chan int, 1)
		go func() { dropped <- s.DropConnections() }()
		synctest.Wait()
		select {
		case <-dropped:
			t.Fatal("the drop closed the connection before the push queued before it was written")
		default:
		}
		_, msg, err := ws.Read(ctx)
		if err != nil || !strings.Contains(string(msg), `"target":"DeviceCommand"`) || !strings.Contains(string(msg), "before the drop") {
			t.Fatalf("the client read %q, %v; want the DeviceCommand pushed before the drop", msg, err)
		}
		if n := <-dropped; n != 1 {
			t.Errorf("dropped %d connections, want 1", n)
		}
		if _, msg, err := ws.Read(ctx); err == nil {
			t.Errorf("the connection survived the drop: read %q", msg)
		}
		for _, e := range s.Events(0) {
			if e.Error != "" {
				t.Errorf("journal: %+v", e)
			}
		}

		// A client that never reads loses the push after flushBeforeDrop,
		// and the journal tells.
		since := lastSeq(s)
		ws, err = dialHandshaken(t, hc, base, hubHeaders(tok.Token))
		if err != nil {
			t.Fatal(err)
		}
		defer ws.CloseNow()
		since = mockhubtest.WaitEvent(t, s, since, "the second connection", action("connected", dev.ID)).Seq
		for _, cmd := range []string{"never read", "never written"} {
			if err := s.PushCommand(dev.ID, cmd, nil); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		s.DropConnections()
		if waited := time.Since(start); waited != time.Second {
			t.Errorf("the drop waited %s for a client that does not read, want 1s", waited)
		}
		// Both lost pushes are journaled: the one being written, and the
		// one still queued behind it.
		lost := func(e mockhub.Event) bool {
			return e.Action == "DeviceCommand" && strings.HasPrefix(e.Error, "not delivered: ")
		}
		first := mockhubtest.WaitEvent(t, s, since, "the lost push", lost)
		mockhubtest.WaitEvent(t, s, first.Seq, "the lost push queued behind it", lost)

		// A frozen hub drops at once: its writes wait for the thaw.
		since = lastSeq(s)
		ws, err = dialHandshaken(t, hc, base, hubHeaders(tok.Token))
		if err != nil {
			t.Fatal(err)
		}
		defer ws.CloseNow()
		mockhubtest.WaitEvent(t, s, since, "the third connection", action("connected", dev.ID))
		s.Freeze(time.Minute)
		if err := s.PushCommand(dev.ID, "frozen", nil); err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		s.DropConnections()
		if waited := time.Since(start); waited != 0 {
			t.Errorf("a frozen hub's drop waited %s", waited)
		}
		s.Freeze(0)
	})
}

func TestRefuseFault(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	dev, tok, _ := s.CreateDevice("", "")
	old, err := rawDial(t, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	var st mockhub.FaultState
	if code, _, body := call(t, "POST", ts.URL+"/mock/faults", "", `{"refuseFor":"1m"}`, &st); code != 200 || st.RefusingUntil == nil || st.Dropped != 0 {
		t.Fatalf("refuse: %d %s", code, body)
	}
	_, err = rawDial(t, ts.URL, hubHeaders(tok.Token))
	var se *statusError
	if !errors.As(err, &se) || se.code != 503 {
		t.Fatalf("negotiate while refusing: %v", err)
	}
	if ra, _ := strconv.Atoi(se.header.Get("Retry-After")); ra < 1 || ra > 60 {
		t.Errorf("Retry-After %q", se.header.Get("Retry-After"))
	}
	_, err = signalr.NewHTTPConnection(context.Background(), ts.URL+"/device",
		signalr.WithHTTPHeaders(func() http.Header { return hubHeaders(tok.Token) }))
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("Go client while refusing: %v", err)
	}
	// Without negotiation (skipNegotiation), the WebSocket start is refused too.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+"/device", &websocket.DialOptions{HTTPHeader: hubHeaders(tok.Token)})
	if err == nil || resp == nil || resp.StatusCode != 503 {
		t.Errorf("direct WebSocket while refusing: %v", err)
	}
	// The existing connection keeps working.
	old.invoke("1", "VerifySelf")
	if f, err := old.next(wait); err != nil || f.Type != 3 || f.Error != "" {
		t.Errorf("existing connection: %+v %v", f, err)
	}
	if err := s.PushCommand(dev.ID, "still here", nil); err != nil {
		t.Error(err)
	}
	if f, err := old.next(wait); err != nil || f.Target != "DeviceCommand" {
		t.Errorf("push while refusing: %+v %v", f, err)
	}
	refused := 0
	for _, e := range s.Events(0) {
		if e.Action == "refused" && e.Status == 503 {
			refused++
		}
	}
	if refused != 3 {
		t.Errorf("%d refusals logged", refused)
	}
	// Ending the refusal.
	var ended mockhub.FaultState
	if code, _, _ := call(t, "POST", ts.URL+"/mock/faults", "", `{"refuseFor":"0s"}`, &ended); code != 200 || ended.RefusingUntil != nil {
		t.Fatalf("end refusal: %+v", ended)
	}
	if _, err := rawDial(t, ts.URL, hubHeaders(tok.Token)); err != nil {
		t.Errorf("after the refusal: %v", err)
	}
}

func TestFreezeFaultStopsTrafficWithoutClosing(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{KeepAliveInterval: 50 * time.Millisecond})
	dev, tok, _ := s.CreateDevice("", "")
	c, err := rawDial(t, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	// Pings flow while not frozen.
	if !c.ping(wait) {
		t.Fatal("no ping before the freeze")
	}
	var st mockhub.FaultState
	if code, _, body := call(t, "POST", ts.URL+"/mock/faults", "", `{"freeze":"10m"}`, &st); code != 200 || st.FrozenUntil == nil {
		t.Fatalf("freeze: %d %s", code, body)
	}
	if err := c.invoke("42", "VerifySelf"); err != nil {
		t.Fatal(err)
	}
	if err := s.PushCommand(dev.ID, "while frozen", nil); err != nil {
		t.Fatal(err)
	}
	// The freeze holds, seen from the mock: the invocation's read waits at
	// the gate (the hub never got it), and so does a write (a keep-alive
	// ping or the push; the connection's writes go out one at a time, so
	// the rest wait behind it). A freeze that let either direction through
	// never gets here.
	// The mock announces no hold (Faults reads a counter): a bounded poll.
	testutil.WaitFor(t, "the freeze to hold a read and a write", func() bool {
		return s.Faults(mockhub.Faults{}).Held >= 2
	})
	// So nothing made after the freeze has reached the client: what it
	// received is at most keep-alive pings already on their way.
	for pending := true; pending; {
		select {
		case f, ok := <-c.frames:
			if !ok {
				t.Fatal("the freeze closed the connection")
			}
			if f.Type != 6 {
				t.Fatalf("a frame arrived while frozen: %+v", f)
			}
		default:
			pending = false
		}
	}
	if s.Connections(dev.ID) != 1 {
		t.Error("the mock forgot the frozen connection")
	}
	if deviceInfo(t, ts.URL, dev.ID).Device.IsVerified {
		t.Error("VerifySelf ran while frozen")
	}
	// A new negotiation waits at the gate rather than failing fast.
	held := s.Faults(mockhub.Faults{}).Held
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/device/negotiate?negotiateVersion=1", nil)
	req.Header = hubHeaders(tok.Token)
	answered := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("negotiate answered %d while frozen", resp.StatusCode)
		} else {
			err = nil
		}
		answered <- err
	}()
	testutil.WaitFor(t, "the negotiate to wait for the thaw", func() bool {
		return s.Faults(mockhub.Faults{}).Held > held
	})
	cancel()
	if err := <-answered; err != nil {
		t.Error(err)
	}

	// Thaw: the connection resumes; the result and the push arrive.
	var thawed mockhub.FaultState
	if code, _, _ := call(t, "POST", ts.URL+"/mock/faults", "", `{"freeze":"0s"}`, &thawed); code != 200 || thawed.FrozenUntil != nil {
		t.Fatalf("thaw: %+v", thawed)
	}
	var gotResult, gotPush bool
	for !gotResult || !gotPush {
		f, err := c.next(wait)
		if err != nil {
			t.Fatalf("after the thaw: %v (result %v, push %v)", err, gotResult, gotPush)
		}
		gotResult = gotResult || f.Type == 3 && f.InvocationID == "42"
		gotPush = gotPush || f.Target == "DeviceCommand"
	}
	if !c.ping(wait) {
		t.Error("no ping after the thaw")
	}
}

func TestFreezeIsNoticedByAGoClient(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{KeepAliveInterval: 100 * time.Millisecond})
	dev, tok, _ := s.CreateDevice("", "")
	r := newReceiver()
	c := dial(t, ts.URL, tok.Token, r, signalr.TimeoutInterval(time.Second), signalr.KeepAliveInterval(200*time.Millisecond))
	if err := invoke(c, wait, nil, "VerifySelf"); err != nil {
		t.Fatal(err)
	}
	first := s.Events(0)
	states := make(chan signalr.ClientState, 100)
	c.ObserveStateChanged(states)
	s.Freeze(10 * time.Minute)
	waitLeft(t, states) // the client's server timeout fired
	// The mock did not close the connection: it still counts it.
	if n := s.Connections(dev.ID); n != 1 {
		t.Errorf("connections while frozen: %d", n)
	}
	s.Freeze(0)
	wctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := <-c.WaitForState(wctx, signalr.ClientConnected); err != nil {
		t.Fatal(err)
	}
	// The old connection is gone, a new one is up.
	var oldID string
	var oldSeq int64
	for _, e := range first {
		if e.Action == "connected" {
			oldID, oldSeq = e.ConnectionID, e.Seq
		}
	}
	if _, err := s.WaitEvent(wctx, 0, func(e mockhub.Event) bool { return e.Action == "disconnected" && e.ConnectionID == oldID }); err != nil {
		t.Fatal("the frozen connection never ended after the thaw")
	}
	mockhubtest.WaitEvent(t, s, oldSeq, "the new connection", func(e mockhub.Event) bool {
		return e.Action == "connected" && e.DeviceID == dev.ID && e.ConnectionID != oldID
	})
	if err := invoke(c, wait, nil, "VerifySelf"); err != nil {
		t.Fatal(err)
	}
}

func TestFaultRequestValidation(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{})
	for _, body := range []string{`{"freeze":"soon"}`, `{"freeze":5}`, `{"refuseFor":"-1s"}`, `{"drop":"yes"}`, `{"explode":true}`, `[1]`} {
		if code, _, _ := call(t, "POST", ts.URL+"/mock/faults", "", body, nil); code != 400 {
			t.Errorf("%s: %d", body, code)
		}
	}
	var st mockhub.FaultState
	if code, _, _ := call(t, "POST", ts.URL+"/mock/faults", "", nil, &st); code != 200 || st.Dropped != 0 || st.FrozenUntil != nil || st.RefusingUntil != nil {
		t.Errorf("empty request: %d %+v", code, st)
	}
}

// ping waits for a ping frame.
func (c *rawConn) ping(timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				return false
			}
			if f.Type == 6 {
				return true
			}
		case <-deadline:
			return false
		}
	}
}
