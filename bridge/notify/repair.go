package notify

import (
	"context"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/rules"
)

// This file tells the person that the hub refuses the device: its token
// was disabled, the device was deleted (its token is refused too), or the
// token is another device's (VerifySelf). Until the device is paired again
// the app's commands do not reach this computer, so the person is told
// once per loss (not at each reconnect attempt), shown and, where speech
// is on, spoken; the hub connecting again ends the loss.

// repairSummary is the title of the notification.
const repairSummary = AppName + ": pair this device again"

// hubChanged acts on a hub state change (bridge.EventHub): the first
// state of a loss that needs re-pairing is told; a connection ends the
// loss.
func (s *Service) hubChanged(ctx context.Context, e bridge.Event) {
	h := e.Hub
	if h == nil {
		return
	}
	s.mu.Lock()
	if h.Status == "connected" || h.Status == "listening" {
		s.repairTold = false
	}
	tell := h.NeedsRepair && !s.repairTold
	if tell {
		s.repairTold = true
	}
	def := s.opts.Default
	s.mu.Unlock()
	if !tell {
		return
	}
	body := "The app's commands do not reach this computer: " + bridge.RepairHint + "."
	if h.Reason != "" {
		body = h.Reason + ".\n" + body
	}
	// bridge.notify: none silences it as it silences every notification;
	// status and watch still say it.
	if def != rules.NotifyNone {
		s.show(ctx, e, Message{Summary: repairSummary, Body: clipBody(body), Urgency: UrgencyCritical})
	}
	if s.opts.SpeechOn == nil || !s.opts.SpeechOn() {
		return
	}
	text := "hubgate cannot reach your app: the device must be paired again. Run " + bridge.RepairCommand + "."
	if s.opts.Speaker == nil || h.Status != "stopped" {
		s.say(e, text)
		return
	}
	// The hub stopped (a token of another device): the daemon stops too,
	// and stopping cuts speech off; let it be said first, within a bound.
	done, err := s.opts.Speaker.Say(text)
	if err != nil {
		s.log.Warn("speech failed", "err", err)
		return
	}
	t := time.NewTimer(StopSpeechWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// StopSpeechWait bounds how long the notifier lets the last words be said
// (the device must be paired again) when the hub stopped and the daemon
// stops with it.
const StopSpeechWait = 15 * time.Second
