package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/internal/testutil"
)

// reconnectingDaemon is the control side of a running daemon that takes
// a new pairing.
type reconnectingDaemon struct{ refuse bool }

func (reconnectingDaemon) Status(context.Context) (bridge.Status, error) {
	return bridge.Status{}, nil
}
func (reconnectingDaemon) History(context.Context, int) ([]journal.Entry, error) { return nil, nil }
func (reconnectingDaemon) Cancel(context.Context, bool) (bridge.CancelResult, error) {
	return bridge.CancelResult{}, nil
}
func (d reconnectingDaemon) Reconnect(context.Context) (control.ReconnectResult, error) {
	if d.refuse {
		return control.ReconnectResult{}, errors.New("the hub client is stopping")
	}
	return control.ReconnectResult{Paired: true, DeviceID: "dev-2", PID: 4242, Message: "reconnecting with device dev-2"}, nil
}

// pair's last line names the next step, which depends on whether a
// daemon runs (it reconnects: nothing to start, and a second 'hubgate
// run' would exit 5) and on whether a config file exists.
func TestPairEndsWithTheRightNextStep(t *testing.T) {
	for _, tc := range []struct {
		name       string
		configFile bool
		daemon     *reconnectingDaemon
		next       string
		last       string
		not        string
	}{
		{"no daemon, no config file", false, nil, pairing.NextConfigInit, "next: run 'hubgate config init' (there is no config file yet), then 'hubgate run'", ""},
		{"no daemon, a config file", true, nil, pairing.NextRun, "next: run 'hubgate run' to connect", "config init"},
		{"a daemon that reconnects", true, &reconnectingDaemon{}, pairing.NextStatus, "next: nothing to start: the running daemon (pid 4242) now uses this pairing", "'hubgate run'"},
		{"a daemon that reconnects, no config file", false, &reconnectingDaemon{}, pairing.NextStatus, "next: nothing to start", "'hubgate run'"},
		{"a daemon that refuses", true, &reconnectingDaemon{refuse: true}, pairing.NextRestart, "next: restart the running daemon", "nothing to start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sock := filepath.Join(dir, "run", "control.sock")
			if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{
				"XDG_CONFIG_HOME":        filepath.Join(dir, "config"),
				"XDG_DATA_HOME":          filepath.Join(dir, "data"),
				"XDG_RUNTIME_DIR":        filepath.Join(dir, "run"),
				"HUBGATE_CONTROL_SOCKET": sock,
			}
			a := &app{getenv: func(k string) string { return vars[k] }}
			if tc.configFile {
				a.configPath = filepath.Join(dir, "config.yaml")
				if err := os.WriteFile(a.configPath, []byte("log:\n  level: warn\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var stderr testutil.SyncBuffer
			a.stdio = Stdio{In: strings.NewReader(""), Out: &stderr, Err: &stderr}
			if tc.daemon != nil {
				srv, err := control.Listen(control.Config{Path: sock, Handler: *tc.daemon})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- srv.Serve(ctx) }()
				t.Cleanup(func() { cancel(); <-done })
			}
			cfg, err := a.loadConfig(nil)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Bridge.ControlSocket != sock {
				t.Fatalf("control socket %q", cfg.Bridge.ControlSocket)
			}
			res := &pairing.Summary{Next: pairing.NextRun}
			closePair(a.stdio.Err, a.control().TellDaemon(context.Background()), cfg, res)
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			last := lines[len(lines)-1]
			if res.Next != tc.next || !strings.Contains(last, tc.last) {
				t.Errorf("next %q, last line %q; want %q and a last line with %q\n%s", res.Next, last, tc.next, tc.last, stderr.String())
			}
			if tc.not != "" && strings.Contains(last, tc.not) {
				t.Errorf("the last line says %q: %q", tc.not, last)
			}
			if tc.daemon != nil && !tc.daemon.refuse && !strings.Contains(stderr.String(), "the running daemon (pid 4242): reconnecting with device dev-2") {
				t.Errorf("the daemon's answer is not shown:\n%s", stderr.String())
			}
		})
	}
}
