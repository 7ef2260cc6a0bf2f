package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/daemon/demo"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testutil"
)

// secretShaped finds what could be one of the demo's secrets: every secret
// it holds (the mock's access and refresh tokens, the device token, the
// Automate key) is 32 random bytes in base64url, 43 characters. Runs of 43
// or more such characters that are only lower-case hex, digits and dashes
// are ids (UUIDs, "automate-run-<uuid>"), not secrets: a random 43-character
// base64url string has no upper-case letter and no underscore with
// probability (37/64)^43, about 6e-11.
var secretShaped = regexp.MustCompile(`[A-Za-z0-9_-]{43,}`)

// secretShapedIn returns the secret-shaped strings of s.
func secretShapedIn(s string) []string {
	var found []string
	for _, m := range secretShaped.FindAllString(s, -1) {
		if strings.Trim(m, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			found = append(found, m)
		}
	}
	return found
}

func assertNoSecretShaped(t *testing.T, where, s string) {
	t.Helper()
	for _, m := range secretShapedIn(s) {
		t.Errorf("%s holds a secret-shaped string %q", where, m)
	}
}

// TestSecretShapedCatchesTheDemoSecrets: the check above finds keys made
// like the demo's secrets, alone or inside a line, and lets ids through.
func TestSecretShapedCatchesTheDemoSecrets(t *testing.T) {
	for range 50 {
		key, err := configs.GenerateAccessKey()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{key, "token=" + key + " next", "/x/" + key + "/y"} {
			if got := secretShapedIn(s); len(got) != 1 || !strings.Contains(got[0], key) {
				t.Fatalf("the key in %q was not caught: %q", s, got)
			}
		}
	}
	if got := secretShapedIn("automate-run-821a01b8-bf95-4b61-aad1-79687d829683 /tmp/hubgate-demo-123/journal.db"); got != nil {
		t.Errorf("ids taken for secrets: %q", got)
	}
}

// demoOrder asserts that want appear in out in this order.
func demoOrder(t *testing.T, out string, want ...string) {
	t.Helper()
	testutil.InOrder(t, out, want...)
}

var demoTempDir = regexp.MustCompile(`files in (\S+) \(removed on exit\)`)

func demoAnnouncedDir(t *testing.T, out string) string {
	t.Helper()
	m := demoTempDir.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no temp dir announced:\n%s", out)
	}
	return m[1]
}

func assertGone(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the demo's temp dir %s is still there (stat: %v)", dir, err)
	}
}

func TestDemoOnceRunsTheMainJobAndExits0(t *testing.T) {
	r := runCmd(t, env(t), "", "demo", "--once")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	demoOrder(t, r.stdout,
		"1. mock remote service at http://127.0.0.1:",
		"2. pairing",
		"signed in: the code was exchanged at http://127.0.0.1:",
		"created User Device ",
		"created device token ",
		"confirmed: GET /api/Device/userDevices/",
		"3. starting the daemon",
		"Automate server (scripted engine) at http://127.0.0.1:",
		"hub: listening",
		"connected, verified and listening",
		`4. pushing DeviceCommand "hello"`,
		`[#1] received DeviceCommand "hello"`,
		`[#1] rule "hello" matched: started`,
		"[#1] run started on the Automate server (task demo-1)",
		"[#1] run finished: completed",
		"[#1] answer: Hello from hubgate",
		"stopped the daemon",
		"stopped the mock",
		"removed ",
	)
	if strings.Contains(r.stdout, "keeps running") {
		t.Error("--once printed the hint of the long-running mode")
	}
	assertGone(t, demoAnnouncedDir(t, r.stdout))
	if strings.Contains(r.stderr, "level=ERROR") || strings.Contains(r.stderr, "level=WARN") {
		t.Errorf("warnings or errors at the default level:\n%s", r.stderr)
	}
	assertNoSecretShaped(t, "stdout", r.stdout)
	assertNoSecretShaped(t, "stderr", r.stderr)
}

// TestDemoOnceSecretsStayOutOfDebugLogs: even at debug level nothing
// secret-shaped reaches stdout or stderr.
func TestDemoOnceSecretsStayOutOfDebugLogs(t *testing.T) {
	r := runCmd(t, env(t), "", "--log-level", "debug", "demo", "--once", "--command", "notify hi")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "level=DEBUG") {
		t.Fatalf("--log-level debug did not apply: %s", r.stderr)
	}
	demoOrder(t, r.stdout, "[#1] run parked", "[#1] notify: hi", `[#1] answer: Sent the notification "hi"`)
	assertNoSecretShaped(t, "stdout", r.stdout)
	assertNoSecretShaped(t, "stderr", r.stderr)
}

func TestDemoOnceFailedRunExits10(t *testing.T) {
	r := runCmd(t, env(t), "", "demo", "--once", "--command", "oops\n#!fail EXECUTION_TIMEOUT")
	if r.code != ExitRunFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, ExitRunFailed, r.stdout, r.stderr)
	}
	demoOrder(t, r.stdout, "[#1] no rule matched, the unmatched action: started", "[#1] run finished: failed (EXECUTION_TIMEOUT)")
	if !strings.Contains(r.stderr, "hubgate: demo: command #1: the run ended failed (EXECUTION_TIMEOUT)") {
		t.Errorf("stderr %q", r.stderr)
	}
	assertGone(t, demoAnnouncedDir(t, r.stdout))
}

func TestDemoOnceJSONLines(t *testing.T) {
	r := runCmd(t, env(t), "", "demo", "--once", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	events := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		ev, _ := m["event"].(string)
		if ev == "" || m["message"] == nil || m["time"] == nil {
			t.Fatalf("line without event, message or time: %q", line)
		}
		events[ev] = m
	}
	if a := events["answer"]; a == nil || a["answer"] != "Hello from hubgate" || a["commandId"] != float64(1) {
		t.Errorf("answer event %v", a)
	}
	if f := events["run-finished"]; f == nil || f["status"] != string(automate.StatusCompleted) {
		t.Errorf("run-finished event %v", f)
	}
	if d := events["device"]; d == nil || d["deviceId"] == "" {
		t.Errorf("device event %v", d)
	}
	if s := events["start"]; s == nil {
		t.Error("no start event")
	} else {
		assertGone(t, s["tempDir"].(string))
	}
}

func TestDemoUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--config", "/nonexistent/config.yaml", "demo", "--once"},
		{"demo", "--once", "--command", " "},
		{"demo", "extra"},
	} {
		r := runCmd(t, env(t), "", args...)
		if r.code != ExitUsage || r.stdout != "" {
			t.Errorf("%v: exit %d stdout %q stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// demoProc is a running `hubgate demo` whose stdout is read line by line.
type demoProc struct {
	cmd  *exec.Cmd
	done chan struct{}

	mu             sync.Mutex
	stdout, stderr strings.Builder
	changed        chan struct{} // closed and replaced on every new output
}

func (p *demoProc) output() (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String(), p.stderr.String()
}

// waitFor waits until stdout holds want and returns it.
func (p *demoProc) waitFor(t *testing.T, want string, within time.Duration) string {
	t.Helper()
	deadline := time.After(within)
	for {
		p.mu.Lock()
		out, ch := p.stdout.String(), p.changed
		p.mu.Unlock()
		if strings.Contains(out, want) {
			return out
		}
		select {
		case <-ch:
		case <-p.done:
			out, errs := p.output()
			if !strings.Contains(out, want) {
				t.Fatalf("demo exited without printing %q\nstdout:\n%s\nstderr:\n%s", want, out, errs)
			}
		case <-deadline:
			out, errs := p.output()
			t.Fatalf("no %q within %s\nstdout:\n%s\nstderr:\n%s", want, within, out, errs)
		}
	}
}

func startDemo(t *testing.T, args ...string) *demoProc {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"demo"}, args...)...)
	cmd.Env = env(t)
	p := &demoProc{cmd: cmd, done: make(chan struct{}), changed: make(chan struct{})}
	cmd.Stderr = writerTo(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.stderr.Write(b)
	})
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.stdout.WriteString(sc.Text() + "\n")
			close(p.changed)
			p.changed = make(chan struct{})
			p.mu.Unlock()
		}
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

var demoSendHint = regexp.MustCompile(`(?m)^  (?:hubgate|go run \./cmd/hubgate) mock send --url (http://127\.0\.0\.1:\d+) --device (\S+) --command "notify hi"$`)

// TestDemoStaysUpPrintsFurtherRunsAndStopsOnSIGTERM is README's first
// command (`hubgate demo`) as a newcomer runs it: the binary, its hint
// followed, stopped by a real signal. TestDemoInProcess runs the same
// mode in this process.
func TestDemoStaysUpPrintsFurtherRunsAndStopsOnSIGTERM(t *testing.T) {
	p := startDemo(t)
	out := p.waitFor(t, "Ctrl-C stops the demo", 60*time.Second)
	demoOrder(t, out, "[#1] answer: Hello from hubgate", "The demo keeps running", "mock send --url")
	m := demoSendHint.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no send hint in:\n%s", out)
	}
	mockURL, deviceID := m[1], m[2]
	dir := demoAnnouncedDir(t, out)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the announced temp dir is missing while the demo runs: %v", err)
	}
	// Every demo rule is listed.
	for _, name := range []string{`rule "hello"`, `rule "typed-text"`, `rule "ask"`, `rule "slow"`, `rule "long"`, `rule "notify"`, "any other --command"} {
		if !strings.Contains(out, name) {
			t.Errorf("the hint does not list %s", name)
		}
	}

	// The hint's command (in this process: the demo is the binary).
	r := runCmd(t, env(t), "", "mock", "send", "--url", mockURL, "--device", deviceID, "--command", "notify hi")
	if r.code != 0 || !strings.Contains(r.stdout, "delivered to 1 connection") {
		t.Fatalf("mock send: %+v", r)
	}
	out = p.waitFor(t, `[#2] answer: Sent the notification "hi"`, 30*time.Second)
	demoOrder(t, out, "Ctrl-C stops the demo", `[#2] received DeviceCommand "notify hi"`, `[#2] rule "notify" matched: started`,
		"[#2] run parked", "[#2] notify: hi", "[#2] run finished: completed", `[#2] answer: Sent the notification "hi"`)

	// The two patterns of the real app, as the hint shows them: a Type
	// macro's phrase and a custom action's content become the prompt.
	for i, pattern := range []struct{ match, answer string }{
		{`{"eventType":"Type","typedPhrase":"hi there"}`, `[#3] answer: You typed: hi there`},
		{`{"eventType":"DeviceTypeCustomAction","deviceTypeCustomActionId":"ask-agent","additionalInputContent":"what is on my calendar"}`,
			`[#4] answer: You asked: what is on my calendar`},
	} {
		if !strings.Contains(out, demo.ShellQuote(pattern.match)) {
			t.Errorf("the hint does not show %s", pattern.match)
		}
		command := []string{"typing", "ask"}[i]
		r := runCmd(t, env(t), "", "mock", "send", "--url", mockURL, "--device", deviceID, "--command", command, "--event", pattern.match)
		if r.code != 0 {
			t.Fatalf("mock send --event: %+v", r)
		}
		p.waitFor(t, pattern.answer, 30*time.Second)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not stop on SIGTERM")
	}
	out, errs := p.output()
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("SIGTERM: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	demoOrder(t, out, "stopping", "stopped the daemon", "stopped the mock", "removed "+dir)
	assertGone(t, dir)
	// The mock is gone with the demo.
	if r := runCmd(t, env(t), "", "mock", "devices", "--url", mockURL); r.code == 0 {
		t.Errorf("the mock still answers after the demo stopped: %+v", r)
	}
	assertNoSecretShaped(t, "stdout", out)
	assertNoSecretShaped(t, "stderr", errs)
}

// ---- unit tests ----

func TestDemoRunErrorMessagesAndExitCode(t *testing.T) {
	for _, c := range []struct {
		err  *demo.RunError
		want string
	}{
		{&demo.RunError{CommandID: 1, Decision: journal.DecisionStarted, Status: automate.StatusCanceled}, "demo: command #1: the run ended canceled"},
		{&demo.RunError{CommandID: 2, Decision: journal.DecisionDropped, Reason: "busy"}, "demo: command #2: the command was dropped: busy"},
		{&demo.RunError{Reason: "interrupted before the run finished"}, "demo: the run did not complete: interrupted before the run finished"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
		if code := exitCode(c.err); code != ExitRunFailed {
			t.Errorf("exit code %d", code)
		}
	}
}

// TestDemoInProcess runs the demo in this (race-checked) process with an
// empty environment: --once, then the long-running mode stopped by its
// context.
func TestDemoInProcess(t *testing.T) {
	r := runInProc(t, e2eWait, nil, "", "demo", "--once")
	if r.code != 0 {
		t.Fatalf("--once: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	demoOrder(t, r.stdout, "[#1] answer: Hello from hubgate", "removed ")
	assertGone(t, demoAnnouncedDir(t, r.stdout))

	p := startInProc(t, nil, nil, "demo")
	s := p.waitStdout(t, "Ctrl-C stops the demo")
	m := demoSendHint.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no send hint in:\n%s", s)
	}
	admin := &mockhub.AdminClient{BaseURL: m[1]}
	for _, c := range []string{"slow one", "slow two"} {
		if _, err := admin.Command(t.Context(), m[2], c, nil); err != nil {
			t.Fatal(err)
		}
	}
	p.waitStdout(t, `[#2] answer: Finished "slow one"`)
	p.waitStdout(t, `[#3] rule "slow" matched: queued`)
	p.cancel()
	if code := p.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d after the context ended\nstderr:\n%s", code, p.stderr.String())
	}
	demoOrder(t, p.stdout.String(), "stopping", "stopped the daemon", "removed ")
	assertGone(t, demoAnnouncedDir(t, p.stdout.String()))
}

// TestDemoStopsCleanlyWhenStdoutCloses: `hubgate demo | head -1` ends the
// demo (no SIGPIPE death) and its temp dir is removed.
func TestDemoStopsCleanlyWhenStdoutCloses(t *testing.T) {
	cmd := exec.Command(binary, "demo")
	cmd.Env = env(t)
	var errb testutil.SyncBuffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("first line: %v", err)
	}
	stdout.Close() // the reader goes away, like head -1
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the demo kept running with its stdout closed; stderr:\n%s", errb.String())
	}
	st := cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("the demo died of %v", ws.Signal())
	}
	if st.ExitCode() != ExitError || !strings.Contains(errb.String(), "stdout is closed") {
		t.Errorf("exit %d stderr %q", st.ExitCode(), errb.String())
	}
	assertGone(t, demoAnnouncedDir(t, line))
}
