package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/notify"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/bridge/rules/rulestest"
	"github.com/hubgate/hubgate/hub"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
	"github.com/hubgate/hubgate/internal/testutil"
)

const testKey = "daemon-test-key-0123456789abcdef"

type fixture struct {
	mock   *mockhub.Server
	url    string
	device string
	opts   Options
}

// newFixture starts the mock remote service with one device and returns
// options of a daemon for it (co-hosted scripted engine on any port, all
// commands run as their prompt).
func newFixture(t *testing.T) *fixture {
	t.Helper()
	mock := mockhubtest.Start(t, mockhubtest.Options{})
	dev, tok, err := mock.CreateDevice("", "daemon test")
	if err != nil {
		t.Fatal(err)
	}
	set, err := rules.Compile(nil, nil, rules.UnmatchedSpec{Action: "run"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sock, err := os.MkdirTemp("", "hgd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	eng := scripted.New(scripted.Config{Logger: slog.New(slog.DiscardHandler)})
	return &fixture{mock: mock.Server, url: mock.URL, device: dev.ID, opts: Options{
		DeviceID:      dev.ID,
		APIURL:        mock.URL,
		DeviceToken:   func(context.Context) (string, error) { return tok.Token, nil },
		Rules:         set,
		JournalPath:   filepath.Join(dir, "journal.db"),
		ControlSocket: filepath.Join(sock, "control.sock"),
		Automate:      AutomateOptions{Key: testKey, Port: -1, Assistant: eng, Workspace: filepath.Join(dir, "ws")},
	}}
}

// start makes and starts a daemon of f's options; it is closed when the
// test ends (before the fixture's mock).
func (f *fixture) start(t *testing.T) *Daemon {
	t.Helper()
	d, err := New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// switchablePairing makes f's options read the pairing and the device token
// through a switch: repair(device, token) is a re-pairing with another
// device (its token), repair("", "") an unpairing.
func (f *fixture) switchablePairing() (repair func(device, token string)) {
	var mu sync.Mutex
	device, token := f.device, ""
	first := f.opts.DeviceToken
	f.opts.DeviceToken = func(ctx context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if token != "" {
			return token, nil
		}
		return first(ctx)
	}
	f.opts.Pairing = func(context.Context) (string, string, error) {
		mu.Lock()
		defer mu.Unlock()
		if device == "" {
			return "", "", ErrUnpaired
		}
		return device, f.url, nil
	}
	return func(d, tok string) {
		mu.Lock()
		defer mu.Unlock()
		device, token = d, tok
	}
}

func TestNewRefusesMissingOptions(t *testing.T) {
	_, err := New(Options{Automate: AutomateOptions{External: true}})
	if err == nil {
		t.Fatal("New accepted empty options")
	}
	for _, name := range []string{"DeviceID", "APIURL", "DeviceToken", "JournalPath", "ControlSocket", "Automate.Key"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	if strings.Contains(err.Error(), "Automate.Assistant") {
		t.Errorf("error %q asks for an engine although the target is external", err)
	}
	f := newFixture(t)
	o := f.opts
	o.Automate.Assistant = nil
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), "Automate.Assistant") {
		t.Fatalf("New without an engine for the co-hosted server: %v", err)
	}
}

// TestStartRunsACommandAndCloseStopsEverything runs the whole assembly
// against the mock: the device listens, a pushed command becomes a
// completed run in the journal and on the control socket, and Close says
// DeviceStoppedListening, removes the socket and frees the port.
func TestStartRunsACommandAndCloseStopsEverything(t *testing.T) {
	f := newFixture(t)
	var ready Info
	f.opts.Ready = func(i Info) { ready = i }
	d, err := New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	info := d.Info()
	if info.AutomateURL == "" || info.AutomateMode != bridge.ModeCohosted || info.Bridge == nil || info.Hub == nil ||
		info.ControlSocket != f.opts.ControlSocket || ready.AutomateURL != info.AutomateURL {
		t.Fatalf("Info after Start: %+v (Ready got %+v)", info, ready)
	}
	if err := d.Start(t.Context()); err == nil {
		t.Fatal("a second Start succeeded")
	}
	waitListening(t, f, d, f.device)
	if err := f.mock.PushCommand(f.device, "water the plants", nil); err != nil {
		t.Fatal(err)
	}
	var entry journal.Entry
	onEvents(t, info.Bridge, "the run to finish", func() bool {
		es, err := info.Bridge.History(t.Context(), 5)
		if err != nil || len(es) == 0 {
			return false
		}
		entry = es[0]
		return entry.Run == journal.RunFinished
	})
	if entry.Status != automate.StatusCompleted || entry.Answer != "Done: water the plants" {
		t.Fatalf("journal entry: %+v", entry)
	}
	c := control.Dial(f.opts.ControlSocket)
	defer c.Close()
	st, err := c.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.DeviceID != f.device || !st.Listening || st.Counters.Completed != 1 || st.Automate.Endpoint != info.AutomateURL {
		t.Fatalf("status: %+v", st)
	}

	var since int64
	for _, ev := range f.mock.Events(0) {
		since = ev.Seq
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-d.Done():
	default:
		t.Fatal("Done is open after Close")
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	var stopped bool
	for _, ev := range f.mock.Events(since) {
		if ev.Action == "DeviceStoppedListening" {
			stopped = true
		}
	}
	if !stopped {
		t.Errorf("the hub never saw DeviceStoppedListening: %+v", f.mock.Events(0))
	}
	if _, err := c.Status(t.Context()); !errors.Is(err, control.ErrNotRunning) {
		t.Errorf("status after Close: %v, want ErrNotRunning", err)
	}
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(info.AutomateURL, "http://"), time.Second); err == nil {
		t.Errorf("the Automate server still accepts connections at %s", info.AutomateURL)
	}
	// The journal is closed and complete: a read-only open sees the run.
	j, err := journal.OpenReadOnly(f.opts.JournalPath)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	es, err := j.History(t.Context(), journal.HistoryQuery{Limit: 5})
	if err != nil || len(es) != 1 || es[0].Status != automate.StatusCompleted {
		t.Fatalf("journal after Close: %+v, %v", es, err)
	}
}

// TestFailedStartStopsWhatStarted: a control socket that cannot be bound
// fails Start after the Automate server listened; the server is stopped
// again and Close has nothing left to do.
func TestFailedStartStopsWhatStarted(t *testing.T) {
	f := newFixture(t)
	bad := filepath.Join(t.TempDir(), "public")
	if err := os.Mkdir(bad, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bad, 0o777); err != nil {
		t.Fatal(err)
	}
	f.opts.ControlSocket = filepath.Join(bad, "control.sock")
	var url string
	f.opts.Ready = func(i Info) { url = i.AutomateURL }
	d, err := New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	err = d.Start(t.Context())
	if !errors.Is(err, control.ErrInsecureDir) {
		t.Fatalf("Start with a public socket directory: %v", err)
	}
	if url != "" {
		t.Fatal("Ready was called for a failed start")
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close after a failed Start: %v", err)
	}
	// The journal was closed: it can be opened for writing again.
	j, err := journal.Open(f.opts.JournalPath, journal.Options{})
	if err != nil {
		t.Fatalf("the journal is still held: %v", err)
	}
	j.Close()
}

// TestRunStopsWithItsContext: Run returns once its context ends.
func TestRunStopsWithItsContext(t *testing.T) {
	f := newFixture(t)
	ready := make(chan Info, 1)
	f.opts.Ready = func(i Info) { ready <- i }
	d, err := New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	info := <-ready
	resp, err := http.Get(info.AutomateURL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// TestSecondDaemonStopsBeforeBinding: a second daemon on the same control
// socket fails at once with the first one's PID and binds no port.
func TestSecondDaemonStopsBeforeBinding(t *testing.T) {
	f := newFixture(t)
	first, err := New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer first.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	o := f.opts
	o.Automate.Port = port
	o.JournalPath = filepath.Join(t.TempDir(), "other.db")
	second, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	err = second.Start(t.Context())
	var are *control.AlreadyRunningError
	if !errors.As(err, &are) || are.PID != os.Getpid() {
		t.Fatalf("second Start: %v, want an AlreadyRunningError naming pid %d", err, os.Getpid())
	}
	if _, serr := os.Stat(o.JournalPath); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("the second daemon created its journal: %v", serr)
	}
	ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d is taken after the refused start: %v", port, err)
	}
	ln.Close()
	if _, err := control.Dial(f.opts.ControlSocket).Status(t.Context()); err != nil {
		t.Fatalf("the first daemon's control socket: %v", err)
	}
}

// lastSeq is the mock's newest event sequence number.
func lastSeq(m *mockhub.Server) int64 {
	var seq int64
	for _, ev := range m.Events(0) {
		seq = ev.Seq
	}
	return seq
}

func countActions(m *mockhub.Server, since int64, device, action string) int {
	n := 0
	for _, ev := range m.Events(since) {
		if ev.Action == action && (device == "" || ev.DeviceID == device) {
			n++
		}
	}
	return n
}

func waitListening(t *testing.T, f *fixture, d *Daemon, device string) {
	t.Helper()
	// The mock marks the device listening before it answers
	// DeviceStartedListening; the hub client listens once it has the
	// answer, and the bridge publishes that state.
	onEvents(t, d.Info().Bridge, "device "+device+" to listen", func() bool {
		dev, ok := f.mock.Device(device)
		return ok && dev.IsListening && d.Info().Hub.State().Status == hub.StatusListening
	})
}

// onEvents checks cond now and again at each event of b's stream until it
// holds (testutil.Until); t fails naming what after
// testutil.DefaultTimeout. The stream starts with its latest past event,
// so a change made while it subscribes is not missed. cond must read what
// the bridge publishes an event about.
func onEvents(t *testing.T, b *bridge.Bridge, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	testutil.Until(t, what, b.Subscribe(ctx, bridge.SubscribeOptions{History: 1}), cond)
}

func compile(t *testing.T, yaml string) *rules.Set {
	t.Helper()
	file, err := rulestest.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	set, err := file.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestReloadKeepsTheHubAndTheRunInFlight: new rules apply to the next
// command; the run in flight finishes with its old rule and the hub
// connection is not dropped.
func TestReloadKeepsTheHubAndTheRunInFlight(t *testing.T) {
	f := newFixture(t)
	f.opts.Rules = compile(t, `
rules:
  - name: slow
    match: {command: slow}
    run:
      prompt: "slow one\n#!sleep 1500\n#!answer slow done"
unmatched: {action: ignore}
`)
	d := f.start(t)
	waitListening(t, f, d, f.device)
	since := lastSeq(f.mock)
	b := d.Info().Bridge
	if err := f.mock.PushCommand(f.device, "slow", nil); err != nil {
		t.Fatal(err)
	}
	onEvents(t, b, "the slow run to start", func() bool {
		st, _ := b.Status(t.Context())
		return st.Current != nil
	})

	o := f.opts
	o.Rules = compile(t, `
rules:
  - name: fast
    match: {command: fast}
    run: {prompt: "fast one"}
unmatched: {action: run, busy: queue}
`)
	o.JournalPath = "/elsewhere/journal.db"
	o.HubMaxMessageSize = 4 << 20
	changed, restart, err := d.Reload(o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`rule "fast" added`, `rule "slow" removed`, "unmatched action changed"}
	if !slices.Equal(changed, want) {
		t.Errorf("changes %q, want %q", changed, want)
	}
	if !slices.Equal(restart, []string{"bridge.journal", "hub.max_message_bytes"}) {
		t.Errorf("restart list %q", restart)
	}
	if err := f.mock.PushCommand(f.device, "anything", nil); err != nil {
		t.Fatal(err)
	}
	es := waitEntries(t, b, 2)
	if es[1].Rule != "slow" || es[1].Status != automate.StatusCompleted || es[1].Answer != "slow done" {
		t.Errorf("the run in flight: %+v", es[1])
	}
	if es[0].Rule != rules.UnmatchedRuleName || es[0].Answer != "Done: anything" {
		t.Errorf("the command after the reload: %+v", es[0])
	}
	if n := countActions(f.mock, since, f.device, "connected"); n != 0 {
		t.Errorf("the hub reconnected %d times during the reload", n)
	}
	if n := f.mock.Connections(f.device); n != 1 {
		t.Errorf("%d hub connections, want 1", n)
	}
	// Nothing changed: nothing to say.
	if changed, _, _ := d.Reload(o); len(changed) != 0 {
		t.Errorf("a reload of the same rules reports %q", changed)
	}
}

// waitEntries waits until the newest n journal entries are all settled
// runs and returns them, newest first.
func waitEntries(t *testing.T, b *bridge.Bridge, n int) []journal.Entry {
	t.Helper()
	var es []journal.Entry
	onEvents(t, b, "runs to finish", func() bool {
		var err error
		es, err = b.History(t.Context(), n)
		if err != nil || len(es) < n {
			return false
		}
		for _, e := range es {
			if e.Run != journal.RunFinished {
				return false
			}
		}
		return true
	})
	return es
}

// TestReconnectSwitchesToTheNewPairing: after a re-pairing with a new
// device, Reconnect connects the new device at once, the old one says
// DeviceStoppedListening, commands of the new device run, and status
// names it.
func TestReconnectSwitchesToTheNewPairing(t *testing.T) {
	f := newFixture(t)
	dev2, tok2, err := f.mock.CreateDevice("", "second")
	if err != nil {
		t.Fatal(err)
	}
	repair := f.switchablePairing()
	d := f.start(t)
	waitListening(t, f, d, f.device)
	since := lastSeq(f.mock)

	repair(dev2.ID, tok2.Token)
	res, err := control.Dial(f.opts.ControlSocket).Reconnect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Paired || res.DeviceID != dev2.ID || res.PreviousDeviceID != f.device || res.PID != os.Getpid() {
		t.Fatalf("reconnect answer: %+v", res)
	}
	waitListening(t, f, d, dev2.ID)
	mockhubtest.WaitEvent(t, f.mock, since, "the old device's DeviceStoppedListening", func(e mockhub.Event) bool {
		return e.Action == "DeviceStoppedListening" && e.DeviceID == f.device
	})
	if n := countActions(f.mock, since, f.device, "DeviceStoppedListening"); n != 1 {
		t.Errorf("the old device stopped listening %d times, want once", n)
	}
	if err := f.mock.PushCommand(dev2.ID, "from the new device", nil); err != nil {
		t.Fatal(err)
	}
	es := waitEntries(t, d.Info().Bridge, 1)
	if es[0].Answer != "Done: from the new device" {
		t.Fatalf("entry: %+v", es[0])
	}
	st, err := control.Dial(f.opts.ControlSocket).Status(t.Context())
	if err != nil || st.DeviceID != dev2.ID || !st.Listening {
		t.Fatalf("status after the reconnect: %+v, %v", st, err)
	}

	// Unpaired: the daemon stops.
	repair("", "")
	res, err = control.Dial(f.opts.ControlSocket).Reconnect(t.Context())
	if err != nil || res.Paired || !strings.Contains(res.Message, "stops") {
		t.Fatalf("reconnect when unpaired: %+v, %v", res, err)
	}
	select {
	case <-d.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not stop after the unpairing")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if countActions(f.mock, since, dev2.ID, "DeviceStoppedListening") != 1 {
		t.Errorf("the new device never said DeviceStoppedListening")
	}
}

// recordingDesktop keeps the notifications it is asked to show.
type recordingDesktop struct {
	mu    sync.Mutex
	msgs  []notify.Message
	shown testutil.Signal // each notification shown
}

func (r *recordingDesktop) Notify(_ context.Context, m notify.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
	r.shown.Notify()
	return nil
}

func (r *recordingDesktop) bodies() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.msgs {
		out = append(out, m.Body)
	}
	return out
}

// TestReloadAppliesNotifySettings: a SIGHUP's reload changes what reaches
// the person at once: a rule's notify policy, and the default policy of
// bridge.notify, for the next commands.
func TestReloadAppliesNotifySettings(t *testing.T) {
	f := newFixture(t)
	desk := &recordingDesktop{}
	f.opts.Outputs = OutputOptions{Desktop: desk, Notify: rules.NotifyNone}
	f.opts.Rules = compile(t, `
rules:
  - name: quiet
    match: {command: quiet}
    notify: none
    run: {prompt: "quiet one"}
unmatched: {action: run}
`)
	d := f.start(t)
	waitListening(t, f, d, f.device)
	b := d.Info().Bridge

	push := func(cmd string, n int) {
		t.Helper()
		if err := f.mock.PushCommand(f.device, cmd, nil); err != nil {
			t.Fatal(err)
		}
		waitEntries(t, b, n)
	}
	push("quiet", 1)
	push("other", 2)

	o := f.opts
	o.Outputs.Notify = rules.NotifyAnswers
	o.Rules = compile(t, `
rules:
  - name: quiet
    match: {command: quiet}
    notify: answers
    run: {prompt: "quiet one"}
unmatched: {action: run}
`)
	o.Bridge.Listening = bridge.ListenObey
	changed, restart, err := d.Reload(o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(changed, "bridge.notify: none -> answers") || !slices.Contains(changed, "bridge.listening: follow-vendor (default) -> obey") ||
		len(restart) != 0 {
		t.Errorf("changes %q, restart %q", changed, restart)
	}
	if st, err := d.Info().Bridge.Status(t.Context()); err != nil || st.ListeningPolicy != string(bridge.ListenObey) {
		t.Errorf("status after the reload: policy %q, %v", st.ListeningPolicy, err)
	}
	push("quiet", 3)
	push("other", 4)
	// The notifier follows the event stream: wait for both answers. The
	// two commands before the reload notified nothing, however late the
	// notifier read their events: each event carries the policy of its
	// command's arrival (bridge.Event.Notify).
	testutil.Until(t, "the notifications after the reload", desk.shown.C(), func() bool { return len(desk.bodies()) >= 2 })
	if got := desk.bodies(); !slices.Equal(got, []string{"Done: quiet one", "Done: other"}) {
		t.Errorf("notifications %q, want the two answers after the reload only", got)
	}
}

// TestALongRunFitsTheClient: a run of many steps reaches the journal with
// its answer. Its record's events (the whole step list rebroadcast on every
// update) would grow with the square of the steps, to about 80 MB for 500,
// past the Automate client's response limit: the daemon's runs ask for none
// of the record's large blocks unless a rule does.
func TestALongRunFitsTheClient(t *testing.T) {
	f := newFixture(t)
	d := f.start(t)
	waitListening(t, f, d, f.device)
	prompt := "count to 500" + strings.Repeat("\n#!sleep 0", 500) + "\n#!answer counted"
	if err := f.mock.PushCommand(f.device, prompt, nil); err != nil {
		t.Fatal(err)
	}
	es := waitEntries(t, d.Info().Bridge, 1)
	if es[0].Status != automate.StatusCompleted || es[0].Answer != "counted" || es[0].Error != "" {
		t.Fatalf("journal entry: status %q answer %q error %q", es[0].Status, es[0].Answer, es[0].Error)
	}
}

// A reload applies the run policies to the running daemon (the next
// question waits bridge.ask_timeout as reloaded) and names each that
// changed, and only those.
func TestReloadAppliesTheRunPolicies(t *testing.T) {
	f := newFixture(t)
	f.opts.Rules = compile(t, `
rules:
  - name: pick
    match: {command: pick}
    ask: true
    run:
      prompt: "p\n#!tool ask_person {\"question\":\"Which colour?\"}\n#!answer you chose ${result}"
`)
	d := f.start(t)
	waitListening(t, f, d, f.device)
	b := d.Info().Bridge

	o := f.opts
	o.Bridge.AskTimeout = 8 * time.Second
	o.Bridge.CancelGrace = 3 * time.Second
	changed, restart, err := d.Reload(o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bridge.cancel_grace: 10s (default) -> 3s", "bridge.ask_timeout: 1m40s (default) -> 8s"}
	if !slices.Equal(changed, want) || len(restart) != 0 {
		t.Errorf("changes %q, restart %q; want %q and none", changed, restart, want)
	}
	if changed, restart, err := d.Reload(o); err != nil || len(changed)+len(restart) != 0 {
		t.Errorf("a reload of the same settings names %q and %q (%v)", changed, restart, err)
	}
	bad := o
	bad.Bridge.AskTimeout = 3 * time.Minute
	if _, _, err := d.Reload(bad); err == nil {
		t.Error("a reload with ask_timeout past the server's round was taken")
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events := b.Subscribe(ctx, bridge.SubscribeOptions{})
	if err := f.mock.PushCommand(f.device, "pick", nil); err != nil {
		t.Fatal(err)
	}
	var q bridge.Event
	for q.Kind != bridge.EventQuestion {
		select {
		case q = <-events:
		case <-time.After(testutil.DefaultTimeout):
			t.Fatal("no question")
		}
	}
	if q.Deadline == nil || q.Deadline.Sub(q.At) > 8*time.Second || q.Deadline.Sub(q.At) < 7*time.Second {
		t.Fatalf("the question after the reload: at %v, deadline %v; want 8s (bridge.ask_timeout as reloaded)", q.At, q.Deadline)
	}
	res, err := b.Cancel(ctx, false)
	if err != nil || !res.Stopped || res.GraceMs != 3000 {
		t.Errorf("cancel after the reload: %+v, %v; want the reloaded grace of 3s", res, err)
	}
	if es := waitEntries(t, b, 1); es[0].Status != automate.StatusCanceled {
		t.Errorf("the run cancelled while it asked: %+v", es[0])
	}
}
