package bridge

import (
	"fmt"
	"time"
)

// ListeningPolicy says what the hub's StopListening does to the commands
// that arrive after it (bridge.listening).
type ListeningPolicy string

// Listening policies.
const (
	// ListenFollowVendor acts on every command, as the vendor's own
	// clients do (none of them acts on StopListening): the request is
	// answered (DeviceStoppedListening), shown in status, watch and the
	// status page, and noted on the commands that arrive while it holds.
	ListenFollowVendor ListeningPolicy = "follow-vendor"
	// ListenObey refuses the commands that arrive after StopListening
	// until StartListening; each refusal tells the person how to resume.
	ListenObey ListeningPolicy = "obey"
)

// ListeningPolicies lists the policies (the configuration's choices).
var ListeningPolicies = []ListeningPolicy{ListenFollowVendor, ListenObey}

// SetListening replaces the listening policy for the commands that arrive
// from now on (a configuration reload); "" is ListenFollowVendor.
func (b *Bridge) SetListening(p ListeningPolicy) {
	if p == "" {
		p = ListenFollowVendor
	}
	b.mu.Lock()
	b.opts.Listening = p
	b.mu.Unlock()
}

// hubAsked records a StartListening (on) or StopListening of the hub and
// publishes it, with what it does to commands under the policy.
func (b *Bridge) hubAsked(on bool) {
	b.mu.Lock()
	b.listenWish = &on
	b.listenAsked = b.now()
	policy := b.opts.Listening
	b.mu.Unlock()
	note := "commands run"
	switch {
	case !on && policy == ListenObey:
		note = "commands are refused until the hub says StartListening (bridge.listening: obey)"
	case !on:
		note = "commands still run, as in the vendor's own clients (bridge.listening: follow-vendor; obey refuses them)"
	}
	msg := "hub: start listening"
	if !on {
		msg = "hub: stop listening"
	}
	b.log.Info(msg, "policy", policy)
	b.emit(Event{Kind: EventListening, Listening: &on, Note: note})
}

// listenGate decides whether a command that arrives now is acted on. It
// returns the note a refused command is journaled with (telling the
// person how to resume), or, for a command acted on while the hub's
// last request was StopListening, the note recorded with it.
func (b *Bridge) listenGate() (accept bool, note string) {
	b.mu.Lock()
	policy, wish, at := b.opts.Listening, b.listenWish, b.listenAsked
	b.mu.Unlock()
	stopped := wish != nil && !*wish
	if policy != ListenObey {
		if stopped {
			return true, fmt.Sprintf("the hub had asked to stop listening (%s); acted on anyway, as the vendor's clients do", at.Local().Format(time.TimeOnly))
		}
		return true, ""
	}
	if b.listening() {
		return true, ""
	}
	const resume = "to resume, start listening on this device in the app (the hub then sends StartListening), " +
		"or set bridge.listening: follow-vendor and reload (hubgate run reloads on SIGHUP)"
	if stopped {
		return false, fmt.Sprintf("the hub asked to stop listening (%s) and bridge.listening is obey; %s", at.Local().Format(time.TimeOnly), resume)
	}
	return false, "the device is not listening and bridge.listening is obey; " + resume
}

// accepting says whether a command that arrived now would be acted on.
func (b *Bridge) accepting() bool {
	ok, _ := b.listenGate()
	return ok
}

// joinNote adds the listening note to a decision's note.
func joinNote(note, listen string) string {
	switch {
	case listen == "":
		return note
	case note == "":
		return listen
	}
	return note + "; " + listen
}
