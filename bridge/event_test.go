package bridge

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
)

// TestEventTextForm: the one text form of the event stream, step by step,
// as watch, the demo and the status page print it.
func TestEventTextForm(t *testing.T) {
	final, on, off := "FINAL", true, false
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{Kind: EventReceived, CommandID: 1, Command: "hello"}, `[#1] received DeviceCommand "hello"`},
		{Event{Kind: EventReceived, CommandID: 2, Command: "typing", MacroName: "Dictate"}, `[#2] received DeviceCommand "typing" (macro "Dictate")`},
		{Event{Kind: EventDecided, CommandID: 1, Rule: "hello", Decision: journal.DecisionStarted, Note: "ignored for started"}, `[#1] rule "hello" matched: started`},
		{Event{Kind: EventDecided, CommandID: 3, Rule: "slow", Decision: journal.DecisionQueued}, `[#3] rule "slow" matched: queued`},
		{Event{Kind: EventDecided, CommandID: 4, Rule: "hello", Decision: journal.DecisionDropped, Note: "busy with command 1"}, `[#4] rule "hello" matched: dropped: busy with command 1`},
		{Event{Kind: EventDecided, CommandID: 5, Rule: rules.UnmatchedRuleName, Decision: journal.DecisionStarted}, `[#5] no rule matched, the unmatched action: started`},
		{Event{Kind: EventDecided, CommandID: 6, Decision: journal.DecisionIgnored, Note: "no rule matches"}, `[#6] no rule matched: ignored: no rule matches`},
		{Event{Kind: EventStarted, CommandID: 1, TaskID: "demo-1"}, `[#1] run started on the Automate server (task demo-1)`},
		{Event{Kind: EventStarted, CommandID: 1}, `[#1] run started on the Automate server`},
		{Event{Kind: EventParked, CommandID: 2, Note: "notify"}, `[#2] run parked: it called a client tool that hubgate executes (notify)`},
		{Event{Kind: EventResumed, CommandID: 2}, `[#2] run resumed with the tool results`},
		{Event{Kind: EventStep, CommandID: 2, Step: &StepInfo{Index: 2, Status: "success", Title: "Read mails", ToolName: "read_file",
			ArgsSummary: `{"path":"in.txt"}`, ResultSummary: "3 mails", ProducedFilePath: "/tmp/out.md"}},
			`[#2] step 2 success: Read mails (read_file {"path":"in.txt"}) -> 3 mails; produced /tmp/out.md`},
		{Event{Kind: EventStep, CommandID: 2, Step: &StepInfo{Index: 1, Status: "pending", Title: "Compose"}}, `[#2] step 1 pending: Compose`},
		{Event{Kind: EventRunStatus, CommandID: 2, Note: "executing-progress"}, `[#2] run status: executing-progress`},
		{Event{Kind: EventFinished, CommandID: 2, Status: automate.StatusCanceled, DurationMs: 40, StoppedBy: "the status page"},
			`[#2] run finished: canceled in 40 ms (stopped by the status page)`},
		{Event{Kind: EventFinished, CommandID: 2, Status: automate.StatusCanceled, DurationMs: 40, StoppedBy: "hubgate cancel", ForcedBy: "hubgate cancel --force"},
			`[#2] run finished: canceled in 40 ms (stopped by hubgate cancel; forced by hubgate cancel --force)`},
		{Event{Kind: EventCancelRequested, CommandID: 2, Note: "hubgate cancel"}, `[#2] cancel requested (hubgate cancel)`},
		{Event{Kind: EventFinished, CommandID: 2, Status: automate.StatusCompleted, Answer: "a\nb\n", FinalAnswer: &final, DurationMs: 7},
			"[#2] run finished: completed in 7 ms\n[#2] answer: a\n      b\n[#2] final answer: FINAL"},
		{Event{Kind: EventFinished, CommandID: 1, Status: automate.StatusFailed, ErrorCode: "EXECUTION_TIMEOUT"}, `[#1] run finished: failed (EXECUTION_TIMEOUT) in under 1 ms`},
		{Event{Kind: EventFinished, CommandID: 1, Status: automate.StatusCompleted, Answer: "same", FinalAnswer: ptr("same"), DurationMs: 3},
			"[#1] run finished: completed in 3 ms\n[#1] answer: same"},
		{Event{Kind: EventFinished, CommandID: 8, Error: "connection refused"}, `[#8] the run request failed: connection refused`},
		{Event{Kind: EventStopOutputs, CommandID: 9}, `[#9] StopOutputs: whatever speaks or shows output stops`},
		{Event{Kind: EventNotify, CommandID: 2, Message: "the kettle"}, `[#2] notify: the kettle`},
		{Event{Kind: EventNotify, Message: "outside a run"}, `[notify] outside a run`},
		{Event{Kind: EventHub, Hub: &HubStatus{Status: "listening"}}, `hub: listening`},
		{Event{Kind: EventHub, Hub: &HubStatus{Status: "reconnecting", Cause: "network", Reason: "EOF"}}, `hub: reconnecting (network): EOF`},
		{Event{Kind: EventHub, Hub: &HubStatus{Status: "reconnecting", Cause: "unauthorized", Reason: "the hub refused the device token (negotiate: 401)", NeedsRepair: true}},
			`hub: reconnecting (unauthorized): the hub refused the device token (negotiate: 401); the device must be paired again: run 'hubgate pair --reuse' (or 'hubgate pair --replace' for a new device)`},
		{Event{Kind: EventHub, Hub: &HubStatus{Status: "reconnecting", Reason: "EOF", RetryAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)}},
			`hub: reconnecting: EOF; retry at 03:04:05`},
		{Event{Kind: EventListening, Listening: &on}, `the hub asked to start listening`},
		{Event{Kind: EventListening, Listening: &off}, `the hub asked to stop listening`},
		{Event{Kind: EventLost, Lost: 3}, `(3 events lost: this reader fell behind; see hubgate history)`},
		{Event{Kind: EventCatalogue, Macros: 2, OddMacros: 1}, `macro catalogue refreshed from the profile: 2 macros (1 more kept as they came, not used for matching)`},
		{Event{Kind: EventCatalogue, Macros: 3}, `macro catalogue refreshed from the profile: 3 macros`},
		{Event{Kind: EventCatalogue, From: "VerifySelf", Profile: "Garden", Macros: 3, OddMacros: 1},
			`macro catalogue from VerifySelf: profile "Garden", 3 macros (1 more kept as they came, not used for matching)`},
		{Event{Kind: EventCatalogue, From: FromRESTDevice}, `macro catalogue from the REST device: 0 macros`},
		{Event{Kind: EventReloaded}, `configuration reloaded; nothing changed`},
		{Event{Kind: EventReloaded, Restart: []string{"bridge.journal"}}, "configuration reloaded; nothing to apply now\nthese settings changed but apply only after a restart: bridge.journal"},
		{Event{Kind: EventReloaded, Changes: []string{`rule "a" added`, "bridge.notify: auto -> off"}, Restart: []string{"log"}},
			"configuration reloaded: rule \"a\" added; bridge.notify: auto -> off\nthese settings changed but apply only after a restart: log"},
		{Event{Kind: EventReloadRefused, Error: "bridge.rules[0]: bad"}, `configuration refused; the running one stays: bridge.rules[0]: bad`},
		{Event{Kind: "future-kind", CommandID: 1}, `[#1] future-kind`},
	} {
		if got := c.e.Describe(); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.e.Kind, got, c.want)
		}
	}
}

// TestEventLineSteps: each line names its step (the demo's JSON event).
func TestEventLineSteps(t *testing.T) {
	final := "FINAL"
	lines := Event{Kind: EventFinished, CommandID: 1, Status: automate.StatusCompleted, Answer: "A", FinalAnswer: &final}.Lines()
	var steps []string
	for _, l := range lines {
		steps = append(steps, l.Step)
	}
	if got := len(steps); got != 3 || steps[0] != "run-finished" || steps[1] != "answer" || steps[2] != "final-answer" {
		t.Errorf("steps %q", steps)
	}
}

func TestEventOutcome(t *testing.T) {
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{Status: automate.StatusCompleted}, "completed"},
		{Event{Status: automate.StatusFailed, ErrorCode: "MODEL_UNAVAILABLE"}, "failed (MODEL_UNAVAILABLE)"},
		{Event{Error: "EOF"}, "failed"},
	} {
		if got := c.e.Outcome(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// A step's tool arguments are summarised on one line, cut at a rune
// boundary.
func TestStepArgumentsAreSummarised(t *testing.T) {
	args := `{"content": "` + strings.Repeat("é", 200) + `",` + "\n" + `"path": "x"}`
	s := StepOf(automate.Step{Index: 1, Status: "running", ToolName: "write_file", ToolArgs: []byte(args)})
	if len(s.ArgsSummary) > StepArgsSummaryMax || !utf8.ValidString(s.ArgsSummary) || !strings.HasSuffix(s.ArgsSummary, "…") ||
		strings.Contains(s.ArgsSummary, "\n") {
		t.Errorf("summary %q (%d bytes)", s.ArgsSummary, len(s.ArgsSummary))
	}
	if s := StepOf(automate.Step{ToolArgs: []byte(`{"a": 1}`)}); s.ArgsSummary != `{"a": 1}` {
		t.Errorf("short arguments %q", s.ArgsSummary)
	}
}
