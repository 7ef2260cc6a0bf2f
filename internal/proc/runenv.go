package proc

import "slices"

// SessionBusNames are the variables through which a child finds the
// user's D-Bus session bus, and through it the unlocked keyring that
// holds hubgate's secrets (the Secret Service answers any client of the
// bus): the bus address, the address a D-Bus-activated process is given,
// and XDG_RUNTIME_DIR, because D-Bus clients (GLib, libdbus, sd-bus,
// godbus) connect to $XDG_RUNTIME_DIR/bus when the address is unset, the
// socket a systemd user session listens on.
var SessionBusNames = []string{"DBUS_SESSION_BUS_ADDRESS", "DBUS_STARTER_ADDRESS", "DBUS_STARTER_BUS_TYPE", "XDG_RUNTIME_DIR"}

// RunEnviron is the environment a run's children start from (run_command,
// stdio MCP servers, the bridge's command tools): Environ, and without the
// session bus either (SessionBusNames), so that a command a run starts
// neither prints nor uses the way to the keyring. A session bus name in
// allow (the configuration's automate.child_env.allow) is kept; a secret
// never is, whatever allow says (DESIGN.md: secrets never reach a run's
// children). hubgate's own children (notifications, speech, the browser
// of `pair`) keep the bus: they start from Environ.
func RunEnviron(allow []string) []string {
	return environWithout(func(name string) bool {
		return isSecretName(name) || slices.Contains(SessionBusNames, name) && !slices.Contains(allow, name)
	})
}

// WithheldFromRuns reports whether RunEnviron withholds the variable name
// when allow does not name it: one of hubgate's secrets (see Environ; they
// are withheld whatever allow says) or of SessionBusNames (the only names
// allow re-admits).
func WithheldFromRuns(name string) bool {
	return IsSecretName(name) || slices.Contains(SessionBusNames, name)
}

// IsSecretName reports whether the environment variable name holds one
// of hubgate's secrets: HUBGATE_ and KEY, SECRET, TOKEN or PASSWORD, or a
// name given to AlsoSecret. Neither Environ nor RunEnviron passes it on.
func IsSecretName(name string) bool { return isSecretName(name) }
