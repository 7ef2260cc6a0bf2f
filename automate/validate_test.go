package automate

import (
	"strings"
	"testing"
)

func TestClientToolNameProblem(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"get_weather", ""},
		{"A-b_9", ""},
		{strings.Repeat("a", MaxNameLength), ""},
		{"", "is required"},
		{"has space", "must contain only letters, numbers, underscores and hyphens"},
		{"dot.name", "must contain only letters, numbers, underscores and hyphens"},
		{"mcp__files__read", "must not start with mcp__"},
		{"mcp_single", ""},
		{strings.Repeat("a", MaxNameLength+1), "must be at most 64 characters"},
	} {
		if got := ClientToolNameProblem(tc.name); got != tc.want {
			t.Errorf("ClientToolNameProblem(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestMcpServerNameProblem(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"files", ""},
		{"my-server-2", ""},
		{strings.Repeat("a", MaxNameLength), ""},
		{"", "must be 1 to 64 characters"},
		{strings.Repeat("a", MaxNameLength+1), "must be 1 to 64 characters"},
		{"Files", "must contain only lowercase letters, numbers and hyphens"},
		{"my_server", "must contain only lowercase letters, numbers and hyphens"},
		{"-files", "must not start or end with a hyphen"},
		{"files-", "must not start or end with a hyphen"},
		{"my--server", "must not contain --"},
	} {
		if got := McpServerNameProblem(tc.name); got != tc.want {
			t.Errorf("McpServerNameProblem(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
