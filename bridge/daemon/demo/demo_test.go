package demo

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/bridge/daemon"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testutil"
)

// steps collects the narrative of a Run and lets a test wait for a step.
type steps struct {
	mu      sync.Mutex
	list    []Step
	changed chan struct{} // closed and replaced on every step
	on      func(Step)    // called with each step, outside mu
}

func newSteps() *steps { return &steps{changed: make(chan struct{})} }

func (s *steps) narrate(st Step) {
	s.mu.Lock()
	s.list = append(s.list, st)
	close(s.changed)
	s.changed = make(chan struct{})
	on := s.on
	s.mu.Unlock()
	if on != nil {
		on(st)
	}
}

func (s *steps) all() []Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Step(nil), s.list...)
}

func (s *steps) text() string {
	var b strings.Builder
	for _, st := range s.all() {
		b.WriteString(st.Text + "\n")
	}
	return b.String()
}

// waitFor waits for a step whose text holds want (or Run's end: done).
func (s *steps) waitFor(t *testing.T, want string, done <-chan error) Step {
	t.Helper()
	for {
		s.mu.Lock()
		ch := s.changed
		for _, st := range s.list {
			if strings.Contains(st.Text, want) {
				s.mu.Unlock()
				return st
			}
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case err := <-done:
			t.Fatalf("Run returned %v before %q:\n%s", err, want, s.text())
		case <-t.Context().Done():
			t.Fatalf("no %q:\n%s", want, s.text())
		}
	}
}

// tempDirOf is the temp dir the start step names.
func tempDirOf(t *testing.T, ss []Step) string {
	t.Helper()
	for _, st := range ss {
		if st.Name == "start" {
			return st.Fields["tempDir"].(string)
		}
	}
	t.Fatal("no start step")
	return ""
}

func assertGone(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the demo's temp dir %s is still there (stat: %v)", dir, err)
	}
}

// TestRunOnceNarratesTheFirstCommand: the whole job, each step told in
// order, the first command's life in the event stream's text form; Run
// returns nil for a completed run and removes its temp dir.
func TestRunOnceNarratesTheFirstCommand(t *testing.T) {
	s := newSteps()
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	err := Run(t.Context(), Options{Once: true, Narrate: s.narrate, TempDir: t.TempDir(), Now: func() time.Time { return at }})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, s.text())
	}
	ss := s.all()
	var names []string
	for _, st := range ss {
		if !st.At.Equal(at) {
			t.Errorf("step %s at %s, want the injected clock's %s", st.Name, st.At, at)
		}
		switch st.Name {
		case "hub", "step", "run-status": // as many as the connection and the run went through
		default:
			names = append(names, st.Name)
		}
	}
	want := "start mock pair sign-in signed-in device device-token confirmed daemon automate journal rules listening push " +
		"received decision run-started run-finished answer daemon-stopped mock-stopped removed"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("steps\n got %s\nwant %s", got, want)
	}
	testutil.InOrder(t, s.text(), "   hub: listening", "connected, verified and listening", `4. pushing DeviceCommand "hello"`,
		`[#1] received DeviceCommand "hello"`, `[#1] rule "hello" matched: started`,
		"[#1] run started on the Automate server (task demo-1)", `[#1] step 1 `, "[#1] run finished: completed", "[#1] answer: Hello from hubgate")
	for _, st := range ss {
		if st.Name == "answer" && (st.Fields["answer"] != "Hello from hubgate" || st.Fields["commandId"] != float64(1)) {
			t.Errorf("answer step fields %v", st.Fields)
		}
	}
	assertGone(t, tempDirOf(t, ss))
}

// TestRunOnceFailedRun: a first run that fails is a *RunError with its
// status and error code.
func TestRunOnceFailedRun(t *testing.T) {
	s := newSteps()
	err := Run(t.Context(), Options{Once: true, Command: "oops\n#!fail EXECUTION_TIMEOUT", Narrate: s.narrate, TempDir: t.TempDir()})
	var re *RunError
	if !errors.As(err, &re) || re.CommandID != 1 || re.Status != automate.StatusFailed || re.ErrorCode != "EXECUTION_TIMEOUT" ||
		re.Decision != journal.DecisionStarted {
		t.Fatalf("Run: %#v (%v)", err, err)
	}
	if got, want := err.Error(), "demo: command #1: the run ended failed (EXECUTION_TIMEOUT)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	testutil.InOrder(t, s.text(), "[#1] no rule matched, the unmatched action: started", "[#1] run finished: failed (EXECUTION_TIMEOUT)", "removed ")
	assertGone(t, tempDirOf(t, s.all()))
}

// TestRunOnceInterrupted: ctx ending before the first run is settled is a
// *RunError with Once, and everything is still stopped and removed.
func TestRunOnceInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := newSteps()
	s.on = func(st Step) {
		if st.Name == "run-started" {
			cancel() // the slow rule's run takes seconds
		}
	}
	err := Run(ctx, Options{Once: true, Command: "slow one", Narrate: s.narrate, TempDir: t.TempDir()})
	var re *RunError
	if !errors.As(err, &re) || re.Reason != "interrupted before the run finished" {
		t.Fatalf("Run: %v\n%s", err, s.text())
	}
	testutil.InOrder(t, s.text(), "[#1] run started", "stopped the daemon", "stopped the mock", "removed ")
	assertGone(t, tempDirOf(t, s.all()))
}

// TestRunStaysUpAndStopsCleanly: without Once the demo says how to push
// more commands, narrates each one pushed through the mock's admin API,
// and stops cleanly when ctx ends (nil).
func TestRunStaysUpAndStopsCleanly(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := newSteps()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Narrate: s.narrate, TempDir: t.TempDir(), Invocation: "hubgate-test"})
	}()
	hint := s.waitFor(t, "The demo keeps running", done)
	if !strings.Contains(hint.Text, `hubgate-test mock send --url http://127.0.0.1:`) || !strings.HasSuffix(hint.Text, `--command "notify hi"`) {
		t.Errorf("hint %q", hint.Text)
	}
	s.waitFor(t, "Ctrl-C stops the demo", done)
	admin := &mockhub.AdminClient{BaseURL: hint.Fields["mockUrl"].(string)}
	if _, err := admin.Command(t.Context(), hint.Fields["deviceId"].(string), "notify hi", nil); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, `[#2] answer: Sent the notification "hi"`, done)
	testutil.InOrder(t, s.text(), `rule "slow": command_glob "slow *"; busy: queue (at most 3 waiting, for 5m0s)`,
		`[#2] received DeviceCommand "notify hi"`, `[#2] rule "notify" matched: started`, "[#2] run parked", "[#2] notify: hi",
		"[#2] run finished: completed", `[#2] answer: Sent the notification "hi"`)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after ctx ended: %v", err)
	}
	testutil.InOrder(t, s.text(), "stopping", "stopped the daemon", "stopped the mock", "removed ")
	assertGone(t, tempDirOf(t, s.all()))
	// The mock is gone with the demo.
	if _, err := admin.Devices(context.Background()); err == nil {
		t.Error("the mock still answers after the demo stopped")
	}
}

func TestRunRefusesABlankCommand(t *testing.T) {
	if err := Run(t.Context(), Options{Command: " \n", TempDir: t.TempDir()}); !errors.Is(err, ErrEmptyCommand) {
		t.Fatalf("Run: %v", err)
	}
}

// The demo's mock serves with internal/localhttp's hardened server: a
// request with oversized headers is refused (431), not read.
func TestMockServesWithTheHardenedServer(t *testing.T) {
	m, err := startMock(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer m.stop()
	if got := testutil.HeaderLimitStatus(t, m.base, "/api/Device/userDevices"); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("status %d for 256 KiB of headers, want 431", got)
	}
}

// TestDaemonOptionsSetTheDemosOwnOverTheCallers: the demo keeps the
// caller's options (cmd: the defaults as `run` maps them) and sets only
// its own: the paired device, the paths in its dir, the co-hosted server
// on any free port, the demo rules, no desktop notification.
func TestDaemonOptionsSetTheDemosOwnOverTheCallers(t *testing.T) {
	srv, err := mockhub.New(mockhub.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	engine := scripted.New(scripted.Config{})
	dir := t.TempDir()
	var gotDir string
	r := &run{dir: dir, log: slog.New(slog.DiscardHandler), o: Options{Daemon: func(d string) (daemon.Options, error) {
		gotDir = d
		return daemon.Options{JournalPath: "/elsewhere/journal.db", ControlSocket: "/elsewhere/control.sock", JournalKeep: time.Hour,
			Bridge:            daemon.BridgeOptions{CancelGrace: 3 * time.Second},
			Automate:          daemon.AutomateOptions{External: true, Port: 4317, Workspace: "/elsewhere", Assistant: engine, ToolWait: time.Minute},
			Outputs:           daemon.OutputOptions{Notify: "answers", ProgressAfter: 10 * time.Second, StatusPage: true},
			HubMaxMessageSize: 1 << 20}, nil
	}}.withDefaults()}
	set, err := rules.Demo()
	if err != nil {
		t.Fatal(err)
	}
	p := &paired{device: &deviceapi.UserDevice{ID: "dev-1"}, store: configs.NewMemoryStore()}
	o, err := r.daemonOptions(&mock{srv: srv, base: "http://127.0.0.1:1"}, p, set, "key")
	if err != nil {
		t.Fatal(err)
	}
	if gotDir != dir {
		t.Errorf("Options.Daemon got dir %q, want the demo's %q", gotDir, dir)
	}
	for name, c := range map[string]struct{ got, want any }{
		// The demo's own.
		"DeviceID":                {o.DeviceID, "dev-1"},
		"APIURL":                  {o.APIURL, "http://127.0.0.1:1"},
		"JournalPath":             {o.JournalPath, filepath.Join(dir, "journal.db")},
		"ControlSocket":           {o.ControlSocket, filepath.Join(dir, "control.sock")},
		"Automate.External":       {o.Automate.External, false},
		"Automate.Port":           {o.Automate.Port, -1},
		"Automate.Key":            {o.Automate.Key, "key"},
		"Automate.Workspace":      {o.Automate.Workspace, filepath.Join(dir, "workspace")},
		"Outputs.Notify":          {o.Outputs.Notify, rules.NotifyNone},
		"Outputs.ProgressAfter":   {o.Outputs.ProgressAfter, time.Duration(0)},
		"Rules":                   {o.Rules, set},
		"Automate.Assistant":      {o.Automate.Assistant, any(engine)},
		"Bridge.CancelGrace":      {o.Bridge.CancelGrace, 3 * time.Second},
		"JournalKeep":             {o.JournalKeep, time.Hour},
		"Automate.ToolWait":       {o.Automate.ToolWait, time.Minute},
		"Outputs.StatusPage":      {o.Outputs.StatusPage, true},
		"HubMaxMessageSize":       {o.HubMaxMessageSize, int64(1 << 20)},
		"DeviceToken is set":      {o.DeviceToken != nil, true},
		"Device is the pairing's": {o.Device == p.device, true},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", name, c.got, c.want)
		}
	}

	r.o.Daemon = func(string) (daemon.Options, error) { return daemon.Options{}, errors.New("no defaults") }
	if _, err := r.daemonOptions(&mock{srv: srv}, p, set, "key"); err == nil || !strings.Contains(err.Error(), "no defaults") {
		t.Errorf("a failing Options.Daemon: %v", err)
	}
}
