package rules

import (
	"fmt"
	"strconv"
	"strings"
)

// Sections of a rule set, as named in Problem.Section.
const (
	SectionRules        = "rules"
	SectionCommandTools = "command_tools"
	SectionUnmatched    = "unmatched"
)

// Problem is one thing wrong with a rule set.
type Problem struct {
	Section string // SectionRules, SectionCommandTools or SectionUnmatched
	Index   int    // position in the section's list; -1 for unmatched
	Name    string // the rule's or tool's name; "" when it has none
	Field   string // e.g. "match.command_regex", "run.client_tools[1]"; "" for the entry as a whole
	Message string
}

// Where names the entry: `rules[2] "lights"`, `command_tools[0]`, `unmatched`.
func (p Problem) Where() string {
	if p.Index < 0 {
		return p.Section
	}
	s := p.Section + "[" + strconv.Itoa(p.Index) + "]"
	if p.Name != "" {
		s += " " + strconv.Quote(p.Name)
	}
	return s
}

// Path is the field path inside the rule set, without the name:
// "rules[2].match.command_regex", "unmatched.run.prompt".
func (p Problem) Path() string {
	s := p.Section
	if p.Index >= 0 {
		s += "[" + strconv.Itoa(p.Index) + "]"
	}
	if p.Field != "" {
		s += "." + p.Field
	}
	return s
}

// String reads `rules[2] "lights": match.command_regex: error parsing regexp: ...`.
func (p Problem) String() string {
	s := p.Where()
	if p.Field != "" {
		s += ": " + p.Field
	}
	return s + ": " + p.Message
}

// Error is every problem Compile found.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return "invalid rules: " + e.Problems[0].String()
	}
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return fmt.Sprintf("invalid rules (%d problems): %s", len(parts), strings.Join(parts, "; "))
}

// RenderError is a failure to build a run request for a command: a
// template that failed to execute, a blank prompt, an oversized request.
// The bridge records the command as failed with Error().
type RenderError struct {
	Rule  string // the rule's name
	Field string // e.g. "run.prompt", "run.hitl_answers.color"; "" for the request as a whole
	Err   error
}

func (e *RenderError) Error() string {
	return "rule " + strconv.Quote(e.Rule) + ": " + e.Detail()
}

// Detail is the error without the rule's name, for a text that names
// the rule already: "run.prompt: template: ...".
func (e *RenderError) Detail() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

func (e *RenderError) Unwrap() error { return e.Err }

// ToolError is a failure to build the argument vector of a command tool
// call; its text is meant for the agent (it is sent back as the call's
// error).
type ToolError struct {
	Tool string
	Err  error
}

func (e *ToolError) Error() string { return "tool " + strconv.Quote(e.Tool) + ": " + e.Err.Error() }

func (e *ToolError) Unwrap() error { return e.Err }
