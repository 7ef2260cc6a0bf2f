package assistant

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/toolkit"
)

// Built-in tools that are not the toolkit's file and command tools.
const (
	ToolFetchURL         = "fetch_url"
	ToolRequestUserInput = "request_user_input"
)

// BuiltInToolNames are the assistant's own tools, the names a request's
// builtInTools may list: every engine's built-in tools (the toolkit's file
// and command tools, fetch_url, request_user_input). Caller tools and MCP
// tools are the caller's and are not narrowed by builtInTools.
var BuiltInToolNames = []string{
	toolkit.ToolReadFile, toolkit.ToolListDir, toolkit.ToolWriteFile,
	toolkit.ToolDeletePath, toolkit.ToolMovePath, toolkit.ToolRunCommand,
	ToolFetchURL, ToolRequestUserInput,
}

// BuiltInToolGroups are the groups builtInTools may name. The vendor's
// cheatsheet names @content, @destructive and @observe without listing
// their members; these are ours:
//   - @destructive: the tools that pause for review (DestructiveTools).
//   - @observe: the tools that only look (read a file, list a folder,
//     fetch a URL).
//   - @content: the tools that produce content (write a file).
//   - @all: every built-in tool.
var BuiltInToolGroups = map[string][]string{
	"@destructive": {toolkit.ToolDeletePath, toolkit.ToolMovePath, toolkit.ToolRunCommand},
	"@observe":     {toolkit.ToolReadFile, toolkit.ToolListDir, ToolFetchURL},
	"@content":     {toolkit.ToolWriteFile},
	"@all":         BuiltInToolNames,
}

// ToolFilter is a resolved builtInTools: which built-in tools may run. The
// zero value (and nil) allows every tool.
type ToolFilter struct {
	allow map[string]bool // nil: every tool
	deny  map[string]bool
}

// UnknownToolError names a builtInTools entry that is neither a built-in
// tool nor a group.
type UnknownToolError struct {
	Field string // "builtInTools.allow[0]"
	Name  string
}

func (e *UnknownToolError) Error() string {
	return fmt.Sprintf("%s: unknown built-in tool or group %q (tools: %s; groups: %s)", e.Field, e.Name,
		strings.Join(BuiltInToolNames, ", "), strings.Join(groupNames(), ", "))
}

func groupNames() []string {
	names := make([]string, 0, len(BuiltInToolGroups))
	for g := range BuiltInToolGroups {
		names = append(names, g)
	}
	slices.Sort(names)
	return names
}

// NewToolFilter resolves b; nil b is nil (no narrowing). field prefixes the
// name of an unknown entry in the error ("builtInTools").
func NewToolFilter(b *automate.BuiltInTools, field string) (*ToolFilter, error) {
	if b == nil {
		return nil, nil
	}
	f := &ToolFilter{}
	resolve := func(list []string, key string) (map[string]bool, error) {
		set := map[string]bool{}
		for i, name := range list {
			if members, ok := BuiltInToolGroups[name]; ok {
				for _, m := range members {
					set[m] = true
				}
				continue
			}
			if !slices.Contains(BuiltInToolNames, name) {
				return nil, &UnknownToolError{Field: fmt.Sprintf("%s.%s[%d]", field, key, i), Name: name}
			}
			set[name] = true
		}
		return set, nil
	}
	var err error
	if b.Allow != nil {
		if f.allow, err = resolve(b.Allow, "allow"); err != nil {
			return nil, err
		}
	}
	if f.deny, err = resolve(b.Deny, "deny"); err != nil {
		return nil, err
	}
	return f, nil
}

// Allows reports whether the built-in tool may run.
func (f *ToolFilter) Allows(tool string) bool {
	if f == nil {
		return true
	}
	if f.deny[tool] {
		return false
	}
	return f.allow == nil || f.allow[tool]
}

// ReviewBuiltIn decides a call of a built-in tool before it runs: the
// request's builtInTools first (a denied tool never runs, whatever
// allowDestructiveTools says), then the destructive-tool policy. nil means
// run it; a *PolicyError is the message the agent sees.
func (t *Task) ReviewBuiltIn(tool string) error {
	if !t.BuiltInTools.Allows(tool) {
		return &PolicyError{Tool: tool, Reason: "this built-in tool is not allowed for this run (builtInTools)"}
	}
	return t.ReviewDestructive(tool)
}
