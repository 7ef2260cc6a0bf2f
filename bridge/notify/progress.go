package notify

import (
	"context"
	"fmt"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/rules"
)

// DefaultProgressAfter is Options.ProgressAfter's zero value.
const DefaultProgressAfter = 10 * time.Second

// runProgress is the run in flight as its progress notification sees it.
type runProgress struct {
	start bridge.Event // its EventStarted
	// last is its latest step (or, before any, run status) event.
	last *bridge.Event
	// id is the progress notification shown (0: none, or a desktop that
	// does not say); shown says one was shown.
	id    uint32
	shown bool
}

// progressDue says how long until the run in flight passes ProgressAfter.
func (s *Service) progressDue() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run == nil || s.opts.ProgressAfter < 0 {
		return 0, false
	}
	return max(s.run.start.At.Add(s.opts.ProgressAfter).Sub(s.now()), 0), true
}

// progressStep keeps e, a step or status of the run in flight, and
// updates its progress notification.
func (s *Service) progressStep(ctx context.Context, e bridge.Event) {
	s.mu.Lock()
	r := s.run
	if r == nil || r.start.CommandID != e.CommandID {
		s.mu.Unlock()
		return
	}
	if e.Kind == bridge.EventStep || r.last == nil || r.last.Kind != bridge.EventStep {
		r.last = &e
	}
	s.mu.Unlock()
	s.progressTick(ctx)
}

// progressTick shows or updates the progress notification of the run in
// flight once it passed ProgressAfter: in place where the desktop can
// (Replacer), else once.
func (s *Service) progressTick(ctx context.Context) {
	s.mu.Lock()
	r := s.run
	if r == nil || s.opts.ProgressAfter < 0 || s.now().Sub(r.start.At) < s.opts.ProgressAfter {
		s.mu.Unlock()
		return
	}
	_, replaces := s.opts.Desktop.(Replacer)
	if r.shown && !replaces {
		s.mu.Unlock()
		return
	}
	ran := s.now().Sub(r.start.At).Round(time.Second)
	body := "the run has started"
	if r.last != nil {
		last := *r.last
		last.CommandID = 0 // the summary names the command
		body = last.Describe()
	}
	id, e := r.id, r.start
	r.shown = true
	s.mu.Unlock()
	if policy, _ := s.policy(e); policy != rules.NotifyAnswers {
		return
	}
	got := s.send(ctx, e, Message{Summary: summary(e, fmt.Sprintf("running for %s", ran)), Body: clipBody(body), Urgency: UrgencyLow}, id)
	s.mu.Lock()
	if s.run == r && got != 0 {
		r.id = got
	}
	s.mu.Unlock()
}

// progressEnd forgets the run of e, finished, and returns its progress
// notification's id (0: none), for the final notification to replace.
func (s *Service) progressEnd(e bridge.Event) uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.run
	if r == nil || r.start.CommandID != e.CommandID {
		return 0
	}
	s.run = nil
	return r.id
}

// progressStart follows the run e started.
func (s *Service) progressStart(e bridge.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.run = &runProgress{start: e}
}
