package bridge

import (
	"context"
	"errors"
	"strings"

	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/hub"
)

// localCommand is a command tried on this machine, for the loop.
type localCommand struct {
	ev     hub.Event
	origin string     // the journal's note: "local command: tried on the status page"
	reply  chan int64 // the command's journal id (0: not journaled)
}

// MaxLocalCommand bounds the text of a command tried locally (bytes).
const MaxLocalCommand = 4096

// ErrNotRunning: the bridge's loop has stopped (Run returned): a local
// command is not handled, nor journaled. Before Run starts, TryCommand
// waits for it (or for ctx).
var ErrNotRunning = errors.New("bridge: not running")

// TryCommand routes text as a DeviceCommand from the hub without a macro
// (the rules, the listening policy, the busy policy, the journal: all as
// for the hub's commands), on the bridge's loop, in order with them. from
// says where it was tried ("the status page"); the journal row's note
// says "local command: tried on <from>", so history tells it from the
// hub's. It returns the command's journal id; 0 with a nil error when the
// journal could not record it (the event stream says why, as for the
// hub's).
func (b *Bridge) TryCommand(ctx context.Context, text, from string) (int64, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return 0, errors.New("the command is empty")
	case len(text) > MaxLocalCommand:
		return 0, errors.New("the command is too long")
	}
	lc := localCommand{ev: hub.Event{Kind: hub.KindDeviceCommand, Command: text, Received: b.now()},
		origin: "local command: tried on " + from, reply: make(chan int64, 1)}
	select {
	case b.local <- lc:
	case <-b.stopped:
		return 0, ErrNotRunning
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	// The loop answers every command it took.
	return <-lc.reply, nil
}

// ExplainCommand is what `hubgate rules test` shows of text, with the
// daemon's rules, the latest profile's macros and the paired device's
// type, and its text form.
func (b *Bridge) ExplainCommand(text string) (rules.Explanation, string) {
	b.mu.Lock()
	set, notify := b.set, b.opts.Notify
	b.mu.Unlock()
	res := set.Explain(rules.Command{Text: text, Received: b.now()}, rules.Defaults{Notify: notify, Ask: b.policy().Ask})
	var sb strings.Builder
	res.WriteText(&sb)
	return res, sb.String()
}

// Rules are the routing rules in words (rules.Rule.Describe), in the
// order they are tried.
func (b *Bridge) Rules() []string {
	b.mu.Lock()
	set := b.set
	b.mu.Unlock()
	var out []string
	for _, r := range set.Rules() {
		out = append(out, r.Describe())
	}
	return out
}

// SetNotify changes bridge.notify as ExplainCommand shows it (a reload).
func (b *Bridge) SetNotify(policy string) {
	b.mu.Lock()
	b.opts.Notify = policy
	b.mu.Unlock()
}
