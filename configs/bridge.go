package configs

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hubgate/hubgate/bridge/rules"
)

// This file holds the bridge section (routing rules, command tools, the
// unmatched action, cancel and shutdown behaviour, the journal and the
// control socket), automate.target, and the decoding of free-form values
// (the JSON Schema of a command tool, hitl_answers) that only rules use.

// BridgeConfig is the bridge section.
type BridgeConfig struct {
	// Rules are the routing rules (first match wins); see package
	// bridge/rules for the language. Validate checks them with
	// LoadOptions.CheckRules.
	Rules []rules.Spec `yaml:"rules"`
	// CommandTools are the user's command tools (off unless enabled).
	CommandTools []rules.CommandToolSpec `yaml:"command_tools"`
	// Unmatched says what happens to a command no rule matches.
	Unmatched rules.UnmatchedSpec `yaml:"unmatched"`
	// CancelGrace: a soft cancel (StopOutputs, restart, giving up) is
	// escalated to a forced one after this long.
	CancelGrace time.Duration `yaml:"cancel_grace"`
	// StopListeningCancels: StopListening also cancels the current run.
	StopListeningCancels bool `yaml:"stop_listening_cancels"`
	// Listening is what the hub's StopListening does to the commands after
	// it (see ListeningModes): follow-vendor (the default, as the vendor's
	// own clients: every command is acted on, the request is answered,
	// shown and noted) or obey (refused until StartListening, the person
	// told how to resume).
	Listening string `yaml:"listening"`
	// OnShutdown is what happens to the current run when the daemon stops:
	// cancel or leave (see OnShutdownActions).
	OnShutdown string `yaml:"on_shutdown"`
	// Journal is the SQLite journal file (absolute); Load fills the default
	// <user data dir>/hubgate/journal.db, where the user data dir is
	// $XDG_DATA_HOME, else ~/.local/share.
	Journal string `yaml:"journal"`
	// JournalKeepDays: settled commands (their run ended, or they were
	// dropped, ignored, failed or abandoned) older than this many days are
	// pruned from the journal; undecided, queued and in-flight ones never
	// are. 0 (the default) keeps everything: the
	// journal is the user's record, and pruning maps SQLite code the idle
	// daemon otherwise leaves alone (docs/performance.md).
	JournalKeepDays int `yaml:"journal_keep_days"`
	// ControlSocket is the Unix socket of `hubgate status` and friends
	// (absolute); Load fills the default $XDG_RUNTIME_DIR/hubgate/control.sock,
	// else <user config dir>/hubgate/control.sock.
	ControlSocket string `yaml:"control_socket"`
	// Notify is the notify policy of rules that set none (bridge/notify):
	// answers, failures or none (see rules.NotifyPolicies); "" means answers.
	// Under answers and failures every command that is not run is notified
	// with why; none silences that too.
	Notify string `yaml:"notify"`
	// ProgressAfter: a run longer than this gets one progress
	// notification with its current step (bridge/notify); 0: none.
	ProgressAfter time.Duration `yaml:"progress_after"`
	// Ask offers the ask_person tool to the runs of rules that do not set
	// ask: (false, the default: existing rules behave as before).
	Ask bool `yaml:"ask"`
	// AskTimeout is how long a question of ask_person waits for the
	// person before the agent is told nobody answered; below the Automate
	// server's two-minute round (bridge.MaxAskTimeout). 0 means 100s.
	AskTimeout time.Duration `yaml:"ask_timeout"`
	// Speech configures how rules with speak: true speak their answers.
	Speech SpeechConfig `yaml:"speech"`
	// StatusPage is the daemon's status page on 127.0.0.1 (`hubgate open`).
	StatusPage StatusPageConfig `yaml:"status_page"`
}

// SpeechConfig is bridge.speech.
type SpeechConfig struct {
	// Command is the speech command's argv; an element "{text}" is
	// replaced by the text, else the text goes to its stdin. Empty: the
	// platform's (espeak-ng, else spd-say; say; SAPI).
	Command []string `yaml:"command"`
	// MaxChars: a longer answer is cut and ends with "And more in
	// history."; 0 means 400.
	MaxChars int `yaml:"max_chars"`
}

// StatusPageConfig is bridge.status_page.
type StatusPageConfig struct {
	Enabled bool `yaml:"enabled"`
	// Port on 127.0.0.1; 0: any free port (`hubgate open` finds it).
	Port int `yaml:"port"`
}

// JournalKeep is JournalKeepDays as a duration (zero: keep everything).
func (b BridgeConfig) JournalKeep() time.Duration {
	return time.Duration(b.JournalKeepDays) * 24 * time.Hour
}

// Allowed values of the bridge section and of automate.target.
var (
	// AutomateTargets: cohosted serves the Automate server in-process;
	// external uses the desktop application's server (port discovery).
	AutomateTargets   = []string{"cohosted", "external"}
	OnShutdownActions = []string{"cancel", "leave"}
	// ListeningModes are bridge.listening's values (the bridge's
	// ListeningPolicy).
	ListeningModes = []string{"follow-vendor", "obey"}
)

// Limits of the bridge section.
const (
	MaxCancelGrace = 10 * time.Minute
	// MaxProgressAfter bounds bridge.progress_after.
	MaxProgressAfter = 24 * time.Hour
	// MaxAskTimeout: bridge.ask_timeout must be below the Automate
	// server's round for client tool results (bridge.MaxAskTimeout).
	MaxAskTimeout = 2 * time.Minute
	// MaxJournalKeepDays is a century: beyond it, say 0 (keep everything).
	MaxJournalKeepDays = 36500
	// MaxSocketPath is the longest Unix socket path (sun_path holds 108
	// bytes with the terminating NUL on Linux; 104 on the BSDs).
	MaxSocketPath = 103
)

// RuleChecker checks the rules, command tools and unmatched action of the
// bridge section (LoadOptions.CheckRules): a *rules.Error lists what is
// wrong with them.
type RuleChecker func(BridgeConfig) error

// resolveBridge fills the derived defaults of the bridge section and
// expands "~/" in its paths.
func (c *Config) resolveBridge(opts LoadOptions) []FieldError {
	var problems []FieldError
	b := &c.Bridge
	if b.Journal == "" {
		if dir, err := userDataDir(opts); err != nil {
			problems = append(problems, FieldError{Path: "bridge.journal",
				Message: "not set, and the default (<user data dir>/hubgate/journal.db) needs $XDG_DATA_HOME or a home directory: " + err.Error()})
		} else {
			b.Journal = filepath.Join(dir, "hubgate", "journal.db")
			c.setSource("bridge.journal", "default (user data dir)")
		}
	}
	if b.ControlSocket == "" {
		if rt := opts.Env("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
			b.ControlSocket = filepath.Join(rt, "hubgate", "control.sock")
			c.setSource("bridge.control_socket", "default ($XDG_RUNTIME_DIR)")
		} else if dir, err := opts.UserConfigDir(); err == nil {
			b.ControlSocket = filepath.Join(dir, "hubgate", "control.sock")
			c.setSource("bridge.control_socket", "default (user config dir)")
		} else {
			problems = append(problems, FieldError{Path: "bridge.control_socket",
				Message: "not set, and the default needs $XDG_RUNTIME_DIR or a user config directory: " + err.Error()})
		}
	}
	expand := func(path string, v *string) {
		if *v != "~" && !strings.HasPrefix(*v, "~/") {
			return
		}
		home, err := opts.HomeDir()
		if err != nil {
			problems = append(problems, FieldError{Path: path, Message: "cannot expand ~: " + err.Error(), Source: c.sourceNear(path)})
			return
		}
		*v = filepath.Join(home, strings.TrimPrefix(*v, "~"))
	}
	expand("bridge.journal", &b.Journal)
	expand("bridge.control_socket", &b.ControlSocket)
	for i := range b.CommandTools {
		expand(fmt.Sprintf("bridge.command_tools[%d].workdir", i), &b.CommandTools[i].Workdir)
	}
	return problems
}

// userDataDir is $XDG_DATA_HOME when absolute, else ~/.local/share.
func userDataDir(opts LoadOptions) (string, error) {
	if d := opts.Env("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	home, err := opts.HomeDir()
	if err != nil {
		return "", err
	}
	if home == "" {
		return "", errors.New("the home directory is unknown")
	}
	return filepath.Join(home, ".local", "share"), nil
}

// validateBridge checks automate.target and the bridge section, and the
// rules with checkRules when there is one: every rules.Problem becomes a FieldError whose path is the
// field's ("bridge.rules[2].match.command_regex"), whose message names the
// rule (`rule "lights": error parsing regexp: ...`) and whose source is the
// line of the field, or of the nearest enclosing entry that has one.
func (c *Config) validateBridge(checkRules RuleChecker) []FieldError {
	var problems []FieldError
	bad := func(path, format string, args ...any) {
		problems = append(problems, FieldError{Path: path, Message: fmt.Sprintf(format, args...), Source: c.sourceNear(path)})
	}
	if !slices.Contains(AutomateTargets, c.Automate.Target) {
		bad("automate.target", "must be one of %s; got %q", strings.Join(AutomateTargets, ", "), c.Automate.Target)
	}
	b := c.Bridge
	if b.CancelGrace <= 0 || b.CancelGrace > MaxCancelGrace {
		bad("bridge.cancel_grace", "must be a positive duration up to %s; got %s", MaxCancelGrace, b.CancelGrace)
	}
	if b.ProgressAfter < 0 || b.ProgressAfter > MaxProgressAfter {
		bad("bridge.progress_after", "must be 0s (no progress notification) or a positive duration up to %s; got %s", MaxProgressAfter, b.ProgressAfter)
	}
	if b.AskTimeout < 0 || b.AskTimeout >= MaxAskTimeout {
		bad("bridge.ask_timeout", "must be 0 (100s) or a positive duration below %s (the Automate server's round for tool results); got %s", MaxAskTimeout, b.AskTimeout)
	}
	if b.JournalKeepDays < 0 || b.JournalKeepDays > MaxJournalKeepDays {
		bad("bridge.journal_keep_days", "must be 0 (keep everything) to %d days; got %d", MaxJournalKeepDays, b.JournalKeepDays)
	}
	if b.Notify != "" && !slices.Contains(rules.NotifyPolicies, b.Notify) {
		bad("bridge.notify", "must be one of %s; got %q", strings.Join(rules.NotifyPolicies, ", "), b.Notify)
	}
	if len(b.Speech.Command) > 0 && b.Speech.Command[0] == "" {
		bad("bridge.speech.command", "the program (first element) must not be empty")
	}
	if b.Speech.MaxChars < 0 || b.Speech.MaxChars > 100000 {
		bad("bridge.speech.max_chars", "must be 0 (400) to 100000; got %d", b.Speech.MaxChars)
	}
	if b.StatusPage.Port < 0 || b.StatusPage.Port > 65535 {
		bad("bridge.status_page.port", "must be 0 (any free port) to 65535; got %d", b.StatusPage.Port)
	}
	if !slices.Contains(ListeningModes, b.Listening) {
		bad("bridge.listening", "must be one of %s; got %q", strings.Join(ListeningModes, ", "), b.Listening)
	}
	if !slices.Contains(OnShutdownActions, b.OnShutdown) {
		bad("bridge.on_shutdown", "must be one of %s; got %q", strings.Join(OnShutdownActions, ", "), b.OnShutdown)
	}
	for _, f := range []struct{ path, v string }{{"bridge.journal", b.Journal}, {"bridge.control_socket", b.ControlSocket}} {
		switch {
		case f.v == "":
			bad(f.path, "must be set")
		case !filepath.IsAbs(f.v):
			bad(f.path, "must be an absolute path; got %q", f.v)
		}
	}
	if n := len(b.ControlSocket); n > MaxSocketPath {
		bad("bridge.control_socket", "is %d bytes long; a Unix socket path must be at most %d", n, MaxSocketPath)
	}
	if checkRules == nil {
		return problems
	}
	if err := checkRules(b); err != nil {
		var rerr *rules.Error
		if !errors.As(err, &rerr) {
			bad("bridge.rules", "%v", err)
			return problems
		}
		for _, p := range rerr.Problems {
			msg := p.Message
			switch {
			case p.Section == rules.SectionRules && p.Name != "":
				msg = fmt.Sprintf("rule %q: %s", p.Name, msg)
			case p.Section == rules.SectionCommandTools && p.Name != "":
				msg = fmt.Sprintf("command tool %q: %s", p.Name, msg)
			}
			bad("bridge."+p.Path(), "%s", msg)
		}
	}
	return problems
}

// bridgeEntry is the rule or command tool a path is in
// ("bridge.rules[2]" for "bridge.rules[2].match.command"), or "". Load
// drops the rule problems of an entry that failed to decode: a rule with a
// misspelt key would otherwise also be reported as missing that key.
func bridgeEntry(path string) string {
	if !strings.HasPrefix(path, "bridge.") {
		return ""
	}
	if i := strings.IndexByte(path, ']'); i >= 0 {
		return path[:i+1]
	}
	return ""
}

// genericMap applies a mapping of free-form values (map[string]any) to v.
func (d *decoder) genericMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.problem(path, n.Line, "must be a mapping, not %s", nodeKindName(n))
		return
	}
	if val, ok := d.generic(n, path); ok {
		v.Set(reflect.ValueOf(val))
	}
}

// maxGenericValues bounds the values one free-form setting may expand to
// (YAML aliases can otherwise multiply a small file into a huge value).
const maxGenericValues = 10000

// generic decodes a free-form node (a JSON Schema, a hitl answer) into
// plain values: map[string]any, []any, string, int, float64, bool or nil.
// Mapping keys are taken as strings. Every value gets its source line. It
// reports false after recording a problem.
func (d *decoder) generic(n *yaml.Node, path string) (any, bool) {
	budget := maxGenericValues
	var walk func(n *yaml.Node, path string) (any, bool)
	walk = func(n *yaml.Node, path string) (any, bool) {
		n = resolveAlias(n)
		if budget--; budget < 0 {
			d.problem(path, n.Line, "is too large (more than %d values)", maxGenericValues)
			return nil, false
		}
		switch n.Kind {
		case yaml.MappingNode:
			m := make(map[string]any, len(n.Content)/2)
			seen := map[string]int{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				kn := resolveAlias(n.Content[i])
				kp := path + "." + kn.Value
				if kn.Kind != yaml.ScalarNode {
					d.problem(kp, kn.Line, "a key must be a single value, not %s", nodeKindName(kn))
					return nil, false
				}
				if first, dup := seen[kn.Value]; dup {
					d.problem(kp, kn.Line, "duplicate key (first set at line %d)", first)
					return nil, false
				}
				seen[kn.Value] = kn.Line
				v, ok := walk(n.Content[i+1], kp)
				if !ok {
					return nil, false
				}
				m[kn.Value] = v
				d.cfg.setSource(kp, d.at(kn.Line))
			}
			return m, true
		case yaml.SequenceNode:
			l := make([]any, 0, len(n.Content))
			for i, item := range n.Content {
				ip := fmt.Sprintf("%s[%d]", path, i)
				v, ok := walk(item, ip)
				if !ok {
					return nil, false
				}
				l = append(l, v)
				d.cfg.setSource(ip, d.at(resolveAlias(item).Line))
			}
			return l, true
		case yaml.ScalarNode:
			var v any
			if err := n.Decode(&v); err != nil {
				d.problem(path, n.Line, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
				return nil, false
			}
			switch v.(type) {
			case nil, string, int, int64, uint64, float64, bool:
				return v, true
			}
			return n.Value, true // timestamps and other resolved types stay text
		}
		d.problem(path, n.Line, "unsupported YAML node")
		return nil, false
	}
	v, ok := walk(n, path)
	if ok {
		d.cfg.setSource(path, d.at(n.Line))
	}
	return v, ok
}
