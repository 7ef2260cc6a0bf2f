package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testenv"
)

// dropScenario is one scenario for any device client that listens, takes
// commands and reconnects: played against `hubgate run` and against the
// official @microsoft/signalr client once the client listens.
const dropScenario = `name: takes a command and survives a drop
steps:
  - expect: {connected: true, within: 1m}
  - expect: {listening: true, for: 500ms}
  - push: {command: jump}
  - fault: {drop: true}
  - expect: {reconnect: true, within: 1m}
  - expect: {invoke: VerifySelf}
  - push: {command: jump}
`

// playScenario runs `hubgate mock play FILE` against h and returns its
// exit code and output.
func playScenario(t *testing.T, h *e2eHub, scenario string, args ...string) (int, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(file, []byte(scenario), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, e2eEnv(t.TempDir()), "", append([]string{"mock", "play", file, "--url", h.url}, args...)...)
	return r.code, r.stdout + r.stderr
}

// TestMockPlayAgainstDaemon: the scenario passes against `hubgate run`
// paired with the mock; a scenario with a wrong expectation exits 1 with
// a report naming the step, its line and the expectation.
func TestMockPlayAgainstDaemon(t *testing.T) {
	h := startHub(t)
	d := startListening(t, newDaemonSetup(t, h, daemonConfig{}))
	if code, out := playScenario(t, h, dropScenario); code != 0 || !strings.Contains(out, "PASS 7 steps") {
		t.Fatalf("play: exit %d\n%s\ndaemon stderr:\n%s", code, out, d.Stderr())
	}
	d.waitListening()
	code, out := playScenario(t, h, `steps:
  - expect: {connected: true}
  - push: {stopListening: true}
  - expect: {invoke: DeviceStoppedListening}
  - expect: {invoke: DeviceStartedListening, within: 2s}
`)
	if code != 1 {
		t.Fatalf("a wrong expectation: exit %d\n%s", code, out)
	}
	for _, want := range []string{"FAIL step 4 (line 5) failed: expected the device invokes DeviceStartedListening; not within 2s",
		"the journal showed nothing of the device meanwhile; before the step it showed:", "hub in DeviceStoppedListening"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	// --json says the same for a script.
	h.pushListening(true)
	code, out = playScenario(t, h, "steps:\n  - expect: {invoke: NoSuchMethod, within: 1s}\n", "--json")
	var res struct {
		Passed  bool
		Failure struct {
			Step     int
			Line     int
			Expected string
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.Passed || res.Failure.Line != 2 || res.Failure.Expected != "the device invokes NoSuchMethod" {
		t.Errorf("--json: exit %d %+v (%v)\n%s", code, res, err, out)
	}
}

// TestMockPlayAgainstOfficialClient: the same scenario passes against the
// official @microsoft/signalr client (its reconnect mode: a command, a
// drop, an automatic reconnect, a second command).
func TestMockPlayAgainstOfficialClient(t *testing.T) {
	h := startHub(t)
	js := startNodeDevice(t, h, "MODE=reconnect")
	js.waitFor(t, "listening")
	if code, out := playScenario(t, h, dropScenario); code != 0 {
		t.Fatalf("play: exit %d\n%s\nnode: %s", code, out, js.out.String())
	}
	js.waitFor(t, "stopped")
}

// TestMockRecordReplays: `hubgate mock record` writes a session of the
// daemon (pushes, its answers, a drop and its reconnection) as a
// scenario, and the recording plays back against a new connection of the
// same daemon.
func TestMockRecordReplays(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{})
	d := startListening(t, s)
	file := filepath.Join(t.TempDir(), "recorded.yaml")
	rec := startInProc(t, e2eEnv(t.TempDir()), nil, "mock", "record", file, "--url", h.url)
	// Its one line on stderr says the recording began: nothing else tells.
	rec.waitOutput(t, "the line that the recording began", func() bool { return strings.Contains(rec.stderr.String(), "\n") })
	if line := rec.stderr.String(); !strings.Contains(line, "recording") {
		t.Fatalf("record: %q", line)
	}
	since := h.lastSeq()
	h.pushListening(false)
	h.waitAction(since, "DeviceStoppedListening")
	h.pushListening(true)
	h.waitAction(since, "DeviceStartedListening")
	since = h.lastSeq()
	h.admin("POST", "/mock/faults", map[string]any{"drop": true}, nil)
	h.waitAction(h.waitAction(since, "connected").Seq, "DeviceStartedListening") // the daemon is back and listens
	rec.signal(syscall.SIGINT)
	if code := rec.wait(t, e2eWait); code != 0 {
		t.Fatalf("record: exit %d\n%s\n%s", code, rec.stdout.String(), rec.stderr.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded:\n%s", b)
	for _, want := range []string{`push: {"stopListening":true}`, `expect: {"invoke":"DeviceStoppedListening"`, `fault: {"drop":true}`,
		`expect: {"reconnect":true`, `expect: {"invoke":"VerifySelf"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the recording lacks %s", want)
		}
	}
	// The replay's drop gives the daemon a new connection: the recording
	// passes against it.
	if code, out := playScenario(t, h, string(b)); code != 0 {
		t.Fatalf("the replay: exit %d\n%s\ndaemon stderr:\n%s", code, out, d.Stderr())
	}
}

// nodeDevice is testdata/npm/signalr-device.cjs (the official client)
// playing h's device.
type nodeDevice struct {
	out   bytes.Buffer
	lines chan string
}

func startNodeDevice(t *testing.T, h *e2eHub, env ...string) *nodeDevice {
	t.Helper()
	node := testenv.RequireNode(t)
	testenv.NpmBin(t, "@microsoft/signalr/package.json")
	cmd := exec.Command(node, filepath.Join(testenv.ModuleRoot(t), testenv.NpmDir, "signalr-device.cjs"))
	cmd.Env = append(append(os.Environ(), "HUB_URL="+h.url+"/device", "DEVICE_TOKEN="+h.device.Token.Token), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	n := &nodeDevice{lines: make(chan string, 100)}
	p := startBackground(t, cmd, "node device")
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			n.lines <- sc.Text()
		}
		close(n.lines)
	}()
	_ = p
	return n
}

// waitFor waits for the client's line of that event.
func (n *nodeDevice) waitFor(t *testing.T, event string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case l, ok := <-n.lines:
			if !ok {
				t.Fatalf("node ended before %q: %s", event, n.out.String())
			}
			n.out.WriteString(l + "\n")
			var m struct{ Event string }
			if json.Unmarshal([]byte(l), &m) == nil && m.Event == event {
				return
			}
		case <-deadline:
			t.Fatalf("no %q from node: %s", event, n.out.String())
		}
	}
}
