package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// received waits for the next DeviceCommand the Go device receives.
func received(t *testing.T, rx *mockReceiver) (string, deviceapi.Macro) {
	t.Helper()
	select {
	case got := <-rx.commands:
		return got[0].(string), got[1].(deviceapi.Macro)
	case <-time.After(e2eWait):
		t.Fatal("the device never received the command")
	}
	return "", deviceapi.Macro{}
}

// TestMockSendPicksTheDeviceAndAProfileMacro: without --device, send
// picks the only device, or says which exist (exit 2); --macro-name sends
// a macro of the device's profile, the command being its name; --macro
// FILE alone sends the macro under its name.
func TestMockSendPicksTheDeviceAndAProfileMacro(t *testing.T) {
	e := env(t)
	p := startMockProc(t, e, "--listen", "127.0.0.1:0")
	e = append(e, "HUBGATE_MOCK_URL="+p.url)

	r := runCmd(t, e, "", "mock", "send", "--command", "hello")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "no device yet") {
		t.Errorf("send with no device: %+v", r)
	}
	r = runCmd(t, e, "", "mock", "create-device", "--name", "only pad", "--json")
	var created mockhub.CreatedDevice
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &created) != nil {
		t.Fatalf("create-device --json: %+v", r)
	}
	id := created.Device.ID
	rx := connectDevice(t, p.url, created.Token.Token)

	// The only device is picked.
	if r := runCmd(t, e, "", "mock", "send", "--command", "hello"); r.code != 0 || !strings.Contains(r.stdout, "delivered to 1 connection") {
		t.Fatalf("send to the only device: %+v", r)
	}
	// Without --macro the command goes as the real service may send it:
	// with no macro object (null), not a made-up one.
	if cmd, m := received(t, rx); cmd != "hello" || m.Name != "" || m.ID != "" || len(m.Events) != 0 {
		t.Errorf("received %q %+v, want the command with a null macro", cmd, m)
	}

	// A macro of the device's current profile, by name (any case).
	profile := `{"id":"p-1","name":"Garden","configuration":{"macros":[
		{"id":"m-1","name":"Water the plants","commands":["water"],"events":[{"eventType":"Type","typedPhrase":"water the plants"}]},
		{"id":"m-2","name":"Mow","commands":["mow"],"events":[]}]}}`
	if r := runCmd(t, e, profile, "mock", "profile", "--file", "-", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"delivered"`) {
		t.Fatalf("profile: %+v", r)
	}
	if r := runCmd(t, e, "", "mock", "send", "--macro-name", "water the plants", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"delivered": 1`) {
		t.Fatalf("send --macro-name: %+v", r)
	}
	if cmd, m := received(t, rx); cmd != "Water the plants" || m.ID != "m-1" || len(m.Events) != 1 || m.Events[0].Text() != "water the plants" {
		t.Errorf("--macro-name sent %q %+v", cmd, m)
	}
	// --command overrides the name.
	runCmd(t, e, "", "mock", "send", "--macro-name", "Mow", "--command", "mow")
	if cmd, m := received(t, rx); cmd != "mow" || m.ID != "m-2" {
		t.Errorf("--macro-name --command sent %q %+v", cmd, m)
	}
	r = runCmd(t, e, "", "mock", "send", "--macro-name", "Dig")
	if r.code != ExitError || !strings.Contains(r.stderr, `"Dig"`) || !strings.Contains(r.stderr, `"Water the plants", "Mow"`) {
		t.Errorf("an unknown macro name: %+v", r)
	}

	// --macro FILE alone: the command is the macro's name.
	macroFile := filepath.Join(t.TempDir(), "macro.json")
	os.WriteFile(macroFile, []byte(`{"id":"m-9","name":"Greet","commands":["hi"],"events":[]}`), 0o600)
	if r := runCmd(t, e, "", "mock", "send", "--macro", macroFile); r.code != 0 {
		t.Fatalf("send --macro alone: %+v", r)
	}
	if cmd, m := received(t, rx); cmd != "Greet" || m.ID != "m-9" {
		t.Errorf("--macro alone sent %q %+v", cmd, m)
	}
	// ... or its first command when it has no name.
	os.WriteFile(macroFile, []byte(`{"id":"m-10","commands":["wave"],"events":[]}`), 0o600)
	runCmd(t, e, "", "mock", "send", "--macro", macroFile)
	if cmd, _ := received(t, rx); cmd != "wave" {
		t.Errorf("--macro without a name sent %q", cmd)
	}

	// The journal of the device, as JSON: the pushes went out with their
	// payloads; no token anywhere.
	r = runCmd(t, e, "", "mock", "events", "--device", id, "--json")
	var page mockhub.EventsPage
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &page) != nil {
		t.Fatalf("events --device --json: %+v", r)
	}
	outs := 0
	for _, ev := range page.Events {
		if ev.DeviceID != id {
			t.Errorf("events --device %s shows %+v", id, ev)
		}
		if ev.Direction == mockhub.DirectionOut && ev.Action == "DeviceCommand" {
			outs++
		}
	}
	if outs != 5 || strings.Contains(r.stdout, created.Token.Token) {
		t.Errorf("%d DeviceCommand pushes in the journal, want 5; token shown: %v", outs, strings.Contains(r.stdout, created.Token.Token))
	}

	// events --follow --json --device: JSON lines as they come, from after
	// the journal's last entry so far, until interrupted (exit 0).
	fp := startInProc(t, e, nil, "mock", "events", "--follow", "--json", "--device", id, "--since", fmt.Sprint(page.Last))
	runCmd(t, e, "", "mock", "send", "--command", "followed")
	out := fp.waitStdout(t, `"payload":["followed"`)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev mockhub.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.DeviceID != id || ev.Seq <= page.Last {
			t.Errorf("a followed line: %q (%v)", line, err)
		}
	}
	fp.signal(syscall.SIGINT)
	if code := fp.wait(t, e2eWait); code != 0 {
		t.Errorf("events --follow after SIGINT: exit %d\n%s", code, fp.stderr.String())
	}

	// Two devices: send says which exist.
	runCmd(t, e, "", "mock", "create-device", "--name", "second pad")
	r = runCmd(t, e, "", "mock", "send", "--command", "hello")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "2 devices; pick one with --device") || !strings.Contains(r.stderr, id+"  only pad") ||
		!strings.Contains(r.stderr, "second pad") {
		t.Errorf("send with two devices: %+v", r)
	}
	if r := runCmd(t, e, "", "mock", "start-listening"); r.code != ExitUsage {
		t.Errorf("start-listening with two devices: %+v", r)
	}
}
