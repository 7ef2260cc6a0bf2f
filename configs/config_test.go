package configs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hubgate/hubgate/bridge/rules"
)

// env returns an Env lookup over a fixed map (nothing from the real
// environment leaks into these tests).
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// fixture is a temporary user config dir and home dir.
type fixture struct {
	configDir, home string
}

func newFixture(t *testing.T) fixture {
	return fixture{configDir: t.TempDir(), home: t.TempDir()}
}

func (f fixture) opts(o LoadOptions) LoadOptions {
	if o.Env == nil {
		o.Env = env(nil)
	}
	o.UserConfigDir = func() (string, error) { return f.configDir, nil }
	o.HomeDir = func() (string, error) { return f.home, nil }
	o.CheckRules = compileRules
	return o
}

// writeDefault writes the default config file of the fixture.
func (f fixture) writeDefault(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(f.configDir, "hubgate", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustValidationError(t *testing.T, err error) *ValidationError {
	t.Helper()
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("want *ValidationError, got %T: %v", err, err)
	}
	return verr
}

func TestLoadDefaults(t *testing.T) {
	f := newFixture(t)
	cfg, err := Load(f.opts(LoadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Log:     LogConfig{Level: "info", Format: "text"},
		Secrets: "auto",
		Remote:  RemoteConfig{TokenGrant: "code"},
		Automate: AutomateConfig{
			Workspace: filepath.Join(f.configDir, "hubgate", "automate-http-workspace"),
			ToolWait:  2 * time.Minute,
			Engine:    "scripted",
			OpenAI: OpenAIConfig{
				Upstream:          "http://127.0.0.1:11434",
				MaxSteps:          32,
				ToolTimeout:       2 * time.Minute,
				MaxOutputTokens:   4096,
				Stream:            true,
				SchemaRetries:     3,
				FetchMaxBytes:     1 << 20,
				FetchTimeout:      20 * time.Second,
				SkillBudget:       3,
				McpServerBudget:   2,
				ConversationStore: filepath.Join(f.configDir, "hubgate", "automate-conversation.json"),
			},
			Target: "cohosted", Product: "service",
		},
		Hub: HubConfig{MaxMessageBytes: 16 << 20},
		Bridge: BridgeConfig{
			Unmatched:     rules.UnmatchedSpec{Action: "ignore", Busy: "single", MaxAge: 10 * time.Minute},
			CancelGrace:   10 * time.Second,
			ProgressAfter: 10 * time.Second,
			OnShutdown:    "cancel",
			Listening:     "follow-vendor",
			Journal:       filepath.Join(f.home, ".local", "share", "hubgate", "journal.db"),
			ControlSocket: filepath.Join(f.configDir, "hubgate", "control.sock"),
			Notify:        "answers",
			AskTimeout:    100 * time.Second,
			Speech:        SpeechConfig{MaxChars: 400},
			StatusPage:    StatusPageConfig{Enabled: true},
		},
	}
	got := *cfg
	got.sources, got.file = nil, ""
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", got, want)
	}
	if cfg.File() != "" {
		t.Fatalf("File() = %q with no config file", cfg.File())
	}
	if s := cfg.Source("log.level"); s != "defaults" {
		t.Fatalf("Source(log.level) = %q", s)
	}
	if s := cfg.Source("automate.workspace"); s != "default (user config dir)" {
		t.Fatalf("Source(automate.workspace) = %q", s)
	}
}

// TestDefaultsFileDocumentsEverySetting: every field of the schema has a
// key in defaults.yaml and the file has no other keys, so the embedded
// file stays a complete, commented template.
func TestDefaultsFileDocumentsEverySetting(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal(DefaultsYAML(), &doc); err != nil {
		t.Fatal(err)
	}
	var inFile []string
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if v.Kind == yaml.MappingNode {
				walk(v, prefix+k+".")
			} else {
				inFile = append(inFile, prefix+k)
			}
		}
	}
	walk(doc.Content[0], "")
	schema := leafPaths(reflect.TypeFor[Config](), "")
	slices.Sort(inFile)
	slices.Sort(schema)
	if !slices.Equal(inFile, schema) {
		t.Fatalf("defaults.yaml keys %v\nschema paths   %v", inFile, schema)
	}
	if !strings.Contains(string(DefaultsYAML()), "never go in this file") {
		t.Fatal("defaults.yaml lost its note about secrets")
	}
}

func TestDefaultPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	p, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "hubgate", "config.yaml"); p != want {
		t.Fatalf("DefaultPath() = %q, want %q", p, want)
	}
}

func TestLoadFiles(t *testing.T) {
	t.Run("default file is read", func(t *testing.T) {
		f := newFixture(t)
		p := f.writeDefault(t, "log:\n  level: debug\n")
		cfg, err := Load(f.opts(LoadOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Log.Level != "debug" || cfg.File() != p || cfg.Source("log.level") != p+":2" {
			t.Fatalf("level %q file %q source %q", cfg.Log.Level, cfg.File(), cfg.Source("log.level"))
		}
		if cfg.Log.Format != "text" || cfg.Source("log.format") != "defaults" {
			t.Fatal("a key absent from the file lost its default")
		}
	})
	t.Run("missing default file is fine", func(t *testing.T) {
		f := newFixture(t)
		if _, err := Load(f.opts(LoadOptions{})); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("missing named file is an error", func(t *testing.T) {
		f := newFixture(t)
		_, err := Load(f.opts(LoadOptions{Path: filepath.Join(f.configDir, "nope.yaml")}))
		var verr *ValidationError
		if !errors.Is(err, fs.ErrNotExist) || errors.As(err, &verr) || !strings.Contains(err.Error(), "nope.yaml") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("named file replaces the default one", func(t *testing.T) {
		f := newFixture(t)
		f.writeDefault(t, "log:\n  level: debug\n")
		named := filepath.Join(t.TempDir(), "other.yaml")
		if err := os.WriteFile(named, []byte("log:\n  format: json\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(f.opts(LoadOptions{Path: named}))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Log.Level != "info" || cfg.Log.Format != "json" || cfg.File() != named {
			t.Fatalf("%+v from %q", cfg.Log, cfg.File())
		}
	})
	t.Run("a directory is not a config file", func(t *testing.T) {
		f := newFixture(t)
		_, err := Load(f.opts(LoadOptions{Path: f.configDir}))
		if err == nil || !strings.Contains(err.Error(), "read config file") {
			t.Fatalf("err %v", err)
		}
	})
	for _, content := range []string{"", "# only comments\n", "---\n", "log:\n", "log: ~\nautomate: {}\n"} {
		t.Run("empty-ish file "+strings.ReplaceAll(content, "\n", `\n`), func(t *testing.T) {
			f := newFixture(t)
			f.writeDefault(t, content)
			cfg, err := Load(f.opts(LoadOptions{}))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Log.Level != "info" || cfg.Automate.ToolWait != 2*time.Minute {
				t.Fatalf("defaults lost: %+v", cfg)
			}
		})
	}
}

func TestLoadPrecedence(t *testing.T) {
	const file = "log:\n  level: warn\nautomate:\n  port: 4320\n  tool_wait: 30s\n"
	tests := []struct {
		name      string
		env       map[string]string
		overrides []Override
		level     string
		port      int
		toolWait  time.Duration
		sources   map[string]string // path -> source ("FILE" stands for the file)
	}{
		{name: "file over defaults", level: "warn", port: 4320, toolWait: 30 * time.Second,
			sources: map[string]string{"log.level": "FILE:2", "automate.port": "FILE:4", "log.format": "defaults"}},
		{name: "env over file",
			env:   map[string]string{"HUBGATE_LOG_LEVEL": "debug", "HUBGATE_AUTOMATE_PORT": "4325", "HUBGATE_TOOL_WAIT": "5m"},
			level: "debug", port: 4325, toolWait: 5 * time.Minute,
			sources: map[string]string{"log.level": "HUBGATE_LOG_LEVEL", "automate.port": "HUBGATE_AUTOMATE_PORT", "automate.tool_wait": "HUBGATE_TOOL_WAIT"}},
		{name: "empty env counts as unset", env: map[string]string{"HUBGATE_LOG_LEVEL": "", "HUBGATE_AUTOMATE_PORT": ""},
			level: "warn", port: 4320, toolWait: 30 * time.Second,
			sources: map[string]string{"log.level": "FILE:2"}},
		{name: "overrides over env",
			env: map[string]string{"HUBGATE_LOG_LEVEL": "debug", "HUBGATE_AUTOMATE_PORT": "4325"},
			overrides: []Override{{Path: "log.level", Value: "error", Origin: "flag --log-level"},
				{Path: "automate.port", Value: "0"}},
			level: "error", port: 0, toolWait: 30 * time.Second,
			sources: map[string]string{"log.level": "flag --log-level", "automate.port": "override"}},
		{name: "later override wins",
			overrides: []Override{{Path: "automate.tool_wait", Value: "1m"}, {Path: "automate.tool_wait", Value: "90s", Origin: "flag --tool-wait"}},
			level:     "warn", port: 4320, toolWait: 90 * time.Second,
			sources: map[string]string{"automate.tool_wait": "flag --tool-wait"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.writeDefault(t, file)
			cfg, err := Load(f.opts(LoadOptions{Env: env(tc.env), Overrides: tc.overrides}))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Log.Level != tc.level || cfg.Automate.Port != tc.port || cfg.Automate.ToolWait != tc.toolWait {
				t.Fatalf("level %q port %d tool_wait %s", cfg.Log.Level, cfg.Automate.Port, cfg.Automate.ToolWait)
			}
			for path, want := range tc.sources {
				want = strings.Replace(want, "FILE", p, 1)
				if got := cfg.Source(path); got != want {
					t.Errorf("Source(%s) = %q, want %q", path, got, want)
				}
			}
		})
	}
}

// TestEnvTable sets each variable of the table alone and checks it lands
// on its field.
func TestEnvTable(t *testing.T) {
	values := map[string]string{
		"log.level": "debug", "log.format": "json",
		"remote.api_url": "https://api.example.com", "remote.auth_url": "https://login.example.com/authorize",
		"remote.client_id": "client-1", "remote.device_type_id": "dt-7", "remote.redirect_uri": "http://127.0.0.1:51772/",
		"automate.port": "4321", "automate.workspace": "/srv/ws", "automate.tool_wait": "45s",
		"automate.engine": "openai", "automate.openai.upstream": "http://10.0.0.5:8080", "automate.openai.model": "qwen3:8b",
		"automate.target": "external", "bridge.journal": "/var/lib/me/journal.db", "bridge.control_socket": "/run/me/hubgate.sock",
		"automate.product": "acme", "hub.max_message_bytes": "4194304",
	}
	want := map[string]string{
		"HUBGATE_LOG_LEVEL": "log.level", "HUBGATE_LOG_FORMAT": "log.format",
		"HUBGATE_API_URL": "remote.api_url", "HUBGATE_AUTH_URL": "remote.auth_url",
		"HUBGATE_CLIENT_ID": "remote.client_id", "HUBGATE_DEVICE_TYPE": "remote.device_type_id",
		"HUBGATE_REDIRECT_URI":  "remote.redirect_uri",
		"HUBGATE_AUTOMATE_PORT": "automate.port", "HUBGATE_AUTOMATE_WORKSPACE": "automate.workspace",
		"HUBGATE_TOOL_WAIT":       "automate.tool_wait",
		"HUBGATE_AUTOMATE_ENGINE": "automate.engine", "HUBGATE_OPENAI_UPSTREAM": "automate.openai.upstream",
		"HUBGATE_OPENAI_MODEL":    "automate.openai.model",
		"HUBGATE_AUTOMATE_TARGET": "automate.target", "HUBGATE_JOURNAL": "bridge.journal",
		"HUBGATE_CONTROL_SOCKET": "bridge.control_socket", "HUBGATE_AUTOMATE_PRODUCT": "automate.product",
		"HUBGATE_HUB_MAX_MESSAGE_BYTES": "hub.max_message_bytes",
	}
	table := envVars
	if len(table) != len(want) {
		t.Fatalf("envVars has %d entries, want %d", len(table), len(want))
	}
	for _, ev := range table {
		if want[ev.Name] != ev.Path {
			t.Fatalf("%s maps to %q, want %q", ev.Name, ev.Path, want[ev.Name])
		}
		for _, w := range []string{"KEY", "SECRET", "TOKEN", "PASSWORD"} {
			if strings.Contains(ev.Name, w) {
				t.Fatalf("%s looks like a secret; configs never reads secrets", ev.Name)
			}
		}
		t.Run(ev.Name, func(t *testing.T) {
			f := newFixture(t)
			cfg, err := Load(f.opts(LoadOptions{Env: env(map[string]string{ev.Name: values[ev.Path]})}))
			if err != nil {
				t.Fatal(err)
			}
			fv, ok := fieldByPath(reflect.ValueOf(cfg).Elem(), ev.Path)
			if !ok {
				t.Fatalf("no field %s", ev.Path)
			}
			if got := fmt.Sprint(fv.Interface()); got != values[ev.Path] {
				t.Fatalf("%s = %s, want %s", ev.Path, got, values[ev.Path])
			}
			if cfg.Source(ev.Path) != ev.Name {
				t.Fatalf("Source = %q", cfg.Source(ev.Path))
			}
		})
	}
}

func TestLoadDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // every FieldError.String(), "FILE" stands for the file path
	}{
		{"unknown section", "lgo:\n  level: debug\n",
			[]string{"lgo: unknown key; known sections: log, remote, automate, hub, bridge, secrets (FILE:1)"}},
		{"unknown nested key", "log:\n  level: debug\n  colour: true\n",
			[]string{"log.colour: unknown key; known keys of log: level, format (FILE:3)"}},
		{"unknown key deeper in the file", "automate:\n  port: 4317\n  tool-wait: 1m\n",
			[]string{"automate.tool-wait: unknown key; known keys of automate: port, workspace, workspace_restriction, tool_wait, models_file, engine, openai, target, product, child_env (FILE:3)"}},
		{"secret-looking key", "remote:\n  client_secret: hunter2\n",
			[]string{"remote.client_secret: unknown key; known keys of remote: api_url, auth_url, client_id, device_type_id, redirect_uri, token_grant, allow_missing_state; secrets are never read from the config file, hubgate keeps them in the OS secret store (FILE:2)"}},
		{"duplicate key", "log:\n  level: debug\n  level: warn\n",
			[]string{"log.level: duplicate key (first set at line 2) (FILE:3)"}},
		{"bad integer", "automate:\n  port: forty\n",
			[]string{`automate.port: must be an integer; got "forty" (FILE:2)`}},
		{"duration without unit", "automate:\n  tool_wait: 120\n",
			[]string{`automate.tool_wait: must be a duration with a unit, such as 90s, 2m or 1h30m; got "120" (FILE:2)`}},
		{"mapping for a value", "log:\n  level:\n    name: debug\n",
			[]string{"log.level: must be a single value, not a mapping (FILE:3)"}},
		{"list for a value", "automate:\n  engine: [scripted]\n",
			[]string{"automate.engine: must be a single value, not a list (FILE:2)"}},
		{"value for a section", "log: debug\n",
			[]string{"log: must be a mapping of keys (level, format), not a single value (FILE:1)"}},
		{"list at the top", "- log\n",
			[]string{"the file must be a mapping of sections (log, remote, automate, hub, bridge, secrets), not a list (FILE:1)"}},
		{"syntax error", "log:\n  level: debug\n format: json\n",
			[]string{"invalid YAML: did not find expected key (FILE:2)"}}, // yaml.v3 names the line of the enclosing block
		{"two documents", "log:\n  level: debug\n---\nlog:\n  level: warn\n",
			[]string{"more than one YAML document; a config file holds exactly one (FILE:3)"}},
		{"null value is zero, then invalid", "automate:\n  tool_wait: ~\n",
			[]string{"automate.tool_wait: must be a positive duration; got 0s (FILE:2)"}},
		{"all problems at once", "log:\n  level: loud\n  format: xml\nautomate:\n  port: x\n  bogus: 1\n",
			[]string{
				`automate.port: must be an integer; got "x" (FILE:5)`,
				"automate.bogus: unknown key; known keys of automate: port, workspace, workspace_restriction, tool_wait, models_file, engine, openai, target, product, child_env (FILE:6)",
				`log.level: must be one of debug, info, warn, error; got "loud" (FILE:2)`,
				`log.format: must be one of text, json; got "xml" (FILE:3)`,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.writeDefault(t, tc.file)
			_, err := Load(f.opts(LoadOptions{}))
			verr := mustValidationError(t, err)
			var got []string
			for _, pr := range verr.Problems {
				got = append(got, pr.String())
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, strings.ReplaceAll(w, "FILE", p))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("problems:\n got %q\nwant %q", got, want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatal("an error echoes the value of a secret-looking key")
			}
		})
	}
}

func TestValidationMessages(t *testing.T) {
	tests := []struct {
		name string
		ov   []Override // applied on top of the defaults
		want string     // the single problem, without its source
	}{
		{"log level", []Override{{Path: "log.level", Value: "verbose"}}, `log.level: must be one of debug, info, warn, error; got "verbose"`},
		{"log level is case sensitive", []Override{{Path: "log.level", Value: "DEBUG"}}, `log.level: must be one of debug, info, warn, error; got "DEBUG"`},
		{"log format", []Override{{Path: "log.format", Value: "xml"}}, `log.format: must be one of text, json; got "xml"`},
		{"api url scheme", []Override{{Path: "remote.api_url", Value: "ftp://api.example.com"}},
			`remote.api_url: must be an absolute http(s) URL such as https://api.example.com; got "ftp://api.example.com"`},
		{"api url relative", []Override{{Path: "remote.api_url", Value: "api.example.com"}},
			`remote.api_url: must be an absolute http(s) URL such as https://api.example.com; got "api.example.com"`},
		{"api url plain http", []Override{{Path: "remote.api_url", Value: "http://api.example.com"}},
			`remote.api_url: must use https (plain http is allowed only for loopback hosts such as 127.0.0.1); got "http://api.example.com"`},
		{"api url query", []Override{{Path: "remote.api_url", Value: "https://api.example.com/?x=1"}},
			`remote.api_url: must not have a query or fragment; got "https://api.example.com/?x=1"`},
		{"api url credentials", []Override{{Path: "remote.api_url", Value: "https://bob:pw@api.example.com"}},
			`remote.api_url: must not contain user info (credentials never go in the configuration)`},
		{"auth url", []Override{{Path: "remote.auth_url", Value: "https://"}},
			`remote.auth_url: must be an absolute http(s) URL such as https://api.example.com; got "https://"`},
		{"port negative", []Override{{Path: "automate.port", Value: "-1"}},
			`automate.port: must be 0 (the first free port of 4317..4328) or a TCP port 1..65535; got -1`},
		{"port too big", []Override{{Path: "automate.port", Value: "70000"}},
			`automate.port: must be 0 (the first free port of 4317..4328) or a TCP port 1..65535; got 70000`},
		{"hub message limit small", []Override{{Path: "hub.max_message_bytes", Value: "1024"}},
			`hub.max_message_bytes: must be 0 (the default, 16 MiB) or 65536..1073741824 bytes; got 1024`},
		{"hub message limit negative", []Override{{Path: "hub.max_message_bytes", Value: "-1"}},
			`hub.max_message_bytes: must be 0 (the default, 16 MiB) or 65536..1073741824 bytes; got -1`},
		{"hub message limit huge", []Override{{Path: "hub.max_message_bytes", Value: "2147483648"}},
			`hub.max_message_bytes: must be 0 (the default, 16 MiB) or 65536..1073741824 bytes; got 2147483648`},
		{"workspace relative", []Override{{Path: "automate.workspace", Value: "ws"}}, `automate.workspace: must be an absolute path; got "ws"`},
		{"restriction relative", []Override{{Path: "automate.workspace_restriction", Value: "./r"}}, `automate.workspace_restriction: must be an absolute path; got "./r"`},
		{"models file relative", []Override{{Path: "automate.models_file", Value: "models.json"}}, `automate.models_file: must be an absolute path; got "models.json"`},
		{"tool wait zero", []Override{{Path: "automate.tool_wait", Value: "0s"}}, `automate.tool_wait: must be a positive duration; got 0s`},
		{"tool wait negative", []Override{{Path: "automate.tool_wait", Value: "-5s"}}, `automate.tool_wait: must be a positive duration; got -5s`},
		{"engine", []Override{{Path: "automate.engine", Value: "gpt"}}, `automate.engine: must be one of scripted, openai; got "gpt"`},
		{"unknown override", []Override{{Path: "automate.speed", Value: "1"}}, `automate.speed: unknown setting`},
		{"override naming a section", []Override{{Path: "automate", Value: "1"}}, `automate: unknown setting`},
		{"bad override value", []Override{{Path: "automate.port", Value: "4317x", Origin: "flag --port"}}, `automate.port: must be an integer; got "4317x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			for i := range tc.ov {
				if tc.ov[i].Origin == "" {
					tc.ov[i].Origin = "test"
				}
			}
			_, err := Load(f.opts(LoadOptions{Overrides: tc.ov}))
			verr := mustValidationError(t, err)
			if len(verr.Problems) != 1 {
				t.Fatalf("problems %v", verr.Problems)
			}
			p := verr.Problems[0]
			p.Source = ""
			if p.String() != tc.want {
				t.Fatalf("got  %q\nwant %q", p.String(), tc.want)
			}
			if verr.Problems[0].Source != tc.ov[len(tc.ov)-1].Origin {
				t.Fatalf("source %q", verr.Problems[0].Source)
			}
			if err.Error() != "invalid configuration: "+tc.want+" ("+tc.ov[0].Origin+")" {
				t.Fatalf("Error() = %q", err.Error())
			}
			if strings.Contains(err.Error(), "bob:pw") {
				t.Fatal("credentials echoed")
			}
		})
	}
}

func TestValidURLs(t *testing.T) {
	for _, u := range []string{"https://api.example.com", "https://api.example.com/base/", "http://127.0.0.1:8080",
		"http://localhost:9000", "http://[::1]:8080/x"} {
		f := newFixture(t)
		cfg, err := Load(f.opts(LoadOptions{Env: env(map[string]string{"HUBGATE_API_URL": u, "HUBGATE_AUTH_URL": u})}))
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		if cfg.Remote.APIURL != u {
			t.Errorf("api_url %q", cfg.Remote.APIURL)
		}
	}
}

func TestValidationErrorListsEverything(t *testing.T) {
	f := newFixture(t)
	_, err := Load(f.opts(LoadOptions{Env: env(map[string]string{
		"HUBGATE_LOG_LEVEL": "loud", "HUBGATE_TOOL_WAIT": "-1s", "HUBGATE_AUTOMATE_PORT": "nope"})}))
	verr := mustValidationError(t, err)
	want := `invalid configuration (3 problems): automate.port: must be an integer; got "nope" (HUBGATE_AUTOMATE_PORT); ` +
		`log.level: must be one of debug, info, warn, error; got "loud" (HUBGATE_LOG_LEVEL); ` +
		`automate.tool_wait: must be a positive duration; got -1s (HUBGATE_TOOL_WAIT)`
	if err.Error() != want {
		t.Fatalf("got  %s\nwant %s", err.Error(), want)
	}
	if len(verr.Problems) != 3 {
		t.Fatal(verr.Problems)
	}
}

func TestPathsExpandAndDefault(t *testing.T) {
	f := newFixture(t)
	f.writeDefault(t, "automate:\n  workspace: ~/ws\n  models_file: ~/m/models.json\n  workspace_restriction: /restricted\n")
	cfg, err := Load(f.opts(LoadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Automate
	if a.Workspace != filepath.Join(f.home, "ws") || a.ModelsFile != filepath.Join(f.home, "m", "models.json") || a.WorkspaceRestriction != "/restricted" {
		t.Fatalf("%+v", a)
	}

	t.Run("no user config dir", func(t *testing.T) {
		o := f.opts(LoadOptions{})
		o.UserConfigDir = func() (string, error) { return "", errors.New("neither $XDG_CONFIG_HOME nor $HOME are defined") }
		o.Env = env(map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}) // the control socket's default
		_, err := Load(o)
		verr := mustValidationError(t, err)
		if len(verr.Problems) != 1 || verr.Problems[0].Path != "automate.workspace" ||
			!strings.Contains(verr.Problems[0].Message, "needs a user config directory: neither $XDG_CONFIG_HOME nor $HOME are defined") {
			t.Fatalf("%v", err)
		}
		// ... unless the workspace is given.
		o.Env = env(map[string]string{"HUBGATE_AUTOMATE_WORKSPACE": "/w", "XDG_RUNTIME_DIR": "/run/user/1000"})
		if cfg, err := Load(o); err != nil || cfg.Automate.Workspace != "/w" {
			t.Fatalf("%v", err)
		}
	})
}

func TestConfigHelpers(t *testing.T) {
	// Validate on a hand-built Config reports without sources.
	err := (&Config{}).Validate(nil)
	verr := mustValidationError(t, err)
	var paths []string
	for _, p := range verr.Problems {
		paths = append(paths, p.Path)
		if p.Source != "" {
			t.Fatalf("source %q on a hand-built config", p.Source)
		}
	}
	if !slices.Equal(paths, []string{"log.level", "log.format", "automate.workspace", "automate.tool_wait", "automate.engine", "automate.product",
		"automate.target", "bridge.cancel_grace", "bridge.listening", "bridge.on_shutdown", "bridge.journal", "bridge.control_socket"}) {
		t.Fatalf("zero Config problems: %v", paths)
	}
}

func TestOpenAISectionFromFile(t *testing.T) {
	f := newFixture(t)
	f.writeDefault(t, `automate:
  engine: openai
  openai:
    upstream: http://127.0.0.1:8080/v1
    model: qwen3:8b
    api_key_env: MY_UPSTREAM_KEY
    max_steps: 12
    thinking_level: max
    skills_dir: ~/skills
    known_models:
      - {name: "qwen3:32b", family: qwen3, parameter_count_billions: 32.8, file_size_mb: 20000, supports_tools: true}
    mcp_servers:
      - name: files
        description: My notes
        transport: stdio
        command: npx
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/notes"]
        env: {NOTES_TOKEN: "${NOTES_TOKEN}", LANG: C}
        require_approval: false
      - name: tracker
        description: The tracker
        transport: http
        url: https://mcp.example.com/mcp
        headers: {Authorization: "Bearer ${TRACKER_TOKEN}"}
        disabled_tools: [delete_issue]
`)
	cfg, err := Load(f.opts(LoadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Automate.OpenAI
	if o.Upstream != "http://127.0.0.1:8080/v1" || o.Model != "qwen3:8b" || o.APIKeyEnv != "MY_UPSTREAM_KEY" || o.MaxSteps != 12 ||
		o.ThinkingLevel != "max" || o.SkillsDir != filepath.Join(f.home, "skills") || o.ToolTimeout != 2*time.Minute {
		t.Fatalf("%+v", o)
	}
	if len(o.KnownModels) != 1 || o.KnownModels[0] != (KnownModel{Name: "qwen3:32b", Family: "qwen3", ParameterCountBillions: 32.8, FileSizeMb: 20000, SupportsTools: true}) {
		t.Fatalf("known models %+v", o.KnownModels)
	}
	if len(o.McpServers) != 2 {
		t.Fatalf("mcp servers %+v", o.McpServers)
	}
	files, tracker := o.McpServers[0], o.McpServers[1]
	if files.Name != "files" || files.Transport != "stdio" || files.Command != "npx" ||
		!slices.Equal(files.Args, []string{"-y", "@modelcontextprotocol/server-filesystem", "/notes"}) ||
		files.Env["NOTES_TOKEN"] != "${NOTES_TOKEN}" || files.Env["LANG"] != "C" || files.NeedsApproval() {
		t.Fatalf("files %+v", files)
	}
	if tracker.URL != "https://mcp.example.com/mcp" || tracker.Headers["Authorization"] != "Bearer ${TRACKER_TOKEN}" ||
		!tracker.NeedsApproval() || !slices.Equal(tracker.DisabledTools, []string{"delete_issue"}) {
		t.Fatalf("tracker %+v (approval defaults to true)", tracker)
	}
	if got := o.McpServerNames(); !slices.Equal(got, []string{"files", "tracker"}) {
		t.Fatalf("names %v", got)
	}
	if s := cfg.Source("automate.openai.mcp_servers[1].url"); !strings.HasSuffix(s, "config.yaml:23") {
		t.Fatalf("source of a list item's key = %q", s)
	}
}

func TestOpenAISectionProblems(t *testing.T) {
	tests := []struct {
		name, section string
		want          []string // problem strings without sources
	}{
		{"upstream scheme", "upstream: ftp://x", []string{`automate.openai.upstream: must be an absolute http(s) URL such as http://127.0.0.1:11434; got "ftp://x"`}},
		{"upstream credentials", "upstream: http://me:pw@127.0.0.1:11434", []string{`automate.openai.upstream: must not contain user info (credentials never go in the configuration)`}},
		{"key in place of a name", "api_key_env: sk-abc123", []string{`automate.openai.api_key_env: must be the name of an environment variable (letters, digits, _), not the key itself`}},
		{"budgets", "max_steps: 0\nschema_retries: 0\ntool_timeout: 0s\nrun_budget: -1s\nthinking_level: huge",
			[]string{"automate.openai.max_steps: must be at least 1; got 0", "automate.openai.schema_retries: must be at least 1; got 0",
				"automate.openai.tool_timeout: must be a positive duration; got 0s", "automate.openai.run_budget: must be 0 (none) or a positive duration; got -1s",
				`automate.openai.thinking_level: must be empty or one of low, medium, high, max; got "huge"`}},
		{"relative skills dir", "skills_dir: skills", []string{`automate.openai.skills_dir: must be an absolute path; got "skills"`}},
		{"known models", "known_models:\n      - {name: a}\n      - {name: A, file_size_mb: -1}\n      - {family: x}",
			[]string{`automate.openai.known_models[1].name: "A" is already listed at known_models[0]`, "automate.openai.known_models[1].file_size_mb: must not be negative",
				"automate.openai.known_models[2].name: must be set"}},
		{"mcp server rules", `mcp_servers:
      - {name: Bad--Name, description: x, transport: stdio}
      - {name: web, description: x, transport: http, url: "not a url", command: node}
      - {name: web, description: x, transport: pigeon}
      - {name: leak, description: x, transport: sse, url: "http://127.0.0.1:1/sse", headers: {Authorization: "Bearer abc123"}}
      - {name: envleak, description: x, transport: stdio, command: srv, env: {API_KEY: abc, OK_TOKEN: "${T}"}, disabled_tools: [""]}`,
			[]string{
				`automate.openai.mcp_servers[0].name: must be 1 to 64 lowercase letters, digits and single hyphens, without a leading or trailing hyphen; got "Bad--Name"`,
				"automate.openai.mcp_servers[0].command: must be set for the stdio transport",
				"automate.openai.mcp_servers[1].url: must be an absolute http(s) URL for the http transport",
				"automate.openai.mcp_servers[1].transport: http takes url and headers, not command, args or env",
				`automate.openai.mcp_servers[2].name: "web" is already configured at mcp_servers[1]`,
				`automate.openai.mcp_servers[2].transport: must be one of stdio, http, sse; got "pigeon"`,
				"automate.openai.mcp_servers[3].headers.Authorization: looks like a secret: write a reference such as ${MY_VAR} and set MY_VAR in hubgate's environment; secrets never go in the config file",
				"automate.openai.mcp_servers[4].env.API_KEY: looks like a secret: write a reference such as ${MY_VAR} and set MY_VAR in hubgate's environment; secrets never go in the config file",
				"automate.openai.mcp_servers[4].disabled_tools[0]: must not be empty",
			}},
		{"list shapes", "known_models: qwen\nmcp_servers:\n      - name: [a]\n        env: [x]\n        args: {a: b}",
			[]string{"automate.openai.known_models: must be a list, not a single value", "automate.openai.mcp_servers[0].name: must be a single value, not a list",
				"automate.openai.mcp_servers[0].env: must be a mapping, not a list", "automate.openai.mcp_servers[0].args: must be a list, not a mapping",
				`automate.openai.mcp_servers[0].transport: must be one of stdio, http, sse; got ""`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			indented := "    " + strings.ReplaceAll(tc.section, "\n", "\n    ")
			f.writeDefault(t, "automate:\n  engine: openai\n  openai:\n"+indented+"\n")
			_, err := Load(f.opts(LoadOptions{}))
			verr := mustValidationError(t, err)
			var got []string
			for _, p := range verr.Problems {
				if p.Source == "" {
					t.Errorf("problem without a source: %v", p)
				}
				p.Source = ""
				got = append(got, p.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("problems:\n got %q\nwant %q", got, tc.want)
			}
			for _, secret := range []string{"abc123", "sk-abc"} {
				if strings.Contains(err.Error(), secret) && tc.name != "key in place of a name" {
					t.Fatalf("error echoes a secret: %v", err)
				}
			}
			if strings.Contains(err.Error(), "sk-abc123") {
				t.Fatalf("error echoes the key: %v", err)
			}
		})
	}
}

func TestOpenAISectionIgnoredForScriptedAndNotSettableByFlags(t *testing.T) {
	f := newFixture(t)
	f.writeDefault(t, "automate:\n  openai:\n    max_steps: 0\n")
	if _, err := Load(f.opts(LoadOptions{})); err != nil {
		t.Fatalf("the openai section is checked only for the openai engine: %v", err)
	}
	_, err := Load(f.opts(LoadOptions{Overrides: []Override{{Path: "automate.openai.mcp_servers", Value: "x", Origin: "flag --x"}}}))
	verr := mustValidationError(t, err)
	if len(verr.Problems) != 1 || verr.Problems[0].String() != "automate.openai.mcp_servers: can only be set in the config file (flag --x)" {
		t.Fatalf("%v", err)
	}
}

// compileRules is the rule checker the caller passes (cmd's: rules.Compile).
func compileRules(b BridgeConfig) error {
	_, err := rules.Compile(b.Rules, b.CommandTools, b.Unmatched)
	return err
}

// automate.child_env.allow names session bus variables withheld from the
// children of runs; a secret's name (a hubgate secret, the upstream's key
// variable) is an error (secrets never reach them), and so is another name
// (it is passed anyway), each naming it, with its line.
func TestChildEnvAllow(t *testing.T) {
	f := newFixture(t)
	f.writeDefault(t, `automate:
  child_env:
    allow: [DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR]
`)
	cfg, err := Load(f.opts(LoadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"}; !slices.Equal(cfg.Automate.ChildEnv.Allow, want) {
		t.Fatalf("allow %v", cfg.Automate.ChildEnv.Allow)
	}
	defaults, err := Load(newFixture(t).opts(LoadOptions{}))
	if err != nil || len(defaults.Automate.ChildEnv.Allow) != 0 {
		t.Fatalf("the default allows %v (%v)", defaults.Automate.ChildEnv.Allow, err)
	}

	f = newFixture(t)
	f.writeDefault(t, "automate:\n  child_env:\n    allow: [PATH, DBUS_SESSION_BUS_ADDRESS, \"\"]\n")
	_, err = Load(f.opts(LoadOptions{}))
	verr := mustValidationError(t, err)
	if len(verr.Problems) != 2 {
		t.Fatalf("problems %v", verr.Problems)
	}
	p := verr.Problems[0]
	if p.Path != "automate.child_env.allow[0]" || !strings.Contains(p.Message, `"PATH" is not withheld from the children of runs (they get it anyway)`) ||
		!strings.Contains(p.Message, "DBUS_SESSION_BUS_ADDRESS, DBUS_STARTER_ADDRESS, DBUS_STARTER_BUS_TYPE, XDG_RUNTIME_DIR") {
		t.Errorf("problem %+v", p)
	}
	if verr.Problems[1].Path != "automate.child_env.allow[2]" {
		t.Errorf("problem %+v", verr.Problems[1])
	}

	f = newFixture(t)
	f.writeDefault(t, `automate:
  engine: openai
  openai: {api_key_env: MY_UPSTREAM_KEY}
  child_env:
    allow: [XDG_RUNTIME_DIR, HUBGATE_DEVICE_TOKEN, MY_UPSTREAM_KEY]
`)
	_, err = Load(f.opts(LoadOptions{}))
	verr = mustValidationError(t, err)
	var secret []FieldError
	for _, p := range verr.Problems {
		if strings.HasPrefix(p.Path, "automate.child_env.allow") {
			secret = append(secret, p)
		}
	}
	if len(secret) != 2 || secret[0].Path != "automate.child_env.allow[1]" || secret[1].Path != "automate.child_env.allow[2]" {
		t.Fatalf("problems %v", verr.Problems)
	}
	for i, name := range []string{"HUBGATE_DEVICE_TOKEN", "MY_UPSTREAM_KEY"} {
		if !strings.Contains(secret[i].Message, `"`+name+`" holds one of hubgate's secrets, and secrets never reach the children of runs`) {
			t.Errorf("problem %+v", secret[i])
		}
	}
}
