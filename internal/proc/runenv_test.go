package proc

import (
	"slices"
	"strings"
	"testing"
)

// RunEnviron withholds hubgate's secrets and the session bus (its
// address, the activation address and XDG_RUNTIME_DIR, where D-Bus
// clients look for the bus without an address); allow passes the named
// ones, and only those; Environ (hubgate's own children) keeps the bus.
func TestRunEnvironWithholdsTheSessionBusAndSecrets(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus")
	t.Setenv("DBUS_STARTER_ADDRESS", "unix:path=/run/user/1000/bus")
	t.Setenv("DBUS_STARTER_BUS_TYPE", "session")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	t.Setenv("HUBGATE_DEVICE_TOKEN", "secret-device")
	t.Setenv("HUBGATE_LOG_LEVEL", "debug")
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/run/dbus/system_bus_socket")
	names := func(env []string) []string {
		var out []string
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			out = append(out, name)
		}
		return out
	}
	got := names(RunEnviron(nil))
	for _, n := range append(slices.Clone(SessionBusNames), "HUBGATE_DEVICE_TOKEN") {
		if slices.Contains(got, n) {
			t.Errorf("RunEnviron(nil) keeps %s", n)
		}
		if !WithheldFromRuns(n) {
			t.Errorf("WithheldFromRuns(%s) = false", n)
		}
	}
	for _, n := range []string{"HUBGATE_LOG_LEVEL", "DBUS_SYSTEM_BUS_ADDRESS"} {
		if !slices.Contains(got, n) {
			t.Errorf("RunEnviron(nil) drops %s", n)
		}
		if WithheldFromRuns(n) {
			t.Errorf("WithheldFromRuns(%s) = true", n)
		}
	}
	// allow re-admits a session bus name, never a secret.
	AlsoSecret("MY_UPSTREAM_KEY")
	t.Setenv("MY_UPSTREAM_KEY", "secret-upstream")
	got = names(RunEnviron([]string{"DBUS_SESSION_BUS_ADDRESS", "HUBGATE_DEVICE_TOKEN", "MY_UPSTREAM_KEY"}))
	if !slices.Contains(got, "DBUS_SESSION_BUS_ADDRESS") || slices.Contains(got, "XDG_RUNTIME_DIR") {
		t.Errorf("RunEnviron with allow: %v", got)
	}
	for _, n := range []string{"HUBGATE_DEVICE_TOKEN", "MY_UPSTREAM_KEY"} {
		if slices.Contains(got, n) {
			t.Errorf("RunEnviron with %s allowed keeps the secret", n)
		}
		if !IsSecretName(n) {
			t.Errorf("IsSecretName(%s) = false", n)
		}
	}
	if own := names(Environ()); !slices.Contains(own, "DBUS_SESSION_BUS_ADDRESS") || !slices.Contains(own, "XDG_RUNTIME_DIR") || slices.Contains(own, "HUBGATE_DEVICE_TOKEN") {
		t.Errorf("Environ: %v", own)
	}
}
