package notify_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/notify"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/internal/testenv"
)

// need fails the test in CI (CI=true) when cond is false, and skips it
// elsewhere.
func need(t *testing.T, cond bool, what string) {
	t.Helper()
	if cond {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing (scripts/test installs it)", what)
	}
	t.Skipf("%s is missing; run under .ci/with-keyring with scripts/test's packages", what)
}

// fakeNotifications is a notification server of the test's own: it owns
// org.freedesktop.Notifications on the private session bus of
// .ci/with-keyring and records every Notify call.
type fakeNotifications struct {
	mu    sync.Mutex
	calls []notifyCall
	got   chan notifyCall
}

type notifyCall struct {
	App, Summary, Body string
	Urgency            byte
	Timeout            int32
}

func (f *fakeNotifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	c := notifyCall{App: app, Summary: summary, Body: body, Timeout: timeout}
	if u, ok := hints["urgency"].Value().(byte); ok {
		c.Urgency = u
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	n := uint32(len(f.calls))
	f.mu.Unlock()
	f.got <- c
	return n, nil
}

func (f *fakeNotifications) GetCapabilities() ([]string, *dbus.Error) {
	return []string{"body"}, nil
}

func (f *fakeNotifications) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "hubgate-test", "hubgate", "1", "1.2", nil
}

// serveNotifications exports a fakeNotifications; release gives the name
// up (no receiver any more).
func serveNotifications(t *testing.T) (f *fakeNotifications, release func()) {
	t.Helper()
	need(t, os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "", "a D-Bus session bus (DBUS_SESSION_BUS_ADDRESS; run the tests with -exec .ci/with-keyring)")
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	f = &fakeNotifications{got: make(chan notifyCall, 10)}
	if err := conn.Export(f, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own org.freedesktop.Notifications: reply %v, err %v", reply, err)
	}
	return f, func() {
		if _, err := conn.ReleaseName("org.freedesktop.Notifications"); err != nil {
			t.Fatal(err)
		}
	}
}

// logSink collects log records.
type logSink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func finished(id int64, command, rule, answer string) control.Event {
	return control.Event{Kind: control.EventFinished, CommandID: id, Command: command, Rule: rule,
		Status: automate.StatusCompleted, Answer: answer}
}

func TestAnswersReachARealNotificationServerOverDBus(t *testing.T) {
	srv, release := serveNotifications(t)
	var logs logSink
	desktop := &notify.Freedesktop{}
	defer desktop.Close()
	s := notify.New(notify.Options{Desktop: desktop, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Rule: func(name string) (string, bool) {
			if name == "quiet" {
				return rules.NotifyFailures, false
			}
			return "", false
		}})
	ctx := context.Background()
	final := "22 degrees and sunny"
	events := make(chan control.Event, 10)
	go s.Run(ctx, events)

	events <- finished(1, "weather", "weather", "It is 22 degrees and sunny in Lyon.")
	events <- control.Event{Kind: control.EventFinished, CommandID: 2, Command: "contract", Rule: "weather",
		Status: automate.StatusCompleted, Answer: "long reasoning", FinalAnswer: &final}
	events <- finished(3, "quiet one", "quiet", "not shown: the rule says failures only")
	events <- control.Event{Kind: control.EventDecided, CommandID: 4, Command: "slow two", Rule: "quiet",
		Decision: journal.DecisionDropped, Note: "busy with command 3"}
	events <- control.Event{Kind: control.EventNotify, CommandID: 5, Command: "kettle", Rule: "weather", Level: "info", Message: "the kettle is on"}
	events <- control.Event{Kind: control.EventFinished, CommandID: 6, Command: "broken", Rule: "weather",
		Status: automate.StatusFailed, ErrorCode: "model_unavailable", Answer: ""}

	want := []notifyCall{
		{Summary: "hubgate · weather", Body: "It is 22 degrees and sunny in Lyon.", Urgency: 1},
		{Summary: "hubgate · contract", Body: final, Urgency: 1},
		{Summary: "hubgate · slow two: not run (dropped)", Body: "busy with command 3", Urgency: 1},
		{Summary: "hubgate · kettle", Body: "the kettle is on", Urgency: 1},
		{Summary: "hubgate · broken: failed", Body: "the run failed (model_unavailable)", Urgency: 2},
	}
	for i, w := range want {
		select {
		case got := <-srv.got:
			w.App, w.Timeout = "hubgate", -1
			if got != w {
				t.Errorf("notification %d:\n got %+v\nwant %+v", i, got, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("notification %d (%q) never reached the server", i, w.Summary)
		}
	}

	// No receiver any more: one warning, then the log only, and no hang.
	release()
	start := time.Now()
	for i := range 3 {
		s.Handle(ctx, finished(int64(10+i), "after", "weather", "nobody shows this"))
	}
	if d := time.Since(start); d > notify.DefaultTimeout {
		t.Errorf("three notifications without a server took %s", d)
	}
	if n := strings.Count(logs.String(), "desktop notifications are not available"); n != 1 {
		t.Errorf("%d warnings, want 1; log:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "nobody shows this"); n != 3 {
		t.Errorf("the log shows %d of the 3 notifications:\n%s", n, logs.String())
	}
	if sent, failed := s.Counts(); sent != 5 || failed != 1 {
		t.Errorf("sent %d failed %d; want 5 and 1 (then log only until the retry)", sent, failed)
	}
}

// hangingDesktop never answers until its context ends.
type hangingDesktop struct{ calls int }

func (h *hangingDesktop) Notify(ctx context.Context, m notify.Message) error {
	h.calls++
	<-ctx.Done()
	return ctx.Err()
}

func TestAHangingServerCostsOneTimeoutThenTheLogOnly(t *testing.T) {
	h := &hangingDesktop{}
	now := time.Unix(1000, 0)
	s := notify.New(notify.Options{Desktop: h, Timeout: 50 * time.Millisecond, RetryAfter: time.Minute,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }})
	for i := range 5 {
		s.Handle(context.Background(), finished(int64(i), "x", "", "y"))
	}
	if h.calls != 1 {
		t.Fatalf("%d calls to a hanging server, want 1 until the retry", h.calls)
	}
	now = now.Add(2 * time.Minute)
	s.Handle(context.Background(), finished(9, "x", "", "y"))
	if h.calls != 2 {
		t.Fatalf("no retry after RetryAfter: %d calls", h.calls)
	}
}

func TestSpeechWritesAudibleWAV(t *testing.T) {
	espeak := testenv.RequireProgram(t, "espeak-ng")
	sox := testenv.RequireProgram(t, "sox")
	wav := filepath.Join(t.TempDir(), "answer.wav")
	sp, err := notify.NewSpeaker(notify.SpeakerOptions{Command: []string{espeak, "-w", wav}})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	s := notify.New(notify.Options{Desktop: &hangingDesktop{}, Default: rules.NotifyNone, Speaker: sp,
		Rule: func(string) (string, bool) { return "", true }, Logger: slog.New(slog.DiscardHandler)})
	s.Handle(context.Background(), finished(1, "weather", "weather", "It is twenty two degrees and sunny in Lyon."))
	// Speech is asynchronous; Say again with the same text to get its
	// done channel would cut it off, so wait for the file to be complete.
	deadline := time.Now().Add(20 * time.Second)
	var stat string
	for time.Now().Before(deadline) {
		out, err := exec.Command(sox, wav, "-n", "stat").CombinedOutput()
		stat = string(out)
		if err == nil && strings.Contains(stat, "RMS     amplitude") && statValue(stat, "Length (seconds)") > 0.5 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	rms, length := statValue(stat, "RMS     amplitude"), statValue(stat, "Length (seconds)")
	t.Logf("espeak-ng wrote %s: %.2f s, RMS amplitude %.4f", wav, length, rms)
	if length < 1 || rms < 0.01 {
		t.Fatalf("the speech is silent or too short; sox stat:\n%s", stat)
	}
}

func statValue(stat, key string) float64 {
	m := regexp.MustCompile(regexp.QuoteMeta(key) + `:\s+([0-9.eE+-]+)`).FindStringSubmatch(stat)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

func TestSpeechIsCutOffByTheNextRunAndStopOutputs(t *testing.T) {
	sleep := testenv.RequireProgram(t, "sleep")
	sp, err := notify.NewSpeaker(notify.SpeakerOptions{Command: []string{sleep, "30"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	first, err := sp.Say("a long answer")
	if err != nil {
		t.Fatal(err)
	}
	second, err := sp.Say("the next answer")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-first: // Say returned after the first utterance ended: one at a time
	default:
		t.Fatal("the first utterance still runs after the second started")
	}
	s := notify.New(notify.Options{Desktop: &hangingDesktop{}, Speaker: sp, Logger: slog.New(slog.DiscardHandler)})
	s.Handle(context.Background(), control.Event{Kind: control.EventStarted, CommandID: 7})
	select {
	case <-second:
	case <-time.After(10 * time.Second):
		t.Fatal("a new run did not cut off the speech")
	}
	third, _ := sp.Say("again")
	s.Handle(context.Background(), control.Event{Kind: control.EventStopOutputs, CommandID: 8})
	select {
	case <-third:
	case <-time.After(10 * time.Second):
		t.Fatal("StopOutputs did not cut off the speech")
	}
}

func TestNoSpeechCommand(t *testing.T) {
	_, err := notify.NewSpeaker(notify.SpeakerOptions{LookPath: func(string) (string, error) { return "", exec.ErrNotFound }})
	if runtime.GOOS == "linux" && !errors.Is(err, notify.ErrNoSpeechCommand) {
		t.Fatalf("NewSpeaker without espeak-ng and spd-say: %v, want ErrNoSpeechCommand", err)
	}
}

func TestSpokenText(t *testing.T) {
	long := strings.Repeat("The lights are on. ", 40)
	for _, c := range []struct{ in, want string }{
		{"short  answer\n", "short answer"},
		{long, strings.TrimSpace(strings.Repeat("The lights are on. ", 21)) + " " + notify.MoreInHistory},
		{strings.Repeat("word ", 200), strings.TrimSpace(strings.Repeat("word ", 80)) + ". " + notify.MoreInHistory},
	} {
		if got := notify.SpokenText(c.in, 400); got != c.want {
			t.Errorf("SpokenText(%.30q...):\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
