package bridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub"
)

// Hub is what the bridge needs of the device-hub connection (hub.Client).
type Hub interface {
	Events() <-chan hub.Event
	Listening() bool
	State() hub.State
	Device() *deviceapi.UserDevice
}

// Automate is what the bridge needs of the Automate server (automate.Client).
type Automate interface {
	RunWithTools(ctx context.Context, req automate.RunRequest, loop automate.ToolLoop) (*automate.RunRecord, error)
	CancelIfActive(ctx context.Context, requestID string, force bool) (automate.CancelResult, error)
	Health(ctx context.Context) (*automate.Health, error)
}

// Journal is what the bridge needs of the run journal (*journal.Journal).
type Journal interface {
	RecordCommand(ctx context.Context, c journal.Command) (id int64, duplicate bool, err error)
	RecordStarted(ctx context.Context, c journal.Command, s journal.RunStart) (id int64, taskID string, duplicate bool, err error)
	SetDecision(ctx context.Context, id int64, decision journal.Decision, note string) error
	RunStarted(ctx context.Context, id int64, taskID string, at time.Time) error
	RunParked(ctx context.Context, id int64, requestID, resumeToken string) error
	RunResumed(ctx context.Context, id int64) error
	RunRefused(ctx context.Context, id int64, note string) error
	RunFinished(ctx context.Context, id int64, o journal.Outcome) error
	Dequeued(ctx context.Context, id int64) error
	Abandon(ctx context.Context, id int64, note string) error
	MarkInterrupted(ctx context.Context, id int64, note string) error
	Recover(ctx context.Context) (journal.Recovery, error)
	History(ctx context.Context, q journal.HistoryQuery) ([]journal.Entry, error)
}

// ShutdownPolicy says what happens to the current run when the daemon stops.
type ShutdownPolicy string

const (
	ShutdownCancel ShutdownPolicy = "cancel" // cancel it explicitly (the default)
	ShutdownLeave  ShutdownPolicy = "leave"  // leave it running on the server
)

// Options configures a Bridge. Zero values are documented per field.
type Options struct {
	Hub      Hub      // required
	Automate Automate // required
	Journal  Journal  // required
	Rules    *rules.Set
	// Device is a record of the paired device read before the hub
	// connects (the REST device of a pairing): its current profile's
	// macros are the first catalogue (FromRESTDevice), until the hub's
	// VerifySelf answer. Zero: none.
	Device *deviceapi.UserDevice
	// Tools executes the client tools hubgate runs itself. Zero: notify
	// only (through Notify), with the command tools of Rules.
	Tools *Tools
	// ChildEnvAllow is ToolsOptions.ChildEnvAllow of the Tools made when
	// Tools is nil. Zero: none.
	ChildEnvAllow []string
	// CancelGrace, StopListeningCancels, OnShutdown, Ask and AskTimeout
	// are the run policies: SetRunPolicies changes them while the bridge
	// runs.
	//
	// CancelGrace is how long a soft cancel may take before it is escalated
	// to a force cancel. Zero: DefaultCancelGrace.
	CancelGrace time.Duration
	// StopListeningCancels cancels the current run when the hub says
	// StopListening. Zero: the run goes on.
	StopListeningCancels bool
	// Listening is what StopListening does to the commands after it.
	// Zero: ListenFollowVendor.
	Listening ListeningPolicy
	// OnShutdown decides the current run's fate when Run's context ends.
	// Zero: ShutdownCancel.
	OnShutdown ShutdownPolicy
	// ReadyPoll is how often /health is polled while a run started
	// elsewhere holds the slot. Zero: 1s.
	ReadyPoll time.Duration
	// Target describes the Automate server for status (mode and endpoint).
	Target AutomateTarget
	// DeviceID is the paired device, for status.
	DeviceID string
	// Notify is bridge.notify, the notify policy of rules that set none,
	// as Explain shows it (SetNotify changes it). Zero: answers.
	Notify string
	// Ask offers ask_person to the runs of rules that do not say (the
	// bridge.ask default). Zero: off.
	Ask bool
	// AskTimeout is how long a question waits for the person before the
	// agent is told nobody answered; below MaxAskTimeout. Zero:
	// DefaultAskTimeout.
	AskTimeout time.Duration
	// EventBuffer is how many events a subscriber may fall behind before
	// it loses events (see Subscribe). Zero: DefaultEventBuffer.
	EventBuffer int
	Logger      *slog.Logger     // Zero: slog.Default()
	Now         func() time.Time // Zero: time.Now
}

// Bridge maps hub events onto runs. Create it with New and call Run.
type Bridge struct {
	opts    Options
	log     *slog.Logger
	now     func() time.Time
	tools   *Tools
	started time.Time
	wake    chan struct{}     // the loop re-examines its queue
	done    chan runDone      // a runner finished
	local   chan localCommand // commands tried on this machine (TryCommand)
	stopped chan struct{}     // closed when Run returns

	mu           sync.Mutex
	current      *runState // the run in flight (or being cancelled)
	queue        []*pending
	set          *rules.Set // Options.Rules with the latest profile's macros (takeDevice)
	catSum       [32]byte   // the sum of the catalogue's macro list (catalogueSum)
	catDevice    string     // the device whose record gave the catalogue ("" before the first)
	waitingReady bool       // a run started elsewhere holds the slot
	// listenWish is the hub's last Start/StopListening request, in event
	// order with the commands (nil until the first one): the hub client
	// confirms a request only after the hub answers its announcement, and
	// a command right behind the request must be judged by the request.
	listenWish  *bool
	listenAsked time.Time // when the hub asked (listenWish)
	counters    Counters
	// toldProfileSize is the size of the last profile over the hub's
	// receive limit that was told (toolarge.go), 0 when none or when a
	// profile was read since (takeDevice).
	toldProfileSize int64
	notifications   []Notification
	recent          []RecentRun // newest first
	asking          *question   // the ask_person question waiting for the person

	events *eventBus
	// policies are the run policies in force (SetRunPolicies changes
	// them; read without b.mu).
	policies atomic.Pointer[RunPolicies]
}

// DefaultCancelGrace is the cancel grace of Options without one.
const DefaultCancelGrace = 10 * time.Second

// RunPolicies are the run policies of Options that a configuration
// reload may change while the bridge runs (SetRunPolicies). Zero values
// as in Options.
type RunPolicies struct {
	CancelGrace          time.Duration
	StopListeningCancels bool
	OnShutdown           ShutdownPolicy
	Ask                  bool
	AskTimeout           time.Duration
}

// normalize fills p's defaults, or says why p is not valid.
func (p RunPolicies) normalize() (RunPolicies, error) {
	if p.CancelGrace <= 0 {
		p.CancelGrace = DefaultCancelGrace
	}
	if p.OnShutdown == "" {
		p.OnShutdown = ShutdownCancel
	}
	if p.AskTimeout <= 0 {
		p.AskTimeout = DefaultAskTimeout
	}
	if p.AskTimeout >= MaxAskTimeout {
		return p, fmt.Errorf("bridge: AskTimeout %s must be below the server's round of %s", p.AskTimeout, MaxAskTimeout)
	}
	return p, nil
}

// SetRunPolicies replaces the run policies (a configuration reload). A
// run in flight keeps whether it was offered ask_person and the shutdown
// policy it started with; the next cancel, question or StopListening
// follows the new ones.
func (b *Bridge) SetRunPolicies(p RunPolicies) error {
	p, err := p.normalize()
	if err != nil {
		return err
	}
	b.policies.Store(&p)
	return nil
}

// policy is the run policies in force.
func (b *Bridge) policy() RunPolicies { return *b.policies.Load() }

// pending is a command waiting for the slot.
type pending struct {
	id       int64
	cmd      rules.Command
	rule     *rules.Rule
	req      automate.RunRequest
	queuedAt time.Time
	// listenNote says the hub had asked to stop listening when it arrived
	// (ListenFollowVendor): kept on its journal row.
	listenNote string
	// notify and speak: see Event.Notify.
	notify string
	speak  bool
}

// outputsOf is what reaches the person of a command that matched rule
// (nil: none) with defaultNotify as bridge.notify (see Event.Notify).
func outputsOf(rule *rules.Rule, defaultNotify string) (notify string, speak bool) {
	if rule != nil {
		notify, speak = rule.Notify(), rule.Speak()
	}
	return cmp.Or(notify, defaultNotify, rules.NotifyAnswers), speak
}

// runState is the run in flight.
type runState struct {
	*pending
	ctx       context.Context
	cancel    context.CancelFunc
	startedAt time.Time

	// known is closed when the run's request id is known or its runner
	// returned (markKnown): a cancel asked before then waits for it.
	known     chan struct{}
	knownOnce sync.Once

	// guarded by Bridge.mu
	requestID       string
	parked          bool
	cancelRequested bool
	escalation      *time.Timer
	steps           []StepInfo // by index
	workflowStatus  string
	// stoppedBy says who asked to cancel the run (the first to ask);
	// cancelAt when, forced whether a force cancel was sent, forcedBy who
	// or what forced it (a --force, the cancel grace running out).
	stoppedBy string
	cancelAt  time.Time
	forced    bool
	forcedBy  string
	// grace is the cancel grace of the first cancel request (its force
	// is due at cancelAt + grace).
	grace time.Duration

	// Fixed when the run starts, so that a reload does not
	// change them under it: whether it is offered ask_person, and
	// whether a shutdown leaves it running (bridge.on_shutdown: leave).
	ask, leave bool
}

// runDone reports a runner's end to the loop.
type runDone struct {
	run  *runState
	busy bool // the server answered 409: no run started
	// finished is the run's EventFinished, published by the loop once the
	// slot is free: whoever sees it may send the next command.
	finished *Event
	// outcome is journaled by the loop as it frees the slot (recordEnd):
	// whoever reads the run as finished in the journal may send the next
	// command too, and it is not refused as busy.
	outcome *journal.Outcome
}

// New returns a bridge for opts.
func New(opts Options) (*Bridge, error) {
	if opts.Hub == nil || opts.Automate == nil || opts.Journal == nil {
		return nil, errors.New("bridge: Hub, Automate and Journal are required")
	}
	if opts.Rules == nil {
		set, err := rules.Compile(nil, nil, rules.UnmatchedSpec{})
		if err != nil {
			return nil, err
		}
		opts.Rules = set
	}
	pol, err := RunPolicies{CancelGrace: opts.CancelGrace, StopListeningCancels: opts.StopListeningCancels, OnShutdown: opts.OnShutdown,
		Ask: opts.Ask, AskTimeout: opts.AskTimeout}.normalize()
	if err != nil {
		return nil, err
	}
	if opts.ReadyPoll <= 0 {
		opts.ReadyPoll = time.Second
	}
	if opts.Listening == "" {
		opts.Listening = ListenFollowVendor
	}
	b := &Bridge{opts: opts, log: opts.Logger, now: opts.Now, tools: opts.Tools,
		wake: make(chan struct{}, 1), done: make(chan runDone, 1), local: make(chan localCommand), stopped: make(chan struct{}), events: newEventBus(opts.EventBuffer, 0)}
	b.policies.Store(&pol)
	if b.log == nil {
		b.log = slog.Default()
	}
	if b.now == nil {
		b.now = time.Now
	}
	if b.tools == nil {
		b.tools = NewTools(ToolsOptions{Rules: opts.Rules, ChildEnvAllow: opts.ChildEnvAllow, Logger: b.log})
	}
	b.tools.onNotify = b.addNotification
	b.set = opts.Rules
	if opts.Device != nil {
		b.takeDevice(opts.Device, FromRESTDevice)
	}
	if d := opts.Hub.Device(); d != nil {
		b.takeDevice(d, "the hub's latest device")
	}
	return b, nil
}

// SetRules replaces the routing rules (with the macro catalogue of the
// latest profile) and the command tools of the tool executor, for the
// commands that arrive from now on: the run in flight and the queued
// commands keep the rule they were matched with. A configuration reload
// (SIGHUP) calls it; the hub connection is not touched.
func (b *Bridge) SetRules(set *rules.Set) {
	if set == nil {
		return
	}
	b.mu.Lock()
	b.opts.Rules = set
	b.set = set.WithCatalog(b.set.Catalog().Macros())
	b.mu.Unlock()
	b.tools.SetRules(set)
}

// Reloaded publishes what a configuration reload did (EventReloaded):
// the changes it applied and the settings that apply only after a
// restart; with refused set, that the reload was refused and why
// (EventReloadRefused).
func (b *Bridge) Reloaded(changes, restart []string, refused error) {
	if refused != nil {
		b.emit(Event{Kind: EventReloadRefused, Error: refused.Error()})
		return
	}
	b.emit(Event{Kind: EventReloaded, Changes: changes, Restart: restart})
}

// Run consumes hub events until ctx ends or the hub's event stream closes.
// It first recovers what the journal holds from an earlier life.
func (b *Bridge) Run(ctx context.Context) error {
	b.mu.Lock()
	b.started = b.now()
	b.mu.Unlock()
	defer close(b.stopped)
	defer b.events.close()
	hubCtx, stopHub := context.WithCancel(ctx)
	hubDone := make(chan struct{})
	go func() {
		defer close(hubDone)
		b.followHub(hubCtx)
	}()
	defer func() {
		stopHub()
		<-hubDone
	}()
	if err := b.recover(ctx); err != nil {
		if ctx.Err() != nil {
			// Stopped while recovering: what was not settled is listed
			// again at the next start.
			return b.shutdown()
		}
		return fmt.Errorf("bridge: recover the journal: %w", err)
	}
	b.kick()
	events := b.opts.Hub.Events()
	for {
		select {
		case <-ctx.Done():
			return b.shutdown()
		case ev, ok := <-events:
			if !ok {
				// The hub stopped on its own: its last state (why: a token
				// of another device) reaches the stream before it closes;
				// its state stream ends right after its events.
				select {
				case <-hubDone:
				case <-time.After(2 * time.Second):
				}
				return b.shutdown()
			}
			b.handleEvent(ctx, ev)
		case d := <-b.done:
			b.runEnded(ctx, d)
		case <-b.wake:
			b.startNext(ctx)
		case lc := <-b.local:
			lc.reply <- b.handleCommand(ctx, lc.ev, lc.origin)
		}
	}
}

// kick asks the loop to look at its queue.
func (b *Bridge) kick() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *Bridge) handleEvent(ctx context.Context, ev hub.Event) {
	switch ev.Kind {
	case hub.KindDeviceCommand:
		b.handleCommand(ctx, ev, "")
	case hub.KindDeviceProfileUpdate:
		b.takeDevice(ev.Device, string(hub.KindDeviceProfileUpdate))
	case hub.KindDeviceRecord:
		b.takeDevice(ev.Device, ev.Target) // VerifySelf, GetLatestDevice
	case hub.KindStopListening:
		b.hubAsked(false)
		if b.policy().StopListeningCancels {
			b.cancelCurrent(ctx, "the hub said StopListening")
		}
	case hub.KindStartListening:
		b.hubAsked(true)
	case hub.KindTooLarge:
		b.handleTooLarge(ctx, ev)
	default:
		b.log.Debug("hub event", "kind", ev.Kind, "seq", ev.Seq)
	}
}

// listening says whether commands are accepted: the hub's last listening
// request in event order, else the hub client's own state (auto-listen).
func (b *Bridge) listening() bool {
	b.mu.Lock()
	wish := b.listenWish
	b.mu.Unlock()
	if wish != nil {
		return *wish
	}
	return b.opts.Hub.Listening()
}

// handleCommand journals a DeviceCommand, with the rule it matches, before
// acting on it; then it decides. origin is "" for the hub's commands, else
// what the journal notes of a local one ("local command: ..."). It returns
// the command's journal id (0 when it could not be journaled, or for a
// duplicate delivery: the first one's).
func (b *Bridge) handleCommand(ctx context.Context, ev hub.Event, origin string) int64 {
	b.mu.Lock()
	set, defaultNotify := b.set, b.opts.Notify
	b.mu.Unlock()
	// Matching and rendering have no side effects: they run first so that
	// the journal row names the rule.
	route := set.Decide(rules.Command{Text: ev.Command, Macro: ev.Macro, Received: ev.Received, Seq: ev.Seq})
	cmd, rule, req := route.Command, route.Rule, route.Request
	notify, speak := outputsOf(rule, defaultNotify)
	stop, refused, routed := route.Action == rules.ActionCancel, route.Action == rules.ActionRefuse, rule != nil
	var renderErr error
	if route.Action == rules.ActionError {
		renderErr = route.Err
	}
	if accept, listenNote := b.listenGate(); !stop && accept {
		if id, answered := b.answerFromHub(ctx, ev, listenNote, defaultNotify); answered {
			return id // the answer to the question of the run in flight, journaled as such
		}
	}
	rec := journal.Command{Seq: ev.Seq, Session: ev.Session, InvocationID: ev.InvocationID, ReceivedAt: ev.Received, Text: ev.Command,
		Decision: journal.DecisionReceived}
	if routed {
		rec.Rule = rule.Name()
	}
	if cmd.Macro != nil {
		rec.MacroID, rec.MacroName = cmd.Macro.ID, cmd.Macro.Name
		if raw, err := json.Marshal(cmd.Macro); err == nil {
			rec.MacroJSON = raw
		}
	}
	accept, listenNote := b.listenGate()
	listenNote = joinNote(origin, listenNote) // every note of the command says it was local
	if accept {
		rec.Note = listenNote // a command acted on while the hub asked to stop
	}
	if !stop && routed && renderErr == nil && accept && b.slotFree() {
		return b.startAtOnce(ctx, rec, &pending{cmd: cmd, rule: rule, req: req, queuedAt: b.now(), listenNote: listenNote,
			notify: notify, speak: speak})
	}
	id, dup, err := b.opts.Journal.RecordCommand(ctx, rec)
	if err != nil {
		// Not journaled means not acted on: nothing may run unrecorded.
		b.unrecorded(rec, err)
		return 0
	}
	if dup {
		b.duplicate(rec, id)
		return id
	}
	b.mu.Lock()
	b.counters.Received++
	b.mu.Unlock()
	ce := Event{Kind: EventReceived, CommandID: id, Command: rec.Text, Rule: rec.Rule, MacroName: rec.MacroName,
		Notify: notify, Speak: speak}
	b.emit(ce)

	switch {
	case stop:
		b.emit(Event{Kind: EventStopOutputs, CommandID: id, Command: rec.Text, MacroName: rec.MacroName})
		note := "StopOutputs: " + b.cancelCurrent(ctx, "StopOutputs macro")
		if n := b.dropQueue(ctx, fmt.Sprintf("StopOutputs: dropped by command %d", id)); n > 0 {
			note += fmt.Sprintf("; %d waiting command(s) dropped", n)
		}
		b.decide(ctx, ce, journal.DecisionIgnored, note)
	case refused:
		b.decide(ctx, ce, journal.DecisionRefused, joinNote(route.Reason(), listenNote))
	case !accept:
		b.decide(ctx, ce, journal.DecisionRefused, listenNote)
	case !routed:
		b.decide(ctx, ce, journal.DecisionIgnored, joinNote("no rule matches", listenNote))
	case renderErr != nil:
		// A *rules.RenderError names its rule (once).
		b.decide(ctx, ce, journal.DecisionFailed, joinNote(renderErr.Error(), listenNote))
	default:
		if req.TaskID == "" {
			req.TaskID = journal.DefaultTaskID(id)
		}
		b.admit(ctx, &pending{id: id, cmd: cmd, rule: rule, req: req, queuedAt: b.now(), listenNote: listenNote,
			notify: notify, speak: speak})
	}
	return id
}

// slotFree says whether a command would start at once: no run in flight,
// none being waited for, none queued.
func (b *Bridge) slotFree() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.current == nil && !b.waitingReady && len(b.queue) == 0
}

// startAtOnce journals a command that starts right away together with its
// run, in one commit, and starts it: the usual path from a hub event to the
// POST. Only the loop takes the slot, so it is still free here.
func (b *Bridge) startAtOnce(ctx context.Context, rec journal.Command, p *pending) int64 {
	startedAt := b.now()
	id, taskID, dup, err := b.opts.Journal.RecordStarted(ctx, rec, journal.RunStart{TaskID: p.req.TaskID, At: startedAt})
	if err != nil {
		// Not journaled means not acted on: nothing may run unrecorded.
		b.unrecorded(rec, err)
		return 0
	}
	if dup {
		b.duplicate(rec, id)
		return id
	}
	b.mu.Lock()
	b.counters.Received++
	b.mu.Unlock()
	p.id, p.req.TaskID = id, taskID
	b.emit(commandEvent(EventReceived, p))
	b.launch(ctx, p, startedAt)
	return id
}

// admit applies the rule's busy policy to a rendered command.
func (b *Bridge) admit(ctx context.Context, p *pending) {
	b.mu.Lock()
	busy := b.current != nil || b.waitingReady || len(b.queue) > 0
	cur := b.current
	b.mu.Unlock()
	if !busy {
		b.start(ctx, p)
		return
	}
	switch p.rule.Busy() {
	case rules.BusyQueue:
		b.enqueue(ctx, p, false)
	case rules.BusyRestart:
		b.supersede(ctx, p)
		b.enqueue(ctx, p, true)
		if cur != nil {
			b.cancelCurrent(ctx, "restart: command "+fmt.Sprint(p.id)+" replaces it")
		}
	default: // single
		what := "the assistant is busy"
		if cur != nil {
			what = fmt.Sprintf("busy with command %d", cur.id)
		}
		b.decide(ctx, commandEvent("", p), journal.DecisionDropped, joinNote(what, p.listenNote))
	}
}

// enqueue puts p in the queue (at its head for restart) within the rule's
// limit.
func (b *Bridge) enqueue(ctx context.Context, p *pending, front bool) {
	b.mu.Lock()
	if len(b.queue) >= p.rule.QueueLimit() {
		n := len(b.queue)
		b.mu.Unlock()
		b.decide(ctx, commandEvent("", p), journal.DecisionDropped, joinNote(fmt.Sprintf("queue full (%d waiting, limit %d)", n, p.rule.QueueLimit()), p.listenNote))
		return
	}
	// The note says why it waits (status's "last queued", history).
	why := "the assistant is busy"
	if b.current != nil {
		why = fmt.Sprintf("busy with command %d", b.current.id)
	}
	if front {
		b.queue = append([]*pending{p}, b.queue...)
		why += "; restart: first in the queue"
	} else {
		b.queue = append(b.queue, p)
		why += fmt.Sprintf("; waits in the queue (%d of at most %d)", len(b.queue), p.rule.QueueLimit())
	}
	b.mu.Unlock()
	b.decide(ctx, commandEvent("", p), journal.DecisionQueued, joinNote(why, p.listenNote))
}

// supersede drops the queued commands of restart rules: they were waiting
// to replace the run in flight, and p replaces it now. Without it a burst
// of restart commands would queue LIFO and every one would run, the
// newest first.
func (b *Bridge) supersede(ctx context.Context, p *pending) {
	b.mu.Lock()
	var gone, kept []*pending
	for _, q := range b.queue {
		if q.rule.Busy() == rules.BusyRestart {
			gone = append(gone, q)
		} else {
			kept = append(kept, q)
		}
	}
	b.queue = kept
	b.mu.Unlock()
	for _, q := range gone {
		b.decide(ctx, commandEvent("", q), journal.DecisionDropped, fmt.Sprintf("restart: superseded by command %d", p.id))
	}
}

// dropQueue drops every waiting command (StopOutputs: the vendor's clients
// reset every held output, and a waiting command is one hubgate holds) and
// says how many.
func (b *Bridge) dropQueue(ctx context.Context, note string) int {
	b.mu.Lock()
	gone := b.queue
	b.queue = nil
	b.mu.Unlock()
	for _, q := range gone {
		b.decide(ctx, commandEvent("", q), journal.DecisionDropped, note)
	}
	return len(gone)
}

// startNext starts the oldest queued command that has not expired, when
// the slot is free.
func (b *Bridge) startNext(ctx context.Context) {
	for {
		b.mu.Lock()
		if b.current != nil || b.waitingReady || len(b.queue) == 0 {
			b.mu.Unlock()
			return
		}
		p := b.queue[0]
		b.queue = b.queue[1:]
		b.mu.Unlock()
		if now := b.now(); p.rule.Expired(p.queuedAt, now) {
			b.abandon(ctx, commandEvent("", p), fmt.Sprintf("expired after %s in the queue (max age %s)", now.Sub(p.queuedAt).Round(time.Second), p.rule.MaxAge()))
			continue
		}
		if err := b.opts.Journal.Dequeued(ctx, p.id); err != nil {
			b.log.Error("journal: dequeue", "command_id", p.id, "err", err)
		}
		b.start(ctx, p)
		return
	}
}

// start hands p to a runner goroutine. The slot must be free.
func (b *Bridge) start(ctx context.Context, p *pending) {
	startedAt := b.now()
	if err := b.opts.Journal.RunStarted(ctx, p.id, p.req.TaskID, startedAt); err != nil {
		b.log.Error("journal: run not recorded as started; not starting it", "command_id", p.id, "err", err)
		b.decide(ctx, commandEvent("", p), journal.DecisionFailed, "journal: "+err.Error())
		return
	}
	b.launch(ctx, p, startedAt)
}

// launch hands p, journaled as started, to a runner goroutine.
func (b *Bridge) launch(ctx context.Context, p *pending, startedAt time.Time) {
	// The run's context is not the loop's: a shutdown decides explicitly
	// what happens to the run (OnShutdown).
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pol := b.policy()
	r := &runState{pending: p, ctx: rctx, cancel: cancel, startedAt: startedAt, known: make(chan struct{}),
		ask: p.rule.Ask(pol.Ask), leave: pol.OnShutdown == ShutdownLeave}
	b.mu.Lock()
	b.current = r
	b.counters.Started++
	b.reasonLocked(countStarted, p.id, p.cmd.Text, "rule "+p.rule.Name())
	b.mu.Unlock()
	// The journal recorded the decision "started" with the run.
	b.log.Info("run started", "command_id", p.id, "rule", p.rule.Name(), "task_id", p.req.TaskID)
	decided := commandEvent(EventDecided, p)
	decided.Decision = journal.DecisionStarted
	b.emit(decided)
	started := commandEvent(EventStarted, p)
	started.TaskID = p.req.TaskID
	b.emit(started)
	go func() {
		d := b.execute(r)
		r.markKnown()
		b.done <- d
	}()
}

// runEnded frees the slot after a runner finished and starts what waits.
func (b *Bridge) runEnded(ctx context.Context, d runDone) {
	b.mu.Lock()
	if b.current == d.run {
		b.current = nil
	}
	if d.run.escalation != nil {
		d.run.escalation.Stop()
	}
	b.mu.Unlock()
	d.run.cancel()
	b.recordEnd(ctx, d)
	if d.finished != nil {
		b.emit(*d.finished)
	}
	if d.busy {
		// 409: a run started elsewhere holds the slot; nothing of ours ran.
		if err := b.opts.Journal.RunRefused(context.WithoutCancel(ctx), d.run.id, "409: the assistant is busy"); err != nil {
			b.log.Error("journal: refused run not recorded", "command_id", d.run.id, "err", err)
		}
		switch d.run.rule.Busy() {
		case rules.BusyQueue, rules.BusyRestart:
			b.mu.Lock()
			b.queue = append([]*pending{d.run.pending}, b.queue...)
			b.mu.Unlock()
			b.decide(ctx, commandEvent("", d.run.pending), journal.DecisionQueued, "the assistant is busy with a run hubgate did not start; waiting for it")
		default:
			b.decide(ctx, commandEvent("", d.run.pending), journal.DecisionDropped, "the assistant is busy with a run hubgate did not start")
		}
		b.waitForReady(ctx)
		return
	}
	b.startNext(ctx)
}

// waitForReady polls /health until the server is ready, then wakes the loop.
func (b *Bridge) waitForReady(ctx context.Context) {
	b.mu.Lock()
	if b.waitingReady {
		b.mu.Unlock()
		return
	}
	b.waitingReady = true
	b.mu.Unlock()
	go func() {
		defer func() {
			b.mu.Lock()
			b.waitingReady = false
			b.mu.Unlock()
			b.kick()
		}()
		t := time.NewTicker(b.opts.ReadyPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			h, err := b.opts.Automate.Health(ctx)
			if err == nil && h.Ready() {
				return
			}
		}
	}()
}

// cancelCurrent asks the current run to stop: soft now, force after the
// grace. why says who or what asked (the finished event's StoppedBy). It
// returns a note for the journal.
func (b *Bridge) cancelCurrent(ctx context.Context, why string) string {
	b.mu.Lock()
	r := b.current
	if r == nil {
		b.mu.Unlock()
		return "nothing to cancel"
	}
	if r.cancelRequested {
		b.mu.Unlock()
		return fmt.Sprintf("cancel of command %d already requested", r.id)
	}
	b.markCancelLocked(r, why)
	grace := r.grace
	r.escalation = time.AfterFunc(grace, func() {
		b.mu.Lock()
		still := b.current == r
		if still && !r.forced {
			r.forced, r.forcedBy = true, fmt.Sprintf("the cancel grace (%s) running out", grace)
		}
		b.mu.Unlock()
		if still {
			b.log.Warn("soft cancel not honoured in time; force cancel", "command_id", r.id, "grace", grace)
			b.sendCancel(r, true)
		}
	})
	b.mu.Unlock()
	b.log.Info("cancel current run", "command_id", r.id, "why", why)
	ce := commandEvent(EventCancelRequested, r.pending)
	ce.Note = why
	b.emit(ce)
	go func() { // off the event loop: it asks /health first
		b.sendCancel(r, false)
		// A question of the run ends now, once the server knows.
		b.withdraw(r, "the run is being cancelled ("+why+")")
	}()
	return fmt.Sprintf("cancel requested for command %d (%s)", r.id, why)
}

// markCancelLocked records the first cancel request of r: who asked and
// when (b.mu is held). The run is counted when it ends: canceled, or
// completed when it finished before the cancel landed (execute).
func (b *Bridge) markCancelLocked(r *runState, why string) {
	r.cancelRequested = true
	r.stoppedBy, r.cancelAt, r.grace = why, b.now(), b.policy().CancelGrace
}

// sendCancel sends a cancel for r while the server runs r: when r's
// request id is known, only while the server's active run is that one;
// before that, while the server is busy at all (a run of someone else would
// have answered r's POST with 409). Right after r started, its POST may not
// have reached the server yet: the cancel then waits for it (up to the
// cancel grace) instead of being lost.
func (b *Bridge) sendCancel(r *runState, force bool) {
	wait := b.policy().CancelGrace
	ctx, cancel := context.WithTimeout(context.Background(), wait+10*time.Second)
	defer cancel()
	grace := time.NewTimer(wait)
	defer grace.Stop()
	for waited := false; ; waited = true {
		b.mu.Lock()
		id, current := r.requestID, b.current == r
		b.mu.Unlock()
		if !current {
			return // it ended meanwhile
		}
		res, err := b.opts.Automate.CancelIfActive(ctx, id, force)
		switch {
		case err != nil && !res.Active:
			b.log.Warn("cancel: health check failed", "command_id", r.id, "err", err)
			return
		case err != nil:
			b.log.Warn("cancel failed", "command_id", r.id, "force", force, "err", err)
			return
		case res.Active:
			return
		}
		if id != "" || waited {
			return // the server no longer runs it
		}
		// Not on the server yet: ask again once its request id is known
		// (or its runner returned), within the grace.
		select {
		case <-r.known:
		case <-grace.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// markKnown wakes a cancel waiting for r's request id: called once the id
// is set, and when r's runner returned (with or without one).
func (r *runState) markKnown() { r.knownOnce.Do(func() { close(r.known) }) }

// Cancel cancels the current run (the control endpoint's cancel): a soft
// cancel escalated after the grace, or a force cancel at once. Who asked
// is CancelSource(ctx) ("hubgate cancel" unless the caller said).
func (b *Bridge) Cancel(ctx context.Context, force bool) (CancelResult, error) {
	source := CancelSource(ctx)
	b.mu.Lock()
	r := b.current
	var requestID string
	if r != nil {
		requestID = r.requestID
	}
	b.mu.Unlock()
	if r == nil {
		return CancelResult{Mode: automate.CancelModeNone, Message: "nothing runs"}, nil
	}
	res := CancelResult{Stopped: true, CommandID: r.id, RequestID: requestID, GraceMs: b.policy().CancelGrace.Milliseconds()}
	b.mu.Lock()
	res.Already = r.cancelRequested
	b.mu.Unlock()
	if force {
		// who is the journal's "stopped by"/"forced by" (journal.StopNote
		// adds "(forced)"); the cancel-requested line says it was a force.
		who, asked := source, source+" (force)"
		if source == CancelSource(context.Background()) {
			who, asked = source+" --force", source+" --force" // as the person typed it
		}
		b.mu.Lock()
		first := !r.cancelRequested
		if first {
			b.markCancelLocked(r, who)
		}
		if !r.forced {
			r.forced, r.forcedBy = true, who
		}
		b.mu.Unlock()
		if first {
			ce := commandEvent(EventCancelRequested, r.pending)
			ce.Note = asked
			b.emit(ce)
		}
		b.sendCancel(r, true)
		b.withdraw(r, "the run is being cancelled (hubgate cancel --force)")
		res.Mode, res.Message = automate.CancelModeTerminate, "force cancel sent"
		return res, nil
	}
	res.Mode, res.Message = automate.CancelModeCancel, b.cancelCurrent(ctx, source)
	b.mu.Lock()
	if r.cancelRequested && !r.forced {
		res.ForceAt = r.cancelAt.Add(r.grace)
	}
	b.mu.Unlock()
	return res, nil
}

// shutdown applies OnShutdown to the current run and waits for its runner.
func (b *Bridge) shutdown() error {
	b.mu.Lock()
	r := b.current
	b.mu.Unlock()
	if r == nil {
		return nil
	}
	if r.leave {
		b.log.Info("shutdown: leaving the current run on the server", "command_id", r.id)
		r.cancel() // stop waiting for it; the client does not cancel (see execute)
		b.ended(<-b.done)
		return nil
	}
	b.log.Info("shutdown: cancelling the current run", "command_id", r.id)
	b.cancelCurrent(context.Background(), "shutdown")
	select {
	case d := <-b.done:
		b.ended(d)
	case <-time.After(b.policy().CancelGrace + 5*time.Second):
		b.log.Warn("shutdown: the run did not end in time", "command_id", r.id)
		r.cancel()
		b.ended(<-b.done)
	}
	return nil
}

// ended journals and publishes the end of a run the shutdown waited for.
func (b *Bridge) ended(d runDone) {
	b.recordEnd(context.Background(), d)
	if d.finished != nil {
		b.emit(*d.finished)
	}
}

// recordEnd journals how d's run ended (nothing for a 409: no run).
func (b *Bridge) recordEnd(ctx context.Context, d runDone) {
	if d.outcome == nil {
		return
	}
	if err := b.opts.Journal.RunFinished(context.WithoutCancel(ctx), d.run.id, *d.outcome); err != nil {
		b.log.Error("journal: run outcome not recorded", "command_id", d.run.id, "err", err)
	}
}

// decide journals a decision about the command of e, counts it and
// publishes it.
func (b *Bridge) decide(ctx context.Context, e Event, d journal.Decision, note string) {
	id := e.CommandID
	if err := b.opts.Journal.SetDecision(context.WithoutCancel(ctx), id, d, note); err != nil {
		b.log.Error("journal: decision not recorded", "command_id", id, "decision", d, "err", err)
	}
	b.mu.Lock()
	b.countDecisionLocked(d, id, e.Command, note)
	b.mu.Unlock()
	if d != journal.DecisionStarted {
		b.log.Info("command decided", "command_id", id, "decision", d, "note", note)
	}
	e.Kind, e.Decision, e.Note = EventDecided, d, note
	b.emit(e)
}

func (b *Bridge) abandon(ctx context.Context, e Event, note string) {
	id := e.CommandID
	if err := b.opts.Journal.Abandon(context.WithoutCancel(ctx), id, note); err != nil {
		b.log.Error("journal: abandon", "command_id", id, "err", err)
	}
	b.mu.Lock()
	b.countDecisionLocked(journal.DecisionAbandoned, id, e.Command, note)
	b.mu.Unlock()
	b.log.Info("command abandoned", "command_id", id, "note", note)
	e.Kind, e.Decision, e.Note = EventDecided, journal.DecisionAbandoned, note
	b.emit(e)
}

// warnAmbiguities logs the ids, phrases and names that several macros of
// the profile share: the catalogue uses the first macro, and the person
// should know why the others never run.
func warnAmbiguities(log *slog.Logger, cat rules.Catalog) {
	for _, a := range cat.Ambiguities() {
		log.Warn("macro catalogue: "+a.String(), "by", a.By, "key", a.Key)
	}
}
