package controlcli

// The commands as gh tests its own: (a) newCmdX with a runF that captures
// the options, to see what the flags and arguments became (and the usage
// errors that stop before any run); (b) runX called in-process with a
// buffer for stdout, a fixed clock, and a real control server (bridge/
// control on a private socket) in front of a fake daemon.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
)

// parse builds a command with newCmd and a runF that keeps its options,
// runs it with args and returns the options it got (nil when it did not
// get to the run) and the error.
func parse[O any](t *testing.T, newCmd func(*CLI, func(context.Context, *O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	var got *O
	c := New(Options{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Locate: func() (Endpoints, error) {
		t.Fatal("the parsing located the daemon")
		return Endpoints{}, nil
	}})
	cmd := newCmd(c, func(_ context.Context, o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return got, err
}

func wantUsageError(t *testing.T, err error, contains string) {
	t.Helper()
	var u *UsageError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), contains) {
		t.Fatalf("err = %v, want a UsageError with %q", err, contains)
	}
}

func TestFlagsBecomeOptions(t *testing.T) {
	st, err := parse(t, newCmdStatus, "--json")
	if err != nil || st == nil || !st.JSON {
		t.Fatalf("status --json: %+v %v", st, err)
	}
	h, err := parse(t, newCmdHistory, "--limit", "7", "--json")
	if err != nil || h == nil || h.Limit != 7 || !h.JSON {
		t.Fatalf("history: %+v %v", h, err)
	}
	if h, _ := parse(t, newCmdHistory); h == nil || h.Limit != 20 || h.JSON {
		t.Fatalf("history's defaults: %+v", h)
	}
	c, err := parse(t, newCmdCancel, "--force")
	if err != nil || c == nil || !c.Force || c.Now == nil {
		t.Fatalf("cancel --force: %+v %v", c, err)
	}
	a, err := parse(t, newCmdAnswer, " the one", "in the kitchen ")
	if err != nil || a == nil || a.Text != "the one in the kitchen" {
		t.Fatalf("answer: %+v %v", a, err)
	}
	w, err := parse(t, newCmdWatch, "--history", "12", "--json")
	if err != nil || w == nil || w.History != 12 || !w.JSON {
		t.Fatalf("watch: %+v %v", w, err)
	}
	op, err := parse(t, newCmdOpen, "--print")
	if err != nil || op == nil || !op.Print || op.StartBrowser == nil || op.Getenv == nil {
		t.Fatalf("open --print: %+v %v", op, err)
	}
}

// Usage errors stop before the run function.
func TestUsageErrorsStopBeforeTheRun(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		run        func() (any, error)
	}{
		{"history --limit 0", "--limit must be between 1 and", func() (any, error) { return parse(t, newCmdHistory, "--limit", "0") }},
		{"history --limit too many", "--limit must be between 1 and", func() (any, error) {
			return parse(t, newCmdHistory, "--limit", "100000")
		}},
		{"watch --history -1", "--history must be between 0 and 1000", func() (any, error) { return parse(t, newCmdWatch, "--history", "-1") }},
		{"answer blanks", "an answer needs some text", func() (any, error) { return parse(t, newCmdAnswer, "  ", " ") }},
		{"cancel extra", "takes no arguments", func() (any, error) { return parse(t, newCmdCancel, "now") }},
		{"open extra", "takes no arguments", func() (any, error) { return parse(t, newCmdOpen, "x") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := tc.run()
			wantUsageError(t, err, tc.want)
			if !isNilPtr(o) {
				t.Errorf("the run got options %+v", o)
			}
		})
	}
}

func isNilPtr(v any) bool {
	switch p := v.(type) {
	case *historyOptions:
		return p == nil
	case *watchOptions:
		return p == nil
	case *answerOptions:
		return p == nil
	case *cancelOptions:
		return p == nil
	case *openOptions:
		return p == nil
	}
	return false
}

// fakeDaemon is the daemon behind a real control server.
type fakeDaemon struct {
	status  bridge.Status
	cancel  bridge.CancelResult
	entries []journal.Entry
	answer  bridge.AnswerResult
	page    control.StatusPage

	mu      sync.Mutex
	revoked []string
	forced  bool
}

func (d *fakeDaemon) Status(context.Context) (bridge.Status, error) { return d.status, nil }
func (d *fakeDaemon) History(_ context.Context, limit int) ([]journal.Entry, error) {
	return d.entries[:min(limit, len(d.entries))], nil
}
func (d *fakeDaemon) Cancel(_ context.Context, force bool) (bridge.CancelResult, error) {
	d.mu.Lock()
	d.forced = force
	d.mu.Unlock()
	return d.cancel, nil
}
func (d *fakeDaemon) Answer(context.Context, string, string) (bridge.AnswerResult, error) {
	return d.answer, nil
}
func (d *fakeDaemon) StatusPage(_ context.Context, login bool) (control.StatusPage, bool) {
	p := d.page
	if !login {
		p.LoginURL = ""
	}
	return p, true
}
func (d *fakeDaemon) RevokeLogin(_ context.Context, u string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.revoked = append(d.revoked, u)
	return true
}

// serve starts a control server for d on a private socket until the test
// ends and returns how to reach it.
func serve(t *testing.T, d control.Backend) Daemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "hgcli") // socket paths are short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "control.sock")
	srv, err := control.Listen(control.Config{Path: sock, Handler: d})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return Daemon{Locate: func() (Endpoints, error) {
		return Endpoints{ControlSocket: sock, Journal: filepath.Join(dir, "journal.db")}, nil
	},
		Dial: control.Dial}
}

// noDaemon is a socket nothing listens on, and a journal never written.
func noDaemon(t *testing.T) Daemon {
	dir := t.TempDir()
	return Daemon{Locate: func() (Endpoints, error) {
		return Endpoints{ControlSocket: filepath.Join(dir, "none.sock"), Journal: filepath.Join(dir, "journal.db")}, nil
	}, Dial: control.Dial}
}

func TestRunStatusSaysTheStateByItsError(t *testing.T) {
	ctx := context.Background()
	listening := bridge.Status{DeviceID: "dev-1", Hub: bridge.HubStatus{Status: "listening"}, Listening: true}
	var out bytes.Buffer
	if err := runStatus(ctx, &statusOptions{Out: &out, Daemon: serve(t, &fakeDaemon{status: listening})}); err != nil {
		t.Fatalf("a listening daemon: %v", err)
	}
	if !strings.Contains(out.String(), "dev-1") {
		t.Errorf("the text does not name the device:\n%s", out.String())
	}

	repair := listening
	repair.Hub.NeedsRepair = true
	out.Reset()
	err := runStatus(ctx, &statusOptions{Out: &out, Daemon: serve(t, &fakeDaemon{status: repair}), JSON: true})
	var rep *ReportedError
	if !errors.As(err, &rep) || !errors.Is(err, ErrNeedsRepair) {
		t.Fatalf("needs repair: err = %v, want a ReportedError of ErrNeedsRepair", err)
	}
	var got bridge.Status
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || !got.Hub.NeedsRepair || got.DeviceID != "dev-1" {
		t.Fatalf("--json: %+v %v\n%s", got, err, out.String())
	}

	out.Reset()
	err = runStatus(ctx, &statusOptions{Out: &out, Daemon: noDaemon(t), JSON: true, ExitCode: func(error) int { return 9 }})
	var body StatusErrorBody
	if !errors.Is(err, ErrNotRunning) || json.Unmarshal(out.Bytes(), &body) != nil || body.ExitCode != 9 || body.Running {
		t.Fatalf("no daemon: err %v, body %q", err, out.String())
	}
}

// The cancel grace is told against the injected clock: the daemon's
// ForceAt minus now.
func TestRunCancelTellsTheGraceByTheClock(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	d := &fakeDaemon{cancel: bridge.CancelResult{Stopped: true, Mode: automate.CancelModeCancel, CommandID: 3, GraceMs: 10000,
		ForceAt: now.Add(7 * time.Second)}}
	var out bytes.Buffer
	o := &cancelOptions{Out: &out, Daemon: serve(t, d), Now: func() time.Time { return now }, Force: true}
	if err := runCancel(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	want := "cancel requested for command #3: the run stops at its next step; it may go on for up to 7s, then hubgate forces it (hubgate cancel --force stops it now)\n"
	if out.String() != want {
		t.Errorf("got  %q\nwant %q", out.String(), want)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.forced {
		t.Error("--force did not reach the daemon")
	}
}

func TestRunHistoryAndAnswer(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	// No daemon and no journal: an empty JSON array, not null.
	if err := runHistory(ctx, &historyOptions{Out: &out, Daemon: noDaemon(t), JSON: true, Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) != "[]" {
		t.Errorf("history without a journal: %q", out.String())
	}
	out.Reset()
	d := &fakeDaemon{entries: []journal.Entry{{ID: 2, Command: "lights"}, {ID: 1, Command: "tea"}}}
	if err := runHistory(ctx, &historyOptions{Out: &out, Daemon: serve(t, d), JSON: true, Limit: 1}); err != nil {
		t.Fatal(err)
	}
	var entries []journal.Entry
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil || len(entries) != 1 || entries[0].Command != "lights" {
		t.Fatalf("history --limit 1: %+v %v", entries, err)
	}

	out.Reset()
	if err := runAnswer(ctx, &answerOptions{Out: &out, Daemon: serve(t, &fakeDaemon{}), Text: "blue"}); !errors.Is(err, ErrNoQuestion) {
		t.Fatalf("no question waiting: %v", err)
	}
	d = &fakeDaemon{answer: bridge.AnswerResult{Answered: true, CommandID: 4}}
	if err := runAnswer(ctx, &answerOptions{Out: &out, Daemon: serve(t, d), Text: "blue"}); err != nil || out.String() != "answered the question of command #4\n" {
		t.Fatalf("answered: %q %v", out.String(), err)
	}
	if err := runAnswer(ctx, &answerOptions{Out: &out, Daemon: noDaemon(t), Text: "blue"}); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("no daemon: %v", err)
	}
}

// A browser command that fails makes open withdraw the login it armed;
// --print prints the token address and arms nothing.
func TestRunOpenWithdrawsTheLoginOfAFailedBrowser(t *testing.T) {
	page := control.StatusPage{URL: "http://127.0.0.1:9/?token=secret", LoginURL: "http://127.0.0.1:9/login?code=c0de"}
	env := func(string) string { return "" }

	d := &fakeDaemon{page: page}
	var started []string
	o := &openOptions{Out: &bytes.Buffer{}, Daemon: serve(t, d), Getenv: env,
		StartBrowser: func(argv []string, exited func(error)) error {
			started = argv
			go exited(errors.New("exit status 3"))
			return nil
		}}
	err := runOpen(context.Background(), o)
	var be *BrowserError
	if !errors.As(err, &be) || be.RevokeErr != nil {
		t.Fatalf("err = %v, want a BrowserError with the login withdrawn", err)
	}
	if len(started) == 0 || started[len(started)-1] != page.LoginURL {
		t.Errorf("the browser got %q, want the login address last", started)
	}
	d.mu.Lock()
	if len(d.revoked) != 1 || d.revoked[0] != page.LoginURL {
		t.Errorf("revoked %q", d.revoked)
	}
	d.mu.Unlock()

	var out bytes.Buffer
	if err := runOpen(context.Background(), &openOptions{Out: &out, Daemon: serve(t, &fakeDaemon{page: page}), Print: true}); err != nil || out.String() != page.URL+"\n" {
		t.Fatalf("--print: %q %v", out.String(), err)
	}
}

// A browser command still running after the grace (3 s, on synctest's
// clock) is taken for a browser that opened: the login stays armed, and
// the code is redacted. One that fails within the grace is not.
func TestRunOpenTakesABrowserStillRunningAfterTheGrace(t *testing.T) {
	page := control.StatusPage{URL: "http://127.0.0.1:9/?token=secret", LoginURL: "http://127.0.0.1:9/login?code=c0de"}
	d := &fakeDaemon{page: page}
	dm := serve(t, d) // outside the bubble: its socket is real
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		o := &openOptions{Out: &out, Daemon: dm, Getenv: func(string) string { return "" },
			StartBrowser: func([]string, func(error)) error { return nil }} // runs on
		start := time.Now()
		if err := runOpen(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != browserGrace {
			t.Errorf("open waited %s for the browser, want the grace %s", waited, browserGrace)
		}
		if want := "opened the status page (http://127.0.0.1:9/login?code=…)\n"; out.String() != want {
			t.Errorf("got %q, want %q (the code redacted)", out.String(), want)
		}
		d.mu.Lock()
		if len(d.revoked) != 0 {
			t.Errorf("an opened browser's login was withdrawn: %q", d.revoked)
		}
		d.mu.Unlock()

		// A launcher that fails a second in: the login is withdrawn.
		o.StartBrowser = func(_ []string, exited func(error)) error {
			go func() { time.Sleep(time.Second); exited(errors.New("exit status 4")) }()
			return nil
		}
		start = time.Now()
		var be *BrowserError
		if err := runOpen(context.Background(), o); !errors.As(err, &be) || time.Since(start) != time.Second {
			t.Errorf("a browser that failed after 1s: %v after %s", err, time.Since(start))
		}
	})
}

// watchingDaemon streams events, then ends the stream (it stopped).
type watchingDaemon struct {
	fakeDaemon
	events  []bridge.Event
	history int
}

func (d *watchingDaemon) Watch(_ context.Context, history int) (<-chan bridge.Event, error) {
	d.mu.Lock()
	d.history = history
	d.mu.Unlock()
	ch := make(chan bridge.Event, len(d.events))
	for _, e := range d.events {
		ch <- e
	}
	close(ch)
	return ch, nil
}

// watch prints one JSON line per event, and a daemon that ends the stream
// is ErrNotRunning (exit 9).
func TestRunWatchPrintsEachEventUntilTheDaemonStops(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	d := &watchingDaemon{events: []bridge.Event{{Seq: 1, At: at, Kind: "received", Command: "tea"}, {Seq: 2, At: at, Kind: "received", Command: "lights"}}}
	var out bytes.Buffer
	err := runWatch(context.Background(), &watchOptions{Out: &out, Daemon: serve(t, d), JSON: true, History: 5})
	if !errors.Is(err, ErrNotRunning) {
		t.Fatalf("err = %v, want ErrNotRunning when the stream ends", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines:\n%s", out.String())
	}
	for i, l := range lines {
		var e bridge.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Seq != uint64(i+1) {
			t.Errorf("line %d: %q %v", i, l, err)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.history != 5 {
		t.Errorf("history %d reached the daemon, want 5", d.history)
	}
}
