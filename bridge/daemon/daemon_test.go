package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/hub"
	"github.com/hubgate/hubgate/hub/mockhub"
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
	mock, err := mockhub.New(mockhub.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mock)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		mock.Close()
	})
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
	return &fixture{mock: mock, url: srv.URL, device: dev.ID, opts: Options{
		DeviceID:      dev.ID,
		APIURL:        srv.URL,
		DeviceToken:   hub.StaticToken(tok.Token),
		Rules:         set,
		JournalPath:   filepath.Join(dir, "journal.db"),
		ControlSocket: filepath.Join(sock, "control.sock"),
		Automate:      AutomateOptions{Key: testKey, Port: -1, Assistant: eng, Workspace: filepath.Join(dir, "ws")},
	}}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
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
	if info.AutomateURL == "" || info.AutomateMode != control.ModeCohosted || info.Bridge == nil || info.Hub == nil ||
		info.ControlSocket != f.opts.ControlSocket || ready.AutomateURL != info.AutomateURL {
		t.Fatalf("Info after Start: %+v (Ready got %+v)", info, ready)
	}
	if err := d.Start(t.Context()); err == nil {
		t.Fatal("a second Start succeeded")
	}
	waitFor(t, "the device to listen", func() bool {
		dev, ok := f.mock.Device(f.device)
		return ok && dev.IsListening && info.Hub.State().Status == hub.StatusListening
	})
	if err := f.mock.PushCommand(f.device, "water the plants", nil); err != nil {
		t.Fatal(err)
	}
	var entry journal.Entry
	waitFor(t, "the run to finish", func() bool {
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
