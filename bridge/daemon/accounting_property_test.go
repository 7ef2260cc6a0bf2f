package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/notify"
	"github.com/hubgate/hubgate/bridge/rules/rulestest"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testutil"
)

// The property test of issue 17: random sequences of hub events against
// the mock (real SignalR over loopback) and the real daemon assembly with
// the scripted engine. Invariant: every command the hub delivered has
// exactly one journal row with a final decision, none runs twice, none is
// lost; refusals happen exactly when bridge.listening: obey and the hub
// asked to stop; a repeated invocation is counted as a duplicate.
//
// HUBGATE_PROPERTY_SEED=<n> replays one sequence (the failure message
// prints it); HUBGATE_PROPERTY_RUNS=<n> sets how many sequences run
// (default propertyRuns; -short: 20). Measured on this 2-core machine
// under a load average of 5 to 7 (other builds running): 300 sequences in
// 39 s (p50 0.10 s, p90 0.17 s a sequence), 49 s with -race.
const propertyRuns = 300

// The event kinds of a sequence.
const (
	evCommand        = iota // a command, with or without a macro (or with a malformed one)
	evBurst                 // two commands back to back (the busy policy)
	evDuplicate             // one invocation (an invocationId) twice on one connection
	evStopOutputs           // a StopOutputs macro
	evDrop                  // the hub drops the connection (mock drop fault)
	evRepair                // the device token is disabled, then a new one is paired (hub-client swap)
	evRestart               // the daemon stops and starts again on the same journal
	evStopListening         // the hub's StopListening
	evStartListening        // the hub's StartListening
	evProfile               // a profile update, with a malformed macro among good ones
	evKinds
)

// countingEngine is the scripted engine, counting the runs of each prompt.
type countingEngine struct {
	assistant.Assistant
	mu   sync.Mutex
	runs map[string]int
}

func (c *countingEngine) Run(ctx context.Context, task *assistant.Task, env assistant.Env) (*assistant.Result, error) {
	c.mu.Lock()
	c.runs[firstLine(task.Prompt)]++
	c.mu.Unlock()
	return c.Assistant.Run(ctx, task, env)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// propertyWorld is what the sequences share: the mock and the engine.
type propertyWorld struct {
	mock   *mockhub.Server
	url    string
	engine *countingEngine
}

func TestEveryCommandAccountedFor(t *testing.T) {
	f := newFixture(t) // its mock and address; each sequence makes its own device
	w := &propertyWorld{mock: f.mock, url: f.url, engine: &countingEngine{
		Assistant: scripted.New(scripted.Config{Logger: slog.New(slog.DiscardHandler)}), runs: map[string]int{}}}

	if s := os.Getenv("HUBGATE_PROPERTY_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("HUBGATE_PROPERTY_SEED=%q: %v", s, err)
		}
		w.sequence(t, seed)
		return
	}
	runs := propertyRuns
	if testing.Short() {
		runs = 20
	}
	if s := os.Getenv("HUBGATE_PROPERTY_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("HUBGATE_PROPERTY_RUNS=%q", s)
		}
		runs = n
	}
	base := uint64(time.Now().UnixNano())
	t.Logf("seeds %d..%d (HUBGATE_PROPERTY_SEED=<seed> replays one)", base, base+uint64(runs)-1)
	start := time.Now()
	for i := range runs {
		seed := base + uint64(i)
		ok := t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) { w.sequence(t, seed) })
		if !ok {
			t.Fatalf("sequence failed: replay it with HUBGATE_PROPERTY_SEED=%d", seed)
		}
	}
	t.Logf("%d sequences in %s", runs, time.Since(start).Round(time.Millisecond))
}

// TestObeyWishCrossesRepairs is the sequence of seed 1795713693819627124,
// scripted: under bridge.listening: obey, the hub's last Start/Stop
// Listening decides the next command however many hub clients replaced
// each other since (each re-pair swaps the client; the new one
// auto-listens, which must not reset the hub's wish). The seed failed
// because the model counted a StartListening the hub lost with the
// connection (pushed, then the token disabled before it was sent); the
// listening step now waits for the bridge to receive the request.
func TestObeyWishCrossesRepairs(t *testing.T) {
	f := newFixture(t)
	w := &propertyWorld{mock: f.mock, url: f.url, engine: &countingEngine{
		Assistant: scripted.New(scripted.Config{Logger: slog.New(slog.DiscardHandler)}), runs: map[string]int{}}}
	for _, tc := range []struct {
		name  string
		seed  uint64 // a command's text comes from it; the engine counts runs by text
		steps []int
	}{
		// The next command runs: StartListening came last.
		{"start after stop", 1795713693819627124, []int{evRepair, evStopListening, evRepair, evStartListening, evRepair, evCommand, evDuplicate, evRestart}},
		// The next commands are refused: the new clients' auto-listen is
		// not the hub asking.
		{"stop survives", 1795713693819627125, []int{evStopListening, evRepair, evCommand, evRepair, evDuplicate, evStartListening, evCommand}},
	} {
		seed := tc.seed
		t.Run(tc.name, func(t *testing.T) {
			s := &seqState{t: t, w: w, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), obey: true}
			w.run(s, len(tc.steps), func(i int) int { return tc.steps[i] })
			var refused int
			for _, c := range s.commands {
				if c.refused {
					refused++
				}
			}
			// The model's expectations are what check compared the journal
			// with; here they must be the ones the scenario is about.
			if want := map[string]int{"start after stop": 0, "stop survives": 2}[tc.name]; refused != want {
				t.Fatalf("the model expected %d refusals, want %d: %+v", refused, want, s.commands)
			}
		})
	}
}

// seqState is one sequence: its daemon, the model of what the hub asked,
// and every command delivered.
type seqState struct {
	t      *testing.T
	w      *propertyWorld
	seed   uint64
	rng    *rand.Rand
	log    []string // the sequence as run, for the failure message
	obey   bool
	device string
	tokMu  sync.Mutex
	token  deviceapi.DeviceToken
	opts   Options
	d      *Daemon

	// The model.
	bridgeWish *bool // the bridge's listening wish (nil: none yet in this daemon's life)
	hubWants   bool  // the current hub client announces listening on each connection
	commands   []sentCommand
	lifeDups   uint64 // duplicates expected in this daemon's life
	inv        int
}

type sentCommand struct {
	text    string
	refused bool // the model says: refused (obey and the hub asked to stop)
	noted   bool // the model says: acted on while the hub had asked to stop (follow-vendor)
}

func (w *propertyWorld) sequence(t *testing.T, seed uint64) {
	s := &seqState{t: t, w: w, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	s.obey = s.rng.IntN(2) == 0
	// Each kind is drawn as its step comes, after the previous step's
	// own draws: a seed replays the sequence it always did.
	w.run(s, 3+s.rng.IntN(6), func(int) int { return s.rng.IntN(evKinds) })
}

// run runs n steps, kind(i) the i-th, on a new device and daemon, then
// checks every command against the model.
func (w *propertyWorld) run(s *seqState, n int, kind func(i int) int) {
	t, seed := s.t, s.seed
	dev, tok, err := w.mock.CreateDevice("", "property "+strconv.FormatUint(seed, 10))
	if err != nil {
		t.Fatal(err)
	}
	s.device, s.token = dev.ID, tok
	set, err := rulestest.Parse([]byte(`
rules:
  - name: slow
    match: {command_glob: "slow *"}
    busy: queue
    run:
      prompt: "{{.Command}}\n#!sleep 60"
unmatched:
  action: run
  busy: single
`))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := set.Compile()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sock, err := os.MkdirTemp("", "hgp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	policy := bridge.ListenFollowVendor
	if s.obey {
		policy = bridge.ListenObey
	}
	s.opts = Options{
		DeviceID: dev.ID,
		APIURL:   w.url,
		DeviceToken: func(context.Context) (string, error) {
			s.tokMu.Lock()
			defer s.tokMu.Unlock()
			return s.token.Token, nil
		},
		Rules:         rs,
		JournalPath:   filepath.Join(dir, "journal.db"),
		ControlSocket: filepath.Join(sock, "control.sock"),
		Bridge:        BridgeOptions{CancelGrace: time.Second, Listening: policy},
		Automate:      AutomateOptions{Key: testKey, Port: -1, Assistant: w.engine, Workspace: filepath.Join(dir, "ws")},
		Outputs:       OutputOptions{Desktop: nopDesktop{}},
		HubBackoff:    hub.Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond, Revoked: 20 * time.Millisecond, Jitter: -1},
		Logger:        slog.New(slog.DiscardHandler),
	}
	var trace testutil.SyncBuffer
	if os.Getenv("HUBGATE_PROPERTY_TRACE") != "" {
		s.opts.Logger = slog.New(slog.NewTextHandler(&trace, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s.logf("seed %d, bridge.listening %s", seed, policy)
	s.start()
	defer func() {
		if s.d != nil {
			s.d.Close()
		}
	}()
	for i := range n {
		began := time.Now()
		s.step(kind(i))
		if d := time.Since(began); d > time.Second {
			t.Logf("slow step (%s): %s\n%s", d.Round(time.Millisecond), s.log[len(s.log)-1], trace.String())
		}
	}
	s.check()
}

// nopDesktop takes notifications without showing them.
type nopDesktop struct{}

func (nopDesktop) Notify(context.Context, notify.Message) error { return nil }

func (s *seqState) logf(format string, args ...any) {
	s.log = append(s.log, fmt.Sprintf(format, args...))
}

func (s *seqState) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("%s\nsequence (replay: HUBGATE_PROPERTY_SEED=%d):\n  %s", fmt.Sprintf(format, args...), s.seed, strings.Join(s.log, "\n  "))
}

// wait waits until cond holds, failing with the sequence to replay. Its
// conditions read the daemon, its hub client and the mock hub's
// connections at once, and no one event source announces all three: a
// bounded poll (testutil.NoEvent).
func (s *seqState) wait(what string, cond func() bool) {
	s.t.Helper()
	if err := testutil.Wait(s.t.Context(), what, testutil.NoEvent, cond); err != nil {
		s.fatalf("%v", err)
	}
}

// start starts a daemon on the sequence's journal and waits until its
// hub client listens.
func (s *seqState) start() {
	s.t.Helper()
	d, err := New(s.opts)
	if err != nil {
		s.fatalf("New: %v", err)
	}
	if err := d.Start(s.t.Context()); err != nil {
		s.fatalf("Start: %v", err)
	}
	s.d = d
	s.bridgeWish, s.hubWants, s.lifeDups = nil, true, 0
	s.settle()
}

// settle waits until the current hub client is connected on the mock's
// only connection of the device, listening as the model says, so that a
// push now reaches it.
func (s *seqState) settle() {
	s.t.Helper()
	s.wait("the hub client to settle", func() bool {
		st := s.d.Info().Hub.State()
		want := hub.StatusConnected
		if s.hubWants {
			want = hub.StatusListening
		}
		return st.Status == want && s.w.mock.Connections(s.device) == 1
	})
}

func (s *seqState) step(kind int) {
	s.t.Helper()
	switch kind {
	case evCommand:
		s.command(s.newText(""))
	case evBurst:
		a, b := s.newText("slow "), s.newText("")
		s.logf("burst %q %q", a, b)
		s.push(a, nil)
		s.push(b, nil)
		s.expect(a)
		s.expect(b)
		s.awaitReceived(a, b)
	case evDuplicate:
		text := s.newText("")
		s.inv++
		id := "inv-" + strconv.Itoa(s.inv)
		s.logf("duplicate %q (invocation %s)", text, id)
		before := s.status().Counters.Duplicates
		if _, err := s.w.mock.PushAwaiting(s.device, id, 2, "DeviceCommand", text, nil); err != nil {
			s.fatalf("PushAwaiting: %v", err)
		}
		s.expect(text)
		s.lifeDups++
		s.wait("the repeated invocation to be counted", func() bool { return s.status().Counters.Duplicates == before+1 })
		s.awaitReceived(text)
	case evStopOutputs:
		text := s.newText("")
		s.logf("stop outputs %q", text)
		s.push(text, &deviceapi.Macro{ID: "m-stop", Name: "Stop", Commands: []string{text},
			Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventStopOutputs}}})
		// A control command: it stops outputs even when commands are
		// refused, and runs nothing.
		s.commands = append(s.commands, sentCommand{text: text})
		s.awaitReceived(text)
	case evDrop:
		s.logf("drop")
		before := s.d.Info().Hub.State().Session
		s.w.mock.DropConnections()
		s.wait("a new connection", func() bool { return s.d.Info().Hub.State().Session > before })
		s.settle()
	case evRepair:
		s.logf("token disabled, pair --reuse")
		old := s.d.Info().Hub
		if _, err := s.w.mock.DisableToken(s.token.ID); err != nil {
			s.fatalf("DisableToken: %v", err)
		}
		s.wait("the hub to refuse the token", func() bool { return old.State().NeedsRepair() })
		tok, err := s.w.mock.CreateToken(s.device)
		if err != nil {
			s.fatalf("CreateToken: %v", err)
		}
		s.tokMu.Lock()
		s.token = tok
		s.tokMu.Unlock()
		if _, err := s.d.Reconnect(s.t.Context()); err != nil {
			s.fatalf("Reconnect: %v", err)
		}
		s.wait("the new hub client", func() bool { return s.d.Info().Hub != old })
		s.hubWants = true // a new hub client auto-listens; the bridge keeps its wish
		s.settle()
	case evRestart:
		s.logf("restart")
		s.checkLife()
		if err := s.d.Close(); err != nil {
			s.fatalf("Close: %v", err)
		}
		s.d = nil
		s.start()
	case evStopListening, evStartListening:
		on := kind == evStartListening
		s.logf("listening %v", on)
		target := "StopListening"
		if on {
			target = "StartListening"
		}
		before := time.Now()
		if err := s.w.mock.Push(s.device, target); err != nil {
			s.fatalf("push %s: %v", target, err)
		}
		// The hub queues the push on the connection; a drop or a
		// disabled token right after it loses it with the connection
		// (the hub does not send it again), and the bridge rightly
		// keeps its last wish. The model holds only what was delivered,
		// as it does for commands (awaitReceived).
		s.wait("the bridge to receive "+target, func() bool {
			asked := s.status().HubAsked
			return asked != nil && asked.Listen == on && !asked.At.Before(before)
		})
		s.bridgeWish, s.hubWants = &on, on
		// The next command is judged by it in event order; the hub
		// client's announcement follows on its own.
		s.settle()
	case evProfile:
		// A profile with an enum-numbered, string-timed macro among good
		// ones. Where deviceapi decodes it (liberal decoding, issue 17
		// item 2), the mock stores it: VerifySelf answers it on every
		// later connection. Where it does not, only the update is pushed,
		// raw (the mock's typed API cannot store it).
		var p deviceapi.Profile
		if err := json.Unmarshal([]byte(oddProfile), &p); err == nil {
			s.logf("profile with a malformed macro (stored)")
			if _, err := s.w.mock.PushProfile(s.device, p); err != nil {
				s.fatalf("push the profile: %v", err)
			}
			return
		}
		s.logf("profile update with a malformed macro (pushed raw)")
		dev := fmt.Sprintf(`{"id":%q,"currentProfile":%s}`, s.device, oddProfile)
		if err := s.w.mock.Push(s.device, "DeviceProfileUpdate", json.RawMessage(dev)); err != nil {
			s.fatalf("push the profile: %v", err)
		}
	}
}

// oddProfile is a profile as the vendor's Unity models type it: one
// macro's eventType is the enum's number and its hold time a string.
const oddProfile = `{"id":"p","name":"P","profileType":"Standard","configuration":{"macros":[
	{"id":"bad","name":"Bad","commands":["bad"],"events":[{"eventType":0,"holdTimeMilliseconds":"100"}]},
	{"id":"good","name":"Water Plants","commands":["water plants"],"events":[{"eventType":"Pause","holdTimeMilliseconds":10}]}]}}`

// newText is a command text no other command of any sequence has.
func (s *seqState) newText(prefix string) string {
	return fmt.Sprintf("%sc%d-%d", prefix, s.seed, len(s.commands)+s.rng.IntN(1000)*1000)
}

// command pushes one command, without a macro, with one, or with one
// that does not decode.
func (s *seqState) command(text string) {
	s.t.Helper()
	var err error
	switch s.rng.IntN(4) {
	case 0:
		s.logf("command %q without a macro", text)
		err = s.w.mock.Push(s.device, "DeviceCommand", text, nil)
	case 1:
		s.logf("command %q with only its text", text)
		err = s.w.mock.Push(s.device, "DeviceCommand", text)
	case 2:
		s.logf("command %q with a macro", text)
		s.push(text, &deviceapi.Macro{ID: "m-" + text, Name: "Macro " + text, Commands: []string{text},
			Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventPause}}})
	default:
		s.logf("command %q with a malformed macro", text)
		err = s.w.mock.Push(s.device, "DeviceCommand", text,
			json.RawMessage(`{"id":1,"name":"odd","commands":"x","events":[{"eventType":0,"holdTimeMilliseconds":"100"}]}`))
	}
	if err != nil {
		s.fatalf("push %q: %v", text, err)
	}
	s.expect(text)
	s.awaitReceived(text)
}

func (s *seqState) push(text string, m *deviceapi.Macro) {
	s.t.Helper()
	if err := s.w.mock.PushCommand(s.device, text, m); err != nil {
		s.fatalf("push %q: %v", text, err)
	}
}

// expect records a command the hub delivers now, with what the model
// says of it.
func (s *seqState) expect(text string) {
	stopped := s.bridgeWish != nil && !*s.bridgeWish
	s.commands = append(s.commands, sentCommand{text: text, refused: s.obey && stopped, noted: !s.obey && stopped})
}

// awaitReceived waits until the journal has a row for each text, so that
// the next step (a drop, a restart) cannot race the delivery.
func (s *seqState) awaitReceived(texts ...string) {
	s.t.Helper()
	s.wait(fmt.Sprintf("rows for %q", texts), func() bool {
		rows := s.rows()
		for _, t := range texts {
			if len(rows[t]) == 0 {
				return false
			}
		}
		return true
	})
}

func (s *seqState) status() bridge.Status {
	s.t.Helper()
	st, err := s.d.Info().Bridge.Status(s.t.Context())
	if err != nil {
		s.fatalf("status: %v", err)
	}
	return st
}

// rows reads the whole journal (every boot) by command text.
func (s *seqState) rows() map[string][]journal.Entry {
	s.t.Helper()
	j, err := journal.OpenReadOnly(s.opts.JournalPath)
	if err != nil {
		s.fatalf("open the journal: %v", err)
	}
	defer j.Close()
	es, err := j.History(s.t.Context(), journal.HistoryQuery{Limit: journal.MaxHistoryLimit})
	if err != nil {
		s.fatalf("history: %v", err)
	}
	out := map[string][]journal.Entry{}
	for _, e := range es {
		out[e.Command] = append(out[e.Command], e)
	}
	return out
}

// checkLife checks the counts of the daemon's life that ends now.
func (s *seqState) checkLife() {
	s.t.Helper()
	if c := s.status().Counters; c.Duplicates != s.lifeDups || c.Unrecorded != 0 {
		s.fatalf("counters of this daemon's life: %+v; want %d duplicates and nothing unrecorded", c, s.lifeDups)
	}
}

// check waits until every command is settled, then checks the invariant.
func (s *seqState) check() {
	s.t.Helper()
	s.checkLife()
	var rows map[string][]journal.Entry
	s.wait("every command to settle", func() bool {
		rows = s.rows()
		for _, c := range s.commands {
			for _, e := range rows[c.text] {
				if !e.Settled() {
					return false
				}
			}
		}
		return true
	})
	total := 0
	for _, es := range rows {
		total += len(es)
	}
	if total != len(s.commands) {
		s.fatalf("%d journal rows for %d delivered commands", total, len(s.commands))
	}
	s.w.engine.mu.Lock()
	defer s.w.engine.mu.Unlock()
	for _, c := range s.commands {
		es := rows[c.text]
		if len(es) != 1 {
			s.fatalf("command %q has %d journal rows, want exactly 1: %+v", c.text, len(es), es)
		}
		e := es[0]
		if n := s.w.engine.runs[c.text]; n > 1 || (e.Run != journal.RunNone) != (n == 1) {
			s.fatalf("command %q ran %d times; its row: decision %s, run %q", c.text, n, e.Decision, e.Run)
		}
		switch {
		case c.refused && (e.Decision != journal.DecisionRefused || !strings.Contains(e.Note, "to resume")):
			s.fatalf("command %q should be refused with how to resume: %s %q", c.text, e.Decision, e.Note)
		case !c.refused && e.Decision == journal.DecisionRefused:
			s.fatalf("command %q was refused: %q", c.text, e.Note)
		case c.noted && e.Decision == journal.DecisionStarted && !strings.Contains(e.Note, "asked to stop listening"):
			s.fatalf("command %q, acted on after StopListening, is not noted: %q", c.text, e.Note)
		}
	}
}
