package pairing

import (
	"errors"
	"strings"
	"testing"
)

// A pairing ends with the step that fits what a running daemon did and
// whether a config file exists; the last line says it.
func TestNextStep(t *testing.T) {
	for _, tc := range []struct {
		name       string
		d          DaemonTold
		configFile bool
		next, last string
	}{
		{"a daemon that reconnected", DaemonTold{Running: true, PID: 7, Message: "reconnecting"}, false, NextStatus, "next: nothing to start: the running daemon (pid 7)"},
		{"a daemon that refused", DaemonTold{Running: true, Err: errors.New("stopping")}, true, NextRestart, "next: restart the running daemon"},
		{"a daemon that could not be asked", DaemonTold{Err: errors.New("permission denied")}, false, NextRun, "next: run 'hubgate run' to connect the device and take its commands (or restart"},
		{"no daemon, no config file", DaemonTold{}, false, NextConfigInit, "next: run 'hubgate config init' (there is no config file yet)"},
		{"no daemon, a config file", DaemonTold{}, true, NextRun, "next: run 'hubgate run' to connect the device and take its commands"},
	} {
		next, lines := NextStep(tc.d, tc.configFile)
		if next != tc.next || len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], tc.last) {
			t.Errorf("%s: %q %q, want %q and a last line starting %q", tc.name, next, lines, tc.next, tc.last)
		}
	}
}
