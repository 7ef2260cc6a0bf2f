package mockhub_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

// jsDevice is a running testdata/npm/signalr-device.cjs.
type jsDevice struct {
	cmd    *exec.Cmd
	lines  chan map[string]any
	stderr testutil.SyncBuffer
	done   chan struct{} // closed when node exited
}

// startJSDevice runs the official @microsoft/signalr client as a device.
// The token goes through the environment, never argv.
func startJSDevice(t *testing.T, hubURL, token string, env ...string) *jsDevice {
	t.Helper()
	node := testenv.RequireNode(t)
	testenv.NpmBin(t, "@microsoft/signalr/package.json")
	script := filepath.Join(testenv.ModuleRoot(t), testenv.NpmDir, "signalr-device.cjs")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(append(os.Environ(), "HUB_URL="+hubURL, "DEVICE_TOKEN="+token), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &jsDevice{cmd: cmd, lines: make(chan map[string]any, 100), done: make(chan struct{})}
	cmd.Stderr = &d.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				d.lines <- m
			}
		}
		close(d.lines)
		cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-d.done
	})
	return d
}

func (d *jsDevice) Stderr() string {
	return d.stderr.String()
}

// expect waits for the next line and checks its event.
func (d *jsDevice) expect(t *testing.T, event string) map[string]any {
	t.Helper()
	select {
	case m, ok := <-d.lines:
		if !ok {
			t.Fatalf("node exited before %q; stderr: %s", event, d.Stderr())
		}
		if m["event"] != event {
			t.Fatalf("node said %v, want %q; stderr: %s", m, event, d.Stderr())
		}
		return m
	case <-time.After(time.Minute):
		t.Fatalf("no %q from node; stderr: %s", event, d.Stderr())
	}
	return nil
}

func (d *jsDevice) exitCode(t *testing.T) int {
	t.Helper()
	for range d.lines {
	}
	select {
	case <-d.done:
	case <-time.After(time.Minute):
		t.Fatal("node did not exit")
	}
	return d.cmd.ProcessState.ExitCode()
}

func decodeAs[T any](t *testing.T, v any) T {
	t.Helper()
	var out T
	b, _ := json.Marshal(v)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOfficialSignalRClient: the official @microsoft/signalr npm client
// connects with a device token, calls VerifySelf, receives a DeviceCommand
// pushed through the admin API, and is refused once the token is disabled.
func TestOfficialSignalRClient(t *testing.T) {
	for _, tc := range []struct {
		transport, auth, wire string
	}{
		{"WebSockets", "both", "websockets"},
		{"WebSockets", "header", "websockets"},
		{"WebSockets", "bearer", "websockets"},
		{"ServerSentEvents", "both", "sse"},
		{"ServerSentEvents", "bearer", "sse"},
	} {
		t.Run(tc.transport+"/"+tc.auth, func(t *testing.T) {
			s, ts := newMock(t, mockhub.Config{})
			dev, tok, _ := s.CreateDevice("", "JS "+tc.transport)
			js := startJSDevice(t, ts.URL+"/device", tok.Token, "TRANSPORT="+tc.transport, "AUTH="+tc.auth)
			js.expect(t, "connected")
			self := decodeAs[deviceapi.UserDevice](t, js.expect(t, "verified")["device"])
			if self.ID != dev.ID || !self.IsVerified || !self.IsConnected {
				t.Errorf("VerifySelf = %+v", self)
			}
			js.expect(t, "listening")
			if !deviceInfo(t, ts.URL, dev.ID).Device.IsListening {
				t.Error("DeviceStartedListening did not set isListening")
			}

			hold := 80.0
			macro := deviceapi.Macro{ID: "0d9e2f7a-5b6c-4d3e-8f1a-2b3c4d5e6f70", Name: "Save", Commands: []string{"save it"},
				Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventKeyPress, Keys: []string{"ControlLeft", "S"}, HoldTimeMilliseconds: &hold},
					{EventType: "PlayAudio", Extra: map[string]json.RawMessage{"file": json.RawMessage(`"ding.wav"`)}}}}
			var pr mockhub.PushResult
			if st, _, body := call(t, "POST", ts.URL+"/mock/devices/"+dev.ID+"/command", "", mockhub.CommandRequest{Command: "save it", Macro: &macro}, &pr); st != 200 || pr.Delivered != 1 {
				t.Fatalf("command: %d %s", st, body)
			}
			got := js.expect(t, "command")
			m := decodeAs[deviceapi.Macro](t, got["macro"])
			if got["command"] != "save it" || m.ID != macro.ID || len(m.Events) != 2 || m.Events[0].Keys[1] != "S" ||
				*m.Events[0].HoldTimeMilliseconds != 80 || string(m.Events[1].Extra["file"]) != `"ding.wav"` {
				t.Errorf("the JS client received %v", got)
			}
			js.expect(t, "stopped")
			if code := js.exitCode(t); code != 0 {
				t.Fatalf("node exit %d: %s", code, js.Stderr())
			}

			// The transport really was the one asked for.
			var transport any
			for _, e := range s.Events(0) {
				if e.Action == "connected" && e.DeviceID == dev.ID {
					transport = e.Args["transport"]
				}
			}
			if transport != tc.wire {
				t.Errorf("connected over %v, want %s", transport, tc.wire)
			}
			mockhubtest.WaitEvent(t, s, 0, "the disconnect", action("disconnected", dev.ID))

			// Disabled token: refused.
			if st, _, _ := call(t, "POST", ts.URL+"/mock/tokens/"+tok.ID+"/disable", "", nil, nil); st != 200 {
				t.Fatal("disable")
			}
			js = startJSDevice(t, ts.URL+"/device", tok.Token, "TRANSPORT="+tc.transport, "AUTH="+tc.auth, "MODE=reject")
			rej := js.expect(t, "rejected")
			if rej["statusCode"] != 401.0 && !strings.Contains(rej["error"].(string), "401") {
				t.Errorf("rejection %v", rej)
			}
			if code := js.exitCode(t); code != 0 {
				t.Errorf("node exit %d: %s", code, js.Stderr())
			}
			if strings.Contains(js.Stderr(), tok.Token) {
				t.Error("the token reached node's stderr")
			}
		})
	}
}

// TestOfficialSignalRClientDroppedByDisable: a live JS connection ends
// when its token is disabled.
func TestOfficialSignalRClientDroppedByDisable(t *testing.T) {
	for _, transport := range []string{"WebSockets", "ServerSentEvents"} {
		t.Run(transport, func(t *testing.T) {
			s, ts := newMock(t, mockhub.Config{})
			dev, tok, _ := s.CreateDevice("", "")
			js := startJSDevice(t, ts.URL+"/device", tok.Token, "TRANSPORT="+transport)
			js.expect(t, "connected")
			js.expect(t, "verified")
			js.expect(t, "listening")
			if n, err := s.DisableToken(tok.ID); err != nil || n != 1 {
				t.Fatalf("DisableToken: %d %v", n, err)
			}
			js.expect(t, "closed")
			if code := js.exitCode(t); code != 3 {
				t.Errorf("node exit %d after its connection was dropped", code)
			}
			mockhubtest.WaitEvent(t, s, 0, "the disconnect", action("disconnected", dev.ID))
		})
	}
}

// TestOfficialSignalRClientNoticesAFreeze: with the hub frozen, the JS
// client's server timeout fires (no pings arrive) while the mock keeps the
// connection; after the thaw the mock lets it go.
func TestOfficialSignalRClientNoticesAFreeze(t *testing.T) {
	for _, transport := range []string{"WebSockets", "ServerSentEvents"} {
		t.Run(transport, func(t *testing.T) {
			s, ts := newMock(t, mockhub.Config{KeepAliveInterval: 100 * time.Millisecond})
			dev, tok, _ := s.CreateDevice("", "")
			js := startJSDevice(t, ts.URL+"/device", tok.Token, "TRANSPORT="+transport, "SERVER_TIMEOUT_MS=1500")
			js.expect(t, "connected")
			js.expect(t, "verified")
			js.expect(t, "listening")
			s.Freeze(10 * time.Minute)
			closed := js.expect(t, "closed")
			if !strings.Contains(closed["error"].(string), "timeout") {
				t.Errorf("closed because %v", closed["error"])
			}
			if n := s.Connections(dev.ID); n != 1 {
				t.Errorf("connections while frozen: %d", n)
			}
			js.exitCode(t)
			s.Freeze(0)
			mockhubtest.WaitEvent(t, s, 0, "the disconnect after the thaw", action("disconnected", dev.ID))
		})
	}
}

// TestOfficialSignalRClientFollowsTheRedirect: the official
// @microsoft/signalr client connects through the hub's negotiate redirect
// (the mock's SignalR service), receives a pushed DeviceCommand, and,
// once every redirect token has expired and its connection is dropped,
// reconnects on its own with a fresh negotiate at /device/negotiate: the
// proof that the mock's redirect is the one real clients expect.
func TestOfficialSignalRClientFollowsTheRedirect(t *testing.T) {
	for _, transport := range []string{"WebSockets", "ServerSentEvents"} {
		t.Run(transport, func(t *testing.T) {
			s, ts := newMock(t, mockhub.Config{})
			dev, tok, _ := s.CreateDevice("", "JS redirect")
			js := startJSDevice(t, ts.URL+"/device", tok.Token, "TRANSPORT="+transport, "MODE=reconnect")
			js.expect(t, "connected")
			if self := decodeAs[deviceapi.UserDevice](t, js.expect(t, "verified")["device"]); self.ID != dev.ID {
				t.Errorf("VerifySelf = %+v", self)
			}
			js.expect(t, "listening")
			if err := s.PushCommand(dev.ID, "first", nil); err != nil {
				t.Fatal(err)
			}
			if got := js.expect(t, "command"); got["command"] != "first" {
				t.Errorf("first command %v", got)
			}

			// Every redirect token expires, then the connection drops.
			if n := s.ExpireServiceTokens(); n != 1 {
				t.Errorf("%d live service tokens, want 1", n)
			}
			since := lastSeq(s)
			s.DropConnections()
			js.expect(t, "reconnecting")
			js.expect(t, "reconnected")
			js.expect(t, "verified")
			// One connection: the dropped one gone, the new one there.
			mockhubtest.WaitEvent(t, s, since, "the dropped connection's end", action("disconnected", dev.ID))
			mockhubtest.WaitEvent(t, s, since, "the new connection", action("connected", dev.ID))
			if err := s.PushCommand(dev.ID, "second", nil); err != nil {
				t.Fatal(err)
			}
			if got := js.expect(t, "command"); got["command"] != "second" {
				t.Errorf("second command %v", got)
			}
			js.expect(t, "stopped")
			if code := js.exitCode(t); code != 0 {
				t.Fatalf("node exit %d: %s", code, js.Stderr())
			}

			// What the mock saw: two negotiates at the hub, each followed by
			// the service's, over the transport asked for, and never the
			// expired token.
			count := map[string]int{}
			for _, e := range s.Events(0) {
				if e.DeviceID != dev.ID && e.Action != "rejected" {
					continue
				}
				count[e.Action]++
				if e.Action == "connected" && e.Args["transport"] != map[string]string{"WebSockets": "websockets", "ServerSentEvents": "sse"}[transport] {
					t.Errorf("connected over %v", e.Args["transport"])
				}
			}
			if count["negotiate-redirect"] != 2 || count["service-negotiate"] != 2 || count["connected"] != 2 || count["rejected"] != 0 {
				t.Errorf("mock events %v, want 2 negotiate-redirect, 2 service-negotiate, 2 connected, no rejection", count)
			}
			if strings.Contains(js.Stderr(), tok.Token) {
				t.Error("the token reached node's stderr")
			}
		})
	}
}
