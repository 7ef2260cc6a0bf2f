package rules

import (
	"fmt"
	"strings"
)

// Describe is the rule as a person reads it: its name, what it matches
// and, unless single, its busy policy:
//
//	rule "slow": command_glob "slow *"; busy: queue (at most 3 waiting, for 5m0s)
func (r *Rule) Describe() string {
	out := fmt.Sprintf("rule %q: %s", r.name, DescribeMatch(r.spec.Match))
	if r.busy != BusySingle {
		out += "; busy: " + r.DescribeBusy()
	}
	return out
}

// DescribeBusy is the rule's busy policy in words: "single (dropped while
// a run is in flight)", "queue (at most 3 waiting, for 5m0s)" or "restart
// (a new one cancels the run in flight)".
func (r *Rule) DescribeBusy() string {
	switch r.busy {
	case BusyQueue:
		return fmt.Sprintf("queue (at most %d waiting, for %s)", r.queueLimit, r.maxAge)
	case BusyRestart:
		return "restart (a new one cancels the run in flight)"
	}
	return string(r.busy) + " (dropped while a run is in flight)"
}

// DescribeMatch renders a rule's criteria, as the configuration names
// them: `command_glob "slow *", event_type "Type"`.
func DescribeMatch(m MatchSpec) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, fmt.Sprintf("%s %q", k, v))
		}
	}
	add("command", m.Command)
	add("command_glob", m.CommandGlob)
	add("command_regex", m.CommandRegex)
	add("macro_name", m.MacroName)
	add("macro_id", m.MacroID)
	add("event_type", m.EventType)
	add("custom_action", m.CustomAction)
	return strings.Join(parts, ", ")
}
