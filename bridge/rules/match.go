package rules

import (
	"slices"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
)

// Command is one DeviceCommand as the bridge received it.
type Command struct {
	Text     string           // the command string
	Macro    *deviceapi.Macro // its macro; nil when the hub sent none
	Received time.Time        // when the hub delivered it
	Seq      uint64           // the hub event's sequence number
}

// Catalog is the macro catalogue of the device's current profile, used to
// complete a command whose macro is missing or carries only an id. The
// zero Catalog is empty. A Catalog is immutable; build a new one on every
// DeviceProfileUpdate (NewCatalog, Set.WithCatalog).
type Catalog struct {
	macros    []deviceapi.Macro
	byID      map[string]int
	byCommand map[string]int
}

// NewCatalog indexes macros (in profile order). When ids or command strings
// repeat, the first macro wins. A macro of an unexpected shape
// (deviceapi.Macro.IsOdd) is left out: it is never matched.
func NewCatalog(macros []deviceapi.Macro) Catalog {
	c := Catalog{macros: slices.DeleteFunc(slices.Clone(macros), deviceapi.Macro.IsOdd), byID: map[string]int{}, byCommand: map[string]int{}}
	for i, m := range c.macros {
		if _, ok := c.byID[m.ID]; m.ID != "" && !ok {
			c.byID[m.ID] = i
		}
		for _, cmd := range m.Commands {
			if _, ok := c.byCommand[cmd]; !ok {
				c.byCommand[cmd] = i
			}
		}
	}
	return c
}

// Len is the number of macros.
func (c Catalog) Len() int { return len(c.macros) }

// Macros returns a copy of the macro list.
func (c Catalog) Macros() []deviceapi.Macro { return slices.Clone(c.macros) }

// ByID finds a macro by id.
func (c Catalog) ByID(id string) (deviceapi.Macro, bool) {
	if i, ok := c.byID[id]; ok && id != "" {
		return c.macros[i], true
	}
	return deviceapi.Macro{}, false
}

// ByCommand finds the first macro whose commands contain text exactly.
func (c Catalog) ByCommand(text string) (deviceapi.Macro, bool) {
	if i, ok := c.byCommand[text]; ok {
		return c.macros[i], true
	}
	return deviceapi.Macro{}, false
}

// Complete fills in the command's macro from the catalogue:
//   - a macro with anything besides its id (a name, commands or events) is
//     kept as delivered: it is what the user triggered;
//   - a macro with only an id is replaced by the catalogue's macro of that
//     id, and kept as is when the catalogue does not know the id;
//   - no macro (nil, or one with nothing at all) becomes the first
//     catalogue macro whose commands contain the command text exactly;
//     it stays nil when there is none.
//
// The macro returned is a copy the caller may keep; treat its slices and
// Extra maps as read-only. Complete is idempotent.
func (c Catalog) Complete(cmd Command) Command {
	m := cmd.Macro
	switch {
	case m != nil && (m.Name != "" || len(m.Commands) > 0 || len(m.Events) > 0):
		return cmd
	case m != nil && m.ID != "":
		if found, ok := c.ByID(m.ID); ok {
			cmd.Macro = &found
		}
		return cmd
	}
	if found, ok := c.ByCommand(cmd.Text); ok {
		cmd.Macro = &found
	} else {
		cmd.Macro = nil
	}
	return cmd
}

// WithCatalog returns a Set with the same rules whose Match and Complete
// use the catalogue of macros. The receiver is unchanged.
func (s *Set) WithCatalog(macros []deviceapi.Macro) *Set {
	cp := *s
	cp.cat = NewCatalog(macros)
	return &cp
}

// Catalog is the Set's macro catalogue (empty unless WithCatalog set one).
func (s *Set) Catalog() Catalog { return s.cat }

// Complete is s.Catalog().Complete(cmd).
func (s *Set) Complete(cmd Command) Command { return s.cat.Complete(cmd) }

// Match completes cmd from the Set's catalogue and returns the first rule
// (in configuration order) whose criteria all hold. Render the rule with
// the same catalogue (or the completed command) so that both see the same
// macro.
func (s *Set) Match(cmd Command) (*Rule, bool) {
	cmd = s.cat.Complete(cmd)
	for _, r := range s.rules {
		if r.matches(cmd) {
			return r, true
		}
	}
	return nil, false
}

// Unmatched returns the unmatched rule when unmatched commands are run
// (unmatched.action: run), else false: the command is ignored. cmd is not
// consulted today; the unmatched rule applies to every command no rule
// matched.
func (s *Set) Unmatched(cmd Command) (*Rule, bool) {
	_ = cmd
	return s.unmatched, s.unmatched != nil
}

// Route is Match, then Unmatched: the rule that handles cmd, whether a
// rule matched, and false for ok when the command is ignored.
func (s *Set) Route(cmd Command) (r *Rule, matched, ok bool) {
	if r, ok := s.Match(cmd); ok {
		return r, true, true
	}
	r, ok = s.Unmatched(cmd)
	return r, false, ok
}

// Rules returns the compiled rules in configuration order.
func (s *Set) Rules() []*Rule { return slices.Clone(s.rules) }

// Rule finds a rule by name (UnmatchedRuleName finds the unmatched rule
// when its action is run). The journal records rule names; recovery after
// a restart looks them up here.
func (s *Set) Rule(name string) (*Rule, bool) {
	if name == UnmatchedRuleName {
		return s.unmatched, s.unmatched != nil
	}
	r, ok := s.byName[name]
	return r, ok
}

// matches reports whether every criterion holds for the completed command.
func (r *Rule) matches(cmd Command) bool {
	if r.index < 0 {
		return false
	}
	if r.command != "" && cmd.Text != r.command {
		return false
	}
	if r.glob != nil && !r.glob.MatchString(cmd.Text) {
		return false
	}
	if r.re != nil && !r.re.MatchString(cmd.Text) {
		return false
	}
	if !r.hasMacroCriteria {
		return true
	}
	m := cmd.Macro
	if m == nil || m.IsOdd() { // an odd macro is kept for the journal, never matched
		return false
	}
	if r.macroName != "" && m.Name != r.macroName {
		return false
	}
	if r.macroID != "" && m.ID != r.macroID {
		return false
	}
	if r.eventType != "" && !slices.ContainsFunc(m.Events, func(e deviceapi.MacroEvent) bool { return e.Is(r.eventType) }) {
		return false
	}
	if r.customAction != "" && !slices.ContainsFunc(m.Events, func(e deviceapi.MacroEvent) bool {
		a, ok := e.CustomAction()
		return ok && a.ID == r.customAction
	}) {
		return false
	}
	return true
}

// Name is the rule's name (UnmatchedRuleName for the unmatched rule).
func (r *Rule) Name() string { return r.name }

// Index is the rule's position in the rules list; -1 for the unmatched rule.
func (r *Rule) Index() int { return r.index }

// Busy is the busy policy (never "").
func (r *Rule) Busy() BusyPolicy { return r.busy }

// QueueLimit is the queue length of busy: queue (default 5; set for every
// policy, meaningful for queue).
func (r *Rule) QueueLimit() int { return r.queueLimit }

// MaxAge is how old a waiting command may get before it is dropped, and the
// recovery age (default 10m).
func (r *Rule) MaxAge() time.Duration { return r.maxAge }

// RunOnRecovery reports whether waiting commands are run after a restart
// (when younger than MaxAge) instead of marked abandoned.
func (r *Rule) RunOnRecovery() bool { return r.runOnRecovery }

// Notify is the rule's notification policy (NotifyAnswers, ...; "" means
// the configured default).
func (r *Rule) Notify() string { return r.spec.Notify }

// Speak says whether a completed run's answer is spoken.
func (r *Rule) Speak() bool { return r.spec.Speak }

// Expired reports whether a command received at received is older than
// MaxAge at now.
func (r *Rule) Expired(received, now time.Time) bool { return now.Sub(received) > r.maxAge }

// Recoverable reports whether a waiting command received at received is run
// after a restart at now: RunOnRecovery and not Expired.
func (r *Rule) Recoverable(received, now time.Time) bool {
	return r.runOnRecovery && !r.Expired(received, now)
}

// Spec returns the rule's spec with the defaults filled in (Busy,
// QueueLimit, MaxAge; for the unmatched rule also the default prompt).
func (r *Rule) Spec() Spec { return r.spec }
