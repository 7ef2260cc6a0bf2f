package main

// Helpers of the end-to-end tests and benchmarks of `hubgate run`: the mock
// remote service (`hubgate mock`), the daemon (`hubgate run`) and an
// external Automate server (`hubgate automate serve`) on loopback, with
// assertions on the journal, the daemon's event stream and the mock's
// event log. The daemon and serve run in this process (startCommand) unless
// a test asks for the binary (what only a process shows: its memory, a
// SIGKILL, GOMAXPROCS, main's own signal handling, another user) or the
// environment needs a process of its own (needsOwnProcess). Tests wait on
// events: the mock's events (a long poll), the daemon's event stream
// (control.Watch), the journal re-read at each event, a write to a
// command's output (bgProc.waitOutput); a log line's content is read after
// an event proved it written (in this process a write is in the buffer
// when it returns; a process's output is whole once it exited).

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testutil"
)

// e2eWait is how long the end-to-end tests wait for anything that should
// happen promptly: generous, for a loaded 2-core machine running -race.
const e2eWait = 60 * time.Second

// uniqueKey is an Automate access key of this test only, so that port
// discovery (which answers the lowest port that accepts the key) cannot find
// another test's server in the shared 4317..4328 window.
func uniqueKey(tb testing.TB) string {
	tb.Helper()
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return "e2e-" + hex.EncodeToString(b)
}

// freeLoopbackPort returns a TCP port that was free on 127.0.0.1 a moment
// ago (chosen by the OS, so outside the 4317..4328 window in practice).
func freeLoopbackPort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// ---- the mock remote service --------------------------------------------

// e2eHub is a running `hubgate mock` with one device created through its
// admin API.
type e2eHub struct {
	tb     testing.TB
	proc   *mockProc
	url    string
	device mockhub.CreatedDevice
	client *http.Client
}

// startHub starts the mock (the real binary) and creates a device.
func startHub(tb testing.TB) *e2eHub {
	tb.Helper()
	p := startMockProcTB(tb)
	h := &e2eHub{tb: tb, proc: p, url: p.url, client: &http.Client{Timeout: 30 * time.Second}}
	if st, body := h.admin("POST", "/mock/devices", map[string]string{"name": "e2e pad"}, &h.device); st != http.StatusCreated {
		tb.Fatalf("create a device: %d %s", st, body)
	}
	return h
}

// startMockProcTB starts `hubgate mock` on a free port with a private
// environment (benchmarks too).
func startMockProcTB(tb testing.TB) *mockProc {
	tb.Helper()
	return startMockProc(tb, e2eEnv(tb.TempDir()), "--listen", "127.0.0.1:0")
}

// e2eEnv is env() for any testing.TB: no inherited hubgate settings, a
// private config dir.
func e2eEnv(xdg string, extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		// GOMAXPROCS too: the daemon's own default is under test.
		if strings.HasPrefix(kv, "HUBGATE_") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") || strings.HasPrefix(kv, "GOMAXPROCS=") {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "XDG_CONFIG_HOME="+xdg)
	return append(out, extra...)
}

func (h *e2eHub) id() string { return h.device.Device.ID }

// admin calls the mock's admin API; body is marshalled to JSON (nil: no
// body), and a 2xx answer is decoded into out when it is not nil.
func (h *e2eHub) admin(method, path string, body, out any) (int, []byte) {
	h.tb.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			h.tb.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.tb.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(raw, out); err != nil {
			h.tb.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, raw
}

// push delivers DeviceCommand(command, macro) to the device; macro is any
// JSON value (nil: the mock synthesises one).
func (h *e2eHub) push(command string, macro any) {
	h.tb.Helper()
	body := map[string]any{"command": command}
	if macro != nil {
		body["macro"] = macro
	}
	var res mockhub.PushResult
	if st, raw := h.admin("POST", "/mock/devices/"+h.id()+"/command", body, &res); st != http.StatusOK || res.Delivered != 1 {
		h.tb.Fatalf("push %q: %d %s", command, st, raw)
	}
}

// pushListening pushes StartListening (on) or StopListening.
func (h *e2eHub) pushListening(on bool) {
	h.tb.Helper()
	what := "stop-listening"
	if on {
		what = "start-listening"
	}
	var res mockhub.PushResult
	if st, raw := h.admin("POST", "/mock/devices/"+h.id()+"/"+what, nil, &res); st != http.StatusOK || res.Delivered != 1 {
		h.tb.Fatalf("%s: %d %s", what, st, raw)
	}
}

// lastSeq is the sequence number of the mock's latest event.
func (h *e2eHub) lastSeq() int64 {
	h.tb.Helper()
	var page mockhub.EventsPage
	if st, raw := h.admin("GET", "/mock/events?since=0", nil, &page); st != http.StatusOK {
		h.tb.Fatalf("events: %d %s", st, raw)
	}
	return page.Last
}

// events returns the mock's events after since.
func (h *e2eHub) events(since int64) []mockhub.Event {
	h.tb.Helper()
	var page mockhub.EventsPage
	if st, raw := h.admin("GET", fmt.Sprintf("/mock/events?since=%d", since), nil, &page); st != http.StatusOK {
		h.tb.Fatalf("events: %d %s", st, raw)
	}
	return page.Events
}

// waitAction waits for the device's first event with action after since.
func (h *e2eHub) waitAction(since int64, action string) mockhub.Event {
	h.tb.Helper()
	deadline := time.Now().Add(e2eWait)
	for time.Now().Before(deadline) {
		var page mockhub.EventsPage
		if st, raw := h.admin("GET", fmt.Sprintf("/mock/events?since=%d&wait=2s", since), nil, &page); st != http.StatusOK {
			h.tb.Fatalf("events: %d %s", st, raw)
		}
		for _, ev := range page.Events {
			if ev.Action == action && ev.DeviceID == h.id() {
				return ev
			}
		}
		since = page.Last
	}
	h.tb.Fatalf("no %s from the device within %s", action, e2eWait)
	return mockhub.Event{}
}

// countActions counts the device's events with action after since.
func (h *e2eHub) countActions(since int64, action string) int {
	n := 0
	for _, ev := range h.events(since) {
		if ev.Action == action && ev.DeviceID == h.id() {
			n++
		}
	}
	return n
}

// ---- the daemon -----------------------------------------------------------

// daemonSetup is one daemon's files: a paired state, a config file with the
// bridge section given by the test, its journal and control socket.
type daemonSetup struct {
	xdg        string
	configPath string
	journal    string
	socket     string
	workspace  string
	key        string
	hub        *e2eHub
	// binary is the hubgate binary to run. Zero: the daemon runs in this
	// process (unless ownProcess, sysProcAttr or its environment asks for
	// a process: then the binary TestMain built).
	binary string
	// ownProcess runs the daemon as the binary where this process would
	// do: for what only a process shows (its pid's memory and /proc, a
	// SIGKILL, its GOMAXPROCS).
	ownProcess bool
	// env is added to the daemon's environment.
	env []string
	// sysProcAttr, when set, starts the daemon with it (a test runs it as
	// another user).
	sysProcAttr *syscall.SysProcAttr
}

// daemonConfig is what a test chooses of the config file.
type daemonConfig struct {
	// External selects automate.target external; otherwise the daemon
	// co-hosts the server on a free port outside the discovery window.
	External bool
	// Port, with External, is automate.port: the only port discovery
	// probes, so a test needs no free port in 4317..4328. Zero: the
	// window.
	Port int
	// Product is automate.product. Zero: the default (service).
	Product string
	// Key is the Automate access key. Zero: a key of this test only.
	Key string
	// Automate is the YAML of the automate section's other keys (engine,
	// openai, ...), without indentation.
	Automate string
	// Bridge is the YAML of the bridge section's other keys (rules,
	// cancel_grace, ...), without indentation.
	Bridge string
}

// newDaemonSetup writes the state file and the config file of a daemon
// paired with h's device.
func newDaemonSetup(tb testing.TB, h *e2eHub, c daemonConfig) *daemonSetup {
	tb.Helper()
	dir := tb.TempDir()
	// The control socket's path must stay short (sun_path) and its
	// directory private.
	sockDir, err := os.MkdirTemp("", "hg-ctl-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(sockDir) })
	s := &daemonSetup{
		xdg:        filepath.Join(dir, "config"),
		configPath: filepath.Join(dir, "config.yaml"),
		journal:    filepath.Join(dir, "data", "journal.db"),
		socket:     filepath.Join(sockDir, "control.sock"),
		workspace:  filepath.Join(dir, "workspace"),
		key:        c.Key,
		hub:        h,
	}
	if s.key == "" {
		s.key = uniqueKey(tb)
	}
	if err := pairing.SaveState(filepath.Join(s.xdg, "hubgate", "state.json"), pairing.State{
		DeviceID: h.id(), DeviceName: "e2e pad", APIURL: h.url, TokenID: h.device.Token.ID, PairedAt: time.Now(),
	}); err != nil {
		tb.Fatal(err)
	}
	target := fmt.Sprintf("  target: cohosted\n  port: %d\n", freeLoopbackPort(tb))
	if c.External {
		target = "  target: external\n"
		if c.Port != 0 {
			target += fmt.Sprintf("  port: %d\n", c.Port)
		}
	}
	if c.Product != "" {
		target += fmt.Sprintf("  product: %s\n", c.Product)
	}
	for _, line := range strings.Split(strings.TrimSpace(c.Automate), "\n") {
		if line != "" {
			target += "  " + line + "\n"
		}
	}
	var bridge strings.Builder
	for _, line := range strings.Split(strings.TrimRight(c.Bridge, "\n"), "\n") {
		if line != "" {
			bridge.WriteString("  " + line)
		}
		bridge.WriteString("\n")
	}
	cfg := fmt.Sprintf("log:\n  level: info\n  format: json\nautomate:\n%s  workspace: %q\nbridge:\n  journal: %q\n  control_socket: %q\n%s",
		target, s.workspace, s.journal, s.socket, bridge.String())
	if err := os.WriteFile(s.configPath, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	return s
}

// environ is the daemon's environment: its config dir and its secrets.
func (s *daemonSetup) environ() []string {
	return e2eEnv(s.xdg, append([]string{EnvDeviceToken + "=" + s.hub.device.Token.Token, configs.EnvAutomateKey + "=" + s.key}, s.env...)...)
}

// daemonProc is a running `hubgate run`.
type daemonProc struct {
	*bgProc
	tb testing.TB
	s  *daemonSetup
	// since is the mock's last event before the daemon started.
	since int64
}

// bgProc is a hubgate command a test started and does not wait for: run
// in this process (in) or as a process (cmd: the binary, or another
// program such as node).
type bgProc struct {
	what   string
	cmd    *exec.Cmd           // the process; nil in this process
	in     *inProc             // in this process; nil for a process
	stdout testutil.SyncBuffer // the process's (unless the caller set cmd.Stdout)
	stderr testutil.SyncBuffer // the process's
	// written is notified after each write to its stdout or stderr, and
	// at its end.
	written *testutil.Signal
	done    chan struct{} // closed once it has ended
}

// signalWriter writes to w and then notifies written: a test waiting for
// output waits on written (testutil.Wait), not on a clock.
type signalWriter struct {
	w       io.Writer
	written *testutil.Signal
}

func (s signalWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.written.Notify()
	return n, err
}

// Stderr is what it wrote to stderr so far. A process's output reaches
// the test through a pipe: it is whole once done is closed. In this
// process a write is in it when the write returns.
func (p *bgProc) Stderr() string {
	if p.in != nil {
		return p.in.stderr.String()
	}
	return p.stderr.String()
}

// Stdout is what it wrote to stdout so far (as Stderr).
func (p *bgProc) Stdout() string {
	if p.in != nil {
		return p.in.stdout.String()
	}
	return p.stdout.String()
}

// pid is the process's id: this process's for a command run in it (the
// pid a daemon run here names, as in a lock refusal).
func (p *bgProc) pid() int {
	if p.in != nil {
		return os.Getpid()
	}
	return p.cmd.Process.Pid
}

// signal sends sig: to the process, or (inProc.signal) to what the
// command in this process subscribed.
func (p *bgProc) signal(sig syscall.Signal) {
	if p.in != nil {
		p.in.signal(sig)
		return
	}
	p.cmd.Process.Signal(sig)
}

// exitCode is its exit code, once done is closed.
func (p *bgProc) exitCode() int {
	if p.in != nil {
		return p.in.code
	}
	return p.cmd.ProcessState.ExitCode()
}

// stopWith sends sig and waits (at most wait) for its end; it returns the
// exit code.
func (p *bgProc) stopWith(tb testing.TB, sig syscall.Signal, wait time.Duration) int {
	tb.Helper()
	p.signal(sig)
	select {
	case <-p.done:
	case <-time.After(wait):
		tb.Fatalf("%s did not stop on %v; stderr:\n%s", p.what, sig, p.Stderr())
	}
	return p.exitCode()
}

// waitOutput waits (at most e2eWait) until cond holds of its output,
// asking again at each write to its stdout or stderr and at its end, and
// reports whether it held.
func (p *bgProc) waitOutput(cond func() bool) bool {
	_ = waitWritten(p.written, p.done, "output of "+p.what, cond)
	return cond()
}

// firstLine waits for the first line on its stdout (the address that
// `hubgate mock` and `hubgate automate serve` print once they listen) and
// returns it trimmed; one that ends before it fails the test.
func (p *bgProc) firstLine(tb testing.TB) string {
	tb.Helper()
	var line string
	if !p.waitOutput(func() bool {
		l, _, ok := strings.Cut(p.Stdout(), "\n")
		line = l
		return ok
	}) {
		select {
		case <-p.done:
			tb.Fatalf("%s exited (%d) before printing its address; stderr:\n%s", p.what, p.exitCode(), p.Stderr())
		default:
		}
		tb.Fatalf("%s printed no line within %s; stderr:\n%s", p.what, e2eWait, p.Stderr())
	}
	return strings.TrimSpace(line)
}

// startBackground starts cmd, a process that the test does not wait for
// (its stderr kept, and its stdout unless cmd.Stdout is set) and, at the
// test's end, stops it if it still runs (SIGTERM, SIGKILL after 30 s) and
// logs its stderr when the test failed. A hubgate command starts with
// startCommand.
func startBackground(tb testing.TB, cmd *exec.Cmd, what string) *bgProc {
	tb.Helper()
	p := &bgProc{what: what, cmd: cmd, written: &testutil.Signal{}, done: make(chan struct{})}
	cmd.Stderr = signalWriter{&p.stderr, p.written}
	if cmd.Stdout == nil {
		cmd.Stdout = signalWriter{&p.stdout, p.written}
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() {
		cmd.Wait()
		close(p.done)
		p.written.Notify() // the end wakes a waitOutput too
	}()
	tb.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-p.done
		}
		if tb.Failed() {
			tb.Logf("%s stderr:\n%s", what, p.Stderr())
		}
	})
	return p
}

// startCommand is the one way these tests start a hubgate command line
// that they do not wait for: in this process (startInProc), unless bin is
// set (that binary: a process is under test), attr is set (the binary as
// another user) or environ needs a process of its own (needsOwnProcess).
// Either way it is stopped at the test's end if it still runs.
func startCommand(tb testing.TB, environ []string, bin string, attr *syscall.SysProcAttr, args ...string) *bgProc {
	tb.Helper()
	what := "hubgate " + strings.Join(args, " ")
	if bin == "" && attr == nil && !needsOwnProcess(environ) {
		in := startInProc(tb, environ, nil, args...)
		return &bgProc{what: what, in: in, written: &in.written, done: in.done}
	}
	if bin == "" {
		bin = binary
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = environ
	cmd.SysProcAttr = attr
	return startBackground(tb, cmd, what)
}

// startDaemon starts `hubgate run` with s's config; it does not wait.
// It runs in this process unless s asks for the binary (s.binary,
// s.sysProcAttr, s.ownProcess) or its environment needs a process.
func startDaemon(tb testing.TB, s *daemonSetup) *daemonProc {
	tb.Helper()
	since := s.hub.lastSeq()
	bin := s.binary
	if bin == "" && s.ownProcess {
		bin = binary
	}
	p := startCommand(tb, s.environ(), bin, s.sysProcAttr, "--config", s.configPath, "run")
	return &daemonProc{bgProc: p, tb: tb, s: s, since: since}
}

// startListening starts the daemon and waits until it listens.
func startListening(tb testing.TB, s *daemonSetup) *daemonProc {
	tb.Helper()
	d := startDaemon(tb, s)
	d.waitListening()
	return d
}

// waitListening waits until the daemon listens: the mock has seen its
// DeviceStartedListening (a long poll on the mock's events) and the hub
// client has had the hub's answer (waitHubState: the daemon's event
// stream). The mock records the announcement before it answers it, so a
// command pushed on the mock's word alone can reach the daemon before it
// knows it listens (it is then ignored as "not listening"). The daemon
// may listen before its Start logged "hubgate running": a test reads that
// record once the daemon has ended (its log is whole then).
func (d *daemonProc) waitListening() {
	d.tb.Helper()
	h := d.s.hub
	deadline := time.Now().Add(e2eWait)
	since := d.since
	for time.Now().Before(deadline) {
		select {
		case <-d.done:
			d.tb.Fatalf("hubgate run exited (%d) before listening:\n%s", d.exitCode(), d.Stderr())
		default:
		}
		var page mockhub.EventsPage
		if st, raw := h.admin("GET", fmt.Sprintf("/mock/events?since=%d&wait=1s", since), nil, &page); st != http.StatusOK {
			d.tb.Fatalf("events: %d %s", st, raw)
		}
		for _, ev := range page.Events {
			if ev.Action == "DeviceStartedListening" && ev.DeviceID == h.id() {
				d.waitHubState("listening")
				return
			}
		}
		since = page.Last
	}
	d.tb.Fatalf("hubgate run not listening within %s:\n%s", e2eWait, d.Stderr())
}

// waitHubState waits until the daemon's hub connection has the status,
// asking the control socket: its status, again at each hub event of its
// event stream (with its history, so that a change made while the stream
// connects is not missed).
func (d *daemonProc) waitHubState(status string) {
	d.tb.Helper()
	if d.s.sysProcAttr != nil {
		// A daemon of another user refuses this process's connections (a
		// control socket answers its own user only): ask with its
		// `hubgate status --json`, run as that user, again at each line it
		// logs (its hub client logs each change of state).
		if !d.waitOutput(func() bool { return d.status().Hub.Status == status }) {
			d.tb.Fatalf("the daemon's hub state never became %s:\n%s", status, d.Stderr())
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	c := control.Dial(d.s.socket)
	// The daemon's hub client may announce listening before its control
	// endpoint listens (the mock then has its word first): wait for the
	// endpoint before following its events, asking again at each line the
	// daemon logs (it logs "hubgate running" once the endpoint listens).
	if !d.waitOutput(func() bool {
		_, err := c.Status(ctx)
		return !errors.Is(err, control.ErrNotRunning)
	}) {
		select {
		case <-d.done:
			d.tb.Fatalf("hubgate run exited (%d) before its control endpoint answered:\n%s", d.exitCode(), d.Stderr())
		default:
		}
		d.tb.Fatalf("the daemon's control endpoint did not answer within %s:\n%s", e2eWait, d.Stderr())
	}
	changed := make(chan struct{}, 1)
	watchErr := make(chan error, 1)
	go func() {
		watchErr <- c.Watch(ctx, control.MaxWatchHistory, func(ev bridge.Event) error {
			if ev.Kind == bridge.EventHub {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
			return nil
		})
	}()
	last := "unknown"
	for {
		st, err := c.Status(ctx)
		if err == nil && st.Hub.Status == status {
			return
		} else if err == nil {
			last = st.Hub.Status
		}
		select {
		case <-changed:
		case err := <-watchErr:
			d.tb.Fatalf("the daemon's event stream ended (%v) with its hub state %s, want %s:\n%s", err, last, status, d.Stderr())
		case <-d.done:
			d.tb.Fatalf("hubgate run exited (%d) with its hub state %s, want %s:\n%s", d.exitCode(), last, status, d.Stderr())
		case <-ctx.Done():
			d.tb.Fatalf("the daemon's hub state stayed %s, never %s, within %s:\n%s", last, status, e2eWait, d.Stderr())
		}
	}
}

// waitEvent waits for an event of the daemon's event stream that match
// accepts and returns it. The stream starts with its history, so that an
// event published before it connected is seen; match sees the events in
// order, one at a time (it may count).
func (d *daemonProc) waitEvent(what string, match func(bridge.Event) bool) bridge.Event {
	d.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	found := make(chan bridge.Event, 1)
	watchErr := make(chan error, 1)
	errFound := errors.New("found")
	go func() {
		watchErr <- control.Dial(d.s.socket).Watch(ctx, control.MaxWatchHistory, func(ev bridge.Event) error {
			if match(ev) {
				found <- ev
				return errFound
			}
			return nil
		})
	}()
	select {
	case ev := <-found:
		return ev
	case err := <-watchErr:
		// A match ends the watch with errFound after filling found: both
		// can be ready, and select picks either.
		select {
		case ev := <-found:
			return ev
		default:
		}
		d.tb.Fatalf("the daemon's event stream ended (%v) before %s:\n%s", err, what, d.Stderr())
	case <-d.done:
		d.tb.Fatalf("hubgate run exited (%d) before %s:\n%s", d.exitCode(), what, d.Stderr())
	case <-ctx.Done():
		d.tb.Fatalf("no %s on the daemon's event stream within %s:\n%s", what, e2eWait, d.Stderr())
	}
	return bridge.Event{}
}

// bridgeLogs returns the bridge's log records with msg.
func (d *daemonProc) bridgeLogs(msg string) []map[string]any {
	var out []map[string]any
	for _, r := range d.logRecords(msg) {
		if r["component"] == "bridge" {
			out = append(out, r)
		}
	}
	return out
}

// status is the daemon's `hubgate status --json`: in this process, or
// as the daemon's binary and user when it runs as another user (its socket
// answers only that user). The control socket is named by
// HUBGATE_CONTROL_SOCKET, not by the daemon's config file, which a test
// may have broken on purpose.
func (d *daemonProc) status() bridge.Status {
	d.tb.Helper()
	environ := append(d.s.environ(), "HUBGATE_CONTROL_SOCKET="+d.s.socket)
	var out []byte
	var err error
	if d.s.sysProcAttr == nil && !needsOwnProcess(environ) {
		r := runInProc(d.tb, e2eWait, environ, "", "status", "--json")
		out = []byte(r.stdout)
		if r.code != 0 {
			err = fmt.Errorf("exit %d: %s", r.code, r.stderr)
		}
	} else {
		p := startCommand(d.tb, environ, cmp.Or(d.s.binary, binary), d.s.sysProcAttr, "status", "--json")
		select {
		case <-p.done:
		case <-time.After(e2eWait):
			d.tb.Fatalf("hubgate status --json did not exit within %s", e2eWait)
		}
		out = []byte(p.Stdout())
		if code := p.exitCode(); code != 0 {
			err = fmt.Errorf("exit %d: %s", code, p.Stderr())
		}
	}
	var st bridge.Status
	if err != nil || json.Unmarshal(out, &st) != nil {
		d.tb.Fatalf("hubgate status --json: %v\n%s", err, out)
	}
	return st
}

// stop signals the daemon and returns its exit code.
func (d *daemonProc) stop(sig syscall.Signal) int {
	d.tb.Helper()
	return d.stopWith(d.tb, sig, e2eWait)
}

// logRecords decodes the daemon's JSON log lines with the given msg.
func (d *daemonProc) logRecords(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(d.Stderr(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// ---- the journal ------------------------------------------------------------

// journalEntries returns every entry of the journal at path, oldest first
// (nil when it does not exist yet).
func journalEntries(tb testing.TB, path string) []journal.Entry {
	tb.Helper()
	j, err := journal.OpenReadOnly(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		tb.Fatalf("open the journal read-only: %v", err)
	}
	defer j.Close()
	es, err := j.History(context.Background(), journal.HistoryQuery{Limit: journal.MaxHistoryLimit})
	if err != nil {
		tb.Fatalf("journal history: %v", err)
	}
	for i, k := 0, len(es)-1; i < k; i, k = i+1, k-1 {
		es[i], es[k] = es[k], es[i]
	}
	return es
}

// waitJournalState waits until cond holds of the journal of s's daemon,
// read again at each event of the daemon's stream (onDaemonEvents: the
// bridge publishes each change after journaling it), and returns the
// entries.
func waitJournalState(tb testing.TB, s *daemonSetup, what string, cond func([]journal.Entry) bool) []journal.Entry {
	tb.Helper()
	var es []journal.Entry
	if !onDaemonEvents(s.eventSocket(), func() bool { es = journalEntries(tb, s.journal); return cond(es) }) {
		tb.Fatalf("journal: %s not reached within %s; entries:\n%s", what, e2eWait, e2eDump(es))
	}
	return es
}

// eventSocket is the control socket whose event stream this process may
// follow: "" for a daemon of another user (it answers its own user only).
func (s *daemonSetup) eventSocket() string {
	if s.sysProcAttr != nil {
		return ""
	}
	return s.socket
}

// defaultSocketOf is the control socket a daemon run with environ and no
// bridge.control_socket listens on: $XDG_RUNTIME_DIR/hubgate/control.sock
// ("" without XDG_RUNTIME_DIR: onDaemonEvents then asks again and again).
func defaultSocketOf(environ []string) string {
	if rt := envValue(environ, "XDG_RUNTIME_DIR"); rt != "" {
		return filepath.Join(rt, "hubgate", "control.sock")
	}
	return ""
}

// onDaemonEvents calls cond now and again at each event of the event
// stream of the daemon at socket, until it holds or e2eWait passed, and
// reports whether it held. The stream starts with its latest past event,
// so a change made while it connects is not missed. Where there is no
// stream to follow (socket "", or no daemon there yet), it asks every
// 10 ms instead.
func onDaemonEvents(socket string, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	var wake testutil.Signal
	go func() {
		if socket != "" {
			control.Dial(socket).Watch(ctx, 1, func(bridge.Event) error { wake.Notify(); return nil })
		}
		// No stream (yet): ask every 10 ms (testutil.NoEvent's pace).
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				wake.Notify()
			case <-ctx.Done():
				return
			}
		}
	}()
	return testutil.Wait(ctx, "the daemon's state", wake.C(), cond) == nil
}

func e2eDump(es []journal.Entry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "  #%d %q rule=%s decision=%s note=%q run=%s status=%s err=%q answer=%q started=%s finished=%s\n",
			e.ID, e.Command, e.Rule, e.Decision, e.Note, e.Run, e.Status, e.Error, e.Answer,
			e.RunStartedAt.Format("15:04:05.000"), e.FinishedAt.Format("15:04:05.000"))
	}
	return b.String()
}

// e2eEntry returns the entry of the command text (the first one).
func e2eEntry(tb testing.TB, es []journal.Entry, text string) journal.Entry {
	tb.Helper()
	for _, e := range es {
		if e.Command == text {
			return e
		}
	}
	tb.Fatalf("no journal entry for %q:\n%s", text, e2eDump(es))
	return journal.Entry{}
}

// e2eSettled reports whether the entry is decided for good: not received
// or queued, and a started run finished or interrupted.
func e2eSettled(e journal.Entry) bool { return e.Settled() }

// ---- the Automate server ------------------------------------------------------

// e2eAutomateGet GETs path on an Automate server.
func e2eAutomateGet(tb testing.TB, base, key, path string, out any) int {
	tb.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// sleepScript is a script of n `#!sleep ms` directives: a run of n*ms that a
// soft cancel stops within ms (it lands between steps).
func sleepScript(n, ms int) string {
	return strings.Repeat(fmt.Sprintf("#!sleep %d\n", ms), n)
}

// e2eIndent indents every line of s by n spaces (for YAML block scalars).
func e2eIndent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pad + l
	}
	return strings.Join(lines, "\n")
}
