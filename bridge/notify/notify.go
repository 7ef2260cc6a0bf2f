package notify

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
)

// Defaults of a Service.
const (
	DefaultTimeout    = 5 * time.Second
	DefaultRetryAfter = time.Minute
	// MaxBody is how many characters of a text a notification body shows.
	MaxBody = 1000
)

// Options configures New. Zero values are documented per field.
type Options struct {
	// Default is the notify policy of rules that set none: one of
	// rules.NotifyPolicies. Zero: answers.
	Default string
	// Rule returns a rule's notify policy ("" for the default) and whether
	// its answers are spoken. Zero: every rule has the default and none
	// speaks.
	Rule func(name string) (notify string, speak bool)
	// Desktop shows notifications. Zero: DefaultDesktop().
	Desktop Desktop
	// Speaker speaks answers of rules with speak: true. Zero: no speech
	// (a rule that asks for it gets one warning).
	Speaker *Speaker
	// SpeechOn says whether speech is on (a rule speaks its answers):
	// then what is not about one command (the device must be paired
	// again) is spoken too. Zero: it is not.
	SpeechOn func() bool
	// Timeout bounds each desktop call. Zero: DefaultTimeout.
	Timeout time.Duration
	// RetryAfter: after a failed desktop call, notifications go to the
	// log only for this long. Zero: DefaultRetryAfter.
	RetryAfter time.Duration
	// ProgressAfter: a run that goes on longer than this gets one
	// progress notification with its current step, updated in place at
	// each step where the desktop can (Replacer: freedesktop), else shown
	// once when the run passes it (bridge.progress_after). Zero:
	// DefaultProgressAfter; negative: none.
	ProgressAfter time.Duration
	Logger        *slog.Logger     // Zero: slog.Default()
	Now           func() time.Time // Zero: time.Now
}

// Service turns the bridge's events into notifications and speech.
type Service struct {
	opts Options
	log  *slog.Logger
	now  func() time.Time

	mu          sync.Mutex
	warned      bool      // the desktop failure warning was logged
	downUntil   time.Time // log only until then
	noSpeechLog bool
	// stopOutputs is the latest StopOutputs command: its decision
	// (ignored, as a control command) is what the person asked for, not
	// a command left unrun.
	stopOutputs int64
	sent        uint64
	failed      uint64
	// run is the run in flight, for its progress notification.
	run *runProgress
	// repairTold: the person was told that the device must be paired
	// again, and the hub has not connected since (repair.go).
	repairTold bool
}

// New returns a Service for opts.
func New(opts Options) *Service {
	if opts.Default == "" {
		opts.Default = rules.NotifyAnswers
	}
	if opts.Desktop == nil {
		opts.Desktop = DefaultDesktop()
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = DefaultRetryAfter
	}
	if opts.ProgressAfter == 0 {
		opts.ProgressAfter = DefaultProgressAfter
	}
	s := &Service{opts: opts, log: opts.Logger, now: opts.Now}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Run handles events until the channel closes or ctx ends; then it stops
// any speech.
func (s *Service) Run(ctx context.Context, events <-chan bridge.Event) {
	defer func() {
		if s.opts.Speaker != nil {
			s.opts.Speaker.Stop()
		}
	}()
	// due fires when the run in flight passes ProgressAfter: its first
	// progress notification does not wait for a step.
	due := time.NewTimer(time.Hour)
	due.Stop()
	defer due.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-events:
			if !ok {
				return
			}
			s.Handle(ctx, e)
			if e.Kind == bridge.EventStarted {
				if d, ok := s.progressDue(); ok {
					due.Reset(d)
				}
			}
		case <-due.C:
			s.progressTick(ctx)
		}
	}
}

// Counts returns how many notifications were shown and how many failed.
func (s *Service) Counts() (sent, failed uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent, s.failed
}

// SetDefault replaces the notify policy of rules that set none (a
// reloaded configuration); "" is answers.
func (s *Service) SetDefault(policy string) {
	if policy == "" {
		policy = rules.NotifyAnswers
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Default = policy
}

// policy is the notify policy and speech of e's command: the bridge's
// stamp (bridge.Event.Notify, fixed when the command arrived), else, for
// an event without one, the rule's as Options.Rule says now.
func (s *Service) policy(e bridge.Event) (string, bool) {
	if e.Notify != "" {
		return e.Notify, e.Speak
	}
	rule := e.Rule
	s.mu.Lock()
	def := s.opts.Default
	s.mu.Unlock()
	if s.opts.Rule == nil || rule == "" {
		return def, false
	}
	p, speak := s.opts.Rule(rule)
	if p == "" {
		p = def
	}
	return p, speak
}

// Handle acts on one event.
func (s *Service) Handle(ctx context.Context, e bridge.Event) {
	policy, speak := s.policy(e)
	switch e.Kind {
	case bridge.EventStarted, bridge.EventStopOutputs:
		if e.Kind == bridge.EventStarted {
			s.progressStart(e)
		}
		// A new run, or the person asked for silence: stop speaking.
		if s.opts.Speaker != nil {
			s.opts.Speaker.Stop()
		}
		if e.Kind == bridge.EventStopOutputs {
			s.mu.Lock()
			s.stopOutputs = e.CommandID
			s.mu.Unlock()
		}
	case bridge.EventStep, bridge.EventRunStatus:
		s.progressStep(ctx, e)
	case bridge.EventFinished:
		replaces := s.progressEnd(e)
		shown := false
		defer func() {
			if replaces != 0 && !shown {
				// The progress notification would stay at its last step.
				s.send(ctx, e, Message{Summary: summary(e, "finished"), Body: "the run " + e.Outcome(), Urgency: UrgencyLow}, replaces)
			}
		}()
		switch {
		case e.Failed():
			if policy != rules.NotifyNone {
				s.send(ctx, e, Message{Summary: summary(e, "failed"), Body: failureBody(e), Urgency: UrgencyCritical}, replaces)
				shown = true
			}
		case e.Status == "completed":
			text := e.Text()
			if policy == rules.NotifyAnswers {
				body := text
				if body == "" {
					body = "(the run completed without an answer)"
				}
				s.send(ctx, e, Message{Summary: summary(e, ""), Body: clipBody(body), Urgency: UrgencyNormal}, replaces)
				shown = true
			}
			if speak && text != "" {
				s.say(e, text)
			}
		}
	case bridge.EventDecided:
		switch e.Decision {
		case journal.DecisionIgnored:
			s.mu.Lock()
			control := e.CommandID == s.stopOutputs
			s.mu.Unlock()
			if control {
				break
			}
			fallthrough
		case journal.DecisionDropped, journal.DecisionRefused, journal.DecisionFailed, journal.DecisionAbandoned:
			if policy != rules.NotifyNone {
				s.show(ctx, e, Message{Summary: summary(e, "not run ("+string(e.Decision)+")"), Body: clipBody(e.Note), Urgency: UrgencyNormal})
			}
		}
	case bridge.EventUnrecorded:
		if policy != rules.NotifyNone {
			s.show(ctx, e, Message{Summary: summary(e, "not run"), Body: clipBody(e.Note), Urgency: UrgencyCritical})
		}
	case bridge.EventQuestion:
		// The agent waits for the person: shown unless the rule's policy
		// is none, spoken when the rule speaks.
		if policy != rules.NotifyNone {
			s.show(ctx, e, Message{Summary: summary(e, "asks"), Body: clipBody(questionBody(e)), Urgency: UrgencyCritical})
		}
		if speak {
			s.say(e, spokenQuestion(e))
		}
	case bridge.EventProfileTooLarge:
		if policy != rules.NotifyNone {
			s.show(ctx, e, Message{Summary: summary(e, "profile not loaded"), Body: clipBody(e.Note), Urgency: UrgencyNormal})
		}
	case bridge.EventHub:
		s.hubChanged(ctx, e)
	case bridge.EventLost:
		s.log.Warn("notifications fell behind the bridge; some were not shown (see hubgate history)", "lost_events", e.Lost)
	case bridge.EventNotify:
		warning := e.Level == rules.NotifyWarning
		if policy == rules.NotifyAnswers || policy == rules.NotifyFailures && warning {
			u := UrgencyNormal
			if warning {
				u = UrgencyCritical
			}
			s.show(ctx, e, Message{Summary: summary(e, ""), Body: clipBody(e.Message), Urgency: u})
		}
	}
}

// show sends m to the desktop as a new notification (send).
func (s *Service) show(ctx context.Context, e bridge.Event, m Message) {
	s.send(ctx, e, m, 0)
}

// send sends m to the desktop within the timeout, or to the log only; in
// place of the notification replaces when it is not 0 and the desktop
// can (Replacer). It returns the id of the notification shown (0: none,
// or a desktop without ids).
func (s *Service) send(ctx context.Context, e bridge.Event, m Message, replaces uint32) uint32 {
	s.log.Info("notification", "command_id", e.CommandID, "kind", e.Kind, "summary", m.Summary, "body", m.Body)
	s.mu.Lock()
	down := s.now().Before(s.downUntil)
	s.mu.Unlock()
	if down {
		return 0
	}
	cctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	var (
		id  uint32
		err error
	)
	if r, ok := s.opts.Desktop.(Replacer); ok {
		id, err = r.NotifyReplacing(cctx, m, replaces)
	} else {
		err = s.opts.Desktop.Notify(cctx, m)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.sent++
		if s.warned {
			s.warned = false
			s.log.Info("desktop notifications work again")
		}
		return id
	}
	s.failed++
	s.downUntil = s.now().Add(s.opts.RetryAfter)
	if !s.warned {
		s.warned = true
		s.log.Warn("desktop notifications are not available; notifications go to the log only", "err", err,
			"retry_after", s.opts.RetryAfter)
		return 0
	}
	s.log.Debug("desktop notification failed", "err", err)
	return 0
}

func (s *Service) say(e bridge.Event, text string) {
	if s.opts.Speaker == nil {
		s.mu.Lock()
		first := !s.noSpeechLog
		s.noSpeechLog = true
		s.mu.Unlock()
		if first {
			s.log.Warn("a rule asks to speak its answers, but no speech command is available", "rule", e.Rule)
		}
		return
	}
	if _, err := s.opts.Speaker.Say(text); err != nil {
		s.log.Warn("speech failed", "command_id", e.CommandID, "err", err)
	}
}

// questionBody is the text of a question's notification: the question,
// its choices, how to answer and by when.
func questionBody(e bridge.Event) string {
	body := e.Question
	if len(e.Choices) > 0 {
		body += "\nChoices: " + strings.Join(e.Choices, ", ")
	}
	body += "\nAnswer with your next command, or on the status page"
	if e.Deadline != nil {
		body += ", by " + e.Deadline.Local().Format(time.TimeOnly)
	}
	return body
}

// spokenQuestion is a question as spoken: the question, then its choices.
func spokenQuestion(e bridge.Event) string {
	if len(e.Choices) == 0 {
		return e.Question
	}
	return e.Question + " " + strings.Join(e.Choices, ", or ") + "?"
}

// summary is a notification's title: the command as the person gave it.
func summary(e bridge.Event, what string) string {
	cmd := strings.Join(strings.Fields(e.Command), " ")
	if e.MacroName != "" && e.MacroName != e.Command {
		cmd = e.MacroName
	}
	if r := []rune(cmd); len(r) > 60 {
		cmd = string(r[:59]) + "…"
	}
	out := AppName
	if cmd != "" {
		out += " · " + cmd
	}
	if what != "" {
		out += ": " + what
	}
	return out
}

func failureBody(e bridge.Event) string {
	var parts []string
	if e.Status != "" {
		parts = append(parts, "the run "+e.Outcome())
	}
	if e.Error != "" {
		parts = append(parts, e.Error)
	}
	if t := e.Text(); t != "" {
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		parts = append(parts, "the run failed")
	}
	return clipBody(strings.Join(parts, ": "))
}

func clipBody(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > MaxBody {
		return string(r[:MaxBody-1]) + fmt.Sprintf("…\n(more in `hubgate history`)")
	}
	return s
}
