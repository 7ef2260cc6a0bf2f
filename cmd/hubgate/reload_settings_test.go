package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/bridge/daemon"
	"github.com/hubgate/hubgate/configs"
)

// reloadChanges are, per setting a reload compares, a configuration
// fragment that changes it alone (from the defaults).
var reloadChanges = map[string]string{
	"log.level":                          "log: {level: debug}",
	"log.format":                         "log: {format: json}",
	"automate.port":                      "automate: {port: 4320}",
	"automate.workspace":                 "automate: {workspace: /tmp/hubgate-reload-ws}",
	"automate.workspace_restriction":     "automate: {workspace_restriction: /tmp/hubgate-reload-restricted}",
	"automate.tool_wait":                 "automate: {tool_wait: 90s}",
	"automate.models_file":               "automate: {models_file: MODELS}",
	"automate.engine":                    "automate: {engine: openai}",
	"automate.openai.upstream":           "automate: {openai: {upstream: 'http://127.0.0.1:8080'}}",
	"automate.openai.model":              "automate: {openai: {model: qwen3}}",
	"automate.openai.api_key_env":        "automate: {openai: {api_key_env: UPSTREAM_KEY}}",
	"automate.openai.max_steps":          "automate: {openai: {max_steps: 8}}",
	"automate.openai.tool_timeout":       "automate: {openai: {tool_timeout: 30s}}",
	"automate.openai.run_budget":         "automate: {openai: {run_budget: 5m}}",
	"automate.openai.max_output_tokens":  "automate: {openai: {max_output_tokens: 1024}}",
	"automate.openai.context_size":       "automate: {openai: {context_size: 8192}}",
	"automate.openai.thinking_level":     "automate: {openai: {thinking_level: low}}",
	"automate.openai.stream":             "automate: {openai: {stream: false}}",
	"automate.openai.schema_retries":     "automate: {openai: {schema_retries: 1}}",
	"automate.openai.fetch_max_bytes":    "automate: {openai: {fetch_max_bytes: 4096}}",
	"automate.openai.fetch_timeout":      "automate: {openai: {fetch_timeout: 5s}}",
	"automate.openai.skills_dir":         "automate: {openai: {skills_dir: SKILLS}}",
	"automate.openai.skill_budget":       "automate: {openai: {skill_budget: 1}}",
	"automate.openai.mcp_server_budget":  "automate: {openai: {mcp_server_budget: 1}}",
	"automate.openai.conversation_store": "automate: {openai: {conversation_store: /tmp/hubgate-reload-conv.json}}",
	"automate.openai.known_models":       "automate: {openai: {known_models: [{name: qwen3}]}}",
	"automate.openai.mcp_servers":        "automate: {openai: {mcp_servers: [{name: files, command: /bin/true}]}}",
	"automate.target":                    "automate: {target: external}",
	"automate.product":                   "automate: {product: other}",
	"automate.child_env.allow":           "automate: {child_env: {allow: [DBUS_SESSION_BUS_ADDRESS]}}",
	"hub.max_message_bytes":              "hub: {max_message_bytes: 33554432}",
	"secrets":                            "secrets: file",
	"bridge.cancel_grace":                "bridge: {cancel_grace: 3s}",
	"bridge.stop_listening_cancels":      "bridge: {stop_listening_cancels: true}",
	"bridge.listening":                   "bridge: {listening: obey}",
	"bridge.on_shutdown":                 "bridge: {on_shutdown: leave}",
	"bridge.journal":                     "bridge: {journal: /tmp/hubgate-reload/journal.db}",
	"bridge.journal_keep_days":           "bridge: {journal_keep_days: 30}",
	"bridge.control_socket":              "bridge: {control_socket: /tmp/hubgate-reload/control.sock}",
	"bridge.notify":                      "bridge: {notify: failures}",
	"bridge.progress_after":              "bridge: {progress_after: 1m}",
	"bridge.ask":                         "bridge: {ask: true}",
	"bridge.ask_timeout":                 "bridge: {ask_timeout: 8s}",
	"bridge.speech.command":              "bridge: {speech: {command: [espeak-ng, '{text}']}}",
	"bridge.speech.max_chars":            "bridge: {speech: {max_chars: 100}}",
	"bridge.status_page.enabled":         "bridge: {status_page: {enabled: false}}",
	"bridge.status_page.port":            "bridge: {status_page: {port: 8123}}",
}

// reloadLive are the settings a reload applies to the running daemon;
// the others apply after a restart.
var reloadLive = []string{"bridge.cancel_grace", "bridge.stop_listening_cancels", "bridge.listening", "bridge.on_shutdown",
	"bridge.notify", "bridge.ask", "bridge.ask_timeout"}

// reloadReported names the settings a reload of cur to nu reports: live
// (applied) and restart (after a restart), as reloadDaemon does.
func reloadReported(t *testing.T, cur, nu *configs.Config) (live, restart []string) {
	t.Helper()
	p := daemonParams{deviceID: "device-1", apiURL: "http://127.0.0.1:1", automateKey: "k"}
	oc, err := daemonOptions(cur, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	on, err := daemonOptions(nu, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	live, restart = daemon.ChangedSettings(oc, on)
	return live, append(restart, outsideDaemonOptions(configs.Changed(cur, nu))...)
}

// A reload names exactly the settings that changed: each setting changed
// alone is named alone, as applied when it can be applied live and as
// needing a restart otherwise; nothing changed names nothing. The rules
// (bridge.rules, command_tools, unmatched) are described rule by rule by
// the daemon's Reload (bridge/daemon's tests), and the remote section is
// read by `hubgate pair`, not by the daemon.
func TestAReloadNamesExactlyTheSettingsThatChanged(t *testing.T) {
	dir := t.TempDir()
	models := filepath.Join(dir, "models.json")
	if err := os.WriteFile(models, []byte(`{"models":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	skills := filepath.Join(dir, "skills")
	if err := os.Mkdir(skills, 0o700); err != nil {
		t.Fatal(err)
	}
	load := func(t *testing.T, yaml string) *configs.Config {
		t.Helper()
		path := filepath.Join(dir, "config.yaml")
		yaml = strings.NewReplacer("MODELS", models, "SKILLS", skills).Replace(yaml)
		if err := os.WriteFile(path, []byte(yaml+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := configs.Load(configs.LoadOptions{Path: path, Env: func(string) string { return "" },
			UserConfigDir: func() (string, error) { return dir, nil }, HomeDir: func() (string, error) { return dir, nil }})
		if err != nil {
			t.Fatalf("%s: %v", yaml, err)
		}
		return cfg
	}
	base := load(t, "{}")
	for _, path := range configs.Settings() {
		if strings.HasPrefix(path, "remote.") || path == "bridge.rules" || path == "bridge.command_tools" || strings.HasPrefix(path, "bridge.unmatched.") {
			continue
		}
		if _, ok := reloadChanges[path]; !ok {
			t.Errorf("setting %s: no reload case (add one to reloadChanges)", path)
		}
	}
	if live, restart := reloadReported(t, base, load(t, "{}")); len(live)+len(restart) != 0 {
		t.Errorf("nothing changed, but the reload names %q and %q", live, restart)
	}
	for path, yaml := range reloadChanges {
		t.Run(path, func(t *testing.T) {
			nu := load(t, yaml)
			if got := configs.Changed(base, nu); !slices.Equal(got, []string{path}) {
				t.Fatalf("the fragment %q changes %q, not only %s", yaml, got, path)
			}
			live, restart := reloadReported(t, base, nu)
			want, wantRestart := []string{path}, []string(nil)
			if !slices.Contains(reloadLive, path) {
				want, wantRestart = nil, []string{path}
			}
			if !slices.Equal(live, want) || !slices.Equal(restart, wantRestart) {
				t.Errorf("the reload names %q as applied and %q as needing a restart; want %q and %q", live, restart, want, wantRestart)
			}
		})
	}
}
