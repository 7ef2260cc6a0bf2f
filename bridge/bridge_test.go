package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules/rulestest"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub"
	"github.com/hubgate/hubgate/internal/testutil"
)

const key = "bridge-test-key-0123456789abcdefghij"

// fakeHub is the hub side: a channel of events and the listening state of
// hub.Client, which follows the hub's StartListening and StopListening
// requests and changes only after the request went out as an event (the
// client confirms it once the hub answered). Before the first request it is
// the client's own auto-listen state. The rest of the bridge's world is
// real: the journal (SQLite), the Automate server with the scripted engine,
// the Automate client, and HTTP between them (over in-memory pipes, so that
// every test runs inside a testing/synctest bubble: the engine's sleeps,
// the bridge's timers and the test's waits use the bubble's fake clock).
type fakeHub struct {
	events    chan hub.Event
	mu        sync.Mutex
	listening bool
	seq       uint64
	device    *deviceapi.UserDevice
}

func (f *fakeHub) Events() <-chan hub.Event { return f.events }
func (f *fakeHub) Listening() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listening
}

// State is the connection state hub.Client reports with that listening
// state: connected, and listening once it is.
func (f *fakeHub) State() hub.State {
	if f.Listening() {
		return hub.State{Status: hub.StatusListening}
	}
	return hub.State{Status: hub.StatusConnected}
}
func (f *fakeHub) Device() *deviceapi.UserDevice { return f.device }

// push delivers ev as the next hub event. A listening request changes the
// client's state after it was delivered, as hub.Client does.
func (f *fakeHub) push(ev hub.Event) {
	f.mu.Lock()
	f.seq++
	ev.Seq, ev.Session, ev.Received = f.seq, 1, time.Now()
	f.mu.Unlock()
	f.events <- ev
	if ev.Kind == hub.KindStartListening || ev.Kind == hub.KindStopListening {
		f.mu.Lock()
		f.listening = ev.Kind == hub.KindStartListening
		f.mu.Unlock()
	}
}

func (f *fakeHub) command(text string, macro *deviceapi.Macro) {
	f.push(hub.Event{Kind: hub.KindDeviceCommand, Command: text, Macro: macro})
}

type env struct {
	t       *testing.T
	hub     *fakeHub
	client  *automate.Client
	journal *journal.Journal
	bridge  *bridge.Bridge
	stop    func()
}

type envOptions struct {
	rules   string // YAML of the bridge rule keys
	opts    func(*bridge.Options)
	journal string // path; zero: a fresh temp file
	// notListening starts the hub client not listening (auto-listen off).
	notListening bool
	// wrapJournal, when set, wraps the real journal (fault injection).
	wrapJournal func(bridge.Journal) bridge.Journal
	// wrapServer, when set, wraps the Automate server's handler.
	wrapServer func(http.Handler) http.Handler
}

// newEnv starts the Automate server, its client and a bridge. Call it
// inside the test's synctest bubble: every goroutine it starts lives there.
func newEnv(t *testing.T, eo envOptions) *env {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	srv, err := server.New(server.Config{Key: key, Assistant: scripted.New(scripted.Config{Logger: quiet}),
		Workspace: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	handler := srv.Handler()
	if eo.wrapServer != nil {
		handler = eo.wrapServer(handler)
	}
	httpClient := testutil.ServePipe(t, handler)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	client, err := automate.NewClient(automate.ClientOptions{BaseURL: "http://127.0.0.1:4317", Key: key, Logger: quiet,
		HTTPClient: httpClient})
	if err != nil {
		t.Fatal(err)
	}
	return startBridge(t, client, eo)
}

// startBridge runs a bridge against client with its own journal.
func startBridge(t *testing.T, client *automate.Client, eo envOptions) *env {
	t.Helper()
	file, err := rulestest.Parse([]byte(eo.rules))
	if err != nil {
		t.Fatal(err)
	}
	set, err := file.Compile()
	if err != nil {
		t.Fatal(err)
	}
	path := eo.journal
	if path == "" {
		path = filepath.Join(t.TempDir(), "journal.db")
	}
	j, err := journal.Open(path, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fh := &fakeHub{events: make(chan hub.Event, 1000), listening: !eo.notListening}
	var bj bridge.Journal = j
	if eo.wrapJournal != nil {
		bj = eo.wrapJournal(j)
	}
	opts := bridge.Options{Hub: fh, Automate: client, Journal: bj, Rules: set, CancelGrace: 2 * time.Second,
		ReadyPoll: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	if eo.opts != nil {
		eo.opts(&opts)
	}
	b, err := bridge.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	e := &env{t: t, hub: fh, client: client, journal: j, bridge: b}
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("bridge.Run: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Error("bridge.Run did not return")
			}
			j.Close()
		})
	}
	t.Cleanup(e.stop)
	return e
}

// history returns the journal oldest first.
func (e *env) history() []journal.Entry {
	e.t.Helper()
	h, err := e.journal.History(context.Background(), journal.HistoryQuery{Limit: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	for i, j := 0, len(h)-1; i < j; i, j = i+1, j-1 {
		h[i], h[j] = h[j], h[i]
	}
	return h
}

// waitFor lets the bubble's fake time run until the journal shows cond:
// it looks once every goroutine is blocked (synctest.Wait), so what it
// returns is a settled state, not a moment of a race.
func (e *env) waitFor(what string, cond func([]journal.Entry) bool) []journal.Entry {
	e.t.Helper()
	deadline := time.Now().Add(time.Hour)
	for {
		synctest.Wait()
		h := e.history()
		if cond(h) {
			return h
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s not reached in an hour of fake time; journal:\n%s", what, describe(h))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func describe(h []journal.Entry) string {
	var b strings.Builder
	for _, e := range h {
		b.WriteString(strings.Join([]string{"#", itoa(e.ID), e.Command, string(e.Decision), e.Note, string(e.Run), string(e.Status), e.ErrorCode, e.Answer, e.Error}, " | "))
		b.WriteByte('\n')
	}
	return b.String()
}

func itoa(i int64) string { b, _ := json.Marshal(i); return string(b) }

func finished(n int) func([]journal.Entry) bool {
	return func(h []journal.Entry) bool {
		c := 0
		for _, e := range h {
			if !e.FinishedAt.IsZero() || e.Decision == journal.DecisionDropped || e.Decision == journal.DecisionIgnored || e.Decision == journal.DecisionRefused ||
				e.Decision == journal.DecisionAbandoned || e.Decision == journal.DecisionFailed {
				c++
			}
		}
		return c >= n
	}
}

const basicRules = `
rules:
  - name: hello
    match: {command: hello}
    run:
      prompt: "Say hello\n#!answer Hello from hubgate"
  - name: slow
    match: {command_glob: "slow *"}
    run:
      prompt: "{{.Command}}\n#!sleep 1500\n#!answer done {{.Command}}"
  - name: queued
    match: {command_glob: "q *"}
    busy: queue
    queue_limit: 3
    run:
      prompt: "{{.Command}}\n#!sleep 300\n#!answer done {{.Command}}"
  - name: restart
    match: {command_glob: "r *"}
    busy: restart
    run:
      prompt: "{{.Command}}\n#!sleep 20000\n#!answer done {{.Command}}"
  - name: typed
    match: {macro_name: Typist}
    run:
      prompt: "typed\n#!answer you typed {{.TypedText}}"
  - name: notify
    match: {command: notify}
    run:
      prompt: "n\n#!tool notify {\"message\":\"the kettle is on\"}\n#!answer notified"
      client_tools: [notify]
`

func TestCommandRunsAndIsJournaled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		e.hub.command("hello", nil)
		h := e.waitFor("the run", finished(1))
		got := h[0]
		if got.Command != "hello" || got.Rule != "hello" || got.Decision != journal.DecisionStarted ||
			got.Status != automate.StatusCompleted || got.Answer != "Hello from hubgate" || !strings.HasPrefix(got.RequestID, "automate-run-") {
			t.Fatalf("journal:\n%s", describe(h))
		}
		if got.TaskID != "hubgate-"+itoa(got.ID) {
			t.Errorf("task id %q", got.TaskID)
		}
		// Unknown commands are journaled and ignored.
		e.hub.command("what is this", nil)
		h = e.waitFor("the ignored command", finished(2))
		if h[1].Decision != journal.DecisionIgnored || h[1].Run != journal.RunNone || h[1].RequestID != "" {
			t.Errorf("unmatched command:\n%s", describe(h))
		}
	})
}

func TestSingleDropsWhileBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		e.hub.command("slow one", nil)
		e.waitFor("the first run to start", func(h []journal.Entry) bool { return len(h) == 1 && h[0].Run != journal.RunNone })
		e.hub.command("slow two", nil)
		e.hub.command("hello", nil)
		h := e.waitFor("all three", finished(3))
		if h[0].Status != automate.StatusCompleted || h[1].Decision != journal.DecisionDropped || h[2].Decision != journal.DecisionDropped {
			t.Fatalf("journal:\n%s", describe(h))
		}
	})
}

func TestQueueRunsInOrderWithinItsLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		for _, c := range []string{"q 1", "q 2", "q 3", "q 4", "q 5"} {
			e.hub.command(c, nil)
		}
		h := e.waitFor("the burst", finished(5))
		// One runs at once, three wait, the fifth finds the queue full.
		var answers []string
		for _, x := range h {
			if x.Status == automate.StatusCompleted {
				answers = append(answers, x.Answer)
			}
		}
		if strings.Join(answers, ",") != "done q 1,done q 2,done q 3,done q 4" || h[4].Decision != journal.DecisionDropped ||
			!strings.Contains(h[4].Note, "queue full") {
			t.Fatalf("answers %v; journal:\n%s", answers, describe(h))
		}
		// A queued command says why it waited (history, status's last
		// queued reason).
		if want := fmt.Sprintf("busy with command %d; waits in the queue (3 of at most 3)", h[0].ID); h[3].Note != want {
			t.Errorf("the third queued command's note %q, want %q", h[3].Note, want)
		}
		st, err := e.bridge.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r := st.Counters.Last["queued"]; r.CommandID != h[3].ID || r.Reason != h[3].Note {
			t.Errorf("status's last queued %+v, want command %d with its note", r, h[3].ID)
		}
		// Runs never overlapped.
		for i := 1; i < 4; i++ {
			if h[i].RunStartedAt.Before(h[i-1].FinishedAt) {
				t.Errorf("run %d started before run %d finished", i+1, i)
			}
		}
	})
}

func TestRestartCancelsTheCurrentRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		e.hub.command("r first", nil)
		e.waitFor("the first run", func(h []journal.Entry) bool { return len(h) == 1 && h[0].Run != journal.RunNone })
		replaced := time.Now()
		e.hub.command("r second", nil)
		// The second replaces the first; stop the second ourselves afterwards.
		// The first sleeps 20s, and the engine lands a soft cancel only
		// after a #!sleep: the soft cancel is not honoured, and the force
		// cancel it is escalated to after CancelGrace (2s) terminates it.
		h := e.waitFor("the first to end", finished(1))
		if h[0].Status != automate.StatusCanceled || h[0].Note != "stopped by restart: command 2 replaces it; forced by the cancel grace (2s) running out" {
			t.Fatalf("first run not canceled and forced by the escalated cancel:\n%s", describe(h))
		}
		if took := h[0].FinishedAt.Sub(replaced); took < 2*time.Second || took > 2*time.Second+100*time.Millisecond {
			t.Errorf("the first run ended %s after the restart command, want the cancel grace (2s)", took)
		}
		e.waitFor("the second to start", func(h []journal.Entry) bool { return len(h) == 2 && h[1].Run != journal.RunNone })
		res, err := e.bridge.Cancel(context.Background(), true)
		if err != nil || !res.Stopped || res.Mode != "terminate" {
			t.Fatalf("cancel: %+v %v", res, err)
		}
		h = e.waitFor("the second to end", finished(2))
		if h[1].Status != automate.StatusCanceled || h[1].Note != "busy with command 1; restart: first in the queue; stopped by hubgate cancel --force (forced)" {
			t.Errorf("second run:\n%s", describe(h))
		}
	})
}

func TestStopOutputsCancelsTheCurrentRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		e.hub.command("slow long", nil)
		e.waitFor("the run", func(h []journal.Entry) bool { return len(h) == 1 && h[0].Run != journal.RunNone })
		start := time.Now()
		e.hub.command("stop", &deviceapi.Macro{ID: "m-stop", Name: "Stop", Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventStopOutputs}}})
		h := e.waitFor("both", finished(2))
		if h[0].Status != automate.StatusCanceled || h[1].Decision != journal.DecisionIgnored || !strings.Contains(h[1].Note, "StopOutputs") {
			t.Fatalf("journal:\n%s", describe(h))
		}
		// The soft cancel landed after the run's 1.5s #!sleep (the engine
		// honours it between steps), before the 2s grace would escalate it.
		if ran := h[0].FinishedAt.Sub(h[0].RunStartedAt); ran < 1500*time.Millisecond {
			t.Errorf("the run ended %s after it started, before its 1.5s step", ran)
		}
		if after := h[0].FinishedAt.Sub(start); after >= 2*time.Second {
			t.Errorf("the run ended %s after StopOutputs: the soft cancel was escalated", after)
		}
	})
}

// StopOutputs as the vendor's app sends it: the clients reset every held
// output, so the run in flight is cancelled and every waiting command is
// dropped (not started after the cancel). The journal keeps the macro as
// it came.
func TestStopOutputsResetsEveryHeldOutput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		e.hub.command("slow long", nil)
		e.waitFor("the run", func(h []journal.Entry) bool { return len(h) == 1 && h[0].Run != journal.RunNone })
		e.hub.command("q one", nil)
		e.hub.command("q two", nil)
		e.waitFor("two queued", func(h []journal.Entry) bool {
			return len(h) == 3 && h[1].Decision == journal.DecisionQueued && h[2].Decision == journal.DecisionQueued
		})
		const stopJSON = `{"id":"9","name":"Stop","commands":["stop"],"events":[{"eventType":"StopOutputs","keys":null,"holdTimeMilliseconds":null,` +
			`"typedPhrase":null,"outputSpeech":null,"deviceTypeCustomActionId":null,"isCustomRelease":null}]}`
		var stop deviceapi.Macro
		if err := json.Unmarshal([]byte(stopJSON), &stop); err != nil {
			t.Fatal(err)
		}
		e.hub.command("stop", &stop)
		h := e.waitFor("all four", finished(4))
		if len(h) != 4 || h[0].Status != automate.StatusCanceled {
			t.Fatalf("journal:\n%s", describe(h))
		}
		dropped := fmt.Sprintf("StopOutputs: dropped by command %d", h[3].ID)
		for _, q := range h[1:3] {
			if q.Decision != journal.DecisionDropped || q.Note != dropped || q.Run != journal.RunNone {
				t.Errorf("waiting command not dropped:\n%s", describe(h))
			}
		}
		if h[3].Decision != journal.DecisionIgnored || !strings.Contains(h[3].Note, fmt.Sprintf("StopOutputs: cancel requested for command %d", h[0].ID)) ||
			!strings.Contains(h[3].Note, "2 waiting command(s) dropped") {
			t.Errorf("the StopOutputs command:\n%s", describe(h))
		}
		if string(h[3].Macro) != stopJSON || h[3].MacroID != "9" {
			t.Errorf("journaled macro %s", h[3].Macro)
		}
	})
}

func TestStopListeningCancelsWhenConfigured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules, opts: func(o *bridge.Options) { o.StopListeningCancels = true }})
		e.hub.command("r long", nil)
		e.waitFor("the run", func(h []journal.Entry) bool { return len(h) == 1 && h[0].Run != journal.RunNone })
		stopped := time.Now()
		e.hub.push(hub.Event{Kind: hub.KindStopListening})
		// "r long" sleeps 20s: the soft cancel is escalated after the 2s
		// grace and the force cancel terminates it.
		h := e.waitFor("the cancel", finished(1))
		if h[0].Status != automate.StatusCanceled || !strings.Contains(h[0].Note, "forced by the cancel grace") {
			t.Fatalf("journal:\n%s", describe(h))
		}
		if took := h[0].FinishedAt.Sub(stopped); took < 2*time.Second || took > 2*time.Second+100*time.Millisecond {
			t.Errorf("the run ended %s after StopListening, want the cancel grace (2s)", took)
		}
		// As the vendor's clients do, a command after StopListening runs,
		// noted as arriving while the hub had asked to stop.
		e.hub.command("hello", nil)
		h = e.waitFor("the next command", finished(2))
		if h[1].Decision != journal.DecisionStarted || h[1].Status != automate.StatusCompleted ||
			!strings.Contains(h[1].Note, "the hub had asked to stop listening") {
			t.Errorf("journal:\n%s", describe(h))
		}
		st, _ := e.bridge.Status(context.Background())
		if !st.Listening || st.Hub.Status != string(hub.StatusConnected) || st.HubAsked == nil || st.HubAsked.Listen ||
			st.ListeningPolicy != string(bridge.ListenFollowVendor) {
			t.Errorf("status after StopListening: listening %v, hub %+v, asked %+v, policy %q", st.Listening, st.Hub, st.HubAsked, st.ListeningPolicy)
		}
	})
}

// With bridge.listening: obey, StopListening refuses the commands after it
// until StartListening, each with how to resume; the person is told (the
// notifier shows refusals) and status counts them with the last reason.
func TestStopListeningObeyed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules, opts: func(o *bridge.Options) { o.Listening = bridge.ListenObey }})
		e.hub.push(hub.Event{Kind: hub.KindStopListening})
		e.hub.command("hello", nil)
		h := e.waitFor("the refused command", finished(1))
		if h[0].Decision != journal.DecisionRefused || h[0].Run != journal.RunNone ||
			!strings.Contains(h[0].Note, "asked to stop listening") || !strings.Contains(h[0].Note, "to resume") {
			t.Fatalf("journal:\n%s", describe(h))
		}
		st, _ := e.bridge.Status(context.Background())
		if st.Listening || st.Counters.Refused != 1 || st.Counters.Last["refused"].Reason != h[0].Note || st.Counters.Last["refused"].CommandID != h[0].ID {
			t.Fatalf("status: listening %v, counters %+v", st.Listening, st.Counters)
		}
		e.hub.push(hub.Event{Kind: hub.KindStartListening})
		e.hub.command("hello", nil)
		h = e.waitFor("the run", finished(2))
		if h[1].Status != automate.StatusCompleted || h[1].Note != "" {
			t.Fatalf("journal:\n%s", describe(h))
		}
	})
}

func TestARunStartedElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		// The desktop panel (another client) holds the slot for a while.
		other := make(chan error, 1)
		go func() {
			_, err := e.client.Run(context.Background(), automate.RunRequest{Prompt: "panel\n#!sleep 1200"})
			other <- err
		}()
		synctest.Wait() // the panel's run is in its #!sleep
		if h, err := e.client.Health(context.Background()); err != nil || !h.Busy {
			t.Fatalf("the other run is not in flight: %+v %v", h, err)
		}
		e.hub.command("hello", nil) // single: dropped
		e.hub.command("q waits", nil)
		h := e.waitFor("both", finished(2))
		if h[0].Decision != journal.DecisionDropped || !strings.Contains(h[0].Note, "did not start") {
			t.Errorf("single:\n%s", describe(h))
		}
		if h[1].Status != automate.StatusCompleted || h[1].Answer != "done q waits" {
			t.Errorf("queue:\n%s", describe(h))
		}
		if err := <-other; err != nil {
			t.Errorf("the other run: %v", err)
		}
	})
}

func TestNotifyToolLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var got []bridge.Notification
		e := newEnv(t, envOptions{rules: basicRules, opts: func(o *bridge.Options) {
			o.Tools = bridge.NewTools(bridge.ToolsOptions{Rules: o.Rules, Notify: func(n bridge.Notification) {
				mu.Lock()
				got = append(got, n)
				mu.Unlock()
			}})
		}})
		e.hub.command("notify", nil)
		h := e.waitFor("the run", finished(1))
		if h[0].Status != automate.StatusCompleted || h[0].Answer != "notified" {
			t.Fatalf("journal:\n%s", describe(h))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 1 || got[0].Message != "the kettle is on" {
			t.Errorf("notifications %+v", got)
		}
		st, _ := e.bridge.Status(context.Background())
		if len(st.Notifications) != 1 || st.Counters.Completed != 1 || st.Counters.Received != 1 || st.Current != nil {
			t.Errorf("status %+v", st)
		}
	})
}

func TestCommandToolRunsAnArgv(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "shout.txt")
		rulesYAML := basicRules + `
command_tools:
  - name: shout
    enabled: true
    description: Write a word in capitals
    parameters: {type: object, properties: {word: {type: string}}, required: [word]}
    argv: ["sh", "-c", "printf %s \"$0\" | tr a-z A-Z > ` + out + `", "{{.word}}"]
`
		rulesYAML = strings.Replace(rulesYAML, "rules:\n", `rules:
  - name: shout
    match: {command: shout}
    run:
      prompt: "s\n#!tool shout {\"word\":\"quiet; rm -rf x $(id)\"}\n#!answer shouted"
      client_tools: [shout]
`, 1)
		e := newEnv(t, envOptions{rules: rulesYAML})
		e.hub.command("shout", nil)
		h := e.waitFor("the run", finished(1))
		if h[0].Status != automate.StatusCompleted || h[0].Answer != "shouted" {
			t.Fatalf("journal:\n%s", describe(h))
		}
		// The argument reached the command as one argv entry, never parsed by
		// a shell.
		b, err := os.ReadFile(out)
		if err != nil || string(b) != "QUIET; RM -RF X $(ID)" {
			t.Fatalf("the command tool wrote %q (%v)", b, err)
		}
	})
}

func TestProfileCatalogueCompletesCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		dev := typistDevice()
		// Before the profile, "type it" matches nothing.
		e.hub.command("type it", nil)
		e.waitFor("ignored", finished(1))
		e.hub.push(hub.Event{Kind: hub.KindDeviceProfileUpdate, Device: dev})
		e.hub.command("type it", nil)
		h := e.waitFor("the run", finished(2))
		if h[0].Decision != journal.DecisionIgnored || h[1].Rule != "typed" || h[1].Answer != "you typed hi there" {
			t.Fatalf("journal:\n%s", describe(h))
		}
		// The refresh is on the event stream, before the command it completed.
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var kinds []bridge.EventKind
		for ev := range e.bridge.Subscribe(ctx, bridge.SubscribeOptions{History: bridge.DefaultEventHistory}) {
			if ev.Kind == bridge.EventCatalogue && (ev.Macros != 1 || ev.OddMacros != 0) {
				t.Errorf("catalogue event %+v, want 1 macro", ev)
			}
			if ev.Kind == bridge.EventCatalogue || ev.Kind == bridge.EventReceived {
				kinds = append(kinds, ev.Kind)
			}
			if len(kinds) == 3 {
				break
			}
		}
		if !slices.Equal(kinds, []bridge.EventKind{bridge.EventReceived, bridge.EventCatalogue, bridge.EventReceived}) {
			t.Errorf("events %v, want received, catalogue, received", kinds)
		}
	})
}

// One hub invocation (its invocation id) delivered twice on one connection
// is one command.
func TestDuplicateDeliveryIsIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		ev := hub.Event{Kind: hub.KindDeviceCommand, Command: "hello", Seq: 77, Session: 3, InvocationID: "inv-77", Received: time.Now()}
		e.hub.events <- ev
		e.hub.events <- ev
		e.waitFor("the run", finished(1))
		// Every goroutine is blocked with nothing left to do (waitFor ends
		// on synctest.Wait): the redelivery was handled and made no row.
		if h := e.history(); len(h) != 1 {
			t.Fatalf("a redelivered event was journaled twice:\n%s", describe(h))
		}
		st, _ := e.bridge.Status(context.Background())
		if st.Counters.Duplicates != 1 || st.Counters.Started != 1 {
			t.Fatalf("counters %+v, want 1 duplicate and 1 run", st.Counters)
		}
	})
}

// Events without an invocation id are never duplicates, whatever their
// numbers: a new hub client (a re-pairing) numbers its events from 1 again,
// and the same button pressed twice is two commands.
func TestSameNumbersWithoutInvocationIDAreTwoCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		ev := hub.Event{Kind: hub.KindDeviceCommand, Command: "hello", Seq: 1, Session: 1, Received: time.Now()}
		e.hub.events <- ev
		e.waitFor("the first run", finished(1))
		e.hub.events <- ev
		h := e.waitFor("the second run", finished(2))
		if len(h) != 2 || h[0].ID == h[1].ID {
			t.Fatalf("journal:\n%s", describe(h))
		}
		if st, _ := e.bridge.Status(context.Background()); st.Counters.Duplicates != 0 || st.Counters.Started != 2 {
			t.Fatalf("counters %+v, want 2 runs and no duplicate", st.Counters)
		}
	})
}

// A redelivery that finds the slot free takes the start-at-once path: the
// journal finds the first row and nothing runs again.
func TestDuplicateDeliveryWithTheSlotFree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		ev := hub.Event{Kind: hub.KindDeviceCommand, Command: "hello", Seq: 78, Session: 3, InvocationID: "inv-78", Received: time.Now()}
		e.hub.events <- ev
		first := e.waitFor("the run", finished(1))
		e.hub.events <- ev
		e.hub.command("hello", nil) // a later event: once it has run, the redelivery was handled
		h := e.waitFor("the second run", finished(2))
		if len(h) != 2 || h[0].ID != first[0].ID || h[0].TaskID != journal.DefaultTaskID(h[0].ID) || h[1].TaskID != journal.DefaultTaskID(h[1].ID) {
			t.Fatalf("journal after a redelivery:\n%s", describe(h))
		}
		st, err := e.bridge.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Counters.Duplicates != 1 || st.Counters.Received != 2 || st.Counters.Started != 2 {
			t.Fatalf("counters %+v, want 1 duplicate, 2 received, 2 started", st.Counters)
		}
	})
}

func TestRestartRecoversTheJournal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recoverRules := basicRules + `
  - name: keep
    match: {command_glob: "keep *"}
    busy: queue
    run_on_recovery: true
    run:
      prompt: "{{.Command}}\n#!answer kept {{.Command}}"
  - name: brief
    match: {command_glob: "brief *"}
    busy: queue
    run_on_recovery: true
    max_age: 1m
    run:
      prompt: "{{.Command}}\n#!answer kept {{.Command}}"
`
		path := filepath.Join(t.TempDir(), "journal.db")
		e := newEnv(t, envOptions{rules: recoverRules, journal: path})
		// A slow run holds the slot; three commands queue behind it; then
		// the daemon stops leaving the run on the server.
		e.hub.command("q hold", nil)
		e.waitFor("the run", func(h []journal.Entry) bool { return len(h) == 1 && h[0].Run != journal.RunNone })
		e.hub.command("keep me", nil)
		e.hub.command("q drop me", nil)
		e.hub.command("brief me", nil)
		e.waitFor("all queued", func(h []journal.Entry) bool { return len(h) == 4 && h[3].Decision == journal.DecisionQueued })
		e.stop()
		// The daemon is down for two minutes: past brief's max age, within
		// keep's.
		time.Sleep(2 * time.Minute)

		// Simulate the crash of a run in flight: a started run never finished.
		j, _ := journal.Open(path, journal.Options{})
		id, _, _ := j.RecordCommand(context.Background(), journal.Command{Text: "slow crash", Rule: "slow", Seq: 9, Session: 9})
		j.SetDecision(context.Background(), id, journal.DecisionStarted, "")
		j.RunStarted(context.Background(), id, "t", time.Now())
		j.Close()

		e2 := startBridge(t, e.client, envOptions{rules: recoverRules, journal: path})
		h := e2.waitFor("recovery", func(h []journal.Entry) bool {
			for _, x := range h {
				if x.Command == "keep me" && x.Status == automate.StatusCompleted {
					return true
				}
			}
			return false
		})
		by := map[string]journal.Entry{}
		for _, x := range h {
			by[x.Command] = x
		}
		if by["keep me"].Answer != "kept keep me" {
			t.Errorf("keep me:\n%s", describe(h))
		}
		if x := by["q drop me"]; x.Decision != journal.DecisionAbandoned ||
			x.Note != "abandoned at restart: its rule does not run queued commands after a restart" {
			t.Errorf("q drop me:\n%s", describe(h))
		}
		if x := by["brief me"]; x.Decision != journal.DecisionAbandoned ||
			x.Note != "abandoned at restart: older than its rule's max age 1m0s" {
			t.Errorf("brief me:\n%s", describe(h))
		}
		if by["slow crash"].Run != journal.RunInterrupted || by["slow crash"].RequestID != "" {
			t.Errorf("slow crash:\n%s", describe(h))
		}
	})
}

// TestSetRulesAppliesToTheNextCommand: a command no rule matched is
// ignored; after SetRules the same command runs by the new rule, and the
// command tool the new set declares is the one executed.
func TestSetRulesAppliesToTheNextCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "shout.txt")
		e := newEnv(t, envOptions{rules: basicRules})
		e.hub.command("shout", nil)
		h := e.waitFor("the first shout", finished(1))
		if h[0].Decision != journal.DecisionIgnored {
			t.Fatalf("journal before SetRules:\n%s", describe(h))
		}
		file, err := rulestest.Parse([]byte(`
rules:
  - name: shout
    match: {command: shout}
    run:
      prompt: "s\n#!tool shout {\"word\":\"loud\"}\n#!answer shouted"
      client_tools: [shout]
command_tools:
  - name: shout
    enabled: true
    description: Write a word in capitals
    parameters: {type: object, properties: {word: {type: string}}, required: [word]}
    argv: ["sh", "-c", "printf %s \"$0\" | tr a-z A-Z > ` + out + `", "{{.word}}"]
`))
		if err != nil {
			t.Fatal(err)
		}
		set, err := file.Compile()
		if err != nil {
			t.Fatal(err)
		}
		e.bridge.SetRules(set)
		e.hub.command("shout", nil)
		h = e.waitFor("the second shout", finished(2))
		if h[1].Rule != "shout" || h[1].Status != automate.StatusCompleted || h[1].Answer != "shouted" {
			t.Fatalf("journal after SetRules:\n%s", describe(h))
		}
		if b, err := os.ReadFile(out); err != nil || string(b) != "LOUD" {
			t.Fatalf("the new set's command tool wrote %q (%v)", b, err)
		}
	})
}
