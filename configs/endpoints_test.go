package configs

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadEndpoints(t *testing.T) {
	const sock, journal = "/run/x/hubgate.sock", "/data/x/journal.db"
	cases := []struct {
		name        string
		file        string // "" : no file
		env         map[string]string
		wantBroken  string // substring of the warning; "" : the file loads
		wantSocket  string // "" : the default
		wantJournal string // "" : the default
	}{
		{name: "valid file", file: "bridge:\n  control_socket: " + sock + "\n  journal: " + journal + "\n",
			wantSocket: sock, wantJournal: journal},
		{name: "no file"},
		{name: "bad key elsewhere keeps the file's endpoints",
			file:       "bridge:\n  control_socket: " + sock + "\n  journal: " + journal + "\n  rulez: []\nlog:\n  level: loud\n",
			wantBroken: "bridge.rulez", wantSocket: sock, wantJournal: journal},
		{name: "invalid YAML gives the defaults", file: "bridge: [\n", wantBroken: "invalid YAML"},
		{name: "a bad endpoint takes its default, the good one stays",
			file:       "bridge:\n  control_socket: relative.sock\n  journal: " + journal + "\n",
			wantBroken: "bridge.control_socket", wantJournal: journal},
		{name: "an endpoint of the wrong type takes its default",
			file:       "bridge:\n  control_socket: [1]\n",
			wantBroken: "bridge.control_socket"},
		{name: "the environment still wins over a broken file",
			file: "nonsense: 1\nbridge:\n  control_socket: " + sock + "\n", env: map[string]string{"HUBGATE_CONTROL_SOCKET": "/env/s.sock"},
			wantBroken: "nonsense", wantSocket: "/env/s.sock"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			file := ""
			if tc.file != "" {
				file = f.writeDefault(t, tc.file)
			}
			ep, broken, err := LoadEndpoints(f.opts(LoadOptions{Env: env(tc.env)}))
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantBroken == "" && broken != nil {
				t.Fatalf("broken = %v, want nil", broken)
			}
			if tc.wantBroken != "" {
				mustValidationError(t, broken)
				if !strings.Contains(broken.Error(), tc.wantBroken) {
					t.Fatalf("broken = %v, want it to name %q", broken, tc.wantBroken)
				}
			}
			wantSocket := firstOr(tc.wantSocket, filepath.Join(f.configDir, "hubgate", "control.sock"))
			wantJournal := firstOr(tc.wantJournal, filepath.Join(f.home, ".local", "share", "hubgate", "journal.db"))
			if ep.ControlSocket != wantSocket || ep.Journal != wantJournal || ep.File != file {
				t.Fatalf("endpoints = %+v, want socket %s, journal %s, file %q", ep, wantSocket, wantJournal, file)
			}
		})
	}
}

func TestLoadEndpointsUnreadableFileGivesDefaults(t *testing.T) {
	f := newFixture(t)
	missing := filepath.Join(f.configDir, "nope.yaml") // a named file must exist: Load fails
	ep, broken, err := LoadEndpoints(f.opts(LoadOptions{Path: missing}))
	if err != nil || broken == nil || !strings.Contains(broken.Error(), "nope.yaml") {
		t.Fatalf("err = %v, broken = %v; want no error and a warning naming the file", err, broken)
	}
	if ep.ControlSocket != filepath.Join(f.configDir, "hubgate", "control.sock") || ep.File != "" {
		t.Fatalf("endpoints = %+v, want the default socket and no file", ep)
	}
}

func firstOr(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
