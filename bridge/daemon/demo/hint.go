package demo

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/deviceapi"
)

// Examples are example commands of the embedded demo rules, by rule name,
// for the hint (a test checks that each routes to its rule). A function,
// not a package-level map: a map literal is init work in every hubgate
// process.
func Examples() map[string]string {
	return map[string]string{
		"hello":  "hello",
		"slow":   "slow report",
		"long":   "long analysis",
		"notify": "notify hi",
	}
}

// hint says how to push more commands, with the rules' commands.
func (r *run) hint(base, deviceID string, set *rules.Set) {
	bin := r.o.Invocation
	send := fmt.Sprintf("%s mock send --url %s --device %s", bin, base, deviceID)
	example := Examples()["notify"]
	r.say("hint", map[string]any{"mockUrl": base, "deviceId": deviceID, "send": send + " --command " + ShellQuote(example)},
		"\nThe demo keeps running. Push more commands from another terminal; each run's answer is printed here:\n  %s --command %s",
		send, ShellQuote(example))
	var lines []string
	for _, rule := range set.Rules() {
		lines = append(lines, ruleHint(rule, send))
	}
	if _, ok := set.Unmatched(rules.Command{Text: "x"}); ok {
		lines = append(lines, "  any other --command       runs with its text as the prompt (the scripted engine answers \"Done: <text>\")")
	}
	r.say("rules-hint", map[string]any{"rules": ruleNames(set)}, "Commands of the demo rules:\n%s", strings.Join(lines, "\n"))
	r.say("more-hint", nil, "Also: %s mock devices --url %s; %s mock stop-listening / start-listening --url %s --device %s\nCtrl-C stops the demo and removes %s.",
		bin, base, bin, base, deviceID, r.dir)
}

// ruleHint is the hint's line of one rule: its example command, or the
// mock send command of an event that reaches it, and its description.
func ruleHint(rule *rules.Rule, send string) string {
	desc := rule.Describe()
	m := rule.Spec().Match
	switch ex, ok := Examples()[rule.Name()]; {
	case ok:
		return fmt.Sprintf("  --command %-16s %s", ShellQuote(ex), desc)
	case m.EventType != "" || m.CustomAction != "":
		command, event := EventExample(m)
		what := fmt.Sprintf("a macro with a %s event", m.EventType)
		if m.CustomAction != "" {
			what = fmt.Sprintf("a custom action %q with its content", m.CustomAction)
		}
		return fmt.Sprintf("  %s (%s):\n    %s --command %s --event %s", what, desc, send, command, ShellQuote(event))
	}
	return "  " + desc
}

// EventExample is a command and the JSON of a macro event, as the real
// app sends them, that a rule matching on events routes, for `mock send
// --command C --event E`: a custom action with its content, a Type event
// with its phrase, or an event of the type.
func EventExample(m rules.MatchSpec) (command, event string) {
	switch {
	case m.CustomAction != "":
		content := "what is on my calendar"
		b, _ := json.Marshal(deviceapi.MacroEvent{EventType: deviceapi.EventDeviceTypeCustomAction,
			DeviceTypeCustomActionID: &m.CustomAction, AdditionalInputContent: &content})
		return "ask", string(b)
	case deviceapi.SameEventType(m.EventType, deviceapi.EventType):
		return "typing", `{"eventType":"Type","typedPhrase":"hi there"}`
	}
	b, _ := json.Marshal(map[string]string{"eventType": m.EventType})
	return "typing", string(b)
}

// ShellQuote quotes s for a POSIX shell when it needs it: in double quotes
// when nothing in it is special there, else in single quotes.
func ShellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r))
	}) {
		return s
	}
	if !strings.ContainsAny(s, "\"$`\\!\n") {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
