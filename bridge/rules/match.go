package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

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
	macros      []deviceapi.Macro
	byID        map[string]int
	byCommand   map[string]int // folded phrase (lookupKey) -> first macro
	byName      map[string]int // folded name (lookupKey) -> first macro
	ambiguities []Ambiguity
}

// Found says how Catalog.Lookup found a command's macro.
type Found string

// How a macro was found.
const (
	FoundNone      Found = ""          // no macro: none delivered, none found
	FoundDelivered Found = "delivered" // kept as the hub sent it
	FoundByID      Found = "id"        // the catalogue's macro of the delivered id
	FoundByCommand Found = "command"   // a macro whose commands hold the command text
	FoundByName    Found = "name"      // the macro whose name is the command text
)

// Ambiguity is one key that more than one macro of the profile claims:
// the same id, the same phrase in their commands, or the same name (as
// lookups compare them: trimmed, case-insensitive). The first macro in
// profile order is used; the others are never found by that key.
type Ambiguity struct {
	By     Found    // FoundByID, FoundByCommand or FoundByName
	Key    string   // the key as the first macro spells it (trimmed)
	Macros []string // every macro claiming it, in profile order (the first is used): "Water Plants" (id 3)
}

func (a Ambiguity) String() string {
	what := map[Found]string{FoundByID: "the id", FoundByCommand: "the command", FoundByName: "the name"}[a.By]
	return fmt.Sprintf("%d macros of the profile share %s %q: %s; the first, %s, is used", len(a.Macros), what, a.Key,
		strings.Join(a.Macros, ", "), a.Macros[0])
}

// lookupKey is how command texts, phrases and names are compared: trimmed
// and case-folded (the vendor's Unity client lowercases before it
// compares; folding also equates the other simple case mappings, as
// strings.EqualFold does).
func lookupKey(s string) string {
	return strings.Map(foldRune, strings.TrimSpace(s))
}

// foldRune maps r to the smallest rune of its simple case-folding orbit,
// so that two strings are EqualFold exactly when their mapped forms are
// equal.
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// describeMacro names a macro in messages: "Water Plants" (id 3).
func describeMacro(m deviceapi.Macro) string {
	s := strconv.Quote(m.Name)
	if m.ID != "" {
		s += " (id " + m.ID + ")"
	}
	return s
}

// NewCatalog indexes macros (in profile order). When ids, command phrases
// or names repeat across macros, the first macro wins, and Ambiguities
// lists the repeats. A macro of an unexpected shape
// (deviceapi.Macro.IsOdd) is left out: it is never matched.
func NewCatalog(macros []deviceapi.Macro) Catalog {
	c := Catalog{macros: slices.DeleteFunc(slices.Clone(macros), deviceapi.Macro.IsOdd), byID: map[string]int{}, byCommand: map[string]int{}, byName: map[string]int{}}
	type claim struct {
		by     Found
		key    string // as first spelled
		macros []int  // indexes, ascending
	}
	var (
		claims = map[Found]map[string]*claim{FoundByID: {}, FoundByCommand: {}, FoundByName: {}}
		order  []*claim // in order of first appearance, for stable warnings
	)
	index := func(by Found, idx map[string]int, key, spelled string, i int) {
		if key == "" {
			return
		}
		cl := claims[by][key]
		if cl == nil {
			idx[key] = i
			cl = &claim{by: by, key: spelled}
			claims[by][key] = cl
			order = append(order, cl)
		}
		if n := len(cl.macros); n == 0 || cl.macros[n-1] != i {
			cl.macros = append(cl.macros, i)
		}
	}
	for i, m := range c.macros {
		index(FoundByID, c.byID, m.ID, m.ID, i)
		for _, cmd := range m.Commands {
			index(FoundByCommand, c.byCommand, lookupKey(cmd), strings.TrimSpace(cmd), i)
		}
		index(FoundByName, c.byName, lookupKey(m.Name), strings.TrimSpace(m.Name), i)
	}
	for _, cl := range order {
		if len(cl.macros) < 2 {
			continue
		}
		a := Ambiguity{By: cl.by, Key: cl.key}
		for _, i := range cl.macros {
			a.Macros = append(a.Macros, describeMacro(c.macros[i]))
		}
		c.ambiguities = append(c.ambiguities, a)
	}
	return c
}

// Len is the number of macros.
func (c Catalog) Len() int { return len(c.macros) }

// Macros returns a copy of the macro list.
func (c Catalog) Macros() []deviceapi.Macro { return slices.Clone(c.macros) }

// Ambiguities lists the keys that several macros claim (see Ambiguity), in
// profile order; nil when every key is unique. The bridge logs them as
// warnings when a profile arrives.
func (c Catalog) Ambiguities() []Ambiguity { return slices.Clone(c.ambiguities) }

// ByID finds a macro by id (exact).
func (c Catalog) ByID(id string) (deviceapi.Macro, bool) {
	if i, ok := c.byID[id]; ok && id != "" {
		return c.macros[i], true
	}
	return deviceapi.Macro{}, false
}

// ByCommand finds the first macro whose commands contain text, trimmed and
// case-insensitive.
func (c Catalog) ByCommand(text string) (deviceapi.Macro, bool) {
	if i, ok := c.byCommand[lookupKey(text)]; ok {
		return c.macros[i], true
	}
	return deviceapi.Macro{}, false
}

// ByName finds the first macro whose name is text, trimmed and
// case-insensitive.
func (c Catalog) ByName(text string) (deviceapi.Macro, bool) {
	if i, ok := c.byName[lookupKey(text)]; ok {
		return c.macros[i], true
	}
	return deviceapi.Macro{}, false
}

// Complete is Lookup without the how.
func (c Catalog) Complete(cmd Command) Command {
	cmd, _ = c.Lookup(cmd)
	return cmd
}

// Lookup fills in the command's macro from the catalogue and says how it
// found it:
//   - a macro with anything besides its id (a name, commands or events) is
//     kept as delivered: it is what the user triggered;
//   - a macro with only an id is replaced by the catalogue's macro of that
//     id;
//   - otherwise (no macro, an empty one, or an id the catalogue does not
//     know) the command text finds it: first among the macros' commands,
//     then among their names, both trimmed and case-insensitive (the
//     vendor's app may send a macro's name, "Water Plants", where its
//     commands hold "water plants"); where several macros claim the text,
//     the first in profile order wins (Ambiguities);
//   - when nothing is found, an id-only macro is kept as delivered and no
//     macro stays nil.
//
// The macro returned is a copy the caller may keep; treat its slices and
// Extra maps as read-only. Lookup is idempotent.
func (c Catalog) Lookup(cmd Command) (Command, Found) {
	m := cmd.Macro
	if m != nil && (m.Name != "" || len(m.Commands) > 0 || len(m.Events) > 0) {
		return cmd, FoundDelivered
	}
	if m != nil && m.ID != "" {
		if found, ok := c.ByID(m.ID); ok {
			cmd.Macro = &found
			return cmd, FoundByID
		}
	}
	if found, ok := c.ByCommand(cmd.Text); ok {
		cmd.Macro = &found
		return cmd, FoundByCommand
	}
	if found, ok := c.ByName(cmd.Text); ok {
		cmd.Macro = &found
		return cmd, FoundByName
	}
	if m != nil && m.ID != "" {
		return cmd, FoundDelivered
	}
	cmd.Macro = nil
	return cmd, FoundNone
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
// macro. Decide is the whole routing decision; Match and Route are its
// matching step alone.
func (s *Set) Match(cmd Command) (*Rule, bool) {
	return s.match(s.cat.Complete(cmd))
}

// match is Match on a completed command.
func (s *Set) match(cmd Command) (*Rule, bool) {
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
	return s.route(s.cat.Complete(cmd))
}

// route is Route on a completed command.
func (s *Set) route(cmd Command) (r *Rule, matched, ok bool) {
	if r, ok := s.match(cmd); ok {
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

// Ask says whether the rule's runs are offered the ask_person tool; def is
// the bridge.ask default, for a rule that says nothing.
func (r *Rule) Ask(def bool) bool {
	if r.spec.Ask != nil {
		return *r.spec.Ask
	}
	return def
}

// Answers says whether the command text answers a pending question of
// this rule's run (Spec.Answers; every command when it is empty).
func (r *Rule) Answers(text string) bool { return r.answers == nil || r.answers.MatchString(text) }

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

// NoRunHint says how to fix a rule set that can never start a run (no
// rule and unmatched commands ignored), loaded from file ("" when there
// is none); "" when some command can.
func (s *Set) NoRunHint(file string) string {
	if len(s.rules) > 0 {
		return ""
	}
	if _, ok := s.Unmatched(Command{Text: "x"}); ok {
		return ""
	}
	if file == "" {
		return "no routing rule, and unmatched commands are ignored: every command will be ignored. 'hubgate config init' writes a starter config that runs them."
	}
	return fmt.Sprintf("no routing rule in %s, and unmatched commands are ignored: every command will be ignored. Add rules under bridge.rules, or set bridge.unmatched.action: run ('hubgate config init --force' writes a starter config, keeping yours as .bak).", file)
}
