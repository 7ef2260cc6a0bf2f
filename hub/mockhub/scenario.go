package mockhub

// Scenarios: a developer's CI test of their own device client, written
// as YAML, played against a running mock through its admin API, judged
// on the mock's journal.
//
// A scenario file:
//
//	name: listens and takes a command    # optional
//	device: 3f2b8c1e-...                 # optional: the device to play against
//	within: 10s                          # optional: the default deadline of an expectation
//	steps:
//	  - expect: {connected: true, within: 30s}
//	  - expect: {invoke: VerifySelf}
//	  - push: {startListening: true}
//	  - expect: {invoke: DeviceStartedListening, within: 5s}
//	  - push: {macroName: Space}          # or command, macro, profile, settings, stopListening
//	  - expect: {invoke: DeviceCommandResult, args: [{ok: true}]}
//	  - fault: {drop: true}               # the body of POST /mock/faults
//	  - expect: {reconnect: true, within: 30s}
//	  - wait: 2s
//	  - expect: {listening: true, for: 3s}
//
// Each step has exactly one of push, fault, wait and expect. Steps run in
// order; an expectation is met by journal entries after a cursor: the
// play's start, moved to the entry that met the previous expectation and
// to the journal's end before each push and fault (so an expectation
// after a push is met only by what followed the push). The expectations:
//
//   - invoke: METHOD: the device invokes the hub method (case-insensitive)
//     within the deadline; args, a JSON array, must match the call's
//     arguments: an object matches an object that has at least its
//     members (recursively), an array the array of as many matching
//     elements, any other value an equal one.
//   - connected: the device has a hub connection now, or opens one within
//     the deadline.
//   - reconnect: the device opens a new hub connection within the deadline.
//   - listening with for: the device is listening when the step begins and
//     neither invokes DeviceStoppedListening nor loses its hub connection
//     for that long.
//
// The device is the scenario's device, else the player's
// (PlayConfig.Device), else the only device with a hub connection when the
// play begins, else the first device to connect after it. The play waits
// on the journal's stream (no polling); waits and deadlines run on the
// player's clock (PlayConfig.After), not the mock's Config.Now.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hubgate/hubgate/deviceapi"
)

// DefaultWithin is an expectation's deadline when neither the step nor
// the scenario gives one.
const DefaultWithin = 10 * time.Second

// Scenario is a parsed scenario file.
type Scenario struct {
	Name   string   `json:"name,omitempty"`
	Device string   `json:"device,omitempty"`
	Within Duration `json:"within,omitempty"`
	Steps  []Step   `json:"steps"`
}

// Step is one step: exactly one of Push, Fault, Wait and Expect.
type Step struct {
	Line   int          `json:"-"` // its line in the file (0: not from a file)
	Push   *PushStep    `json:"push,omitempty"`
	Fault  *Faults      `json:"fault,omitempty"`
	Wait   *Duration    `json:"wait,omitempty"`
	Expect *Expectation `json:"expect,omitempty"`
}

// PushStep pushes one thing to the device: a DeviceCommand (Command,
// Macro, MacroName, as POST /mock/devices/{id}/command), a profile,
// settings, or StartListening/StopListening.
type PushStep struct {
	Command        string           `json:"command,omitempty"`
	Macro          *deviceapi.Macro `json:"macro,omitempty"`
	MacroName      string           `json:"macroName,omitempty"`
	Profile        json.RawMessage  `json:"profile,omitempty"`
	Settings       json.RawMessage  `json:"settings,omitempty"`
	StartListening bool             `json:"startListening,omitempty"`
	StopListening  bool             `json:"stopListening,omitempty"`
}

// Expectation is what an expect step waits for (see the file's doc).
type Expectation struct {
	Invoke    string          `json:"invoke,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Connected bool            `json:"connected,omitempty"`
	Reconnect bool            `json:"reconnect,omitempty"`
	Listening bool            `json:"listening,omitempty"`
	Within    *Duration       `json:"within,omitempty"`
	For       *Duration       `json:"for,omitempty"`
}

// ErrBadScenario is a scenario file that cannot be played.
var ErrBadScenario = errors.New("mockhub: bad scenario")

// ParseScenario reads a scenario from YAML (JSON is YAML too). Each
// step's members are those of the admin API's JSON bodies.
func ParseScenario(b []byte) (*Scenario, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadScenario, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: the file is not a mapping with steps", ErrBadScenario)
	}
	root := doc.Content[0]
	var sc Scenario
	var stepsNode *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "name", "device":
			if v.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%w: line %d: %s is a string", ErrBadScenario, v.Line, k.Value)
			}
			if k.Value == "name" {
				sc.Name = v.Value
			} else {
				sc.Device = v.Value
			}
		case "within":
			if err := nodeJSON(v, &sc.Within); err != nil {
				return nil, fmt.Errorf("%w: line %d: within: %v", ErrBadScenario, v.Line, err)
			}
		case "steps":
			stepsNode = v
		default:
			return nil, fmt.Errorf("%w: line %d: unknown member %q (name, device, within, steps)", ErrBadScenario, k.Line, k.Value)
		}
	}
	if stepsNode == nil || stepsNode.Kind != yaml.SequenceNode || len(stepsNode.Content) == 0 {
		return nil, fmt.Errorf("%w: no steps", ErrBadScenario)
	}
	for _, n := range stepsNode.Content {
		var st Step
		if err := nodeJSON(n, &st); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrBadScenario, n.Line, err)
		}
		st.Line = n.Line
		if err := st.check(); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrBadScenario, n.Line, err)
		}
		sc.Steps = append(sc.Steps, st)
	}
	return &sc, nil
}

// nodeJSON decodes a YAML node through JSON into v, strictly, so that a
// step's members are the admin API's JSON members with their own types.
func nodeJSON(n *yaml.Node, v any) error {
	var x any
	if err := n.Decode(&x); err != nil {
		return err
	}
	b, err := json.Marshal(x)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (st *Step) check() error {
	n := 0
	for _, set := range []bool{st.Push != nil, st.Fault != nil, st.Wait != nil, st.Expect != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("a step has exactly one of push, fault, wait and expect")
	}
	if p := st.Push; p != nil {
		kinds := 0
		for _, set := range []bool{p.Command != "" || p.Macro != nil || p.MacroName != "", p.Profile != nil, p.Settings != nil, p.StartListening, p.StopListening} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return errors.New("a push is one of: command/macro/macroName, profile, settings, startListening, stopListening")
		}
	}
	if e := st.Expect; e != nil {
		kinds := 0
		for _, set := range []bool{e.Invoke != "", e.Connected, e.Reconnect, e.Listening} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return errors.New("an expectation is one of: invoke, connected, reconnect, listening")
		}
		if e.Listening && e.For == nil {
			return errors.New("listening needs for: how long the device must stay listening")
		}
		if e.Args != nil && (e.Invoke == "" || !bytes.HasPrefix(bytes.TrimSpace(e.Args), []byte("["))) {
			return errors.New("args go with invoke and are a list (the call's arguments)")
		}
	}
	return nil
}

// String says what the expectation waits for, as a report names it.
func (e *Expectation) String() string {
	switch {
	case e.Invoke != "" && e.Args != nil:
		return fmt.Sprintf("the device invokes %s with arguments matching %s", e.Invoke, e.Args)
	case e.Invoke != "":
		return "the device invokes " + e.Invoke
	case e.Connected:
		return "the device has a hub connection"
	case e.Reconnect:
		return "the device opens a new hub connection"
	default:
		return fmt.Sprintf("the device stays listening for %s", time.Duration(*e.For))
	}
}

// ScenarioFailure is an expectation that did not hold: the step, what it
// expected and what the journal showed instead.
type ScenarioFailure struct {
	Step     int     `json:"step"`     // 1-based
	Line     int     `json:"line"`     // in the file
	Expected string  `json:"expected"` // Expectation.String
	Why      string  `json:"why"`      // "not within 5s", "it was not listening when the step began"
	Saw      []Event `json:"saw"`      // the device's entries meanwhile (the last 20)
	// Before are the device's last entries before the step (up to 5),
	// when nothing came meanwhile.
	Before []Event `json:"before,omitempty"`
}

func (f *ScenarioFailure) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d (line %d) failed: expected %s; %s", f.Step, f.Line, f.Expected, f.Why)
	if len(f.Saw) == 0 {
		b.WriteString("\nthe journal showed nothing of the device meanwhile")
		if len(f.Before) > 0 {
			b.WriteString("; before the step it showed:")
			for _, e := range f.Before {
				b.WriteString("\n  " + journalLine(e))
			}
		}
	} else {
		b.WriteString("\nthe journal showed instead:")
		for _, e := range f.Saw {
			b.WriteString("\n  " + journalLine(e))
		}
	}
	return b.String()
}

// journalLine is one entry in a report.
func journalLine(e Event) string {
	s := fmt.Sprintf("#%d %s %s %s", e.Seq, e.Source, e.Direction, e.Action)
	if len(e.Payload) > 0 {
		s += " " + string(e.Payload)
	}
	if e.Status != 0 {
		s += fmt.Sprintf(" -> %d", e.Status)
	}
	if e.Error != "" {
		s += " error: " + e.Error
	}
	return s
}

// maxSaw bounds the entries a failure report shows.
const maxSaw = 20

// PlayConfig configures Play.
type PlayConfig struct {
	// Admin is the running mock's admin API.
	Admin *AdminClient
	// Device is the device to play against when the scenario names none.
	// Zero: see the file's doc.
	Device string
	// After is the player's clock for waits and deadlines. Zero: time.After.
	After func(time.Duration) <-chan time.Time
	// Progress, when set, hears one line per step as it completes.
	Progress func(line string)
	// Started, when set, is called once the play knows where the journal
	// stands: what happens from then on counts.
	Started func()
}

// Play runs the scenario against cfg.Admin's mock. It returns nil when
// every expectation held, a *ScenarioFailure for the first that did not,
// or another error (the admin API failed, a push was refused).
func Play(ctx context.Context, sc *Scenario, cfg PlayConfig) error {
	if cfg.After == nil {
		cfg.After = time.After
	}
	within := time.Duration(sc.Within)
	if within == 0 {
		within = DefaultWithin
	}
	start, err := cfg.Admin.Journal(ctx, math.MaxInt64, "", 0)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := newFollower()
	go func() {
		f.stop(cfg.Admin.FollowJournal(ctx, start.Last, "", func(e Event) error { f.add(e); return nil }, nil))
	}()
	if cfg.Started != nil {
		cfg.Started()
	}

	p := &player{cfg: cfg, f: f, cursor: start.Last, device: cmp.Or(sc.Device, cfg.Device)}
	if p.device == "" {
		devs, err := cfg.Admin.Devices(ctx)
		if err != nil {
			return err
		}
		var connected []string
		for _, d := range devs {
			if d.Connected {
				connected = append(connected, d.Device.ID)
			}
		}
		if len(connected) == 1 {
			p.device = connected[0]
		}
	}
	for i, st := range sc.Steps {
		p.step, p.line = i+1, st.Line
		var err error
		var what string
		switch {
		case st.Wait != nil:
			what = "wait " + time.Duration(*st.Wait).String()
			select {
			case <-cfg.After(time.Duration(*st.Wait)):
			case <-ctx.Done():
				err = ctx.Err()
			}
		case st.Fault != nil:
			what = "fault"
			if err = p.toJournalEnd(ctx); err == nil {
				_, err = cfg.Admin.Faults(ctx, *st.Fault)
			}
		case st.Push != nil:
			what, err = p.push(ctx, st.Push)
		case st.Expect != nil:
			what = "expect " + st.Expect.String()
			d := within
			if st.Expect.Within != nil {
				d = time.Duration(*st.Expect.Within)
			}
			err = p.expect(ctx, st.Expect, d)
		}
		if err != nil {
			var sf *ScenarioFailure
			if !errors.As(err, &sf) {
				err = fmt.Errorf("step %d (line %d): %w", i+1, st.Line, err)
			}
			return err
		}
		if cfg.Progress != nil {
			cfg.Progress(fmt.Sprintf("ok   step %d (line %d): %s", i+1, st.Line, what))
		}
	}
	return nil
}

type player struct {
	cfg          PlayConfig
	f            *follower
	cursor       int64
	device       string
	step, line   int
	lastConnSeen string
}

// journalEnd is the journal's last sequence number now, as the mock
// says it (the stream may not have delivered it yet).
func (p *player) journalEnd(ctx context.Context) (int64, error) {
	page, err := p.cfg.Admin.Journal(ctx, math.MaxInt64, "", 0)
	return page.Last, err
}

// toJournalEnd moves the cursor to the journal's end: what an expectation
// after a push or a fault sees followed it.
func (p *player) toJournalEnd(ctx context.Context) error {
	last, err := p.journalEnd(ctx)
	p.cursor = max(p.cursor, last)
	return err
}

// needDevice waits for the first device to connect when none is known.
func (p *player) needDevice(ctx context.Context, d time.Duration) error {
	if p.device != "" {
		return nil
	}
	e, saw, err := p.f.wait(ctx, p.cursor, p.cfg.After(d), func(e Event) bool { return isConnected(e, "") })
	if err != nil {
		return err
	}
	if e == nil {
		return p.fail("a device connects", fmt.Sprintf("none connected within %s", d), saw)
	}
	p.device = e.DeviceID
	return nil
}

func (p *player) push(ctx context.Context, ps *PushStep) (string, error) {
	if err := p.needDevice(ctx, DefaultWithin); err != nil {
		return "", err
	}
	if err := p.toJournalEnd(ctx); err != nil {
		return "", err
	}
	a, dev := p.cfg.Admin, p.device
	var err error
	var what string
	switch {
	case ps.Profile != nil:
		what = "push profile"
		_, err = a.Profile(ctx, dev, ps.Profile)
	case ps.Settings != nil:
		what = "push settings"
		_, err = a.Settings(ctx, dev, ps.Settings)
	case ps.StartListening:
		what = "push StartListening"
		_, err = a.StartListening(ctx, dev)
	case ps.StopListening:
		what = "push StopListening"
		_, err = a.StopListening(ctx, dev)
	default:
		what = "push DeviceCommand " + cmp.Or(ps.MacroName, ps.Command)
		_, err = a.Send(ctx, dev, CommandRequest{Command: ps.Command, Macro: ps.Macro, MacroName: ps.MacroName})
	}
	return what, err
}

func (p *player) expect(ctx context.Context, e *Expectation, within time.Duration) error {
	if err := p.needDevice(ctx, within); err != nil {
		return err
	}
	var want []any
	if e.Args != nil {
		if err := json.Unmarshal(e.Args, &want); err != nil {
			return fmt.Errorf("args: %w", err)
		}
	}
	switch {
	case e.Listening:
		return p.stayListening(ctx, e, time.Duration(*e.For))
	case e.Connected:
		devs, err := p.cfg.Admin.Devices(ctx)
		if err != nil {
			return err
		}
		for _, d := range devs {
			if d.Device.ID == p.device && d.Connected {
				return nil
			}
		}
	}
	match := func(ev Event) bool {
		switch {
		case e.Invoke != "":
			if ev.DeviceID != p.device || ev.Source != SourceHub || ev.Direction != DirectionIn || !strings.EqualFold(ev.Action, e.Invoke) || ev.Error != "" {
				return false
			}
			if want == nil {
				return true
			}
			var got any
			return json.Unmarshal(ev.Payload, &got) == nil && jsonMatches(want, got)
		default: // connected, reconnect
			return isConnected(ev, p.device)
		}
	}
	got, saw, err := p.f.wait(ctx, p.cursor, p.cfg.After(within), match)
	if err != nil {
		return err
	}
	if got == nil {
		return p.fail(e.String(), fmt.Sprintf("not within %s", within), p.ofDevice(saw))
	}
	p.cursor = got.Seq
	return nil
}

// stayListening checks the device listens now and keeps listening and
// connected for d.
func (p *player) stayListening(ctx context.Context, e *Expectation, d time.Duration) error {
	from, err := p.journalEnd(ctx)
	if err != nil {
		return err
	}
	devs, err := p.cfg.Admin.Devices(ctx)
	if err != nil {
		return err
	}
	listening := false
	for _, dv := range devs {
		if dv.Device.ID == p.device {
			listening = dv.Connected && dv.Device.IsListening
		}
	}
	if !listening {
		return p.fail(e.String(), "it was not listening when the step began", p.ofDevice(p.f.after(p.cursor)))
	}
	bad, saw, err := p.f.wait(ctx, from, p.cfg.After(d), func(ev Event) bool {
		return ev.DeviceID == p.device && ev.Source == SourceHub &&
			((ev.Direction == DirectionIn && strings.EqualFold(ev.Action, "DeviceStoppedListening")) || ev.Action == "disconnected")
	})
	if err != nil {
		return err
	}
	if bad != nil {
		return p.fail(e.String(), fmt.Sprintf("it did not: the journal's #%d is %s", bad.Seq, bad.Action), p.ofDevice(saw))
	}
	p.cursor = p.f.lastSeq(from)
	return nil
}

func (p *player) ofDevice(evs []Event) []Event {
	var out []Event
	for _, e := range evs {
		if p.device == "" || e.DeviceID == p.device {
			out = append(out, e)
		}
	}
	if len(out) > maxSaw {
		out = out[len(out)-maxSaw:]
	}
	return out
}

func (p *player) fail(expected, why string, saw []Event) error {
	f := &ScenarioFailure{Step: p.step, Line: p.line, Expected: expected, Why: why, Saw: saw}
	if len(saw) == 0 {
		before := p.ofDevice(p.f.after(0))
		f.Before = before[max(0, len(before)-5):]
	}
	return f
}

func isConnected(e Event, device string) bool {
	return e.Source == SourceHub && e.Action == "connected" && (device == "" || e.DeviceID == device)
}

// jsonMatches reports whether got has what want has: objects by subset,
// arrays element by element (same length), other values by equality.
func jsonMatches(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !jsonMatches(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !jsonMatches(w[i], g[i]) {
				return false
			}
		}
		return true
	default:
		return want == got
	}
}

// follower keeps the entries the journal stream delivered since the play
// began, and wakes waiters on each.
type follower struct {
	mu     sync.Mutex
	evs    []Event
	notify chan struct{}
	err    error // the stream ended
	done   bool
}

func newFollower() *follower { return &follower{notify: make(chan struct{})} }

func (f *follower) add(e Event) {
	f.mu.Lock()
	f.evs = append(f.evs, e)
	close(f.notify)
	f.notify = make(chan struct{})
	f.mu.Unlock()
}

func (f *follower) stop(err error) {
	f.mu.Lock()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	f.err, f.done = fmt.Errorf("the mock's journal stream ended: %w", err), true
	close(f.notify)
	f.notify = make(chan struct{})
	f.mu.Unlock()
}

// after returns the entries after seq.
func (f *follower) after(seq int64) []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Event
	for _, e := range f.evs {
		if e.Seq > seq {
			out = append(out, e)
		}
	}
	return out
}

// lastSeq is the last entry seen, or seq when there is none after it.
func (f *follower) lastSeq(seq int64) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.evs); n > 0 && f.evs[n-1].Seq > seq {
		return f.evs[n-1].Seq
	}
	return seq
}

// wait returns the first entry after seq that match accepts, or nil when
// deadline fires first; saw is every entry after seq seen meanwhile.
func (f *follower) wait(ctx context.Context, seq int64, deadline <-chan time.Time, match func(Event) bool) (*Event, []Event, error) {
	for {
		f.mu.Lock()
		var saw []Event
		for _, e := range f.evs {
			if e.Seq <= seq {
				continue
			}
			saw = append(saw, e)
			if match(e) {
				f.mu.Unlock()
				return &e, saw, nil
			}
		}
		next, done, err := f.notify, f.done, f.err
		f.mu.Unlock()
		if done {
			return nil, saw, err
		}
		select {
		case <-next:
		case <-deadline:
			return nil, saw, nil
		case <-ctx.Done():
			return nil, saw, ctx.Err()
		}
	}
}

// Recording: the journal of a live session as a scenario.

// RecordConfig configures StartRecording.
type RecordConfig struct {
	// Admin is the running mock's admin API.
	Admin *AdminClient
	// Device is the device to record. Zero: the first device the journal
	// names in a hub entry or a push.
	Device string
}

// Recording is a recording under way: it remembers where the journal was
// when it began.
type Recording struct {
	cfg   RecordConfig
	start int64
}

// StartRecording begins a recording of what happens on cfg.Admin's mock
// from now on.
func StartRecording(ctx context.Context, cfg RecordConfig) (*Recording, error) {
	start, err := cfg.Admin.Journal(ctx, math.MaxInt64, "", 0)
	if err != nil {
		return nil, err
	}
	return &Recording{cfg: cfg, start: start.Last}, nil
}

// Finish reads the journal since the recording began and returns it as a
// scenario (ScenarioFromJournal).
func (r *Recording) Finish(ctx context.Context) (*Scenario, error) {
	page, err := r.cfg.Admin.Journal(ctx, r.start, "", 0)
	if err != nil {
		return nil, err
	}
	if page.Missed > 0 {
		return nil, fmt.Errorf("mockhub: the journal dropped %d entries of the session before they were read (its ring is full: record a shorter session)", page.Missed)
	}
	return ScenarioFromJournal(page.Events, r.cfg.Device), nil
}

// ScenarioFromJournal turns journal entries into a scenario: the device's
// hub connection becomes expect connected when it is the first thing the
// device does in the entries, expect reconnect otherwise; its hub calls (that did not fail) expect invoke with their
// arguments; the admin API's pushes to it and its faults become push and
// fault steps; a gap of a second or more before a push or a fault becomes
// a wait, and an expectation's deadline is twice the time it took, at
// least DefaultWithin. Entries of other devices are left out.
func ScenarioFromJournal(evs []Event, device string) *Scenario {
	sc := &Scenario{Name: "recorded"}
	connected := false
	var prev time.Time
	for _, e := range causesFirst(evs) {
		if device == "" && e.DeviceID != "" && (e.Source == SourceHub || isPushAction(e.Action)) {
			device = e.DeviceID
		}
		var st Step
		seenBefore := connected
		if e.Source == SourceHub && e.DeviceID == device && device != "" && e.ConnectionID != "" {
			connected = true // a device that spoke on the hub already had a connection
		}
		switch {
		case e.Source == SourceHub && e.Action == "connected" && e.DeviceID == device:
			st.Expect = &Expectation{Connected: !seenBefore, Reconnect: seenBefore}
		case e.Source == SourceHub && e.Direction == DirectionIn && e.DeviceID == device && e.Status == 0 && e.Error == "" && isHubCall(e):
			st.Expect = &Expectation{Invoke: e.Action}
			if len(e.Payload) > 0 && string(e.Payload) != "[]" {
				st.Expect.Args = e.Payload
			}
		case e.Source == SourceAdmin && e.Status < 300 && e.Action == "Faults":
			var f Faults
			if json.Unmarshal(e.Payload, &f) != nil {
				continue
			}
			st.Fault = &f
		case e.Source == SourceAdmin && e.Status < 300 && e.DeviceID == device && isPushAction(e.Action):
			st.Push = pushFromJournal(e)
			if st.Push == nil {
				continue
			}
		default:
			continue
		}
		gap := time.Duration(0)
		if !prev.IsZero() {
			gap = max(0, e.Time.Sub(prev)) // an admin call's entry is stamped when it answered
		}
		prev = e.Time
		if st.Expect != nil {
			w := max(2*gap, DefaultWithin).Round(time.Second)
			if st.Expect.Connected {
				w = max(w, 30*time.Second)
			}
			st.Expect.Within = ptr(Duration(w))
		} else if gap >= time.Second {
			sc.Steps = append(sc.Steps, Step{Wait: ptr(Duration(gap.Round(100 * time.Millisecond)))})
		}
		sc.Steps = append(sc.Steps, st)
	}
	if device != "" {
		sc.Device = device
	}
	return sc
}

// causesFirst orders entries as they happened for a replay: an admin
// call's entry, entered once the call answered, moves back to just after
// its Began, before what the call caused. The others keep their order.
func causesFirst(evs []Event) []Event {
	at := func(e Event) float64 {
		if e.Source == SourceAdmin && e.Began > 0 && e.Began < e.Seq {
			return float64(e.Began) + 0.5
		}
		return float64(e.Seq)
	}
	out := slices.Clone(evs)
	slices.SortStableFunc(out, func(a, b Event) int { return cmp.Compare(at(a), at(b)) })
	return out
}

// isHubCall: a client's hub invocation on a connection, not a
// connection's life nor a negotiate.
func isHubCall(e Event) bool {
	return e.ConnectionID != "" && e.Action != "connected" && e.Action != "disconnected"
}

func isPushAction(action string) bool {
	switch action {
	case "PushCommand", "PushProfile", "PushSettings", "StartListening", "StopListening":
		return true
	}
	return false
}

// pushFromJournal is the push an admin entry made (nil: one a scenario
// cannot repeat, such as a payload too large to have been kept).
func pushFromJournal(e Event) *PushStep {
	if bytes.Contains(e.Payload, []byte(`"truncated":true`)) || bytes.Contains(e.Payload, []byte(redacted)) {
		return nil
	}
	switch e.Action {
	case "PushCommand":
		var c CommandRequest
		if json.Unmarshal(e.Payload, &c) != nil {
			return nil
		}
		return &PushStep{Command: c.Command, Macro: c.Macro, MacroName: c.MacroName}
	case "PushProfile":
		return &PushStep{Profile: e.Payload}
	case "PushSettings":
		return &PushStep{Settings: e.Payload}
	case "StartListening":
		return &PushStep{StartListening: true}
	default:
		return &PushStep{StopListening: true}
	}
}

// YAML writes the scenario in the file format ParseScenario reads, one
// step a line.
func (sc *Scenario) YAML() []byte {
	var b bytes.Buffer
	b.WriteString("# A hubgate mock scenario: hubgate mock play FILE\n")
	if sc.Name != "" {
		fmt.Fprintf(&b, "name: %s\n", jsonString(sc.Name))
	}
	if sc.Device != "" {
		fmt.Fprintf(&b, "device: %s\n", jsonString(sc.Device))
	}
	if sc.Within != 0 {
		fmt.Fprintf(&b, "within: %s\n", time.Duration(sc.Within))
	}
	b.WriteString("steps:\n")
	for _, st := range sc.Steps {
		var kind string
		var body any
		switch {
		case st.Push != nil:
			kind, body = "push", st.Push
		case st.Fault != nil:
			kind, body = "fault", st.Fault
		case st.Wait != nil:
			kind, body = "wait", st.Wait
		default:
			kind, body = "expect", st.Expect
		}
		j, _ := json.Marshal(body) // JSON is YAML's flow style
		fmt.Fprintf(&b, "  - %s: %s\n", kind, j)
	}
	return b.Bytes()
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }
