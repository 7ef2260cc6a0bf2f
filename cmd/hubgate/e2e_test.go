package main

// End-to-end tests of the product across real processes on loopback: the
// mock remote service (`hubgate mock`), the daemon (`hubgate run`, with the
// co-hosted Automate server or an external `hubgate automate serve`), and
// commands pushed through the mock's admin API. They assert on the journal
// (read-only, as `hubgate history` does), on the mock's event log and on the
// daemon's structured log. The in-process tests of bridge/ cover the same
// policies against fakes; these check that the real pieces do it together.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/internal/testutil"
)

func TestRunWithoutAStateFileExits8(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "rules: []\n"})
	if err := os.Remove(filepath.Join(s.xdg, "hubgate", "state.json")); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, s.environ(), "", "--config", s.configPath, "run")
	if r.code != ExitNotPaired || !strings.Contains(r.stderr, "run 'hubgate pair' first") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	if n := h.countActions(0, "connected"); n != 0 {
		t.Errorf("an unpaired daemon connected to the hub %d time(s)", n)
	}
}

// `hubgate run` (and only it) takes one P, unless GOMAXPROCS says otherwise.
func TestRunTakesOneProc(t *testing.T) {
	for _, args := range [][]string{{"run"}, {"--config", "x.yaml", "run"}, {"--log-level", "debug", "run", "--help"}} {
		if !isDaemon(args) {
			t.Errorf("isDaemon(%q) = false", args)
		}
	}
	for _, args := range [][]string{{}, {"demo"}, {"automate", "serve"}, {"mock", "send", "--command", "run"}, {"history", "run"}, {"nosuch"}} {
		if isDaemon(args) {
			t.Errorf("isDaemon(%q) = true", args)
		}
	}
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: GOMAXPROCS is 1 with or without the daemon's choice")
	}
	h := startHub(t)
	for _, c := range []struct {
		env  []string
		want float64
	}{{nil, 1}, {[]string{"GOMAXPROCS=2"}, 2}} {
		s := newDaemonSetup(t, h, daemonConfig{Bridge: "rules: []\n"})
		s.env = c.env
		s.ownProcess = true // main sets GOMAXPROCS, for the whole process
		d := startListening(t, s)
		d.stop(syscall.SIGTERM)
		// Its log is whole once it exited.
		if recs := d.logRecords("hubgate running"); len(recs) != 1 || recs[0]["gomaxprocs"] != c.want {
			t.Errorf("env %q: %v, want gomaxprocs %v", c.env, recs, c.want)
		}
	}
}

// The daemon prunes settled commands older than bridge.journal_keep_days
// when it starts, and keeps recent and unsettled ones.
func TestRunPrunesTheJournal(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "rules: []\njournal_keep_days: 30\n"})
	ctx := context.Background()
	long := time.Now().Add(-60 * 24 * time.Hour)
	j, err := journal.Open(s.journal, journal.Options{Now: func() time.Time { return long }})
	if err != nil {
		t.Fatal(err)
	}
	oldSettled, _, err := j.RecordCommand(ctx, journal.Command{Text: "old ignored", Decision: journal.DecisionIgnored})
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	j, err = journal.Open(s.journal, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.RecordCommand(ctx, journal.Command{Text: "recent ignored", Decision: journal.DecisionIgnored}); err != nil {
		t.Fatal(err)
	}
	j.Close()

	d := startListening(t, s)
	// The journal itself says when the pass ran (the log line is asserted
	// once the daemon stopped and its log is whole).
	// The prune pass publishes no event: a bounded poll of the journal.
	testutil.Until(t, "the old settled command to be pruned", testutil.NoEvent, func() bool {
		return !slices.ContainsFunc(journalEntries(t, s.journal), func(e journal.Entry) bool { return e.ID == oldSettled })
	}, d.Stderr)
	d.stop(syscall.SIGTERM)
	if n := len(d.logRecords("journal: pruned settled commands")); n != 1 {
		t.Fatalf("%d pruning lines logged, want 1:\n%s", n, d.Stderr())
	}
	ro, err := journal.OpenReadOnly(s.journal)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	es, err := ro.History(ctx, journal.HistoryQuery{Limit: journal.MaxHistoryLimit})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range es {
		left = append(left, e.Command)
		if e.ID == oldSettled {
			t.Errorf("the old settled command is still there")
		}
	}
	if !slices.Contains(left, "recent ignored") || len(left) != 1 {
		t.Fatalf("left after pruning: %q", left)
	}
}

func TestRunRejectsBadRulesAtLoad(t *testing.T) {
	h := startHub(t)
	for _, tc := range []struct {
		name, bridge string
		want         []string // in the message: the rule and the field
	}{
		{"invalid regex", `
rules:
  - name: fine
    match: {command: hello}
    run: {prompt: hi}
  - name: broken-regex
    match: {command_regex: '(unclosed'}
    run: {prompt: hi}
`, []string{`"broken-regex"`, "match.command_regex", "rules[1]"}},
		{"unknown busy policy", `
rules:
  - name: bad-busy
    match: {command: hello}
    busy: sometimes
    run: {prompt: hi}
`, []string{`"bad-busy"`, "busy", "sometimes"}},
		{"template error", `
rules:
  - name: bad-template
    match: {command: hello}
    run:
      prompt: "Do {{.Comand}}"
`, []string{`"bad-template"`, "run.prompt", "Comand"}},
		{"unclosed template action", `
rules:
  - name: bad-task-id
    match: {command: hello}
    run:
      prompt: hi
      task_id: "t-{{.Seq"
`, []string{`"bad-task-id"`, "run.task_id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newDaemonSetup(t, h, daemonConfig{Bridge: tc.bridge})
			since := h.lastSeq()
			r := runCmd(t, s.environ(), "", "--config", s.configPath, "run")
			if r.code != ExitConfig {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, ExitConfig, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("the message lacks %q: %q", w, r.stderr)
				}
			}
			if !strings.Contains(r.stderr, s.configPath) {
				t.Errorf("the message does not say which file: %q", r.stderr)
			}
			if n := h.countActions(since, "connected"); n != 0 {
				t.Errorf("a daemon with bad rules connected to the hub")
			}
			if _, err := os.Stat(s.journal); err == nil {
				t.Errorf("a daemon with bad rules created its journal")
			}
		})
	}
}

// busyRule is a rule for commands "<name> ..." with the given busy policy
// and a run of n steps of 100 ms (a soft cancel lands within 100 ms).
func busyRule(name, busy string, extra string, steps int) string {
	return fmt.Sprintf(`  - name: %s
    match: {command_glob: "%s *"}
    busy: %s
%s    run:
      prompt: |
        Work on {{.Command}}
%s
        #!answer done {{.Command}}
`, name, name, busy, extra, e2eIndent(sleepScript(steps, 100), 8))
}

// pushBurst pushes "<prefix> 1".."<prefix> n" back to back.
func pushBurst(h *e2eHub, prefix string, n int) []string {
	var texts []string
	for i := 1; i <= n; i++ {
		texts = append(texts, fmt.Sprintf("%s %d", prefix, i))
		h.push(texts[i-1], nil)
	}
	return texts
}

// runsStarted is how many runs the daemon started, as its status counts
// them. A run is counted before its POST is sent, so once the journal shows
// a run's end, its start is counted.
func runsStarted(d *daemonProc) int {
	return int(d.status().Counters.Started)
}

func TestBusySingleUnderABurst(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "cancel_grace: 2s\nrules:\n" + busyRule("single", "single", "", 30)})
	d := startListening(t, s)

	texts := pushBurst(h, "single", 5)
	es := waitJournalState(t, s, "the first run completed and the rest dropped", func(es []journal.Entry) bool {
		return len(es) == 5 && e2eSettledAll(es)
	})
	first := e2eEntry(t, es, texts[0])
	if first.Decision != journal.DecisionStarted || first.Status != automate.StatusCompleted || first.Answer != "done single 1" || first.Rule != "single" {
		t.Errorf("the first command: %s", e2eDump([]journal.Entry{first}))
	}
	for _, text := range texts[1:] {
		e := e2eEntry(t, es, text)
		if e.Decision != journal.DecisionDropped || e.Run != journal.RunNone || !strings.Contains(e.Note, fmt.Sprintf("busy with command %d", first.ID)) {
			t.Errorf("%q was not dropped as busy: %s", text, e2eDump([]journal.Entry{e}))
		}
	}
	if n := runsStarted(d); n != 1 {
		t.Errorf("%d runs started, want 1", n)
	}
}

func TestBusyQueueUnderABurst(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "rules:\n" + busyRule("queue", "queue", "    queue_limit: 2\n    max_age: 5m\n", 20)})
	d := startListening(t, s)

	texts := pushBurst(h, "queue", 5)
	es := waitJournalState(t, s, "three runs completed and two dropped", func(es []journal.Entry) bool {
		return len(es) == 5 && e2eSettledAll(es)
	})
	ran := []journal.Entry{e2eEntry(t, es, texts[0]), e2eEntry(t, es, texts[1]), e2eEntry(t, es, texts[2])}
	for i, e := range ran {
		if e.Decision != journal.DecisionStarted || e.Status != automate.StatusCompleted || e.Answer != "done "+texts[i] {
			t.Errorf("%q did not run to completion: %s", texts[i], e2eDump([]journal.Entry{e}))
		}
		if i > 0 && e.QueuedAt.IsZero() {
			t.Errorf("%q was not journaled as queued first", texts[i])
		}
	}
	// FIFO, one at a time: each run started on the server after the one
	// before it completed there, and the bridge started it after it had
	// journaled the previous outcome.
	for i := 1; i < len(ran); i++ {
		prev, cur := ran[i-1], ran[i]
		if cur.StartedAt.Before(prev.CompletedAt) || cur.RunStartedAt.Before(prev.FinishedAt) {
			t.Errorf("%q overlapped %q or ran out of order:\n%s", texts[i], texts[i-1], e2eDump([]journal.Entry{prev, cur}))
		}
	}
	for _, text := range texts[3:] {
		e := e2eEntry(t, es, text)
		if e.Decision != journal.DecisionDropped || e.Run != journal.RunNone || !strings.Contains(e.Note, "queue full (2 waiting, limit 2)") {
			t.Errorf("%q was not dropped for a full queue: %s", text, e2eDump([]journal.Entry{e}))
		}
	}
	if n := runsStarted(d); n != 3 {
		t.Errorf("%d runs started, want 3", n)
	}
}

func TestBusyRestartUnderABurst(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "cancel_grace: 5s\nrules:\n" + busyRule("restart", "restart", "", 30)})
	d := startListening(t, s)

	// The first run is in flight before the burst that replaces it.
	h.push("restart 0", nil)
	waitJournalState(t, s, "the first run started", func(es []journal.Entry) bool {
		return len(es) == 1 && es[0].Run == journal.RunRunning
	})
	texts := append([]string{"restart 0"}, pushBurst(h, "restart", 4)...)
	last := texts[len(texts)-1]
	es := waitJournalState(t, s, "every command settled", func(es []journal.Entry) bool {
		return len(es) == len(texts) && e2eSettledAll(es)
	})
	winner := e2eEntry(t, es, last)
	if winner.Status != automate.StatusCompleted || winner.Answer != "done "+last {
		t.Errorf("the last command did not run to completion: %s", e2eDump([]journal.Entry{winner}))
	}
	if e := e2eEntry(t, es, texts[0]); e.Status != automate.StatusCanceled {
		t.Errorf("the run in flight was not canceled: %s", e2eDump([]journal.Entry{e}))
	}
	for _, text := range texts[:len(texts)-1] {
		e := e2eEntry(t, es, text)
		switch {
		case e.Status == automate.StatusCompleted:
			t.Errorf("%q ran to completion although a later command replaced it", text)
		case e.Run != journal.RunNone && e.RunStartedAt.After(winner.RunStartedAt):
			t.Errorf("%q started after the last command", text)
		case e.Run == journal.RunNone && (e.Decision != journal.DecisionDropped || !strings.Contains(e.Note, "restart: superseded by command")):
			t.Errorf("%q never ran but was not dropped as superseded: %s", text, e2eDump([]journal.Entry{e}))
		case e.Run != journal.RunNone && e.Status != automate.StatusCanceled:
			t.Errorf("%q ran and was not canceled: %s", text, e2eDump([]journal.Entry{e}))
		}
	}
	if t.Failed() {
		t.Logf("journal:\n%s", e2eDump(es))
	}
	// Only the replaced run and the last command can have run: the others
	// were superseded while the first was being canceled, or canceled in
	// turn.
	if n := runsStarted(d); n < 2 || n > len(texts) {
		t.Errorf("%d runs started", n)
	}
}

// e2eSettledAll reports whether every entry is decided and its run over.
func e2eSettledAll(es []journal.Entry) bool {
	for _, e := range es {
		if !e2eSettled(e) {
			return false
		}
	}
	return true
}

// stopMacro is a macro whose events include StopOutputs.
var stopMacro = map[string]any{"id": "m-stop", "name": "Stop", "commands": []string{"stop"},
	"events": []map[string]any{{"eventType": "StopOutputs"}}}

// waitRunning waits until the command's run is in flight on the Automate
// server: the server reported a step of it (the event stream's step), so a
// cancel has a run to land on.
func waitRunning(t *testing.T, s *daemonSetup, d *daemonProc, text string) journal.Entry {
	t.Helper()
	es := waitJournalState(t, s, text+" running", func(es []journal.Entry) bool {
		for _, e := range es {
			if e.Command == text && e.Run == journal.RunRunning {
				return true
			}
		}
		return false
	})
	e := e2eEntry(t, es, text)
	d.waitEvent(fmt.Sprintf("a step of %q's run", text), func(ev bridge.Event) bool {
		return ev.Kind == bridge.EventStep && ev.CommandID == e.ID
	})
	return e
}

// waitSettled waits until the command's entry is settled.
func waitSettled(t *testing.T, s *daemonSetup, text string) journal.Entry {
	t.Helper()
	es := waitJournalState(t, s, text+" settled", func(es []journal.Entry) bool {
		for _, e := range es {
			if e.Command == text {
				return e2eSettled(e)
			}
		}
		return false
	})
	return e2eEntry(t, es, text)
}

func TestStopOutputsMacroCancelsTheCurrentRun(t *testing.T) {
	h := startHub(t)
	// A long grace: a canceled (not terminated) run proves the soft cancel
	// did it.
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "cancel_grace: 60s\nrules:\n" + busyRule("work", "single", "", 300)})
	d := startListening(t, s)

	h.push("work 1", nil)
	waitRunning(t, s, d, "work 1")
	h.push("stop", stopMacro)
	run := waitSettled(t, s, "work 1")
	if run.Status != automate.StatusCanceled || run.ErrorCode != "" || run.Answer == "done work 1" {
		t.Errorf("the run was not canceled softly: %s", e2eDump([]journal.Entry{run}))
	}
	stop := waitSettled(t, s, "stop")
	if stop.Decision != journal.DecisionIgnored || stop.Rule != "" || stop.MacroName != "Stop" ||
		!strings.Contains(stop.Note, fmt.Sprintf("StopOutputs: cancel requested for command %d", run.ID)) {
		t.Errorf("the StopOutputs command: %s", e2eDump([]journal.Entry{stop}))
	}
	// The slot is free again: the next command runs.
	h.push("work 2", nil)
	next := waitRunning(t, s, d, "work 2")

	// SIGTERM: a clean stop (exit 0), the run in flight canceled
	// (on_shutdown: cancel), DeviceStoppedListening announced.
	if code := d.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	h.waitAction(d.since, "DeviceStoppedListening")
	es := journalEntries(t, s.journal)
	if e := e2eEntry(t, es, "work 2"); e.ID != next.ID || e.Run != journal.RunFinished || e.Status != automate.StatusCanceled {
		t.Errorf("the run in flight at shutdown: %s", e2eDump([]journal.Entry{e}))
	}
}

func TestStopListening(t *testing.T) {
	t.Run("cancels the run when configured and, obeyed, refuses commands until StartListening", func(t *testing.T) {
		h := startHub(t)
		s := newDaemonSetup(t, h, daemonConfig{Bridge: "cancel_grace: 60s\nstop_listening_cancels: true\nlistening: obey\nrules:\n" + busyRule("work", "single", "", 300)})
		d := startListening(t, s)

		h.push("work 1", nil)
		waitRunning(t, s, d, "work 1")
		h.pushListening(false)
		if run := waitSettled(t, s, "work 1"); run.Status != automate.StatusCanceled {
			t.Errorf("StopListening did not cancel the run: %s", e2eDump([]journal.Entry{run}))
		}
		h.waitAction(d.since, "DeviceStoppedListening")
		d.waitHubState("connected")

		h.push("work 2", nil)
		if e := waitSettled(t, s, "work 2"); e.Decision != journal.DecisionRefused || e.Run != journal.RunNone || !strings.Contains(e.Note, "to resume") {
			t.Errorf("a command while not listening: %s", e2eDump([]journal.Entry{e}))
		}

		h.pushListening(true)
		d.waitHubState("listening")
		h.push("work 3", nil)
		waitRunning(t, s, d, "work 3")
		// hubgate cancel ends it (a soft cancel through the control socket).
		// It says how long the run may go on and how to force, once.
		r := runCmd(t, s.environ(), "", "--config", s.configPath, "cancel")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "cancel requested for command #") || strings.Count(r.stdout, "cancel requested") != 1 ||
			!strings.Contains(r.stdout, "it may go on for up to ") || !strings.Contains(r.stdout, "hubgate cancel --force stops it now") {
			t.Errorf("hubgate cancel: %+v", r)
		}
		if e := waitSettled(t, s, "work 3"); e.Status != automate.StatusCanceled || !strings.Contains(e.Note, "stopped by hubgate cancel") {
			t.Errorf("hubgate cancel: %s", e2eDump([]journal.Entry{e}))
		}
		if n := runsStarted(d); n != 2 {
			t.Errorf("%d runs started, want 2", n)
		}
	})
	t.Run("leaves the run alone by default", func(t *testing.T) {
		h := startHub(t)
		s := newDaemonSetup(t, h, daemonConfig{Bridge: "rules:\n" + busyRule("work", "single", "", 300)})
		d := startListening(t, s)
		h.push("work 1", nil)
		waitRunning(t, s, d, "work 1")
		h.pushListening(false)
		d.waitHubState("connected")
		// History, all it keeps: the request may be past, behind the run's
		// burst of step events (its 300 steps each announced, then run).
		lines, _ := startWatch(t, s, "--history", strconv.Itoa(control.MaxWatchHistory))
		nextLine(t, lines, "the bridge seeing StopListening", func(e bridge.Event) bool {
			return e.Kind == bridge.EventListening && e.Listening != nil && !*e.Listening
		})
		if e := e2eEntry(t, journalEntries(t, s.journal), "work 1"); e.Run != journal.RunRunning {
			t.Errorf("the run did not go on: %s", e2eDump([]journal.Entry{e}))
		}
		if r := runCmd(t, s.environ(), "", "--config", s.configPath, "cancel", "--force"); r.code != 0 {
			t.Errorf("hubgate cancel --force: %+v", r)
		}
		if e := waitSettled(t, s, "work 1"); e.Status != automate.StatusCanceled || e.Note != "stopped by hubgate cancel --force (forced)" {
			t.Errorf("hubgate cancel --force: %s", e2eDump([]journal.Entry{e}))
		}
	})
}

func TestARunParksForTheNotifyTool(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: `rules:
  - name: tell
    match: {command_regex: '(?i)tell (?P<text>.+)'}
    run:
      prompt: |
        Tell the user: {{.Named.text}}
        #!tool notify {"message": {{json .Named.text}}, "level": "warning"}
        #!answer told "{{.Named.text}}"
      client_tools: [notify]
`})
	d := startListening(t, s)
	msg := "e2e message " + uniqueKey(t)[4:16]
	h.push("tell "+msg, nil)
	e := waitSettled(t, s, "tell "+msg)
	if e.Status != automate.StatusCompleted || e.Answer != `told "`+msg+`"` || e.ParkedAt.IsZero() || e.RequestID == "" {
		t.Fatalf("the run: %s (parked at %v)", e2eDump([]journal.Entry{e}), e.ParkedAt)
	}
	if ev := d.waitEvent("the notification", func(e bridge.Event) bool { return e.Kind == bridge.EventNotify }); ev.Message != msg || ev.Level != "warning" || ev.CommandID != e.ID {
		t.Errorf("the notification event: %+v", ev)
	}
	r := runCmd(t, s.environ(), "", "--config", s.configPath, "status", "--json")
	var st bridge.Status
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
		t.Fatalf("hubgate status --json: %+v", r)
	}
	if len(st.Notifications) != 1 || st.Notifications[0].Message != msg || st.Notifications[0].Level != "warning" {
		t.Errorf("status notifications: %+v", st.Notifications)
	}
	if st.DeviceID != h.id() || !st.Listening || st.Current != nil || st.Counters.Completed != 1 || st.Automate.Mode != "cohosted" {
		t.Errorf("status: %s", r.stdout)
	}
	if r := runCmd(t, s.environ(), "", "--config", s.configPath, "status"); r.code != 0 || !strings.Contains(r.stdout, msg) {
		t.Errorf("hubgate status: %+v", r)
	}
	// Its log is whole once it stopped: the notification is in it.
	if code := d.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	logged := false
	for _, r := range d.bridgeLogs("notify") {
		logged = logged || r["message"] == msg && r["level"] == "warning"
	}
	if !logged {
		t.Errorf("the notification is not in the daemon's log:\n%s", d.Stderr())
	}
}

func TestSIGKILLMidRunAndRestart(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: `rules:
  - name: long
    match: {command_glob: "long *"}
    run:
      prompt: |
        Long {{.Command}}
        #!sleep 5000
` + e2eIndent(sleepScript(100, 100), 8) + `
  - name: later
    match: {command_glob: "later *"}
    busy: queue
    run: {prompt: "#!answer later"}
  - name: keep
    match: {command_glob: "keep *"}
    busy: queue
    run_on_recovery: true
    max_age: 10m
    run: {prompt: "#!answer kept {{.Command}}"}
`})
	s.ownProcess = true // killed by SIGKILL: a process of its own
	d := startListening(t, s)
	h.push("long 1", nil)
	long := waitRunning(t, s, d, "long 1")
	h.push("later 1", nil)
	h.push("keep 1", nil)
	h.push("long 2", nil)
	before := waitJournalState(t, s, "two queued, one dropped", func(es []journal.Entry) bool {
		return len(es) == 4 && es[1].Decision == journal.DecisionQueued && es[2].Decision == journal.DecisionQueued && es[3].Decision == journal.DecisionDropped
	})

	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-d.done
	if ws, ok := d.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the daemon was not killed: %v", d.cmd.ProcessState)
	}

	// The journal left by the killed daemon is intact and holds everything.
	j, err := journal.OpenReadOnly(s.journal)
	if err != nil {
		t.Fatalf("the journal after SIGKILL: %v", err)
	}
	if err := j.IntegrityCheck(context.Background()); err != nil {
		t.Errorf("integrity check after SIGKILL: %v", err)
	}
	j.Close()
	afterKill := journalEntries(t, s.journal)
	if len(afterKill) != len(before) {
		t.Fatalf("entries lost by the kill:\nbefore\n%safter\n%s", e2eDump(before), e2eDump(afterKill))
	}
	for i := range before {
		if afterKill[i].Decision != before[i].Decision || afterKill[i].Run != before[i].Run {
			t.Errorf("entry %d changed by the kill: %s -> %s", i, e2eDump(before[i:i+1]), e2eDump(afterKill[i:i+1]))
		}
	}

	// hubgate history reads the journal itself while the daemon is down
	// (its control socket is left stale by the kill).
	r := runCmd(t, s.environ(), "", "--config", s.configPath, "history", "--json", "--limit", "10")
	var hist []journal.Entry
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &hist) != nil || len(hist) != len(before) || hist[0].Command != "long 2" {
		t.Errorf("hubgate history with the daemon killed: %+v", r)
	}

	s.ownProcess = false // the second life runs in this process
	d2 := startListening(t, s)
	es := waitJournalState(t, s, "recovered", func(es []journal.Entry) bool { return len(es) == 4 && e2eSettledAll(es) })
	if e := e2eEntry(t, es, "long 1"); e.Run != journal.RunInterrupted || e.Status != "" || !strings.Contains(e.Note, "not sent again") {
		t.Errorf("the run in flight: %s", e2eDump([]journal.Entry{e}))
	}
	if e := e2eEntry(t, es, "later 1"); e.Decision != journal.DecisionAbandoned || e.Run != journal.RunNone || !strings.Contains(e.Note, "does not run queued commands after a restart") {
		t.Errorf("the queued command of a rule without run_on_recovery: %s", e2eDump([]journal.Entry{e}))
	}
	if e := e2eEntry(t, es, "keep 1"); e.Status != automate.StatusCompleted || e.Answer != "kept keep 1" {
		t.Errorf("the queued command of a rule with run_on_recovery: %s", e2eDump([]journal.Entry{e}))
	}
	if e := e2eEntry(t, es, "long 2"); e.Decision != journal.DecisionDropped {
		t.Errorf("the dropped command: %s", e2eDump([]journal.Entry{e}))
	}
	// Nothing ran twice: the first life started "long 1" once, the second
	// life started "keep 1" only, and no server saw "long 1" again.
	task := fmt.Sprintf("hubgate-%d", long.ID)
	count := func(d *daemonProc, component string) int {
		n := 0
		for _, r := range d.logRecords("run started") {
			if r["component"] == component && r["task_id"] == task {
				n++
			}
		}
		return n
	}
	if a := count(d, "automate"); a != 1 { // its log is whole: it was killed
		t.Errorf("the server started %q %d time(s) before the kill", "long 1", a)
	}
	// The restarted daemon works: a new command runs.
	h.push("keep 2", nil)
	keep2 := waitSettled(t, s, "keep 2")
	if keep2.Status != automate.StatusCompleted {
		t.Errorf("a command after the restart: %s", e2eDump([]journal.Entry{keep2}))
	}
	if code := d2.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM after the restart: exit %d", code)
	}
	// Its log is whole now: no server saw "long 1" again; the second life
	// started "keep 1", then "keep 2".
	if b := count(d2, "automate"); b != 0 {
		t.Errorf("the server started %q %d time(s) after the restart", "long 1", b)
	}
	started := d2.bridgeLogs("run started")
	if len(started) != 2 || started[0]["task_id"] != fmt.Sprintf("hubgate-%d", e2eEntry(t, es, "keep 1").ID) ||
		started[1]["task_id"] != fmt.Sprintf("hubgate-%d", keep2.ID) {
		t.Errorf("runs started after the restart: %v", started)
	}
}

func TestARunStartedElsewhere(t *testing.T) {
	key := uniqueKey(t)
	srv := startServe(t, env(t, configs.EnvAutomateKey+"="+key), "--port", "0", "--workspace", t.TempDir())
	port := srv.port()
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{External: true, Port: port, Key: key, Bridge: `rules:
  - name: q
    match: {command_glob: "q *"}
    busy: queue
    run: {prompt: "#!answer ran {{.Command}}"}
  - name: s
    match: {command_glob: "s *"}
    busy: single
    run: {prompt: "#!answer ran {{.Command}}"}
`})
	d := startListening(t, s)
	if st := d.status(); st.Automate.Endpoint != srv.url || st.Automate.Mode != "external" {
		t.Fatalf("the daemon did not find the external server %s: %+v", srv.url, st.Automate)
	}

	// panel starts a run directly on the server, as the desktop panel
	// would, and returns its record once it ends.
	panel := func(script string) <-chan automate.RunRecord {
		out := make(chan automate.RunRecord, 1)
		go func() {
			body, _ := json.Marshal(map[string]any{"prompt": "desktop panel run\n" + script})
			req, _ := http.NewRequest("POST", srv.url+"/v1/runs", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			var rec automate.RunRecord
			if resp, err := http.DefaultClient.Do(req); err == nil {
				json.NewDecoder(resp.Body).Decode(&rec)
				resp.Body.Close()
			}
			out <- rec
		}()
		var hl automate.Health
		// /health answers only when asked: no event.
		testutil.Until(t, "the panel's run to start (health busy)", testutil.NoEvent, func() bool { e2eAutomateGet(t, srv.url, key, "/health", &hl); return hl.Busy })
		return out
	}

	// single: the command is dropped, the panel's run goes on untouched.
	first := panel(e2eIndent(sleepScript(600, 100), 0) + "\n#!answer panel one")
	h.push("s 1", nil)
	if e := waitSettled(t, s, "s 1"); e.Decision != journal.DecisionDropped || e.Run != journal.RunNone ||
		!strings.Contains(e.Note, "busy with a run hubgate did not start") {
		t.Errorf("single while a run started elsewhere: %s", e2eDump([]journal.Entry{e}))
	}
	var hl automate.Health
	if e2eAutomateGet(t, srv.url, key, "/health", &hl); !hl.Busy {
		t.Error("hubgate stopped the panel's run")
	}
	// The panel stops its own run.
	req, _ := http.NewRequest("POST", srv.url+"/v1/automate/cancel", strings.NewReader(`{"force":false}`))
	req.Header.Set("Authorization", "Bearer "+key)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	if rec := <-first; rec.Status != automate.StatusCanceled {
		t.Fatalf("the panel's first run: %+v", rec)
	}
	// The daemon polls /health after the 409 until the server is ready;
	// wait for it to notice, so that the next command is sent (and refused).
	// The end of its wait for the server publishes no event: a bounded
	// poll of status.
	testutil.Until(t, "the daemon to stop waiting for the server after the panel's run ended", testutil.NoEvent, func() bool {
		r := runCmd(t, s.environ(), "", "--config", s.configPath, "status", "--json")
		var st bridge.Status
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &st) == nil && !st.WaitingForServer
	})

	// queue: the command waits until the server is ready, then runs.
	second := panel("#!sleep 3000\n#!answer panel two")
	h.push("q 1", nil)
	rec := <-second
	if rec.Status != automate.StatusCompleted || rec.Answer != "panel two" {
		t.Fatalf("the panel's second run was disturbed: %+v", rec)
	}
	e := waitSettled(t, s, "q 1")
	if e.Status != automate.StatusCompleted || e.Answer != "ran q 1" || e.QueuedAt.IsZero() || e.StartedAt.Before(rec.CompletedAt.Time) {
		t.Errorf("queue while a run started elsewhere: %s (queued %v, server start %v, panel end %v)",
			e2eDump([]journal.Entry{e}), e.QueuedAt, e.StartedAt, rec.CompletedAt)
	}
	// q 1's POST was refused (409) and it was queued again (the daemon had
	// stopped waiting for the server before the panel's second run, so it
	// did not know the slot was held).
	queued := 0
	d.waitEvent("q 1's end", func(ev bridge.Event) bool {
		if ev.Kind == bridge.EventDecided && ev.CommandID == e.ID && ev.Decision == journal.DecisionQueued &&
			strings.Contains(ev.Note, "did not start; waiting for it") {
			queued++
		}
		return ev.Kind == bridge.EventFinished && ev.CommandID == e.ID
	})
	if queued == 0 {
		t.Errorf("the daemon did not queue q 1 while the run it did not start held the slot:\n%s", d.Stderr())
	}
	// One POST for "q 1" was refused (409) and one ran: the server started
	// the panel's two runs and q 1 once (its log is whole once it stopped).
	if code := srv.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("automate serve: SIGTERM exit %d", code)
	}
	if n := strings.Count(srv.Stderr(), `msg="run started"`); n != 3 {
		t.Errorf("the server started %d runs, want 3:\n%s", n, srv.Stderr())
	}
}
