package bridge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/hub"
)

// DefaultAskTimeout is how long a question of the ask_person tool waits
// for the person: under the Automate server's two-minute round for client
// tool results (after which the server cancels the parked run), so that
// the agent hears "no answer" and finishes the run on its own terms.
const DefaultAskTimeout = 100 * time.Second

// MaxAskTimeout is the Automate server's round for client tool results:
// Options.AskTimeout must be below it.
const MaxAskTimeout = 2 * time.Minute

// question is the ask_person call the run in flight waits on (Bridge.asking).
type question struct {
	commandID int64
	rule      *rules.Rule
	asked     rules.Question
	deadline  time.Time
	answer    chan reply // buffered: whoever takes the question sends once
}

// reply is an answer to a question and how it came.
type reply struct {
	text, via string
	// withdrawn: the run is being cancelled; the server has dropped the
	// parked run, so the round is given up instead of resumed.
	withdrawn bool
}

// errWithdrawn gives up a round whose question the cancel withdrew.
var errWithdrawn = errors.New("the run was cancelled while it waited for the person's answer")

// askAllowed says whether r's run is offered ask_person (its rule's
// ask:, else bridge.ask as the run started).
func (b *Bridge) askAllowed(r *runState) bool { return r.ask }

// withAskTool is the request of r as it is sent: with the ask_person
// tool declared when r's rule allows it (rules.Rule.WithAskTool, which
// `rules test` shows too). r.ask is the rule's decision with bridge.ask
// as the run started; as the default it keeps that decision.
func (b *Bridge) withAskTool(r *runState) automate.RunRequest {
	p := r.pending
	req, full := p.rule.WithAskTool(p.req, r.ask)
	if full {
		// The server would refuse the whole run: it runs without asking.
		b.log.Warn("the rule lists the most client tools a run may declare; ask_person not offered", "rule", p.rule.Name(),
			"max", automate.MaxClientTools)
	}
	return req
}

// executeCalls answers one parked round of r: ask_person calls (when r's
// rule allows them) by asking the person, one after the other, the other
// calls by the tool executor, in parallel with the questions.
// It fails (the round is given up) only when a cancel withdrew a question.
func (b *Bridge) executeCalls(ctx context.Context, r *runState, calls []automate.ToolCall) ([]automate.ToolResult, error) {
	if !b.askAllowed(r) || !slices.ContainsFunc(calls, isAsk) {
		return b.tools.Execute(ctx, calls), nil
	}
	results := make([]automate.ToolResult, len(calls))
	var others []automate.ToolCall
	var at []int
	for i, c := range calls {
		if !isAsk(c) {
			others, at = append(others, c), append(at, i)
		}
	}
	done := make(chan []automate.ToolResult, 1)
	go func() { done <- b.tools.Execute(ctx, others) }()
	var err error
	for i, c := range calls {
		if isAsk(c) && err == nil {
			results[i], err = b.ask(ctx, r, c)
		}
	}
	for j, res := range <-done {
		results[at[j]] = res
	}
	return results, err
}

func isAsk(c automate.ToolCall) bool { return c.Name == rules.AskPersonToolName }

// ask publishes the question of an ask_person call and waits for the
// person's answer (Answer, or a hub command: answerFromHub), for
// Options.AskTimeout at most, on the bridge's clock. No answer in time is
// a result too: the agent reads that the person did not answer.
func (b *Bridge) ask(ctx context.Context, r *runState, c automate.ToolCall) (automate.ToolResult, error) {
	parsed, err := rules.ParseAsk(c.Arguments)
	if err != nil {
		return automate.ToolResult{ID: c.ID, Error: err.Error()}, nil
	}
	timeout := b.policy().AskTimeout
	deadline := b.now().Add(timeout)
	q := &question{commandID: r.id, rule: r.rule, asked: parsed, deadline: deadline, answer: make(chan reply, 1)}
	b.mu.Lock()
	if b.asking != nil {
		b.mu.Unlock()
		return automate.ToolResult{ID: c.ID, Error: "ask_person: another question is pending; ask one question at a time"}, nil
	}
	b.asking = q
	b.mu.Unlock()
	ev := commandEvent(EventQuestion, r.pending)
	ev.Question, ev.Choices, ev.Deadline = parsed.Question, parsed.Choices, &deadline
	b.log.Info("the agent asks the person", "command_id", r.id, "call_id", c.ID, "timeout", timeout)
	b.emit(ev)

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var got reply
	select {
	case got = <-q.answer:
	case <-timer.C:
		got = b.giveUp(q, fmt.Sprintf("the person did not answer within %d s", int(timeout.Round(time.Second)/time.Second)))
	case <-ctx.Done():
		got = b.giveUp(q, "the run ended: "+context.Cause(ctx).Error())
	}
	ans := commandEvent(EventAnswered, r.pending)
	ans.Reply, ans.Note = got.text, got.via
	b.emit(ans)
	if got.withdrawn {
		return automate.ToolResult{}, errWithdrawn
	}
	if got.text == "" {
		b.log.Info("question not answered", "command_id", r.id, "call_id", c.ID, "why", got.via)
		return automate.TextResult(c.ID, automate.AskPersonNoAnswer+got.via+"."), nil
	}
	b.log.Info("question answered", "command_id", r.id, "call_id", c.ID, "via", got.via)
	return automate.TextResult(c.ID, got.text), nil
}

// giveUp withdraws q unless an answer took it first, and returns that
// answer, or none with why.
func (b *Bridge) giveUp(q *question, why string) reply {
	b.mu.Lock()
	mine := b.asking == q
	if mine {
		b.asking = nil
	}
	b.mu.Unlock()
	if !mine {
		return <-q.answer // taken: its answer is in the buffer (or on its way)
	}
	return reply{via: why}
}

// take removes the pending question, if any (want, when not nil, only
// that one), so that exactly one answer reaches it.
func (b *Bridge) take(want *question) *question {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.asking
	if q == nil || (want != nil && q != want) {
		return nil
	}
	b.asking = nil
	return q
}

// withdraw ends the pending question of r's run without an answer (the
// run is being cancelled), so that the tool round ends now.
func (b *Bridge) withdraw(r *runState, why string) {
	b.mu.Lock()
	q := b.asking
	if q == nil || q.commandID != r.id {
		b.mu.Unlock()
		return
	}
	b.asking = nil
	b.mu.Unlock()
	q.answer <- reply{via: why, withdrawn: true}
}

// Answer answers the pending question with text (the status page's answer
// box, `via` saying so). Without a pending question nothing happens and
// the result says so.
func (b *Bridge) Answer(_ context.Context, text, via string) (AnswerResult, error) {
	if text == "" {
		return AnswerResult{Message: "an answer needs some text"}, nil
	}
	q := b.take(nil)
	if q == nil {
		return AnswerResult{Message: "no question is waiting for an answer"}, nil
	}
	q.answer <- reply{text: text, via: via}
	return AnswerResult{Answered: true, CommandID: q.commandID, Message: fmt.Sprintf("answered the question of command %d", q.commandID)}, nil
}

// answerFromHub makes a hub command the answer to the pending question
// when one is pending and its rule's answers: accepts the text. The
// command gets its one journal row, decided answer, and is not routed. It
// reports whether it handled the command (answered, or journaled why
// not); false: route it as usual. listenNote (the hub had asked to stop
// listening) is kept on its row, as on every command acted on;
// defaultNotify is bridge.notify when it arrived (Event.Notify).
func (b *Bridge) answerFromHub(ctx context.Context, ev hub.Event, listenNote, defaultNotify string) (id int64, answered bool) {
	b.mu.Lock()
	q := b.asking
	b.mu.Unlock()
	if q == nil || ev.Command == "" || !q.rule.Answers(ev.Command) {
		return 0, false
	}
	note := fmt.Sprintf("the answer to the question of command %d", q.commandID)
	rec := journal.Command{Seq: ev.Seq, Session: ev.Session, InvocationID: ev.InvocationID, ReceivedAt: ev.Received,
		Text: ev.Command, Rule: q.rule.Name(), Decision: journal.DecisionAnswer, Note: joinNote(note, listenNote)}
	if ev.Macro != nil {
		rec.MacroID, rec.MacroName = ev.Macro.ID, ev.Macro.Name
	}
	id, dup, err := b.opts.Journal.RecordCommand(ctx, rec)
	switch {
	case err != nil:
		// Not recorded, not used: the question stays open.
		b.unrecorded(rec, err)
		return 0, true
	case dup:
		b.duplicate(rec, id)
		return id, true
	}
	b.mu.Lock()
	b.counters.Received++
	b.mu.Unlock()
	received := Event{Kind: EventReceived, CommandID: id, Command: rec.Text, Rule: rec.Rule, MacroName: rec.MacroName}
	received.Notify, received.Speak = outputsOf(q.rule, defaultNotify)
	b.emit(received)
	if b.take(q) == nil {
		// The question closed (no answer in time) while the command was
		// being recorded.
		b.decide(ctx, received, journal.DecisionIgnored, fmt.Sprintf("meant as an answer, but the question of command %d was no longer waiting", q.commandID))
		return id, true
	}
	b.mu.Lock()
	b.counters.Answers++
	b.reasonLocked(string(journal.DecisionAnswer), id, rec.Text, rec.Note)
	b.mu.Unlock()
	b.log.Info("command decided", "command_id", id, "decision", journal.DecisionAnswer, "note", rec.Note)
	decided := received
	decided.Kind, decided.Decision, decided.Note = EventDecided, journal.DecisionAnswer, rec.Note
	b.emit(decided)
	q.answer <- reply{text: ev.Command, via: fmt.Sprintf("hub command #%d", id)}
	return id, true
}
