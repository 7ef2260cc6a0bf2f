package bridge

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
)

// EventKind names one step of the bridge's event stream.
type EventKind string

// Event kinds, in the order a command's life goes through them.
const (
	// EventReceived: a DeviceCommand was journaled; Rule is the rule it
	// matched ("" when none did).
	EventReceived EventKind = "received"
	// EventDecided: the command's decision (Decision, with Note saying
	// why): started, queued, dropped, ignored, refused, failed or abandoned.
	EventDecided EventKind = "decided"
	// EventUnrecorded: a DeviceCommand arrived but the journal could not
	// record it, so it was not run (Note says why; CommandID is 0).
	EventUnrecorded EventKind = "unrecorded"
	// EventStarted: its run was sent to the Automate server.
	EventStarted EventKind = "started"
	// EventParked: the run awaits the results of client tools hubgate runs.
	EventParked EventKind = "parked"
	// EventResumed: the tool results were sent; the run goes on.
	EventResumed EventKind = "resumed"
	// EventCancelRequested: hubgate asked the server to cancel the run
	// (Note says who asked).
	EventCancelRequested EventKind = "cancel-requested"
	// EventFinished: the run ended: Status, Answer, FinalAnswer,
	// ErrorCode, DurationMs; Error for a request that failed without a run
	// record; or Status "interrupted" for a run lost to a restart.
	EventFinished EventKind = "finished"
	// EventStopOutputs: a StopOutputs macro arrived: whatever speaks or
	// shows output should stop.
	EventStopOutputs EventKind = "stop-outputs"
	// EventNotify: the notify tool reported Message (Level) during the
	// run of CommandID.
	EventNotify EventKind = "notify"
	// EventQuestion: the run of CommandID asked the person Question
	// (the ask_person tool), offering Choices, and waits for an answer
	// until Deadline.
	EventQuestion EventKind = "question"
	// EventAnswered: the question of CommandID was answered with Reply;
	// Note says how (a hub command, the status page, `hubgate answer`),
	// or that nobody answered in time (Reply empty).
	EventAnswered EventKind = "answered"
	// EventHub: the hub connection changed state (Hub, with its reason).
	EventHub EventKind = "hub"
	// EventListening: the hub asked to start or stop listening
	// (Listening); Note says what that does to commands.
	EventListening EventKind = "listening"
	// EventStep: a step of the running command's run was added or
	// changed (Step), as the Automate server reported it.
	EventStep EventKind = "step"
	// EventRunStatus: the running command's workflow status changed
	// (Note: "planning", "executing-progress", ...), as the stream or
	// /health reported it.
	EventRunStatus EventKind = "run-status"
	// EventLost: this subscriber fell behind and Lost events were dropped
	// for it just before this one.
	EventLost EventKind = "lost"
	// EventCatalogue: a device record the service sent replaced the
	// macro catalogue (once per change, not per reconnect): From says
	// which record (bridge.FromRESTDevice, "VerifySelf",
	// "GetLatestDevice", "DeviceProfileUpdate"), Profile names the
	// profile; Macros are used for matching, OddMacros were kept as they
	// came and are not.
	EventCatalogue EventKind = "catalogue"
	// EventProfileTooLarge: the hub sent a profile over its receive
	// limit (hub.max_message_bytes): it was not read and the macro
	// catalogue stays as it was (Note says so, with the sizes).
	EventProfileTooLarge EventKind = "profile-too-large"
	// EventReloaded: the configuration was reloaded (SIGHUP): Changes are
	// what it changed now, Restart the settings that changed but apply
	// only after a restart.
	EventReloaded EventKind = "config-reloaded"
	// EventReloadRefused: a reload was refused (Error says why); the
	// running configuration stays.
	EventReloadRefused EventKind = "config-refused"
)

// Event is one step of the bridge's event stream. Seq numbers the events
// of one daemon from 1, without gaps, in the order they happened; fields
// that do not apply to the Kind are empty.
type Event struct {
	Seq  uint64    `json:"seq"`
	At   time.Time `json:"at"`
	Kind EventKind `json:"kind"`

	CommandID int64  `json:"commandId,omitempty"`
	Command   string `json:"command,omitempty"`
	Rule      string `json:"rule,omitempty"`
	MacroName string `json:"macroName,omitempty"`

	Decision journal.Decision `json:"decision,omitempty"`
	Note     string           `json:"note,omitempty"`

	TaskID      string             `json:"taskId,omitempty"`
	RequestID   string             `json:"requestId,omitempty"`
	Status      automate.RunStatus `json:"status,omitempty"`
	Answer      string             `json:"answer,omitempty"`
	FinalAnswer *string            `json:"finalAnswer,omitempty"`
	ErrorCode   string             `json:"errorCode,omitempty"`
	Error       string             `json:"error,omitempty"`
	DurationMs  int64              `json:"durationMs,omitempty"`

	Level   string `json:"level,omitempty"`   // EventNotify
	Message string `json:"message,omitempty"` // EventNotify

	Step *StepInfo `json:"step,omitempty"` // EventStep
	// StoppedBy says who or what cancelled a finished run ("hubgate
	// cancel", "the status page", "StopOutputs macro", "restart: ...",
	// "shutdown"); empty when nobody did.
	StoppedBy string `json:"stoppedBy,omitempty"` // EventFinished
	// ForcedBy says who or what forced the stop ("hubgate cancel
	// --force", the cancel grace running out); empty for a soft stop.
	ForcedBy string     `json:"forcedBy,omitempty"` // EventFinished
	Question string     `json:"question,omitempty"` // EventQuestion
	Choices  []string   `json:"choices,omitempty"`  // EventQuestion
	Deadline *time.Time `json:"deadline,omitempty"` // EventQuestion
	Reply    string     `json:"reply,omitempty"`    // EventAnswered

	Hub       *HubStatus `json:"hub,omitempty"`       // EventHub
	Listening *bool      `json:"listening,omitempty"` // EventListening
	Lost      uint64     `json:"lost,omitempty"`      // EventLost

	From      string   `json:"from,omitempty"`      // EventCatalogue
	Profile   string   `json:"profile,omitempty"`   // EventCatalogue
	Macros    int      `json:"macros,omitempty"`    // EventCatalogue
	OddMacros int      `json:"oddMacros,omitempty"` // EventCatalogue
	Changes   []string `json:"changes,omitempty"`   // EventReloaded
	Restart   []string `json:"restart,omitempty"`   // EventReloaded

	// Notify and Speak are what reaches the person of the command: the
	// notify policy (rules.NotifyPolicies) and speech of the rule it
	// matched, else bridge.notify, fixed when it arrived, so that a reload
	// changes the next commands only, however far behind a subscriber is.
	// On command events in this process (bridge/notify); "" elsewhere.
	Notify string `json:"-"`
	Speak  bool   `json:"-"`
}

// Text is what a person should read of a finished run: the final answer
// when the run had an answer contract, else the answer.
func (e Event) Text() string {
	if e.FinalAnswer != nil && *e.FinalAnswer != "" {
		return *e.FinalAnswer
	}
	return e.Answer
}

// Failed reports whether a finished event is a failure a person should
// hear about: a run that failed or was terminated, a request that failed,
// a run lost to a restart. A cancelled run is not (someone asked for it).
func (e Event) Failed() bool {
	if e.Kind != EventFinished {
		return false
	}
	switch e.Status {
	case automate.StatusCompleted, automate.StatusCanceled:
		return false
	}
	return true
}

// Line is one line of an event's text form.
type Line struct {
	// Step names the line for machine readers (the demo's JSON "event"):
	// received, decision, run-started, run-parked, run-resumed,
	// cancel-requested, run-finished, run-failed, answer, final-answer,
	// stop-outputs, notify, question, answered, hub, listening,
	// unrecorded, lost, catalogue, profile-too-large, config-reloaded,
	// config-restart, config-refused, or the event's kind.
	Step string
	// Text is what a person reads: "[#<command id>] " first when the
	// event is about a command; continuation lines of a multi-line answer
	// are indented.
	Text string
}

// Lines is the one text form of the event stream, used by `watch`, the
// demo's narrative and the status page: one line per step, and a finished
// run's answer (and its final answer, when the contract gave another) on
// lines of their own.
func (e Event) Lines() []Line {
	tag := ""
	if e.CommandID != 0 {
		tag = fmt.Sprintf("[#%d] ", e.CommandID)
	}
	line := func(step, format string, args ...any) Line {
		return Line{Step: step, Text: tag + fmt.Sprintf(format, args...)}
	}
	switch e.Kind {
	case EventReceived:
		macro := ""
		if e.MacroName != "" && e.MacroName != e.Command {
			macro = fmt.Sprintf(" (macro %q)", e.MacroName)
		}
		return []Line{line("received", "received DeviceCommand %q%s", e.Command, macro)}
	case EventDecided:
		return []Line{line("decision", "%s", e.decisionText())}
	case EventStarted:
		task := ""
		if e.TaskID != "" {
			task = " (task " + e.TaskID + ")"
		}
		return []Line{line("run-started", "run started on the Automate server%s", task)}
	case EventParked:
		tools := ""
		if e.Note != "" {
			tools = " (" + e.Note + ")"
		}
		return []Line{line("run-parked", "run parked: it called a client tool that hubgate executes%s", tools)}
	case EventResumed:
		return []Line{line("run-resumed", "run resumed with the tool results")}
	case EventCancelRequested:
		return []Line{line("cancel-requested", "cancel requested (%s)", e.Note)}
	case EventFinished:
		return e.finishedLines(line)
	case EventStopOutputs:
		return []Line{line("stop-outputs", "StopOutputs: whatever speaks or shows output stops")}
	case EventNotify:
		if tag == "" {
			tag = "[notify] "
			return []Line{line("notify", "%s", e.Message)}
		}
		return []Line{line("notify", "notify: %s", e.Message)}
	case EventQuestion:
		choices := ""
		if len(e.Choices) > 0 {
			choices = " (choices: " + strings.Join(e.Choices, ", ") + ")"
		}
		by := ""
		if e.Deadline != nil {
			by = " by " + e.Deadline.Local().Format(time.TimeOnly)
		}
		return []Line{line("question", "question: %s%s; answer with your next command%s", e.Question, choices, by)}
	case EventAnswered:
		if e.Reply == "" {
			return []Line{line("answered", "question not answered: %s", e.Note)}
		}
		return []Line{line("answered", "answered %q (%s)", e.Reply, e.Note)}
	case EventHub:
		return []Line{line("hub", "hub: %s", e.Hub.text())}
	case EventListening:
		what := "stop"
		if e.Listening != nil && *e.Listening {
			what = "start"
		}
		note := ""
		if e.Note != "" {
			note = ": " + e.Note
		}
		return []Line{line("listening", "the hub asked to %s listening%s", what, note)}
	case EventUnrecorded:
		return []Line{line("unrecorded", "DeviceCommand %q not run: %s", e.Command, e.Note)}
	case EventStep:
		return []Line{line("step", "%s", e.Step.text())}
	case EventRunStatus:
		return []Line{line("run-status", "run status: %s", e.Note)}
	case EventLost:
		return []Line{line("lost", "(%d events lost: this reader fell behind; see hubgate history)", e.Lost)}
	case EventCatalogue:
		odd := ""
		if e.OddMacros > 0 {
			odd = fmt.Sprintf(" (%d more kept as they came, not used for matching)", e.OddMacros)
		}
		if e.From == "" {
			return []Line{line("catalogue", "macro catalogue refreshed from the profile: %d macros%s", e.Macros, odd)}
		}
		profile := ""
		if e.Profile != "" {
			profile = fmt.Sprintf("profile %q, ", e.Profile)
		}
		return []Line{line("catalogue", "macro catalogue from %s: %s%d macros%s", e.From, profile, e.Macros, odd)}
	case EventProfileTooLarge:
		return []Line{line("profile-too-large", "%s", e.Note)}
	case EventReloaded:
		return e.reloadedLines(line)
	case EventReloadRefused:
		return []Line{line("config-refused", "configuration refused; the running one stays: %s", e.Error)}
	}
	return []Line{line(string(e.Kind), "%s", e.Kind)}
}

// Describe is the event's text form (Lines) as one text.
func (e Event) Describe() string {
	lines := e.Lines()
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = l.Text
	}
	return strings.Join(texts, "\n")
}

// Outcome is how a finished run ended, in words: its status with its
// error code ("failed (EXECUTION_TIMEOUT)"), or "failed" for a request
// that failed without a run record.
func (e Event) Outcome() string {
	if e.Status == "" {
		return "failed"
	}
	if e.ErrorCode != "" {
		return string(e.Status) + " (" + e.ErrorCode + ")"
	}
	return string(e.Status)
}

// decisionText is a decided event's line: the rule, the decision, why.
func (e Event) decisionText() string {
	rule := "no rule matched"
	switch e.Rule {
	case "":
	case rules.UnmatchedRuleName:
		rule = "no rule matched, the unmatched action"
	default:
		rule = fmt.Sprintf("rule %q matched", e.Rule)
	}
	note := ""
	if e.Note != "" && e.Decision != journal.DecisionStarted {
		note = ": " + e.Note
	}
	return rule + ": " + string(e.Decision) + note
}

// finishedLines are a finished event's lines: the outcome, the answer and
// the final answer.
func (e Event) finishedLines(line func(step, format string, args ...any) Line) []Line {
	if e.Status == "" {
		return []Line{line("run-failed", "the run request failed: %s", e.Error)}
	}
	by := ""
	if note := journal.StopNote(e.StoppedBy, e.ForcedBy); note != "" {
		by = " (" + note + ")"
	}
	out := []Line{line("run-finished", "run finished: %s in %s%s", e.Outcome(), millis(e.DurationMs), by)}
	if e.Answer != "" {
		out = append(out, line("answer", "answer: %s", indent(e.Answer)))
	}
	if e.FinalAnswer != nil && *e.FinalAnswer != e.Answer {
		out = append(out, line("final-answer", "final answer: %s", indent(*e.FinalAnswer)))
	}
	return out
}

// reloadedLines are a reload's lines: what changed, and what applies only
// after a restart.
func (e Event) reloadedLines(line func(step, format string, args ...any) Line) []Line {
	out := []Line{line("config-reloaded", "configuration reloaded; nothing changed")}
	if len(e.Restart) > 0 {
		out[0] = line("config-reloaded", "configuration reloaded; nothing to apply now")
	}
	if len(e.Changes) > 0 {
		out[0] = line("config-reloaded", "configuration reloaded: %s", strings.Join(e.Changes, "; "))
	}
	if len(e.Restart) > 0 {
		out = append(out, line("config-restart", "these settings changed but apply only after a restart: %s", strings.Join(e.Restart, "; ")))
	}
	return out
}

// StepInfo is one step of a run, as events and status carry it: the
// step's own fields, with its tool arguments summarised (ArgsSummary, at
// most StepArgsSummaryMax bytes) instead of carried whole.
type StepInfo struct {
	Index            int    `json:"index"`
	Title            string `json:"title,omitempty"`
	Status           string `json:"status,omitempty"`
	ToolName         string `json:"toolName,omitempty"`
	ArgsSummary      string `json:"argsSummary,omitempty"`
	ResultSummary    string `json:"resultSummary,omitempty"`
	ProducedFilePath string `json:"producedFilePath,omitempty"`
}

// StepArgsSummaryMax bounds StepInfo.ArgsSummary.
const StepArgsSummaryMax = 120

// StepOf is the StepInfo of s.
func StepOf(s automate.Step) StepInfo {
	return StepInfo{Index: s.Index, Title: s.Title, Status: s.Status, ToolName: s.ToolName,
		ArgsSummary: summarize(string(s.ToolArgs), StepArgsSummaryMax), ResultSummary: s.ResultSummary,
		ProducedFilePath: s.ProducedFilePath}
}

// text is a step in words: "step 2 running: Read the inbox (read_file
// {"path":"a"}) -> 3 mails; produced /tmp/x".
func (s *StepInfo) text() string {
	if s == nil {
		return "step"
	}
	out := fmt.Sprintf("step %d %s", s.Index, s.Status)
	if s.Title != "" {
		out += ": " + s.Title
	}
	if s.ToolName != "" {
		out += " (" + s.ToolName
		if s.ArgsSummary != "" {
			out += " " + s.ArgsSummary
		}
		out += ")"
	}
	if s.ResultSummary != "" {
		out += " -> " + summarize(s.ResultSummary, 200)
	}
	if s.ProducedFilePath != "" {
		out += "; produced " + s.ProducedFilePath
	}
	return out
}

// summarize is s on one line, cut to at most max bytes (at a rune
// boundary, with an ellipsis).
func summarize(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// text is the hub state in words: "reconnecting (network): reason; retry
// at 15:04:05" (local time).
func (h *HubStatus) text() string {
	if h == nil {
		return "unknown"
	}
	out := h.Status
	if h.Cause != "" {
		out += " (" + h.Cause + ")"
	}
	if h.Reason != "" {
		out += ": " + h.Reason
	}
	if !h.RetryAt.IsZero() {
		out += "; retry at " + h.RetryAt.Local().Format(time.TimeOnly)
	}
	if h.NeedsRepair {
		out += "; " + RepairHint
	}
	return out
}

// millis renders a duration in ms.
func millis(ms int64) string {
	if ms < 1 {
		return "under 1 ms"
	}
	return fmt.Sprintf("%d ms", ms)
}

// indent indents the continuation lines of a multi-line text.
func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n      ")
}
