package toolkit

import (
	"os"
	"strings"
)

// secretMarkers are the name parts that make a HUBGATE_* variable a secret
// (HUBGATE_AUTOMATE_KEY, HUBGATE_CLIENT_SECRET, HUBGATE_DEVICE_TOKEN, ...).
var secretMarkers = []string{"KEY", "SECRET", "TOKEN", "PASSWORD"}

// ChildEnviron is the environment a tool's child process (run_command, a
// stdio MCP server) starts from: this process's environment without
// hubgate's own secrets, which a command could otherwise print into a run
// record and which a third-party MCP server must never see.
func ChildEnviron() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if isHubgateSecret(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func isHubgateSecret(name string) bool {
	upper := strings.ToUpper(name)
	if !strings.HasPrefix(upper, "HUBGATE_") {
		return false
	}
	for _, m := range secretMarkers {
		if strings.Contains(upper, m) {
			return true
		}
	}
	return false
}
