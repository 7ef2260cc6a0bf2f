package notify_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/notify"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
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

func finished(id int64, command, rule, answer string) bridge.Event {
	return bridge.Event{Kind: bridge.EventFinished, CommandID: id, Command: command, Rule: rule,
		Status: automate.StatusCompleted, Answer: answer}
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
	// Speech is asynchronous: wait for the utterance Handle started to end
	// (espeak-ng has then written the whole file).
	select {
	case <-sp.Done():
	case <-time.After(time.Minute):
		t.Fatal("the speech never ended")
	}
	out, err := exec.Command(sox, wav, "-n", "stat").CombinedOutput()
	stat := string(out)
	if err != nil {
		t.Fatalf("sox stat: %v\n%s", err, stat)
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
	s.Handle(context.Background(), bridge.Event{Kind: bridge.EventStarted, CommandID: 7})
	select {
	case <-second:
	case <-time.After(10 * time.Second):
		t.Fatal("a new run did not cut off the speech")
	}
	third, _ := sp.Say("again")
	s.Handle(context.Background(), bridge.Event{Kind: bridge.EventStopOutputs, CommandID: 8})
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

// recordingDesktop keeps what it was asked to show.
type recordingDesktop struct{ got []notify.Message }

func (r *recordingDesktop) Notify(_ context.Context, m notify.Message) error {
	r.got = append(r.got, m)
	return nil
}

// A command refused as not for this device (a custom action of another
// device type) is one the person triggered: they are told why it did not
// run, unless the notify policy is none.
func TestARefusedCommandIsTold(t *testing.T) {
	refused := bridge.Event{Kind: bridge.EventDecided, CommandID: 7, Command: "ask",
		Decision: journal.DecisionRefused, Note: `custom action "ask-agent" is for device type "game-pad"; this device is of type "hubgate-agent"; not run`}
	for _, policy := range []string{rules.NotifyAnswers, rules.NotifyFailures, rules.NotifyNone} {
		d := &recordingDesktop{}
		s := notify.New(notify.Options{Desktop: d, Default: policy, Logger: slog.New(slog.DiscardHandler)})
		s.Handle(context.Background(), refused)
		want := []notify.Message{{Summary: "hubgate · ask: not run (refused)", Body: refused.Note, Urgency: notify.UrgencyNormal}}
		if policy == rules.NotifyNone {
			want = nil
		}
		if !reflect.DeepEqual(d.got, want) {
			t.Errorf("policy %s: shown %+v, want %+v", policy, d.got, want)
		}
	}
}

// A profile over the hub's receive limit is told (the catalogue stays as
// it was), unless the notify policy is none.
func TestAProfileTooLargeIsTold(t *testing.T) {
	ev := bridge.Event{Kind: bridge.EventProfileTooLarge, Note: "the profile the hub sent (DeviceProfileUpdate) is too large (3000000 bytes; ...)"}
	for _, policy := range []string{rules.NotifyAnswers, rules.NotifyFailures, rules.NotifyNone} {
		d := &recordingDesktop{}
		s := notify.New(notify.Options{Desktop: d, Default: policy, Logger: slog.New(slog.DiscardHandler)})
		s.Handle(context.Background(), ev)
		want := []notify.Message{{Summary: "hubgate: profile not loaded", Body: ev.Note, Urgency: notify.UrgencyNormal}}
		if policy == rules.NotifyNone {
			want = nil
		}
		if !reflect.DeepEqual(d.got, want) {
			t.Errorf("policy %s: shown %+v, want %+v", policy, d.got, want)
		}
	}
}

// The agent's question (ask_person) is shown with its choices and how to
// answer, unless the policy is none, and spoken when the rule speaks.
func TestAQuestionIsShownAndSpoken(t *testing.T) {
	sh := testenv.RequireProgram(t, "sh")
	out := filepath.Join(t.TempDir(), "spoken")
	sp, err := notify.NewSpeaker(notify.SpeakerOptions{Command: []string{sh, "-c", `printf %s "$1" > "$2"`, "sh", "{text}", out}})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	deadline := time.Date(2026, 11, 26, 17, 0, 0, 0, time.Local)
	q := bridge.Event{Kind: bridge.EventQuestion, CommandID: 4, Command: "pick", Rule: "pick",
		Question: "Which colour?", Choices: []string{"red", "green"}, Deadline: &deadline}
	for _, policy := range []string{rules.NotifyAnswers, rules.NotifyNone} {
		d := &recordingDesktop{}
		s := notify.New(notify.Options{Desktop: d, Speaker: sp, Logger: slog.New(slog.DiscardHandler),
			Rule: func(string) (string, bool) { return policy, true }})
		s.Handle(context.Background(), q)
		want := []notify.Message{{Summary: "hubgate · pick: asks",
			Body: "Which colour?\nChoices: red, green\nAnswer with your next command, or on the status page, by 17:00:00", Urgency: notify.UrgencyCritical}}
		if policy == rules.NotifyNone {
			want = nil
		}
		if !reflect.DeepEqual(d.got, want) {
			t.Errorf("policy %s: shown %+v, want %+v", policy, d.got, want)
		}
	}
	var spoken []byte
	// The speech program (a child) writes the file: a bounded poll.
	testutil.WaitFor(t, "the question spoken", func() bool {
		spoken, _ = os.ReadFile(out)
		return string(spoken) == "Which colour? red, or green?"
	})
}

// A command's policy is the one the bridge stamped on its events when it
// arrived (bridge.Event.Notify): a reload that changed the rule since
// does not change what is shown of it, however late the notifier reads
// the event. An event without a stamp takes the rule's policy now.
func TestTheCommandsStampedPolicyOutranksTheRulesNow(t *testing.T) {
	d := &recordingDesktop{}
	s := notify.New(notify.Options{Desktop: d, Default: rules.NotifyNone, Logger: slog.New(slog.DiscardHandler),
		Rule: func(string) (string, bool) { return rules.NotifyAnswers, false }})
	quiet := finished(1, "before the reload", "r", "kept quiet")
	quiet.Notify = rules.NotifyNone
	s.Handle(context.Background(), quiet)
	if len(d.got) != 0 {
		t.Errorf("a command stamped notify none was shown: %+v", d.got)
	}
	loud := finished(2, "after the reload", "r", "shown")
	loud.Notify = rules.NotifyAnswers
	s.Handle(context.Background(), finished(3, "unstamped", "r", "shown too"))
	s.Handle(context.Background(), loud)
	var bodies []string
	for _, m := range d.got {
		bodies = append(bodies, m.Body)
	}
	if !slices.Equal(bodies, []string{"shown too", "shown"}) {
		t.Errorf("shown %q, want the unstamped answer (the rule's policy now) and the one stamped answers", bodies)
	}
}
