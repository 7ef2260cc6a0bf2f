package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/deviceapi"
)

// Action is what the routing decision does with a command.
type Action string

// Actions of a Routing.
const (
	// ActionRun starts a run of Routing.Rule with Routing.Request (the
	// bridge then applies listening and the busy policy).
	ActionRun Action = "run"
	// ActionCancel: the macro has a StopOutputs event; it cancels the
	// current run and is not routed.
	ActionCancel Action = "cancel"
	// ActionIgnore: no rule matches and unmatched commands are ignored.
	ActionIgnore Action = "ignore"
	// ActionRefuse: the command is not for this device (Routing.Err is an
	// *OtherDeviceTypeError).
	ActionRefuse Action = "refuse"
	// ActionError: the rule's templates failed (Routing.Err is a
	// *RenderError); nothing runs.
	ActionError Action = "error"
)

// Routing is the one routing decision of a command, shared by the bridge
// and `hubgate rules test`.
type Routing struct {
	// Command is the command completed from the catalogue: its macro as
	// delivered or as the profile holds it (what the journal records).
	Command Command
	// Found says how the macro was found.
	Found  Found
	Action Action
	// Rule handles the command (ActionRun, ActionError); nil otherwise.
	Rule *Rule
	// Matched: Rule is a configured rule, not the unmatched rule.
	Matched bool
	// Request is the rendered run request (ActionRun).
	Request automate.RunRequest
	// Err says why the command is not run: *OtherDeviceTypeError
	// (ActionRefuse) or *RenderError (ActionError); nil otherwise.
	Err error
}

// Reason says why the command is not run ("" for ActionRun and
// ActionCancel).
func (r Routing) Reason() string {
	switch {
	case r.Err != nil:
		return r.Err.Error()
	case r.Action == ActionIgnore:
		return "no rule matches"
	}
	return ""
}

// OtherDeviceTypeError is the refusal of a command whose custom actions
// are all meant for another device type than the paired device's.
type OtherDeviceTypeError struct {
	DeviceType string                   // the paired device's type
	Actions    []deviceapi.CustomAction // the custom actions meant for other types
}

func (e *OtherDeviceTypeError) Error() string {
	a := e.Actions[0]
	what := "a custom action"
	if a.ID != "" {
		what = "custom action " + strconv.Quote(a.ID)
	}
	s := fmt.Sprintf("%s is for device type %q; this device is of type %q", what, a.DeviceTypeID, e.DeviceType)
	if n := len(e.Actions) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more custom action(s) for other types)", n)
	}
	return s + "; not run"
}

// WithDeviceType returns a Set with the same rules and catalogue that
// refuses custom actions meant for another device type than id (the
// paired device's type; see Decide). "" turns the check off. The receiver
// is unchanged.
func (s *Set) WithDeviceType(id string) *Set {
	cp := *s
	cp.deviceType = strings.TrimSpace(id)
	return &cp
}

// DeviceType is the device type Decide checks custom actions against (""
// when unchecked).
func (s *Set) DeviceType() string { return s.deviceType }

// Decide is the routing decision of a command, in this order:
//  1. the command is completed from the catalogue (Catalog.Lookup);
//  2. a macro with a StopOutputs event is ActionCancel;
//  3. custom actions (DeviceTypeCustomAction events) whose deviceTypeId
//     names another type than the Set's device type (WithDeviceType;
//     compared trimmed and case-insensitive; an empty or null deviceTypeId
//     is for any type) are never run: like the vendor's clients, which run
//     a custom action only on its device type, the rules match and render
//     the macro without them. When that leaves nothing of a macro that had
//     events (every event was such an action), the command is
//     ActionRefuse;
//  4. the first matching rule, else the unmatched rule, renders the run
//     request (ActionRun, or ActionError when a template fails); with
//     neither, ActionIgnore.
func (s *Set) Decide(cmd Command) Routing {
	cmd, found := s.cat.Lookup(cmd)
	d := Routing{Command: cmd, Found: found}
	if cmd.Macro != nil && slices.ContainsFunc(cmd.Macro.Events, func(e deviceapi.MacroEvent) bool { return e.Is(deviceapi.EventStopOutputs) }) {
		d.Action = ActionCancel
		return d
	}
	own, err := s.ownEvents(cmd)
	if err != nil {
		d.Action, d.Err = ActionRefuse, err
		return d
	}
	rule, matched, ok := s.route(own)
	if !ok {
		d.Action = ActionIgnore
		return d
	}
	d.Rule, d.Matched = rule, matched
	if d.Request, err = rule.Render(own, s.cat); err != nil {
		d.Action, d.Err = ActionError, err
		return d
	}
	d.Action = ActionRun
	return d
}

// ownEvents returns cmd with the custom actions for other device types
// removed from its macro (a copy), or the refusal when the macro had
// events and none is left.
func (s *Set) ownEvents(cmd Command) (Command, error) {
	m := cmd.Macro
	if s.deviceType == "" || m == nil {
		return cmd, nil
	}
	var (
		foreign []deviceapi.CustomAction
		kept    []deviceapi.MacroEvent
	)
	for i, e := range m.Events {
		a, ok := e.CustomAction()
		if !ok || strings.TrimSpace(a.DeviceTypeID) == "" || strings.EqualFold(strings.TrimSpace(a.DeviceTypeID), s.deviceType) {
			if foreign != nil {
				kept = append(kept, e)
			}
			continue
		}
		if foreign == nil {
			kept = slices.Clone(m.Events[:i])
		}
		foreign = append(foreign, a)
	}
	if foreign == nil {
		return cmd, nil
	}
	if len(kept) == 0 {
		return cmd, &OtherDeviceTypeError{DeviceType: s.deviceType, Actions: foreign}
	}
	own := *m
	own.Events = kept
	cmd.Macro = &own
	return cmd, nil
}
