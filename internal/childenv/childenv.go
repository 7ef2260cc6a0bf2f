// Package childenv owns the environment hubgate gives the processes it
// starts (tool commands, stdio MCP servers, the browser opened for a
// sign-in): this process's environment without hubgate's own secrets.
package childenv

import (
	"os"
	"strings"
)

// secretMarkers are the name parts that make a HUBGATE_* variable a secret
// (HUBGATE_AUTOMATE_KEY, HUBGATE_CLIENT_SECRET, HUBGATE_DEVICE_TOKEN, ...).
var secretMarkers = []string{"KEY", "SECRET", "TOKEN", "PASSWORD"}

// Environ is os.Environ() without hubgate's secrets, which a child could
// otherwise print, log or pass on.
func Environ() []string { return Scrub(os.Environ()) }

// Scrub returns env (NAME=value entries) without hubgate's secrets.
func Scrub(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if IsSecret(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// IsSecret reports whether the variable name is one of hubgate's secrets:
// HUBGATE_ followed by a name containing KEY, SECRET, TOKEN or PASSWORD
// (case-insensitive).
func IsSecret(name string) bool {
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
