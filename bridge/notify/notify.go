package notify

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/bridge/control"
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
	// Timeout bounds each desktop call. Zero: DefaultTimeout.
	Timeout time.Duration
	// RetryAfter: after a failed desktop call, notifications go to the
	// log only for this long. Zero: DefaultRetryAfter.
	RetryAfter time.Duration
	Logger     *slog.Logger     // Zero: slog.Default()
	Now        func() time.Time // Zero: time.Now
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
func (s *Service) Run(ctx context.Context, events <-chan control.Event) {
	defer func() {
		if s.opts.Speaker != nil {
			s.opts.Speaker.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-events:
			if !ok {
				return
			}
			s.Handle(ctx, e)
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

func (s *Service) policy(rule string) (string, bool) {
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
func (s *Service) Handle(ctx context.Context, e control.Event) {
	policy, speak := s.policy(e.Rule)
	switch e.Kind {
	case control.EventStarted, control.EventStopOutputs:
		// A new run, or the person asked for silence: stop speaking.
		if s.opts.Speaker != nil {
			s.opts.Speaker.Stop()
		}
		if e.Kind == control.EventStopOutputs {
			s.mu.Lock()
			s.stopOutputs = e.CommandID
			s.mu.Unlock()
		}
	case control.EventFinished:
		switch {
		case e.Failed():
			if policy != rules.NotifyNone {
				s.show(ctx, e, Message{Summary: summary(e, "failed"), Body: failureBody(e), Urgency: UrgencyCritical})
			}
		case e.Status == "completed":
			text := e.Text()
			if policy == rules.NotifyAnswers {
				body := text
				if body == "" {
					body = "(the run completed without an answer)"
				}
				s.show(ctx, e, Message{Summary: summary(e, ""), Body: clipBody(body), Urgency: UrgencyNormal})
			}
			if speak && text != "" {
				s.say(e, text)
			}
		}
	case control.EventDecided:
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
	case control.EventUnrecorded:
		if policy != rules.NotifyNone {
			s.show(ctx, e, Message{Summary: summary(e, "not run"), Body: clipBody(e.Note), Urgency: UrgencyCritical})
		}
	case control.EventQuestion:
		// The agent waits for the person: shown unless the rule's policy
		// is none, spoken when the rule speaks.
		if policy != rules.NotifyNone {
			s.show(ctx, e, Message{Summary: summary(e, "asks"), Body: clipBody(questionBody(e)), Urgency: UrgencyCritical})
		}
		if speak {
			s.say(e, spokenQuestion(e))
		}
	case control.EventLost:
		s.log.Warn("notifications fell behind the bridge; some were not shown (see hubgate history)", "lost_events", e.Lost)
	case control.EventNotify:
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

// show sends m to the desktop within the timeout, or to the log only.
func (s *Service) show(ctx context.Context, e control.Event, m Message) {
	s.log.Info("notification", "command_id", e.CommandID, "kind", e.Kind, "summary", m.Summary, "body", m.Body)
	s.mu.Lock()
	down := s.now().Before(s.downUntil)
	s.mu.Unlock()
	if down {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	err := s.opts.Desktop.Notify(cctx, m)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.sent++
		if s.warned {
			s.warned = false
			s.log.Info("desktop notifications work again")
		}
		return
	}
	s.failed++
	s.downUntil = s.now().Add(s.opts.RetryAfter)
	if !s.warned {
		s.warned = true
		s.log.Warn("desktop notifications are not available; notifications go to the log only", "err", err,
			"retry_after", s.opts.RetryAfter)
		return
	}
	s.log.Debug("desktop notification failed", "err", err)
}

func (s *Service) say(e control.Event, text string) {
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
func questionBody(e control.Event) string {
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
func spokenQuestion(e control.Event) string {
	if len(e.Choices) == 0 {
		return e.Question
	}
	return e.Question + " " + strings.Join(e.Choices, ", or ") + "?"
}

// summary is a notification's title: the command as the person gave it.
func summary(e control.Event, what string) string {
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

func failureBody(e control.Event) string {
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
