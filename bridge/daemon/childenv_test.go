package daemon

import (
	"slices"
	"testing"
)

// A changed automate.child_env.allow is not applied by a reload (the
// engine and the command tools took it at start): the reload says it
// needs a restart.
func TestReloadSaysChildEnvNeedsARestart(t *testing.T) {
	f := newFixture(t)
	f.opts.Rules = compile(t, "unmatched: {action: ignore}\n")
	d := f.start(t)
	waitListening(t, f, d, f.device)
	o := f.opts
	o.Automate.ChildEnvAllow = []string{"DBUS_SESSION_BUS_ADDRESS"}
	_, restart, err := d.Reload(o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(restart, []string{"automate.child_env.allow"}) {
		t.Errorf("restart list %q", restart)
	}
}
