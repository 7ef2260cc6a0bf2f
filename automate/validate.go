package automate

import (
	"fmt"
	"strings"

	"github.com/hubgate/hubgate/internal/lazyregexp"
)

// Compiled on first use: every hubgate process links this package.
var (
	clientToolNameRE = lazyregexp.New(`^[A-Za-z0-9_-]+$`)
	mcpServerNameRE  = lazyregexp.New(`^[a-z0-9-]+$`)
)

// ClientToolNameProblem returns the contract rule a client tool name
// breaks ("is required", "must contain only letters, numbers, underscores
// and hyphens", "must not start with mcp__", "must be at most 64
// characters"), or "" for a valid name. The text reads after the field's
// name ("clientTools[0].name " + problem).
func ClientToolNameProblem(name string) string {
	switch {
	case name == "":
		return "is required"
	case !clientToolNameRE.MatchString(name):
		return "must contain only letters, numbers, underscores and hyphens"
	case strings.HasPrefix(name, "mcp__"):
		return "must not start with mcp__"
	case len(name) > MaxNameLength:
		return fmt.Sprintf("must be at most %d characters", MaxNameLength)
	}
	return ""
}

// McpServerNameProblem returns the contract rule an inline MCP server name
// breaks ("must be 1 to 64 characters", "must contain only lowercase
// letters, numbers and hyphens", "must not start or end with a hyphen",
// "must not contain --"), or "" for a valid name.
func McpServerNameProblem(name string) string {
	switch {
	case name == "" || len(name) > MaxNameLength:
		return fmt.Sprintf("must be 1 to %d characters", MaxNameLength)
	case !mcpServerNameRE.MatchString(name):
		return "must contain only lowercase letters, numbers and hyphens"
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return "must not start or end with a hyphen"
	case strings.Contains(name, "--"):
		return "must not contain --"
	}
	return ""
}
