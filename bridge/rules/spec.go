package rules

import "time"

// BusyPolicy says what a matched command does while a run is in flight.
type BusyPolicy string

// Busy policies.
const (
	// BusySingle drops the command while a run is in flight (the default).
	BusySingle BusyPolicy = "single"
	// BusyQueue appends the command to a FIFO queue (QueueLimit, MaxAge).
	BusyQueue BusyPolicy = "queue"
	// BusyRestart cancels the run in flight, then starts this one.
	BusyRestart BusyPolicy = "restart"
)

// BusyPolicies lists every busy policy.
var BusyPolicies = []BusyPolicy{BusySingle, BusyQueue, BusyRestart}

// Unmatched actions.
const (
	UnmatchedIgnore = "ignore" // the default: journal the command as ignored
	UnmatchedRun    = "run"    // run it with UnmatchedSpec.Run
)

// Defaults filled by Compile for zero values.
const (
	DefaultQueueLimit  = 5
	DefaultMaxAge      = 10 * time.Minute
	DefaultToolTimeout = 30 * time.Second
	DefaultMaxOutput   = 64 << 10 // bytes of a command tool's output kept
)

// Limits checked by Compile.
const (
	MaxQueueLimit   = 1000
	MaxNameLength   = 64
	MaxToolTimeout  = time.Hour
	MaxOutputLimit  = 512 << 10
	MaxRenderedSize = 1 << 20 // bytes of one rendered template
)

// UnmatchedRuleName is the Name of the rule Set.Unmatched returns; no rule
// may take it.
const UnmatchedRuleName = "(unmatched)"

// Spec is one routing rule as written in the configuration (YAML and JSON
// use the same snake_case keys). Zero values mean the documented defaults.
type Spec struct {
	// Name identifies the rule in the journal, logs and messages. Required,
	// unique, 1..64 characters, no control characters, no leading or
	// trailing blank.
	Name string `yaml:"name" json:"name"`
	// Match: every criterion given must hold; at least one is required.
	Match MatchSpec `yaml:"match" json:"match"`
	// Busy is the busy policy; "" means single.
	Busy BusyPolicy `yaml:"busy,omitempty" json:"busy,omitempty"`
	// QueueLimit is the queue length for busy: queue; 0 means 5. Setting
	// it with another policy is an error.
	QueueLimit int `yaml:"queue_limit,omitempty" json:"queue_limit,omitempty"`
	// MaxAge: a waiting command older than this is dropped instead of run,
	// and it is the recovery age (RunOnRecovery); 0 means 10m.
	MaxAge time.Duration `yaml:"max_age,omitempty" json:"max_age,omitempty"`
	// RunOnRecovery: after a restart, commands of this rule that were
	// waiting and are younger than MaxAge are run instead of being marked
	// abandoned.
	RunOnRecovery bool `yaml:"run_on_recovery,omitempty" json:"run_on_recovery,omitempty"`
	// Notify says which of this rule's outcomes become desktop
	// notifications (bridge/notify): answers (answers, failures, drops and
	// the notify tool's messages), failures (all but answers) or none; ""
	// means the bridge.notify default.
	Notify string `yaml:"notify,omitempty" json:"notify,omitempty"`
	// Speak: a completed run's answer is spoken aloud (bridge/notify),
	// and so is a question the agent asks (Ask).
	Speak bool `yaml:"speak,omitempty" json:"speak,omitempty"`
	// Ask offers the run the ask_person tool (AskPersonTool): the agent
	// may ask the person a question and the run waits for the answer. Nil
	// means the bridge.ask default (off).
	Ask *bool `yaml:"ask,omitempty" json:"ask,omitempty"`
	// Answers restricts which hub commands answer a pending question of
	// this rule's run: an RE2 expression that must match the WHOLE command
	// text (anchored like command_regex; use (?i) for case-insensitive).
	// "" means every command answers while a question is pending.
	Answers string `yaml:"answers,omitempty" json:"answers,omitempty"`
	// Run is the RunRequest template.
	Run RunTemplate `yaml:"run" json:"run"`
}

// Notification policies (Spec.Notify and the bridge.notify default).
const (
	NotifyAnswers  = "answers"
	NotifyFailures = "failures"
	NotifyNone     = "none"
)

// NotifyPolicies lists the notification policies.
var NotifyPolicies = []string{NotifyAnswers, NotifyFailures, NotifyNone}

// MatchSpec holds the criteria of a rule. An empty string is an absent
// criterion.
type MatchSpec struct {
	// Command equals the command text exactly (case-sensitive, no trimming).
	Command string `yaml:"command,omitempty" json:"command,omitempty"`
	// CommandGlob matches the whole command text: * any run of characters
	// (including /), ? one character, [abc] [a-z] [!a-z] [^a-z] a class,
	// \x the character x. Case-sensitive.
	CommandGlob string `yaml:"command_glob,omitempty" json:"command_glob,omitempty"`
	// CommandRegex is an RE2 expression that must match the WHOLE command
	// text (it is anchored as ^(?:expr)$); use (?i) for case-insensitive
	// matching and .* for a partial match. Its groups are in the template
	// data (.Groups, .Named).
	CommandRegex string `yaml:"command_regex,omitempty" json:"command_regex,omitempty"`
	// MacroName equals the macro's name exactly.
	MacroName string `yaml:"macro_name,omitempty" json:"macro_name,omitempty"`
	// MacroID equals the macro's id exactly.
	MacroID string `yaml:"macro_id,omitempty" json:"macro_id,omitempty"`
	// EventType holds when the macro has at least one event of this type
	// (one of deviceapi.MacroEventTypes, exact spelling; JoystickMove and
	// JoysticksMove each match both spellings, as real data uses both).
	EventType string `yaml:"event_type,omitempty" json:"event_type,omitempty"`
	// CustomAction holds when the macro has a custom action event
	// (DeviceTypeCustomAction) whose deviceTypeCustomActionId equals it
	// exactly.
	CustomAction string `yaml:"custom_action,omitempty" json:"custom_action,omitempty"`
}

// RunTemplate is a RunRequest template. Prompt, TaskID,
// AdditionalWorkflowPrompt, AnswerContract and the HITLAnswers values are Go
// text/templates over TemplateData; the rest is copied as is.
type RunTemplate struct {
	// Prompt is required (except in UnmatchedSpec.Run, where it defaults
	// to the command text); a blank rendering is a render error.
	Prompt                   string `yaml:"prompt,omitempty" json:"prompt,omitempty"`
	TaskID                   string `yaml:"task_id,omitempty" json:"task_id,omitempty"`
	AdditionalWorkflowPrompt string `yaml:"additional_workflow_prompt,omitempty" json:"additional_workflow_prompt,omitempty"`
	// AnswerContract: an empty rendering sends no contract.
	AnswerContract string `yaml:"answer_contract,omitempty" json:"answer_contract,omitempty"`
	// TimeoutMs: 0 is the server default (900000); otherwise at least 1000.
	TimeoutMs int `yaml:"timeout_ms,omitempty" json:"timeout_ms,omitempty"`
	// ThinkingLevel: "" (the user's setting), low, medium, high or max.
	ThinkingLevel string `yaml:"thinking_level,omitempty" json:"thinking_level,omitempty"`
	// RestrictToWorkspace confines the run's file tools (#!write, #!move,
	// write_file, move_path, ...) to the Automate server's workspace
	// folder. Nil (absent) means true: every run hubgate starts is
	// confined unless its rule says restrict_to_workspace: false.
	RestrictToWorkspace   *bool        `yaml:"restrict_to_workspace,omitempty" json:"restrict_to_workspace,omitempty"`
	AllowDestructiveTools bool         `yaml:"allow_destructive_tools,omitempty" json:"allow_destructive_tools,omitempty"`
	Continuation          bool         `yaml:"continuation,omitempty" json:"continuation,omitempty"`
	Include               *IncludeSpec `yaml:"include,omitempty" json:"include,omitempty"`
	SelectedSkillIDs      []string     `yaml:"selected_skill_ids,omitempty" json:"selected_skill_ids,omitempty"`
	SelectedMcpServerIDs  []string     `yaml:"selected_mcp_server_ids,omitempty" json:"selected_mcp_server_ids,omitempty"`
	// McpServers are inline MCP servers (at most 8), in snake_case.
	McpServers []McpServerSpec `yaml:"mcp_servers,omitempty" json:"mcp_servers,omitempty"`
	// HITLAnswers maps a question's field id to a template string, or to a
	// list of template strings for a multi-select field. Other values (a
	// bare true or 3) are errors: quote them.
	HITLAnswers map[string]any `yaml:"hitl_answers,omitempty" json:"hitl_answers,omitempty"`
	// ClientTools names the hubgate-executed tools of the run: "notify"
	// and enabled command tools (at most 32).
	ClientTools []string `yaml:"client_tools,omitempty" json:"client_tools,omitempty"`
}

// Confined reports whether runs of this template are confined to the
// workspace: RestrictToWorkspace, true when absent.
func (t RunTemplate) Confined() bool {
	return t.RestrictToWorkspace == nil || *t.RestrictToWorkspace
}

// IncludeSpec selects the large blocks of the run record; an absent key
// means false (hubgate reads none of them; the server's own default, true,
// applies only to requests that omit include).
type IncludeSpec struct {
	Steps  *bool `yaml:"steps,omitempty" json:"steps,omitempty"`
	Trace  *bool `yaml:"trace,omitempty" json:"trace,omitempty"`
	Events *bool `yaml:"events,omitempty" json:"events,omitempty"`
}

// McpServerSpec is automate.InlineMcpServer with snake_case keys (like the
// rest of the configuration); it is validated like the Automate server does.
type McpServerSpec struct {
	Name            string            `yaml:"name" json:"name"`
	Description     string            `yaml:"description" json:"description"`
	Transport       string            `yaml:"transport" json:"transport"` // stdio, http or sse
	URL             string            `yaml:"url,omitempty" json:"url,omitempty"`
	Headers         map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
	Command         string            `yaml:"command,omitempty" json:"command,omitempty"`
	Args            []string          `yaml:"args,omitempty" json:"args,omitempty"`
	Env             map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	RequireApproval bool              `yaml:"require_approval,omitempty" json:"require_approval,omitempty"`
	DisabledTools   []string          `yaml:"disabled_tools,omitempty" json:"disabled_tools,omitempty"`
}

// CommandToolSpec declares a command tool: a client tool that hubgate
// executes as one process with an argument vector (never through a
// shell). It is off unless Enabled is true; a rule can only list an
// enabled one.
type CommandToolSpec struct {
	// Name: letters, digits, _ and -, at most 64, not starting with mcp__,
	// not "notify", unique among command tools.
	Name    string `yaml:"name" json:"name"`
	Enabled bool   `yaml:"enabled" json:"enabled"`
	// Description is required (at most 1024 characters); the agent reads it.
	Description string `yaml:"description" json:"description"`
	// Parameters is the JSON Schema of the call's arguments (a mapping
	// whose type, when given, is "object"); nil for a no-argument tool.
	Parameters map[string]any `yaml:"parameters,omitempty" json:"parameters,omitempty"`
	// Argv is the program and its arguments. Argv[0] is fixed text (no
	// template); the other elements are text/templates over the call's
	// arguments (a JSON object: {{.path}}); a missing argument is an error
	// of the call. One element is always one argument, whatever it holds.
	Argv []string `yaml:"argv" json:"argv"`
	// Timeout kills the process after this long; 0 means 30s, at most 1h.
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// Workdir is the absolute working directory; "" leaves it to the
	// executor (the bridge).
	Workdir string `yaml:"workdir,omitempty" json:"workdir,omitempty"`
	// MaxOutput is how many bytes of output are kept as the result; 0
	// means 64 KiB, at most 512 KiB.
	MaxOutput int `yaml:"max_output,omitempty" json:"max_output,omitempty"`
}

// UnmatchedSpec says what happens to a command no rule matches.
type UnmatchedSpec struct {
	// Action is "ignore" (the default, also for "") or "run".
	Action string `yaml:"action" json:"action"`
	// Run is the template for action run; nil, or an empty Prompt, means
	// the command text is the prompt ({{.Command}}).
	Run *RunTemplate `yaml:"run" json:"run"`
	// Busy, QueueLimit, MaxAge and RunOnRecovery are as in Spec, for the
	// unmatched rule.
	Busy          BusyPolicy    `yaml:"busy" json:"busy,omitempty"`
	QueueLimit    int           `yaml:"queue_limit" json:"queue_limit,omitempty"`
	MaxAge        time.Duration `yaml:"max_age" json:"max_age,omitempty"`
	RunOnRecovery bool          `yaml:"run_on_recovery" json:"run_on_recovery,omitempty"`
}
