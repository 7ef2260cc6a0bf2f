package mockhub_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testenv"
)

// TestConsoleInHeadlessChromium: the hub console, in Chromium, follows a
// device's hub frames live (the official @microsoft/signalr client's
// DeviceStartedListening) and pushes a macro of the device's profile by
// name, which the client receives; the push shows in the live log.
func TestConsoleInHeadlessChromium(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	dev, tok, _ := s.CreateDevice("", "Console pad")
	macro := deviceapi.Macro{ID: "m-7", Name: "Water the plants", Commands: []string{"water"},
		Events: []deviceapi.MacroEvent{{EventType: "Type", Extra: map[string]json.RawMessage{"typedPhrase": json.RawMessage(`"water the plants"`)}}}}
	if _, err := s.PushProfile(dev.ID, deviceapi.Profile{ID: "p-1", Name: "Garden", Configuration: deviceapi.Configuration{Macros: []deviceapi.Macro{macro}}}); err != nil {
		t.Fatal(err)
	}
	shot := testenv.ArtifactPath(t, "mock-console.png")

	var result struct {
		Status      int    `json:"status"`
		CSP         string `json:"csp"`
		Device      string `json:"device"`
		ResultText  string `json:"resultText"`
		DeviceState string `json:"deviceState"`
		Log         []struct {
			Direction, Action, Text string
		} `json:"log"`
	}
	var js *jsDevice
	testenv.RunBrowserScript(t, "mock-console-e2e.cjs",
		[]string{"CONSOLE_URL=" + ts.URL + "/mock/console", "MACRO_NAME=" + macro.Name, "SCREENSHOT=" + shot},
		func() { js = startJSDevice(t, ts.URL+"/device", tok.Token) }, &result)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}

	// The client received the macro the page sent, under its name.
	js.expect(t, "connected")
	js.expect(t, "verified")
	js.expect(t, "listening")
	sent := js.expect(t, "command")
	if m := decodeAs[deviceapi.Macro](t, sent["macro"]); sent["command"] != macro.Name || m.ID != macro.ID || len(m.Events) != 1 {
		t.Errorf("the client received %v", sent)
	}
	if result.Status != 200 || !strings.Contains(result.CSP, "default-src 'self'") || result.Device != dev.ID {
		t.Errorf("the page: %d, CSP %q, device %q", result.Status, result.CSP, result.Device)
	}
	if !strings.Contains(result.ResultText, `DeviceCommand: {"delivered":1}`) || !strings.Contains(result.DeviceState, "verified yes") {
		t.Errorf("the page said %q, device %q", result.ResultText, result.DeviceState)
	}
	// The live log: the client's calls in, the push out with its payload.
	var order []string
	for _, l := range result.Log {
		order = append(order, l.Direction+" "+l.Action)
		if l.Direction == "out" && l.Action == "DeviceCommand" && !strings.Contains(l.Text, `payload=["Water the plants",{`) {
			t.Errorf("the push shows as %q", l.Text)
		}
	}
	joined := strings.Join(order, "\n")
	for _, want := range []string{"in connected\nin VerifySelf\nin DeviceStartedListening", "out DeviceCommand"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the live log lacks %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, tok.Token) {
		t.Error("the page shows the device token")
	}
}
