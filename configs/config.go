package configs

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/lazyregexp"
	"github.com/hubgate/hubgate/internal/proc"
)

//go:embed defaults.yaml
var defaultsYAML []byte

// DefaultsYAML returns the embedded, commented defaults file (a template
// for a user's config file).
func DefaultsYAML() []byte { return slices.Clone(defaultsYAML) }

// Config is hubgate's configuration. Load fills it; the zero value is not a
// valid configuration. It never holds a secret.
//
// To add a setting: add a tagged field (string, int, bool, time.Duration,
// or a nested struct for a new section), document it in defaults.yaml, and
// add a rule to Validate (and an envVars entry if it has a variable).
type Config struct {
	Log      LogConfig      `yaml:"log"`
	Remote   RemoteConfig   `yaml:"remote"`
	Automate AutomateConfig `yaml:"automate"`
	Hub      HubConfig      `yaml:"hub"`
	Bridge   BridgeConfig   `yaml:"bridge"` // bridge.go
	// Secrets chooses where the secrets live (see SecretsModes,
	// OpenSecrets): auto (the default; also ""), keyring or file.
	Secrets string `yaml:"secrets"`

	file    string            // the config file read, "" when none
	sources map[string]string // field path -> where its value came from
}

// LogConfig is the log section.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug | info | warn | error
	Format string `yaml:"format"` // text | json
}

// RemoteConfig is the remote device service section.
type RemoteConfig struct {
	APIURL       string `yaml:"api_url"`        // e.g. https://api.example.com; "" when not configured
	AuthURL      string `yaml:"auth_url"`       // "": AuthorizeURL derives it from APIURL
	ClientID     string `yaml:"client_id"`      // OAuth client id
	DeviceTypeID string `yaml:"device_type_id"` // device type of the User Device to create
	// RedirectURI is the sign-in's redirect address as registered for the
	// client in the developer portal (e.g. http://127.0.0.1:51772/); "":
	// a random loopback port.
	RedirectURI string `yaml:"redirect_uri"`
	// TokenGrant is the code exchange's grant_type: "code" (the vendor's
	// clients; also "") or "authorization_code" (standard OAuth 2.0).
	TokenGrant string `yaml:"token_grant"`
	// AllowMissingState accepts a sign-in redirect without state.
	AllowMissingState bool `yaml:"allow_missing_state"`
}

// HubConfig is the device hub connection section.
type HubConfig struct {
	// MaxMessageBytes is the largest hub message read (a profile with
	// all its macros, a command with its macro); a larger one is skipped
	// and reported (a command: refused in the journal and notified; a
	// profile: the catalogue stays), the connection stays. 0 in a file
	// means the default.
	MaxMessageBytes int `yaml:"max_message_bytes"`
}

// Bounds of hub.max_message_bytes: a real profile reaches megabytes; a
// limit is also the memory one message may take.
const (
	MinHubMessageBytes = 64 << 10
	MaxHubMessageBytes = 1 << 30
)

// TokenGrants are the accepted values of remote.token_grant.
var TokenGrants = []string{"code", "authorization_code"}

// AutomateConfig is the co-hosted Automate server section.
type AutomateConfig struct {
	// Port: 0 picks the first free port of 4317..4328; otherwise forced.
	// With target external, 0 makes discovery sweep 4317..4328 and another
	// port is the only one it probes (the desktop application launched
	// with --port outside the window).
	Port int `yaml:"port"`
	// Workspace is an absolute path; Load fills the default
	// <user config dir>/hubgate/automate-http-workspace when it is empty.
	Workspace string `yaml:"workspace"`
	// WorkspaceRestriction is the user's own restriction folder; "": none.
	WorkspaceRestriction string `yaml:"workspace_restriction"`
	// ToolWait is how long a parked run waits for tool results per round.
	ToolWait time.Duration `yaml:"tool_wait"`
	// ModelsFile is a JSON file replacing the scripted engine's catalog; "": built-in.
	ModelsFile string `yaml:"models_file"`
	// Engine selects the assistant engine (see Engines).
	Engine string `yaml:"engine"`
	// OpenAI configures the "openai" engine (an OpenAI-compatible upstream
	// such as Ollama, llama-server, vLLM or LM Studio). Validate checks it
	// only when Engine is "openai".
	OpenAI OpenAIConfig `yaml:"openai"`
	// Target is where the bridge's runs go: cohosted (this process serves
	// the Automate server) or external (see AutomateTargets).
	Target string `yaml:"target"`
	// Product is the product word of the Automate contract: the co-hosted
	// server answers "<product>-agent" and reads the chat extension object
	// under it, and external discovery looks for "<product>-agent". The
	// spec writes "service"; the desktop application uses its product's
	// own name. "auto" (automate.ProductAuto): external discovery takes
	// the server of whatever "<word>-agent" its /health names (when the
	// /health has the contract's shape) and uses that word; the
	// co-hosted server answers "service".
	Product string `yaml:"product"`
	// ChildEnv is what the children of runs inherit (automate.child_env).
	ChildEnv ChildEnvConfig `yaml:"child_env"`
}

// ChildEnvConfig is automate.child_env: the environment of the children
// of runs (run_command / #!run, stdio MCP servers, the bridge's command
// tools). They start from hubgate's environment without what
// proc.RunEnviron withholds: hubgate's secrets (HUBGATE_* names holding
// KEY, SECRET, TOKEN or PASSWORD, and automate.openai.api_key_env) and
// the D-Bus session bus (proc.SessionBusNames: DBUS_SESSION_BUS_ADDRESS,
// DBUS_STARTER_ADDRESS, DBUS_STARTER_BUS_TYPE, XDG_RUNTIME_DIR), through
// which a command could read every secret of the unlocked keyring.
type ChildEnvConfig struct {
	// Allow names session bus variables the children keep anyway (e.g.
	// [DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR] for a command that
	// talks to the desktop). A secret's name is an error (secrets never
	// reach the children of runs), and so is a name that is not withheld
	// (it is passed anyway). Zero: none.
	Allow []string `yaml:"allow"`
}

// OpenAIConfig is the automate.openai section: the engine that drives an
// OpenAI-compatible chat-completions upstream with tools.
type OpenAIConfig struct {
	// Upstream is the root URL of the model server (a trailing /v1 is
	// accepted). Default http://127.0.0.1:11434 (Ollama on loopback).
	Upstream string `yaml:"upstream"`
	// Model is the upstream model serving runs; "": the first downloaded,
	// tool-capable model of the upstream's catalog.
	Model string `yaml:"model"`
	// APIKeyEnv names the environment variable holding the upstream's API
	// key; "": no key is sent. The key itself never goes in the file.
	APIKeyEnv string `yaml:"api_key_env"`
	// MaxSteps is the step budget of a run (tool calls); beyond it the run
	// fails with EXECUTION_TIMEOUT.
	MaxSteps int `yaml:"max_steps"`
	// ToolTimeout bounds one built-in or MCP tool call (TOOL_TIMEOUT).
	ToolTimeout time.Duration `yaml:"tool_timeout"`
	// RunBudget bounds a run's execution (EXECUTION_TIMEOUT); 0: none (the
	// request's timeoutMs still applies).
	RunBudget time.Duration `yaml:"run_budget"`
	// MaxOutputTokens is max_tokens of each upstream call (thinkingLevel
	// max raises it); 0: not sent.
	MaxOutputTokens int `yaml:"max_output_tokens"`
	// ContextSize is the context window reported and enforced; 0: asked
	// from the upstream, else derived from the machine's RAM.
	ContextSize int `yaml:"context_size"`
	// ThinkingLevel is the user's setting used when a run sends none: ""
	// (send nothing), low, medium, high or max.
	ThinkingLevel string `yaml:"thinking_level"`
	// Stream asks the upstream to stream its answers (hubgate measures the
	// time to first token from the stream).
	Stream bool `yaml:"stream"`
	// SchemaRetries is how many invalid calls of one tool in a row end the
	// run with SCHEMA_INVALID.
	SchemaRetries int `yaml:"schema_retries"`
	// FetchMaxBytes and FetchTimeout limit the fetch_url tool.
	FetchMaxBytes int           `yaml:"fetch_max_bytes"`
	FetchTimeout  time.Duration `yaml:"fetch_timeout"`
	// SkillsDir is the folder of AI Skills (<id>.md or <id>/SKILL.md with
	// name and description front matter); "": no skills.
	SkillsDir string `yaml:"skills_dir"`
	// SkillBudget and McpServerBudget cap how many skills and configured
	// MCP servers the relevance step adds to a run (selected ones always
	// come in).
	SkillBudget     int `yaml:"skill_budget"`
	McpServerBudget int `yaml:"mcp_server_budget"`
	// ConversationStore is the JSON file that keeps the conversation for
	// continuation across restarts; "": <user config dir>/hubgate/automate-conversation.json.
	ConversationStore string `yaml:"conversation_store"`
	// KnownModels are models the user knows of but has not downloaded;
	// they join the catalog with downloaded false.
	KnownModels []KnownModel `yaml:"known_models"`
	// McpServers are the user's configured MCP servers.
	McpServers []McpServerConfig `yaml:"mcp_servers"`
}

// KnownModel is an entry of automate.openai.known_models.
type KnownModel struct {
	Name                   string  `yaml:"name"`
	Family                 string  `yaml:"family"`
	ParameterCountBillions float64 `yaml:"parameter_count_billions"` // 0: unknown
	FileSizeMb             float64 `yaml:"file_size_mb"`             // 0: unknown
	SupportsTools          bool    `yaml:"supports_tools"`
}

// McpServerConfig is an entry of automate.openai.mcp_servers. Values of
// env and headers may name environment variables as ${VAR}, expanded when
// the server is started; a value that looks like a secret must be such a
// reference (secrets never go in the file).
type McpServerConfig struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Transport   string            `yaml:"transport"` // stdio, http or sse
	Command     string            `yaml:"command"`   // stdio
	Args        []string          `yaml:"args"`      // stdio
	Env         map[string]string `yaml:"env"`       // stdio
	URL         string            `yaml:"url"`       // http, sse
	Headers     map[string]string `yaml:"headers"`   // http, sse
	// RequireApproval: nil means true (configured servers need approval,
	// i.e. allowDestructiveTools, by default).
	RequireApproval *bool    `yaml:"require_approval"`
	DisabledTools   []string `yaml:"disabled_tools"`
}

// NeedsApproval reports whether calls of the server need approval (true
// unless require_approval is false).
func (m McpServerConfig) NeedsApproval() bool { return m.RequireApproval == nil || *m.RequireApproval }

// McpServerNames lists the names of the configured MCP servers.
func (o OpenAIConfig) McpServerNames() []string {
	names := make([]string, 0, len(o.McpServers))
	for _, m := range o.McpServers {
		names = append(names, m.Name)
	}
	return names
}

// Allowed values.
var (
	LogLevels  = []string{"debug", "info", "warn", "error"}
	LogFormats = []string{"text", "json"}
	// Engines lists the assistant engines this build knows.
	Engines = []string{"scripted", "openai"}
	// McpTransports lists the transports of a configured MCP server.
	McpTransports = []string{"stdio", "http", "sse"}
	// ThinkingLevels lists automate.openai.thinking_level values ("" too).
	ThinkingLevels = []string{"low", "medium", "high", "max"}
)

// Automate port window (mirrors the Automate contract).
const (
	AutomateFirstPort = 4317
	AutomateLastPort  = 4328
)

// envVar maps one environment variable onto a field path.
type envVar struct {
	Name string // e.g. HUBGATE_LOG_LEVEL
	Path string // e.g. log.level
}

// envVars is the one table of environment variables configs reads. Secrets
// (HUBGATE_AUTOMATE_KEY, HUBGATE_CLIENT_SECRET) are read by their
// consumers, never here.
var envVars = []envVar{
	{"HUBGATE_LOG_LEVEL", "log.level"},
	{"HUBGATE_LOG_FORMAT", "log.format"},
	{"HUBGATE_API_URL", "remote.api_url"},
	{"HUBGATE_AUTH_URL", "remote.auth_url"},
	{"HUBGATE_CLIENT_ID", "remote.client_id"},
	{"HUBGATE_DEVICE_TYPE", "remote.device_type_id"},
	{"HUBGATE_REDIRECT_URI", "remote.redirect_uri"},
	{"HUBGATE_AUTOMATE_PORT", "automate.port"},
	{"HUBGATE_AUTOMATE_WORKSPACE", "automate.workspace"},
	{"HUBGATE_TOOL_WAIT", "automate.tool_wait"},
	{"HUBGATE_AUTOMATE_ENGINE", "automate.engine"},
	{"HUBGATE_OPENAI_UPSTREAM", "automate.openai.upstream"},
	{"HUBGATE_OPENAI_MODEL", "automate.openai.model"},
	{"HUBGATE_AUTOMATE_TARGET", "automate.target"},
	{"HUBGATE_AUTOMATE_PRODUCT", "automate.product"},
	{"HUBGATE_HUB_MAX_MESSAGE_BYTES", "hub.max_message_bytes"},
	{"HUBGATE_JOURNAL", "bridge.journal"},
	{"HUBGATE_CONTROL_SOCKET", "bridge.control_socket"},
}

// Override sets one field after the file and the environment; the caller
// builds these from the command-line flags the user actually set.
type Override struct {
	Path   string // field path, e.g. "automate.port"
	Value  string // same syntax as in the file: "4320", "90s", "debug"
	Origin string // shown in messages, e.g. "flag --port"; zero: "override"
}

// LoadOptions configures Load.
type LoadOptions struct {
	// Path of the config file. Zero: DefaultPath(), and a missing file is
	// fine. A file named here must exist.
	Path string
	// Env looks up environment variables. Zero: os.Getenv. An empty value
	// counts as unset.
	Env func(string) string
	// Overrides are applied last, in order (usually flags).
	Overrides []Override
	// UserConfigDir returns the per-user config directory, for the default
	// file path and the default workspace. Zero: os.UserConfigDir.
	UserConfigDir func() (string, error)
	// HomeDir returns the home directory for a leading "~/" in paths.
	// Zero: os.UserHomeDir.
	HomeDir func() (string, error)
	// CheckRules checks the bridge section's rules, command tools and
	// unmatched action; Validate reports each problem of the *rules.Error
	// it returns at its field. configs holds their schema and compiles
	// nothing: the caller passes the compiler (cmd: rules.Compile). Zero:
	// they are not checked here, only when the caller compiles them.
	CheckRules RuleChecker
}

// withDefaults fills the zero fields of o.
func (o LoadOptions) withDefaults() LoadOptions {
	if o.Env == nil {
		o.Env = os.Getenv
	}
	if o.UserConfigDir == nil {
		o.UserConfigDir = os.UserConfigDir
	}
	if o.HomeDir == nil {
		o.HomeDir = os.UserHomeDir
	}
	return o
}

// DefaultPath returns the default config file path,
// $XDG_CONFIG_HOME/hubgate/config.yaml (os.UserConfigDir).
func DefaultPath() (string, error) { return defaultPath(os.UserConfigDir) }

func defaultPath(userConfigDir func() (string, error)) (string, error) {
	dir, err := userConfigDir()
	if err != nil {
		return "", fmt.Errorf("locate the config file: %w", err)
	}
	return PathIn(dir), nil
}

// PathIn is the default config file in the user config directory dir.
func PathIn(dir string) string { return filepath.Join(dir, "hubgate", "config.yaml") }

// FieldError is one configuration problem.
type FieldError struct {
	Path    string // field path, e.g. "automate.tool_wait"; "" for the file as a whole
	Message string // e.g. "must be a positive duration; got 0s"
	Source  string // where the value came from: "/x/config.yaml:7", "HUBGATE_TOOL_WAIT", "flag --tool-wait", "defaults"; may be ""
}

func (e FieldError) String() string {
	s := e.Message
	if e.Path != "" {
		s = e.Path + ": " + s
	}
	if e.Source != "" {
		s += " (" + e.Source + ")"
	}
	return s
}

// ValidationError lists every problem of a configuration: syntax, unknown
// keys, values of the wrong type and failed rules. Callers map it to their
// "bad configuration" exit code.
type ValidationError struct {
	Problems []FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	if len(parts) == 1 {
		return "invalid configuration: " + parts[0]
	}
	return fmt.Sprintf("invalid configuration (%d problems): %s", len(parts), strings.Join(parts, "; "))
}

// File returns the config file Load read, or "" when there was none.
func (c *Config) File() string { return c.file }

// Source tells where the value of a field path came from ("defaults", a
// "file:line", an environment variable name, an override origin, or
// "default (user config dir)"), or "" when Load did not set it.
func (c *Config) Source(path string) string { return c.sources[path] }

func (c *Config) setSource(path, src string) {
	if c.sources == nil {
		c.sources = map[string]string{}
	}
	c.sources[path] = src
}

// Load builds the configuration: embedded defaults, then the file, then the
// environment, then opts.Overrides; it fills derived defaults, expands a
// leading "~/" in paths, and validates. Problems with the configuration
// come back as one *ValidationError; a file that cannot be read (or a named
// file that does not exist, errors.Is(err, fs.ErrNotExist)) as a plain
// wrapped error.
func Load(opts LoadOptions) (*Config, error) {
	cfg, problems, err := build(opts, false)
	if err != nil {
		return nil, err
	}
	if verr := cfg.validate(opts.CheckRules); verr != nil {
		// A value that failed to parse already has its problem; skip rule
		// messages about the same field, or about the same bridge list
		// entry (see bridgeEntry).
		bad := map[string]bool{}
		for _, p := range problems {
			bad[p.Path] = true
			if e := bridgeEntry(p.Path); e != "" {
				bad[e] = true
			}
		}
		for _, p := range verr.Problems {
			if e := bridgeEntry(p.Path); !bad[p.Path] && (e == "" || !bad[e]) {
				problems = append(problems, p)
			}
		}
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	return cfg, nil
}

// build applies the defaults, the file (unless skipFile), the environment
// and the overrides, and fills the derived defaults. It returns what it
// built even when there are problems (values that did not decode keep
// their defaults); err is a file that could not be read.
func build(opts LoadOptions, skipFile bool) (*Config, []FieldError, error) {
	opts = opts.withDefaults()
	cfg := &Config{}
	d := &decoder{cfg: cfg, source: "defaults"}
	d.decode(defaultsYAML)
	if len(d.problems) > 0 { // a bug in defaults.yaml, caught by its tests
		return nil, nil, fmt.Errorf("embedded defaults: %w", &ValidationError{Problems: d.problems})
	}
	for _, p := range leafPaths(reflect.TypeFor[Config](), "") {
		cfg.setSource(p, "defaults")
	}

	path, explicit := opts.Path, opts.Path != ""
	if !explicit {
		if p, err := defaultPath(opts.UserConfigDir); err == nil {
			path = p
		}
	}
	var problems []FieldError
	if path != "" && !skipFile {
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			cfg.file = path
			d = &decoder{cfg: cfg, source: path}
			d.decode(data)
			problems = append(problems, d.problems...)
		case errors.Is(err, fs.ErrNotExist) && !explicit:
			// no config file: defaults and environment only
		default:
			return nil, nil, fmt.Errorf("read config file: %w", err)
		}
	}

	root := reflect.ValueOf(cfg).Elem()
	set := func(fieldPath, value, origin string) {
		f, ok := fieldByPath(root, fieldPath)
		if !ok {
			problems = append(problems, FieldError{Path: fieldPath, Message: "unknown setting", Source: origin})
			return
		}
		if err := setLeaf(f, value); err != nil {
			problems = append(problems, FieldError{Path: fieldPath, Message: err.Error(), Source: origin})
			return
		}
		cfg.setSource(fieldPath, origin)
	}
	for _, ev := range envVars {
		if v := opts.Env(ev.Name); v != "" {
			set(ev.Path, v, ev.Name)
		}
	}
	for _, o := range opts.Overrides {
		origin := o.Origin
		if origin == "" {
			origin = "override"
		}
		set(o.Path, o.Value, origin)
	}

	problems = append(problems, cfg.resolve(opts)...)
	return cfg, problems, nil
}

// resolve fills derived defaults and expands "~/" in paths.
func (c *Config) resolve(opts LoadOptions) []FieldError {
	var problems []FieldError
	a := &c.Automate
	if a.Workspace == "" {
		dir, err := opts.UserConfigDir()
		if err != nil {
			problems = append(problems, FieldError{Path: "automate.workspace",
				Message: "not set, and the default (<user config dir>/hubgate/automate-http-workspace) needs a user config directory: " + err.Error()})
		} else {
			a.Workspace = filepath.Join(dir, "hubgate", "automate-http-workspace")
			c.setSource("automate.workspace", "default (user config dir)")
		}
	}
	if a.OpenAI.ConversationStore == "" {
		if dir, err := opts.UserConfigDir(); err == nil {
			a.OpenAI.ConversationStore = filepath.Join(dir, "hubgate", "automate-conversation.json")
			c.setSource("automate.openai.conversation_store", "default (user config dir)")
		} else if a.Engine == "openai" {
			problems = append(problems, FieldError{Path: "automate.openai.conversation_store",
				Message: "not set, and the default (<user config dir>/hubgate/automate-conversation.json) needs a user config directory: " + err.Error()})
		}
	}
	for _, p := range []struct {
		path string
		v    *string
	}{
		{"automate.workspace", &a.Workspace},
		{"automate.workspace_restriction", &a.WorkspaceRestriction},
		{"automate.models_file", &a.ModelsFile},
		{"automate.openai.skills_dir", &a.OpenAI.SkillsDir},
		{"automate.openai.conversation_store", &a.OpenAI.ConversationStore},
	} {
		if *p.v != "~" && !strings.HasPrefix(*p.v, "~/") {
			continue
		}
		home, err := opts.HomeDir()
		if err != nil {
			problems = append(problems, FieldError{Path: p.path, Message: "cannot expand ~: " + err.Error(), Source: c.Source(p.path)})
			continue
		}
		*p.v = filepath.Join(home, strings.TrimPrefix(*p.v, "~"))
	}
	return append(problems, c.resolveBridge(opts)...)
}

// Validate checks every rule, the bridge section's rules with checkRules
// (nil: they are not checked; see LoadOptions.CheckRules), and returns a
// *ValidationError listing all problems, or nil.
func (c *Config) Validate(checkRules RuleChecker) error {
	if verr := c.validate(checkRules); verr != nil {
		return verr
	}
	return nil
}

func (c *Config) validate(checkRules RuleChecker) *ValidationError {
	var problems []FieldError
	bad := func(path, format string, args ...any) {
		problems = append(problems, FieldError{Path: path, Message: fmt.Sprintf(format, args...), Source: c.Source(path)})
	}
	oneOf := func(path, v string, allowed []string) {
		if !slices.Contains(allowed, v) {
			bad(path, "must be one of %s; got %q", strings.Join(allowed, ", "), v)
		}
	}
	absPath := func(path, v string, required bool) {
		switch {
		case v == "" && required:
			bad(path, "must be set")
		case v != "" && !filepath.IsAbs(v):
			bad(path, "must be an absolute path; got %q", v)
		}
	}

	oneOf("log.level", c.Log.Level, LogLevels)
	oneOf("log.format", c.Log.Format, LogFormats)
	if c.Secrets != "" { // "": auto
		oneOf("secrets", c.Secrets, SecretsModes)
	}

	if c.Remote.APIURL != "" {
		if msg := checkServiceURL(c.Remote.APIURL); msg != "" {
			bad("remote.api_url", "%s", msg)
		}
	}
	if c.Remote.AuthURL != "" {
		if msg := checkServiceURL(c.Remote.AuthURL); msg != "" {
			bad("remote.auth_url", "%s", msg)
		}
	}
	if c.Remote.RedirectURI != "" {
		if msg := checkRedirectURI(c.Remote.RedirectURI); msg != "" {
			bad("remote.redirect_uri", "%s", msg)
		}
	}
	if c.Remote.TokenGrant != "" { // "": code
		oneOf("remote.token_grant", c.Remote.TokenGrant, TokenGrants)
	}

	a := c.Automate
	if a.Port < 0 || a.Port > 65535 {
		bad("automate.port", "must be 0 (the first free port of %d..%d) or a TCP port 1..65535; got %d",
			AutomateFirstPort, AutomateLastPort, a.Port)
	}
	absPath("automate.workspace", a.Workspace, true)
	absPath("automate.workspace_restriction", a.WorkspaceRestriction, false)
	absPath("automate.models_file", a.ModelsFile, false)
	if a.ToolWait <= 0 {
		bad("automate.tool_wait", "must be a positive duration; got %s", a.ToolWait)
	}
	oneOf("automate.engine", a.Engine, Engines)
	if !automate.ValidProduct(a.Product) {
		bad("automate.product", "must be auto or 1 to 32 lowercase letters, digits or hyphens, starting with a letter (the spec's word is \"service\"); got %q", a.Product)
	}
	for i, name := range a.ChildEnv.Allow {
		path := fmt.Sprintf("automate.child_env.allow[%d]", i)
		switch {
		case slices.Contains(proc.SessionBusNames, name):
		case proc.IsSecretName(name) || name == a.OpenAI.APIKeyEnv && name != "":
			bad(path, "%q holds one of hubgate's secrets, and secrets never reach the children of runs; only the session bus may be allowed: %s",
				name, strings.Join(proc.SessionBusNames, ", "))
		default:
			bad(path, "%q is not withheld from the children of runs (they get it anyway); only the session bus is withheld and may be allowed: %s (hubgate's secrets are withheld always)",
				name, strings.Join(proc.SessionBusNames, ", "))
		}
	}
	if a.Engine == "openai" {
		problems = append(problems, c.validateOpenAI()...)
	}

	if n := c.Hub.MaxMessageBytes; n != 0 && (n < MinHubMessageBytes || n > MaxHubMessageBytes) {
		bad("hub.max_message_bytes", "must be 0 (the default, 16 MiB) or %d..%d bytes; got %d", MinHubMessageBytes, MaxHubMessageBytes, n)
	}

	problems = append(problems, c.validateBridge(checkRules)...)

	if len(problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: problems}
}

// sourceNear is the source of path, or of the nearest enclosing list item
// or list that has one (a key missing from a list item has no source of
// its own).
func (c *Config) sourceNear(path string) string {
	for path != "" {
		if s := c.Source(path); s != "" {
			return s
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return ""
		}
		path = path[:i]
	}
	return ""
}

// validateOpenAI checks the automate.openai section.
func (c *Config) validateOpenAI() []FieldError {
	var problems []FieldError
	bad := func(path, format string, args ...any) {
		problems = append(problems, FieldError{Path: path, Message: fmt.Sprintf(format, args...), Source: c.sourceNear(path)})
	}
	const p = "automate.openai."
	o := c.Automate.OpenAI
	if msg := checkUpstreamURL(o.Upstream); msg != "" {
		bad(p+"upstream", "%s", msg)
	}
	if o.APIKeyEnv != "" && !envNameRE.MatchString(o.APIKeyEnv) {
		bad(p+"api_key_env", "must be the name of an environment variable (letters, digits, _), not the key itself")
	}
	atLeast := func(key string, v, min int) {
		if v < min {
			bad(p+key, "must be at least %d; got %d", min, v)
		}
	}
	atLeast("max_steps", o.MaxSteps, 1)
	atLeast("max_output_tokens", o.MaxOutputTokens, 0)
	atLeast("context_size", o.ContextSize, 0)
	atLeast("schema_retries", o.SchemaRetries, 1)
	atLeast("fetch_max_bytes", o.FetchMaxBytes, 1)
	atLeast("skill_budget", o.SkillBudget, 0)
	atLeast("mcp_server_budget", o.McpServerBudget, 0)
	if o.ToolTimeout <= 0 {
		bad(p+"tool_timeout", "must be a positive duration; got %s", o.ToolTimeout)
	}
	if o.FetchTimeout <= 0 {
		bad(p+"fetch_timeout", "must be a positive duration; got %s", o.FetchTimeout)
	}
	if o.RunBudget < 0 {
		bad(p+"run_budget", "must be 0 (none) or a positive duration; got %s", o.RunBudget)
	}
	if o.ThinkingLevel != "" && !slices.Contains(ThinkingLevels, o.ThinkingLevel) {
		bad(p+"thinking_level", "must be empty or one of %s; got %q", strings.Join(ThinkingLevels, ", "), o.ThinkingLevel)
	}
	for _, f := range []struct{ key, v string }{{"skills_dir", o.SkillsDir}, {"conversation_store", o.ConversationStore}} {
		if f.v != "" && !filepath.IsAbs(f.v) {
			bad(p+f.key, "must be an absolute path; got %q", f.v)
		}
	}

	seen := map[string]int{}
	for i, m := range o.KnownModels {
		ip := fmt.Sprintf("%sknown_models[%d]", p, i)
		if strings.TrimSpace(m.Name) == "" {
			bad(ip+".name", "must be set")
		} else if first, dup := seen[strings.ToLower(m.Name)]; dup {
			bad(ip+".name", "%q is already listed at known_models[%d]", m.Name, first)
		} else {
			seen[strings.ToLower(m.Name)] = i
		}
		if m.ParameterCountBillions < 0 {
			bad(ip+".parameter_count_billions", "must not be negative")
		}
		if m.FileSizeMb < 0 {
			bad(ip+".file_size_mb", "must not be negative")
		}
	}

	names := map[string]int{}
	for i, m := range o.McpServers {
		ip := fmt.Sprintf("%smcp_servers[%d]", p, i)
		if msg := checkMcpName(m.Name); msg != "" {
			bad(ip+".name", "%s", msg)
		} else if first, dup := names[m.Name]; dup {
			bad(ip+".name", "%q is already configured at mcp_servers[%d]", m.Name, first)
		} else {
			names[m.Name] = i
		}
		if len(m.Description) > 1024 {
			bad(ip+".description", "must be at most 1024 characters")
		}
		switch m.Transport {
		case "stdio":
			if m.Command == "" {
				bad(ip+".command", "must be set for the stdio transport")
			}
			if m.URL != "" || len(m.Headers) > 0 {
				bad(ip+".transport", "stdio takes command, args and env, not url or headers")
			}
		case "http", "sse":
			if u, err := url.Parse(m.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad(ip+".url", "must be an absolute http(s) URL for the %s transport", m.Transport)
			} else if u.User != nil {
				bad(ip+".url", "must not contain user info (credentials never go in the configuration)")
			}
			if m.Command != "" || len(m.Args) > 0 || len(m.Env) > 0 {
				bad(ip+".transport", "%s takes url and headers, not command, args or env", m.Transport)
			}
		default:
			bad(ip+".transport", "must be one of %s; got %q", strings.Join(McpTransports, ", "), m.Transport)
		}
		for _, kv := range []struct {
			what string
			m    map[string]string
		}{{"env", m.Env}, {"headers", m.Headers}} {
			for _, k := range slices.Sorted(maps.Keys(kv.m)) {
				if looksSecret(k) || strings.EqualFold(k, "authorization") {
					if !envRefRE.MatchString(kv.m[k]) {
						bad(ip+"."+kv.what+"."+k, "looks like a secret: write a reference such as ${MY_VAR} and set MY_VAR in hubgate's environment; secrets never go in the config file")
					}
				}
			}
		}
		for j, t := range m.DisabledTools {
			if strings.TrimSpace(t) == "" {
				bad(fmt.Sprintf("%s.disabled_tools[%d]", ip, j), "must not be empty")
			}
		}
	}
	return problems
}

var (
	envNameRE = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// envRefRE: a value that carries its secret through ${VAR} references
	// only (for example "Bearer ${TOKEN}").
	envRefRE = lazyregexp.New(`^[^$]*(\$\{[A-Za-z_][A-Za-z0-9_]*\}[^$]*)+$`)
)

// checkMcpName applies the Automate contract's MCP server name rule
// (automate.McpServerNameProblem), with one message naming the whole rule.
func checkMcpName(name string) string {
	if automate.McpServerNameProblem(name) != "" {
		return fmt.Sprintf("must be 1 to 64 lowercase letters, digits and single hyphens, without a leading or trailing hyphen; got %q", name)
	}
	return ""
}

// checkUpstreamURL returns "" for an acceptable upstream URL, else the
// problem. Plain http is allowed for any host (local model servers rarely
// speak TLS); credentials are not.
func checkUpstreamURL(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		if err == nil && u.User != nil {
			return "must not contain user info (credentials never go in the configuration)"
		}
		return fmt.Sprintf("must be an absolute http(s) URL such as http://127.0.0.1:11434; got %q", raw)
	case u.User != nil:
		return "must not contain user info (credentials never go in the configuration)"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return fmt.Sprintf("must not have a query or fragment; got %q", raw)
	}
	return ""
}

// checkServiceURL returns "" for an acceptable remote URL, else the
// problem. It never echoes a URL that carries credentials.
func checkServiceURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		if err == nil && u.User != nil {
			return "must be an absolute http(s) URL such as https://api.example.com, without user info"
		}
		return fmt.Sprintf("must be an absolute http(s) URL such as https://api.example.com; got %q", raw)
	}
	switch {
	case u.User != nil:
		return "must not contain user info (credentials never go in the configuration)"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return fmt.Sprintf("must not have a query or fragment; got %q", raw)
	case u.Scheme == "http" && !isLoopbackHost(u.Hostname()):
		return fmt.Sprintf("must use https (plain http is allowed only for loopback hosts such as 127.0.0.1); got %q", raw)
	}
	return ""
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// checkRedirectURI checks a fixed redirect address: hubgate answers it
// itself, so it must be http on this machine with an explicit port.
func checkRedirectURI(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Port() == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Sprintf("must be an http address on this machine with a port, such as http://127.0.0.1:51772/ (the address registered for the client); got %q", raw)
	}
	if h := u.Hostname(); h != "localhost" && !isLoopbackHost(h) {
		return fmt.Sprintf("must be on this machine (127.0.0.1, [::1] or localhost): hubgate answers it itself; got %q", raw)
	}
	return ""
}
