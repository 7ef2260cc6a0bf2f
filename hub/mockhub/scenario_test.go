package mockhub_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/hub/mockhub"
)

func TestParseScenario(t *testing.T) {
	sc, err := mockhub.ParseScenario([]byte(`name: demo
within: 3s
steps:
  - expect: {connected: true, within: 30s}
  - push: {macroName: Space}

  - fault: {refuseFor: 2s}
  - wait: 1s
  - expect:
      invoke: DeviceCommandResult
      args: [{ok: true}]
  - expect: {listening: true, for: 2s}
`))
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, st := range sc.Steps {
		lines = append(lines, st.Line)
	}
	if sc.Name != "demo" || len(sc.Steps) != 6 || lines[0] != 4 || lines[2] != 7 || lines[4] != 9 || sc.Steps[1].Push.MacroName != "Space" ||
		string(sc.Steps[4].Expect.Args) != `[{"ok":true}]` || sc.Steps[2].Fault.RefuseFor == nil {
		t.Errorf("parsed %+v, lines %v", sc, lines)
	}
	for _, c := range []struct{ file, want string }{
		{"steps: []", "no steps"},
		{"stepz: [{wait: 1s}]", `line 1: unknown member "stepz"`},
		{"steps:\n  - wait: 1s\n    push: {command: x}", "line 2: a step has exactly one"},
		{"steps:\n  - push: {command: x, stopListening: true}", "line 2: a push is one of"},
		{"steps:\n  - expect: {invoke: X, within: soon}", "line 2:"},
		{"steps:\n  - expect: {listening: true}", "listening needs for"},
		{"steps:\n  - expect: {invoke: X, args: {a: 1}}", "args go with invoke and are a list"},
		{"steps:\n  - expect: {invoke: X, bogus: 1}", `unknown field "bogus"`},
		{"- a\n- b", "not a mapping"},
	} {
		_, err := mockhub.ParseScenario([]byte(c.file))
		if !errors.Is(err, mockhub.ErrBadScenario) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.file, err, c.want)
		}
	}
}

// jsSession is a scenario the official client's session mode (testdata/
// npm/signalr-device.cjs) passes: it connects, calls VerifySelf, announces
// DeviceStartedListening, takes one command, then calls GetLatestDevice.
const jsSession = `name: the official client's session
steps:
  - expect: {connected: true, within: 1m}
  - expect: {invoke: VerifySelf}
  - expect: {invoke: DeviceStartedListening, args: []}
  - expect: {listening: true, for: 300ms}
  - push: {command: jump}
  - expect: {invoke: GetLatestDevice}
`

// startPlay plays file in the background once the play has begun.
func startPlay(t *testing.T, base, file string) <-chan error {
	t.Helper()
	sc, err := mockhub.ParseScenario([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	started, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- mockhub.Play(context.Background(), sc, mockhub.PlayConfig{Admin: &mockhub.AdminClient{BaseURL: base},
			Progress: func(l string) { t.Log(l) }, Started: func() { close(started) }})
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the play did not begin: %v", err)
	}
	return done
}

// TestScenarioAgainstOfficialClient: the scenario holds against the
// official @microsoft/signalr client, started after the play began.
func TestScenarioAgainstOfficialClient(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	_, tok, _ := s.CreateDevice("", "JS scenario")
	done := startPlay(t, ts.URL, jsSession)
	js := startJSDevice(t, ts.URL+"/device", tok.Token)
	if err := <-done; err != nil {
		t.Fatalf("the scenario failed:\n%v\nnode stderr: %s", err, js.Stderr())
	}
	if m := js.expect(t, "connected"); m == nil {
		t.Fatal("node did not connect")
	}
	js.expect(t, "verified")
	js.expect(t, "listening")
	if c := js.expect(t, "command"); c["command"] != "jump" {
		t.Errorf("the client got %v", c)
	}
}

// TestScenarioFailureReport: an expectation that does not hold fails the
// play with a report naming the step, its line, the expectation and what
// the journal showed instead.
func TestScenarioFailureReport(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	_, tok, _ := s.CreateDevice("", "raw")
	done := startPlay(t, ts.URL, `steps:
  - expect: {connected: true}
  - expect: {invoke: VerifySelf, within: 2s}
  - expect: {invoke: DeviceStartedListening, args: [{"why": "user"}], within: 2s}
  - push: {command: never sent}
`)
	c, err := rawDial(t, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	c.invoke("1", "VerifySelf")
	if _, err := c.next(wait); err != nil { // its completion: the calls are journaled in this order
		t.Fatal(err)
	}
	c.invoke("2", "DeviceStartedListening", "now") // the hub refuses the argument: the report shows it
	err = <-done
	var f *mockhub.ScenarioFailure
	if !errors.As(err, &f) || f.Step != 3 || f.Line != 4 {
		t.Fatalf("play: %v, want the failure of step 3 at line 4", err)
	}
	report := err.Error()
	for _, want := range []string{"step 3 (line 4) failed", `expected the device invokes DeviceStartedListening with arguments matching [{"why":"user"}]`,
		"not within 2s", "the journal showed instead:", "hub in DeviceStartedListening error: parameter mismatch"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	for _, e := range s.Events(0) {
		if e.Action == "PushCommand" || e.Action == "DeviceCommand" {
			t.Errorf("the play went on after the failure: %+v", e)
		}
	}
}

// TestScenarioRecordReplays: a session of the official client recorded
// from the journal replays against a new connection of the same client.
func TestScenarioRecordReplays(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	dev, tok, _ := s.CreateDevice("", "JS record")
	admin := &mockhub.AdminClient{BaseURL: ts.URL}
	ctx := context.Background()
	rec, err := mockhub.StartRecording(ctx, mockhub.RecordConfig{Admin: admin})
	if err != nil {
		t.Fatal(err)
	}
	js := startJSDevice(t, ts.URL+"/device", tok.Token)
	js.expect(t, "connected")
	js.expect(t, "verified")
	js.expect(t, "listening")
	if _, err := admin.Send(ctx, dev.ID, mockhub.CommandRequest{Command: "jump"}); err != nil {
		t.Fatal(err)
	}
	js.expect(t, "command")
	js.expect(t, "stopped")
	sc, err := rec.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	file := sc.YAML()
	t.Logf("recorded:\n%s", file)
	for _, want := range []string{"device: \"" + dev.ID + "\"", `expect: {"connected":true,"within":"30s"}`, `expect: {"invoke":"VerifySelf"`,
		`expect: {"invoke":"DeviceStartedListening"`, `push: {"command":"jump"}`, `expect: {"invoke":"GetLatestDevice"`} {
		if !strings.Contains(string(file), want) {
			t.Errorf("the recording lacks %s", want)
		}
	}
	done := startPlay(t, ts.URL, string(file))
	js2 := startJSDevice(t, ts.URL+"/device", tok.Token)
	if err := <-done; err != nil {
		t.Fatalf("the replay failed:\n%v\nnode stderr: %s", err, js2.Stderr())
	}
	js2.expect(t, "connected")
	js2.expect(t, "verified")
	js2.expect(t, "listening")
	if c := js2.expect(t, "command"); c["command"] != "jump" {
		t.Errorf("the replay pushed %v", c)
	}
}

// TestScenarioStaysListening: "listening for" fails when the device stops
// listening inside the window; waits run on the player's clock.
func TestScenarioStaysListening(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	_, tok, _ := s.CreateDevice("", "raw")
	c, err := rawDial(t, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	c.invoke("1", "VerifySelf")
	if _, err := c.next(wait); err != nil {
		t.Fatal(err)
	}
	c.invoke("2", "DeviceStartedListening")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := s.WaitEvent(ctx, 0, func(e mockhub.Event) bool { return e.Action == "DeviceStartedListening" && e.Status == 0 }); err != nil {
		t.Fatal(err)
	}
	sc, err := mockhub.ParseScenario([]byte(`steps:
  - wait: 1h
  - expect: {connected: true}
  - expect: {listening: true, for: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	var waited []time.Duration
	windowOpen := make(chan struct{})
	after := func(d time.Duration) <-chan time.Time {
		waited = append(waited, d)
		ch := make(chan time.Time, 1)
		switch d {
		case time.Hour:
			if len(waited) == 1 { // the wait step: over at once
				ch <- time.Time{}
			} else { // the listening window: the device stops inside it
				close(windowOpen)
			}
		}
		return ch
	}
	done := make(chan error, 1)
	go func() {
		done <- mockhub.Play(ctx, sc, mockhub.PlayConfig{Admin: &mockhub.AdminClient{BaseURL: ts.URL}, After: after})
	}()
	select {
	case <-windowOpen:
	case err := <-done:
		t.Fatalf("the play ended before the listening window: %v", err)
	}
	c.invoke("3", "DeviceStoppedListening")
	err = <-done
	var f *mockhub.ScenarioFailure
	if !errors.As(err, &f) || f.Step != 3 || f.Line != 4 || !strings.Contains(err.Error(), "expected the device stays listening for 1h0m0s; it did not") ||
		!strings.Contains(err.Error(), "hub in DeviceStoppedListening") {
		t.Fatalf("play: %v", err)
	}
	if len(waited) != 2 || waited[0] != time.Hour { // the wait and the window: the connected device needed no deadline
		t.Errorf("the player's clock was asked for %v", waited)
	}
}

// TestScenarioFromJournal: pushes and faults through the admin API become
// steps, the device's calls and reconnections expectations, a gap before
// a push a wait; failed calls and other devices are left out.
func TestScenarioFromJournal(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	evs := []mockhub.Event{
		{Seq: 1, Time: at(0), Source: mockhub.SourceHub, Action: "connected", DeviceID: "d", ConnectionID: "c1"},
		{Seq: 2, Time: at(0.1), Source: mockhub.SourceHub, Direction: mockhub.DirectionIn, Action: "VerifySelf", DeviceID: "d", ConnectionID: "c1", Payload: json.RawMessage(`[]`)},
		{Seq: 3, Time: at(0.2), Source: mockhub.SourceHub, Direction: mockhub.DirectionIn, Action: "VerifySelf", DeviceID: "other", ConnectionID: "c9"},
		{Seq: 4, Time: at(0.3), Source: mockhub.SourceHub, Direction: mockhub.DirectionIn, Action: "Bogus", DeviceID: "d", ConnectionID: "c1", Error: "unknown method"},
		{Seq: 5, Time: at(5), Source: mockhub.SourceAdmin, Direction: mockhub.DirectionIn, Action: "PushCommand", DeviceID: "d", Status: 200, Payload: json.RawMessage(`{"macroName":"Space"}`)},
		{Seq: 6, Time: at(5.1), Source: mockhub.SourceHub, Direction: mockhub.DirectionOut, Action: "DeviceCommand", DeviceID: "d", ConnectionID: "c1"},
		{Seq: 7, Time: at(12), Source: mockhub.SourceHub, Direction: mockhub.DirectionIn, Action: "Report", DeviceID: "d", ConnectionID: "c1", Payload: json.RawMessage(`[{"ok":true}]`)},
		{Seq: 8, Time: at(12.5), Source: mockhub.SourceAdmin, Direction: mockhub.DirectionIn, Action: "Faults", Status: 200, Payload: json.RawMessage(`{"drop":true}`)},
		{Seq: 9, Time: at(13), Source: mockhub.SourceHub, Action: "disconnected", DeviceID: "d", ConnectionID: "c1"},
		{Seq: 10, Time: at(14), Source: mockhub.SourceHub, Action: "connected", DeviceID: "d", ConnectionID: "c2"},
		{Seq: 11, Time: at(15), Source: mockhub.SourceAdmin, Direction: mockhub.DirectionIn, Action: "StopListening", DeviceID: "d", Status: 409},
	}
	got := string(mockhub.ScenarioFromJournal(evs, "").YAML())
	want := `# A hubgate mock scenario: hubgate mock play FILE
name: "recorded"
device: "d"
steps:
  - expect: {"connected":true,"within":"30s"}
  - expect: {"invoke":"VerifySelf","within":"10s"}
  - wait: "4.9s"
  - push: {"macroName":"Space"}
  - expect: {"invoke":"Report","args":[{"ok":true}],"within":"14s"}
  - fault: {"drop":true}
  - expect: {"reconnect":true,"within":"10s"}
`
	if got != want {
		t.Errorf("recorded:\n%s\nwant:\n%s", got, want)
	}
	if _, err := mockhub.ParseScenario([]byte(got)); err != nil {
		t.Errorf("the recording does not parse: %v", err)
	}
}

// TestScenarioFromJournalPutsAnAdminCallBeforeWhatItCaused: an admin
// call's entry is entered once the call answered, so the device's answer
// to a push, or its reconnection after a drop, can come before it in the
// journal; the recording puts the push and the fault back at the call's
// beginning (Event.Began), and the replay expects what followed them.
func TestScenarioFromJournalPutsAnAdminCallBeforeWhatItCaused(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	evs := []mockhub.Event{
		{Seq: 1, Time: at(0), Source: mockhub.SourceHub, Action: "connected", DeviceID: "d", ConnectionID: "c1"},
		{Seq: 2, Time: at(0.10), Source: mockhub.SourceHub, Direction: mockhub.DirectionOut, Action: "StopListening", DeviceID: "d", ConnectionID: "c1"},
		{Seq: 3, Time: at(0.11), Source: mockhub.SourceHub, Direction: mockhub.DirectionIn, Action: "DeviceStoppedListening", DeviceID: "d", ConnectionID: "c1"},
		{Seq: 4, Time: at(0.12), Source: mockhub.SourceAdmin, Direction: mockhub.DirectionIn, Action: "StopListening", DeviceID: "d", Status: 200, Began: 1},
		{Seq: 5, Time: at(0.50), Source: mockhub.SourceHub, Action: "disconnected", DeviceID: "d", ConnectionID: "c1"},
		{Seq: 6, Time: at(0.60), Source: mockhub.SourceHub, Action: "connected", DeviceID: "d", ConnectionID: "c2"},
		{Seq: 7, Time: at(0.70), Source: mockhub.SourceAdmin, Direction: mockhub.DirectionIn, Action: "Faults", Status: 200, Payload: json.RawMessage(`{"drop":true}`), Began: 4},
		{Seq: 8, Time: at(0.80), Source: mockhub.SourceHub, Direction: mockhub.DirectionIn, Action: "VerifySelf", DeviceID: "d", ConnectionID: "c2"},
	}
	got := string(mockhub.ScenarioFromJournal(evs, "").YAML())
	want := `# A hubgate mock scenario: hubgate mock play FILE
name: "recorded"
device: "d"
steps:
  - expect: {"connected":true,"within":"30s"}
  - push: {"stopListening":true}
  - expect: {"invoke":"DeviceStoppedListening","within":"10s"}
  - fault: {"drop":true}
  - expect: {"reconnect":true,"within":"10s"}
  - expect: {"invoke":"VerifySelf","within":"10s"}
`
	if got != want {
		t.Errorf("recorded:\n%s\nwant:\n%s", got, want)
	}
}
