package main

import (
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge"
)

// TestDemoDaemonOptionsMapTheEmbeddedDefaultsAsRunDoes: the demo's daemon
// options are `run`'s mapping (daemonOptions) of the embedded defaults,
// with the engine they name: a config file and HUBGATE_ variables that
// would change them are not read, and every path lies in the demo's dir
// (nothing of this user's directories).
func TestDemoDaemonOptionsMapTheEmbeddedDefaultsAsRunDoes(t *testing.T) {
	cfgHome := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfgHome, "hubgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgHome, "hubgate", "config.yaml"), []byte("automate:\n  target: external\nbridge:\n  cancel_grace: 3s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	t.Setenv("HUBGATE_AUTOMATE_TARGET", "external")
	t.Setenv("HUBGATE_HUB_MAX_MESSAGE_BYTES", "70000")

	options, closeEngine := demoDaemonOptions(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer closeEngine()
	dir := t.TempDir()
	o, err := options(dir)
	if err != nil {
		t.Fatal(err)
	}
	if o.Automate.External || o.Automate.Assistant == nil {
		t.Errorf("Automate: External %v, Assistant %v; want the co-hosted server with the defaults' scripted engine", o.Automate.External, o.Automate.Assistant)
	}
	for name, c := range map[string]struct{ got, want any }{
		"Bridge.CancelGrace":    {o.Bridge.CancelGrace, 10 * time.Second},
		"Bridge.Listening":      {o.Bridge.Listening, bridge.ListenFollowVendor},
		"Bridge.OnShutdown":     {o.Bridge.OnShutdown, bridge.ShutdownCancel},
		"Bridge.AskTimeout":     {o.Bridge.AskTimeout, 100 * time.Second},
		"Automate.ToolWait":     {o.Automate.ToolWait, 2 * time.Minute},
		"Automate.Product":      {o.Automate.Product, "service"},
		"Automate.AppVersion":   {o.Automate.AppVersion, version()},
		"Outputs.Notify":        {o.Outputs.Notify, "answers"},
		"Outputs.ProgressAfter": {o.Outputs.ProgressAfter, 10 * time.Second},
		"Outputs.StatusPage":    {o.Outputs.StatusPage, true},
		"HubMaxMessageSize":     {o.HubMaxMessageSize, int64(16 << 20)},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want the defaults' %v", name, c.got, c.want)
		}
	}
	for name, p := range map[string]string{"JournalPath": o.JournalPath, "ControlSocket": o.ControlSocket, "Automate.Workspace": o.Automate.Workspace} {
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Errorf("%s = %s: not in the demo's dir %s", name, p, dir)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "home")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the stand-in user dir was made (stat: %v)", err)
	}
}
