package hub

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
)

// testLimit is the receive limit of the too-large tests (small, so that
// the records over it stay cheap on the in-memory network).
const testLimit = 64 << 10

// giant is a JSON string argument of n bytes (quotes included).
func giant(n int) string { return `"` + strings.Repeat("g", n-2) + `"` }

// TestWireTooLargeKeepsConnection: a record over the limit, whatever it
// is, is skipped and reported as an event with its size and target; the
// connection stays and the next record is delivered.
func TestWireTooLargeKeepsConnection(t *testing.T) {
	cmdRec := `{"type":1,"invocationId":"7","target":"DeviceCommand","arguments":["water the plants",{"id":"m1","name":"water","events":[{"eventType":"Type","typedPhrase":` + giant(200<<10) + `}]}]}`
	profileRec := invocation("DeviceProfileUpdate", `{"id":"`+testDevice+`","currentProfile":{"id":"p","configuration":{"macros":[{"id":"m","name":`+giant(300<<10)+`}]}}}`)
	unknownRec := invocation("SomethingNew", giant(100<<10))
	hugeCmdText := invocation("DeviceCommand", giant(150<<10), "null")
	// The arguments first (member order is not fixed): the target
	// after them is beyond the kept prefix.
	argsFirstRec := `{"arguments":["water the plants",{"id":"m1","typedPhrase":` + giant(200<<10) + `}],"target":"DeviceCommand","type":1}`
	unterminated := []byte(invocation("DeviceCommand", `"half"`, `{"name":`+giant(120<<10)))
	for _, tc := range []struct {
		name    string
		send    func(pc *peerConn)
		size    int
		target  string
		of      Kind
		command string
		invID   string
		unterm  bool
	}{
		{"DeviceCommand", func(pc *peerConn) { pc.send(cmdRec) }, len(cmdRec), "DeviceCommand", KindDeviceCommand, "water the plants", "7", false},
		{"DeviceCommand whose command is the giant part", func(pc *peerConn) { pc.send(hugeCmdText) }, len(hugeCmdText), "DeviceCommand", KindDeviceCommand, strings.Repeat("g", 256) + "…", "", false},
		{"DeviceProfileUpdate", func(pc *peerConn) { pc.send(profileRec) }, len(profileRec), "DeviceProfileUpdate", KindDeviceProfileUpdate, "", "", false},
		{"unknown target", func(pc *peerConn) { pc.send(unknownRec) }, len(unknownRec), "SomethingNew", KindOther, "", "", false},
		{"DeviceCommand with its arguments first", func(pc *peerConn) { pc.send(argsFirstRec) }, len(argsFirstRec), "", KindOther, "water the plants", "", false},
		{"unterminated giant record", func(pc *peerConn) { _ = pc.sendRaw(unterminated) }, len(unterminated), "DeviceCommand", KindDeviceCommand, "half", "", true},
		{"between two small records of one message", func(pc *peerConn) {
			pc.send(`{"type":6}`, profileRec, `{"type":6}`)
		}, len(profileRec), "DeviceProfileUpdate", KindDeviceProfileUpdate, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newPeer(t, testDevice, testToken)
				cfg := wireConfig(t, p, nil)
				cfg.MaxMessageSize = testLimit
				c := start(t, must(New(cfg)))
				pc := p.nextConn(t, wait)
				waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))

				tc.send(pc)
				e := nextEvent(t, c.Client, wait)
				if e.Kind != KindTooLarge || e.TooLarge == nil {
					t.Fatalf("event = %+v, want a TooLarge event", e)
				}
				want := TooLarge{Of: tc.of, Size: int64(tc.size), Limit: testLimit, Unterminated: tc.unterm}
				if *e.TooLarge != want || e.Target != tc.target || e.Command != tc.command || e.InvocationID != tc.invID {
					t.Errorf("event: target %q command %q invocation %q %+v; want %q %q %q %+v",
						e.Target, e.Command, e.InvocationID, *e.TooLarge, tc.target, tc.command, tc.invID, want)
				}
				if tc.invID != "" {
					r := pc.expect(t, "the completion of the skipped invocation", wait, func(r rec) bool { return r.Type == 3 && r.id() == tc.invID })
					if !strings.Contains(r.Error, fmt.Sprint(tc.size)) {
						t.Errorf("completion error %q does not give the size", r.Error)
					}
				}
				// The connection stays and reads on.
				pc.send(invocation("DeviceCommand", `"after"`, "null"))
				if e := nextEvent(t, c.Client, wait); e.Kind != KindDeviceCommand || e.Command != "after" {
					t.Fatalf("next event = %+v", e)
				}
				if s, st := c.Stats(), c.State(); s.Sessions != 1 || s.Attempts != 1 || s.TooLarge != 1 || st.Status != StatusConnected {
					t.Errorf("stats %+v, state %v", s, st)
				}
				pc.checkNoBadCompletion(t)
			})
		})
	}
}

// TestWireManyTooLargeNoReconnect: oversize records in a row, in one
// message and one per message, terminated or not: one event each, one
// connection, no reconnect.
func TestWireManyTooLargeNoReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		cfg := wireConfig(t, p, nil)
		cfg.MaxMessageSize = testLimit
		c := start(t, must(New(cfg)))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))

		big := invocation("DeviceCommand", `"big"`, `{"name":`+giant(testLimit)+`}`)
		const n = 60
		for i := 0; i < n/4; i++ {
			pc.send(big)                             // one per message
			pc.send(big, big)                        // two in one message
			_ = pc.sendRaw([]byte(big[:len(big)-2])) // unterminated
		}
		pc.send(invocation("DeviceCommand", `"small"`, "null"))
		for i := 0; i < n; i++ {
			e := nextEvent(t, c.Client, wait)
			if e.Kind != KindTooLarge || e.Command != "big" || e.TooLarge.Size < testLimit {
				t.Fatalf("event %d = %+v", i, e)
			}
		}
		if e := nextEvent(t, c.Client, wait); e.Kind != KindDeviceCommand || e.Command != "small" {
			t.Fatalf("after the giants: %+v", e)
		}
		if s := c.Stats(); s.Attempts != 1 || s.Sessions != 1 || s.TooLarge != n {
			t.Errorf("stats %+v", s)
		}
	})
}

// TestWireTooLargeRestInNextMessage: a record over the limit cut at its
// message's end whose rest comes in the next message (a hub the official
// clients would not work with): the rest is dropped, one event, and the
// record after it is read.
func TestWireTooLargeRestInNextMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		cfg := wireConfig(t, p, nil)
		cfg.MaxMessageSize = testLimit
		c := start(t, must(New(cfg)))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))

		rec := invocation("DeviceProfileUpdate", `{"id":"x","nameOverride":`+giant(3*testLimit)+`}`)
		cut := len(rec) / 2
		_ = pc.sendRaw([]byte(rec[:cut]), []byte(rec[cut:]+"\x1e"+invocation("DeviceCommand", `"next"`, "null")+"\x1e"))
		e := nextEvent(t, c.Client, wait)
		if e.Kind != KindTooLarge || e.TooLarge.Of != KindDeviceProfileUpdate || !e.TooLarge.Unterminated || e.TooLarge.Size != int64(cut) {
			t.Fatalf("event = %+v %+v", e, e.TooLarge)
		}
		if e := nextEvent(t, c.Client, wait); e.Kind != KindDeviceCommand || e.Command != "next" {
			t.Fatalf("after the rest: %+v", e)
		}
		if s := c.Stats(); s.Sessions != 1 || s.TooLarge != 1 {
			t.Errorf("stats %+v", s)
		}
	})
}

// TestWireAnswerTooLarge: VerifySelf's and GetLatestDevice's answer (the
// device with its profile) over the limit, its id first (as a device
// record's is): the id is checked, the connection is made with the
// profile unread, and the consumer hears of it once.
func TestWireAnswerTooLarge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		p.devicePad.Store(2 * testLimit)
		cfg := wireConfig(t, p, nil)
		cfg.MaxMessageSize = testLimit
		c := start(t, must(New(cfg)))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		e := nextEvent(t, c.Client, wait)
		if e.Kind != KindTooLarge || e.Target != "VerifySelf" || e.TooLarge.Of != KindDeviceProfileUpdate ||
			e.TooLarge.Size <= 2*testLimit || e.TooLarge.Limit != testLimit {
			t.Fatalf("event = %+v %+v", e, e.TooLarge)
		}
		if c.Device() != nil {
			t.Errorf("a device was recorded from an answer that was not read")
		}
		pc.send(invocation("DeviceCommand", `"after"`, "null"))
		if e := nextEvent(t, c.Client, wait); e.Kind != KindDeviceCommand || e.Command != "after" {
			t.Fatalf("next event = %+v (GetLatestDevice's answer told again?)", e)
		}
		if s := c.Stats(); s.Sessions != 1 || s.TooLarge != 1 {
			t.Errorf("stats %+v", s)
		}
	})
}

// TestWireAnswerTooLargeWrongDevice: VerifySelf's answer over the limit
// is still checked against the paired device, by the id read from its
// first bytes: another device's is the same fatal stop as a whole answer.
func TestWireAnswerTooLargeWrongDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		p.devicePad.Store(2 * testLimit)
		p.verifyAs.Store("someone-else")
		cfg := wireConfig(t, p, nil)
		cfg.MaxMessageSize = testLimit
		c := start(t, must(New(cfg)))
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
		if st := c.State(); st.Status != StatusStopped || st.Cause != CauseWrongDevice {
			t.Errorf("state = %v", st)
		}
	})
}

// TestWireAnswerTooLargeNoID: VerifySelf's answer over the limit whose
// id is not in its first bytes (a giant member before it): the device
// cannot be verified, so no connection; the reason names the setting.
func TestWireAnswerTooLargeNoID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		p.devicePad.Store(2 * testLimit)
		p.devicePadFirst.Store(true)
		cfg := wireConfig(t, p, nil)
		cfg.MaxMessageSize = testLimit
		c := start(t, must(New(cfg)))
		st := waitState(t, c.Client, "the protocol error", wait, func(s State) bool { return s.Cause == CauseProtocol })
		if !errors.Is(st.Err, ErrProtocol) || !strings.Contains(st.Reason, "hub.max_message_bytes") ||
			!strings.Contains(st.Reason, "raise") || st.Status == StatusConnected {
			t.Errorf("state = %v (%v)", st, st.Err)
		}
		if s := c.Stats(); s.TooLarge != 0 {
			t.Errorf("stats %+v: the answer was taken as a device", s)
		}
	})
}

func TestPeekRecord(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want peeked
	}{
		{`{"type":1,"target":"DeviceCommand","arguments":["lights on",{"x":`, peeked{typ: 1, hasType: true, target: "DeviceCommand", command: "lights on"}},
		{`{"type":1,"headers":{"a":"b"},"invocationId":"9","target":"DeviceCommand","arguments":[ "caf\u00e9 \"x\"", {`, peeked{typ: 1, hasType: true, target: "DeviceCommand", invocationID: "9", command: `café "x"`}},
		{`{"type":1,"target":"DeviceCommand","arguments":["abc\u00`, peeked{typ: 1, hasType: true, target: "DeviceCommand", command: "abc…"}},
		{`{"type":1,"target":"DeviceCommand","arguments":[{"id":1},"x"]}`, peeked{typ: 1, hasType: true, target: "DeviceCommand"}},
		{`{"target":"Dev`, peeked{}},
		{`{"type":3,"invocationId":"4","result":{"id":`, peeked{typ: 3, hasType: true, invocationID: "4"}},
		{`"rest of a string"]}`, peeked{}},
		// Member order is not fixed: what follows whole arguments is read.
		{`{"arguments":["water the plants",{"a":[1,"]"]}],"target":"DeviceCommand","invocationId":"5","type":1}`, peeked{typ: 1, hasType: true, target: "DeviceCommand", invocationID: "5", command: "water the plants"}},
		{`{"arguments":["water the plants",{"a":"ggg`, peeked{command: "water the plants"}},
		{`{"result":{"name":"n","id":"dev-1","currentProfile":{"x":`, peeked{resultID: "dev-1"}},
		{`{"result":{"id":"dev-1","p":"x"},"invocationId":"4","type":3}`, peeked{typ: 3, hasType: true, invocationID: "4", resultID: "dev-1"}},
		{`{"result":{"p":{"q":"gg`, peeked{}},
		{`{"result":[1,2],"invocationId":"4","type":3}`, peeked{typ: 3, hasType: true, invocationID: "4"}},
		{``, peeked{}},
	} {
		if got := peekRecord([]byte(tc.in)); got != tc.want {
			t.Errorf("peekRecord(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
	long := `{"type":1,"target":"DeviceCommand","arguments":["` + strings.Repeat("é", 300) + `"]}`
	if got := peekRecord([]byte(long)).command; got != strings.Repeat("é", 128)+"…" {
		t.Errorf("long command = %q", got)
	}
}

func TestAnswerTooLargeIsErrMessageTooLarge(t *testing.T) {
	size, limit, id, ok := parseTooLargeAnswer(tooLargeAnswer(123456, 1000, ""))
	if !ok || size != 123456 || limit != 1000 || id != "" {
		t.Fatalf("parse = %d %d %q %v", size, limit, id, ok)
	}
	size, limit, id, ok = parseTooLargeAnswer(tooLargeAnswer(5, 4, `dev "1"; result id "x"`))
	if !ok || size != 5 || limit != 4 || id != `dev "1"; result id "x"` {
		t.Fatalf("parse = %d %d %q %v", size, limit, id, ok)
	}
	if !errors.Is(&answerTooLarge{method: "VerifySelf", size: 1, limit: 1}, ErrMessageTooLarge) {
		t.Error("answerTooLarge is not ErrMessageTooLarge")
	}
}

// TestWireSlowGiantKeepsTheConnection: a message over the limit that
// takes longer than ServerTimeout to arrive does not cost the connection
// (the skip hands the library a ping at least every second).
func TestWireSlowGiantKeepsTheConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		cfg := wireConfig(t, p, nil)
		cfg.MaxMessageSize = testLimit
		cfg.ServerTimeout = 3 * time.Second
		c := start(t, must(New(cfg)))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))

		pc.writeMu.Lock()
		wr, err := pc.ws.Writer(pc.ctx, websocket.MessageText)
		if err != nil {
			t.Fatal(err)
		}
		head := `{"type":1,"target":"DeviceCommand","arguments":["slow","`
		size := len(head)
		_, _ = wr.Write([]byte(head))
		for range 12 { // 12 s, in 64 KiB frames a second apart
			chunk := strings.Repeat("s", 64<<10)
			if _, err := wr.Write([]byte(chunk)); err != nil {
				t.Fatal(err)
			}
			size += len(chunk)
			time.Sleep(time.Second)
		}
		_, _ = wr.Write([]byte(`"]}` + "\x1e"))
		size += 3
		_ = wr.Close()
		pc.writeMu.Unlock()

		e := nextEvent(t, c.Client, wait)
		if e.Kind != KindTooLarge || e.Command != "slow" || e.TooLarge.Size != int64(size) {
			t.Fatalf("event = %+v", e)
		}
		if s, st := c.Stats(), c.State(); s.Sessions != 1 || st.Status != StatusConnected {
			t.Errorf("the slow giant cost the connection: %+v %v", s, st)
		}
	})
}
