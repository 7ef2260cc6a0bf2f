package automate

import (
	"encoding/json"
	"strings"
	"time"
)

// ServiceID is the value of Health.Service and of the assistant's
// /v1/models entry for the default product word; it identifies an Automate
// server during port discovery. See AgentID for other product words.
const ServiceID = "service-agent"

// DefaultProduct is the product word of the contract as the spec writes it.
// The real desktop application uses its product's own name instead: it
// answers "<product>-agent" in /health, lists "<product>-agent" (and, in
// model mode, "<product>-model") in /v1/models with owned_by "<product>",
// and reads and answers the chat extension object under "<product>".
const DefaultProduct = "service"

// ProductAuto is the product-word setting that makes discovery accept the
// Automate server of whatever product word it names (see Discover). It is
// a setting, not a word: a client speaks the word discovery found, and a
// server answers DefaultProduct for it (ServedProduct).
const ProductAuto = "auto"

// ServedProduct is the word a server answers for a product-word setting:
// DefaultProduct for "" and ProductAuto, else the setting itself.
func ServedProduct(setting string) string {
	if setting == "" || setting == ProductAuto {
		return DefaultProduct
	}
	return setting
}

// ValidProduct reports whether word can be a product word: 1 to 32
// lowercase ASCII letters, digits or hyphens, starting with a letter, not
// ending with a hyphen (it becomes part of model ids and a JSON key).
func ValidProduct(word string) bool {
	if len(word) == 0 || len(word) > 32 || word[0] < 'a' || word[0] > 'z' || word[len(word)-1] == '-' {
		return false
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// AgentID is the /health service and /v1/models id of the assistant for a
// product word ("" means DefaultProduct): "<product>-agent".
func AgentID(product string) string {
	if product == "" {
		product = DefaultProduct
	}
	return product + "-agent"
}

// ModelID is the /v1/models id of model mode for a product word ("" means
// DefaultProduct): "<product>-model". A chat request naming it is a plain,
// stateless chat completion on the local model.
func ModelID(product string) string {
	if product == "" {
		product = DefaultProduct
	}
	return product + "-model"
}

// SchemaVersion is the RunRecord schema version this package speaks.
const SchemaVersion = 1

// Port window of the contract: the preferred port and the last one tried.
const (
	FirstPort = 4317
	LastPort  = 4328
)

// PortWindow returns the contract's port window FirstPort..LastPort in
// order: the zero value of every injectable window (discovery's, the
// server's).
func PortWindow() []int {
	ports := make([]int, 0, LastPort-FirstPort+1)
	for p := FirstPort; p <= LastPort; p++ {
		ports = append(ports, p)
	}
	return ports
}

// Contract limits.
const (
	MaxBodyBytes        = 1 << 20 // request body limit of every route
	DefaultTimeoutMs    = 900000  // default RunRequest.TimeoutMs
	MinTimeoutMs        = 1000    // minimum RunRequest.TimeoutMs
	MaxInlineMcpServers = 8
	MaxClientTools      = 32
	MaxNameLength       = 64
	MaxDescription      = 1024
	MinAccessKeyLength  = 24
	DefaultToolWait     = 2 * time.Minute // wait for tool results, per round
	InitializationLimit = 15 * time.Minute
)

// RunStatus is the status of a RunRecord.
type RunStatus string

const (
	StatusCompleted           RunStatus = "completed"
	StatusFailed              RunStatus = "failed"
	StatusCanceled            RunStatus = "canceled"
	StatusTerminated          RunStatus = "terminated"
	StatusAwaitingToolResults RunStatus = "awaiting_tool_results"
)

// Terminal reports whether the run has ended (anything but parked).
func (s RunStatus) Terminal() bool { return s != StatusAwaitingToolResults && s != "" }

// Workflow statuses reported as Health.WorkflowStatus.
const (
	WorkflowIdle                     = "idle"
	WorkflowTerminated               = "terminated"
	WorkflowInitializing             = "initializing"
	WorkflowPlanning                 = "planning"
	WorkflowThinking                 = "thinking"
	WorkflowExecutingStart           = "executing-start"
	WorkflowExecutingProgress        = "executing-progress"
	WorkflowExecutingComplete        = "executing-complete"
	WorkflowExecutingOrgBlock        = "executing-org-block"
	WorkflowExecutingDestructive     = "executing-destructive-block"
	WorkflowExecutingTypeFocusBlock  = "executing-type-focus-block"
	WorkflowExecutingPermissionBlock = "executing-permission-block"
	WorkflowWaitingForUser           = "waitingForUser"
	WorkflowCompleted                = "completed"
	WorkflowFailed                   = "failed"
	WorkflowCanceled                 = "canceled"
)

// WorkflowReady reports whether a workflow status lets a new run start.
func WorkflowReady(status string) bool {
	return status == WorkflowIdle || status == WorkflowTerminated
}

// Workflow error codes carried in RunRecord.ErrorCode.
const (
	ErrorModelLoadFailed      = "MODEL_LOAD_FAILED"
	ErrorPlanningTimeout      = "PLANNING_TIMEOUT"
	ErrorToolTimeout          = "TOOL_TIMEOUT"
	ErrorExecutionTimeout     = "EXECUTION_TIMEOUT"
	ErrorExecutionFailed      = "EXECUTION_FAILED"
	ErrorContextLimitExceeded = "CONTEXT_LIMIT_EXCEEDED"
	ErrorUnsupportedDevice    = "UNSUPPORTED_DEVICE"
	ErrorUnsupportedOSVersion = "UNSUPPORTED_OS_VERSION"
	ErrorDisabledByPolicy     = "DISABLED_BY_POLICY"
	ErrorSchemaInvalid        = "SCHEMA_INVALID"
	ErrorServerLost           = "SERVER_LOST"
	ErrorCanceled             = "CANCELED"
)

// ErrorCodes lists every workflow error code of the contract.
var ErrorCodes = []string{
	ErrorModelLoadFailed, ErrorPlanningTimeout, ErrorToolTimeout,
	ErrorExecutionTimeout, ErrorExecutionFailed, ErrorContextLimitExceeded,
	ErrorUnsupportedDevice, ErrorUnsupportedOSVersion, ErrorDisabledByPolicy,
	ErrorSchemaInvalid, ErrorServerLost, ErrorCanceled,
}

// Thinking levels of RunRequest.ThinkingLevel.
var ThinkingLevels = []string{"low", "medium", "high", "max"}

// ValidThinkingLevel reports whether s is one of ThinkingLevels.
func ValidThinkingLevel(s string) bool {
	for _, l := range ThinkingLevels {
		if s == l {
			return true
		}
	}
	return false
}

// Timestamp is a time that marshals as ISO 8601 UTC with milliseconds
// ("2026-11-21T19:49:38.123Z").
type Timestamp struct{ time.Time }

const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON implements json.Marshaler.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.UTC().Format(timestampLayout) + `"`), nil
}

// UnmarshalJSON accepts any RFC 3339 time.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	parsed, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	t.Time = parsed
	return nil
}

// Include selects the large blocks of a RunRecord. A nil field means true.
type Include struct {
	Steps  *bool `json:"steps,omitempty"`
	Trace  *bool `json:"trace,omitempty"`
	Events *bool `json:"events,omitempty"`
}

// RunRequest is the body of POST /v1/runs.
type RunRequest struct {
	Prompt                   string            `json:"prompt"`
	TaskID                   string            `json:"taskId,omitempty"`
	TimeoutMs                int64             `json:"timeoutMs,omitempty"` // 0: server default (900000)
	ThinkingLevel            string            `json:"thinkingLevel,omitempty"`
	AdditionalWorkflowPrompt string            `json:"additionalWorkflowPrompt,omitempty"`
	AnswerContract           *string           `json:"answerContract,omitempty"`
	Include                  *Include          `json:"include,omitempty"`
	RestrictToWorkspace      bool              `json:"restrictToWorkspace,omitempty"`
	Continuation             bool              `json:"continuation,omitempty"`
	SelectedSkillIDs         []string          `json:"selectedSkillIds,omitempty"`
	SelectedMcpServerIDs     []string          `json:"selectedMcpServerIds,omitempty"`
	McpServers               []InlineMcpServer `json:"mcpServers,omitempty"`
	ClientTools              []ClientTool      `json:"clientTools,omitempty"`
	// HITLAnswers maps a question's field id to a string, or to a []string
	// for a multi-select field.
	HITLAnswers           map[string]any `json:"hitlAnswers,omitempty"`
	AllowDestructiveTools bool           `json:"allowDestructiveTools,omitempty"`
	// BuiltInTools narrows the assistant's own tools for this run (the
	// newer desktop application's field); nil: no narrowing.
	BuiltInTools *BuiltInTools `json:"builtInTools,omitempty"`
	// Stream asks for the run's progress as server-sent events (run.started,
	// run.step, run.status, run.completed). Client.RunProgress sets it;
	// a server without streaming ignores it and answers the plain record.
	Stream bool `json:"stream,omitempty"`
	// Mode is the newer desktop application's run mode: "" or
	// ModeAssistant for a run of the assistant (Prompt is the task),
	// ModeModel for one stateless model turn over Messages (Prompt stays
	// empty; ClientTools are the model's only tools; the record's
	// toolCalls are the calls the model asked for, answered by the caller
	// in the next turn's Messages). A server without model mode answers
	// 400.
	Mode string `json:"mode,omitempty"`
	// Messages is the whole conversation of a ModeModel run, OpenAI chat
	// messages exactly as the caller keeps them (system, user, assistant
	// with tool_calls, tool with tool_call_id).
	Messages []json.RawMessage `json:"messages,omitempty"`
}

// Run modes (RunRequest.Mode, ModelEntry.Mode, RunRecord.Mode).
const (
	ModeAssistant = "assistant"
	ModeModel     = "model"
)

// BuiltInTools restricts the assistant's own (built-in) tools of one run:
// tool names or groups ("@destructive"). Allow, when not nil, is the only
// tools that may run; Deny is removed from what may run and wins over
// Allow. It can only narrow: allowDestructiveTools is still needed for a
// destructive tool.
type BuiltInTools struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// EffectiveTimeout is the run timeout the server arms for this request.
func (r *RunRequest) EffectiveTimeout() time.Duration {
	if r.TimeoutMs <= 0 {
		return DefaultTimeoutMs * time.Millisecond
	}
	return time.Duration(r.TimeoutMs) * time.Millisecond
}

// ClientTool is a caller-executed tool declared for one run.
type ClientTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// InlineMcpServer is an MCP server the caller adds to one run.
type InlineMcpServer struct {
	Name            string            `json:"name"`
	Description     string            `json:"description"`
	Transport       string            `json:"transport"` // stdio, http or sse
	URL             string            `json:"url,omitempty"`
	Headers         map[string]string `json:"headers,omitempty"`
	Command         string            `json:"command,omitempty"`
	Args            []string          `json:"args,omitempty"`
	Env             map[string]string `json:"env,omitempty"`
	RequireApproval bool              `json:"requireApproval,omitempty"`
	DisabledTools   []string          `json:"disabledTools,omitempty"`
}

// ToolCall is a pending call of a client tool in a parked run.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// AskPersonToolName is the client tool through which a run asks the person
// a question (the bridge declares it for rules with ask: true and answers
// it: bridge/rules.AskPersonToolName). The engines ask it for MCP
// elicitations too (toolkit.ElicitByAsking).
const AskPersonToolName = "ask_person"

// AskPersonNoAnswer starts the result of an ask_person call the person did
// not answer (in time, or the run ended): "No answer: <why>.".
const AskPersonNoAnswer = "No answer: "

// ToolResult answers one ToolCall. Result passes through when it is a JSON
// string and is JSON-encoded text otherwise; Error reports a failed call.
type ToolResult struct {
	ID     string          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// ResultText is the text the agent sees for this result: a JSON string's
// value, or the JSON encoding of any other value ("" when absent).
func (r ToolResult) ResultText() string {
	if len(r.Result) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(r.Result, &s); err == nil {
		return s
	}
	return strings.TrimSpace(string(r.Result))
}

// TextResult builds a ToolResult whose result is the string s.
func TextResult(id, s string) ToolResult {
	b, _ := json.Marshal(s)
	return ToolResult{ID: id, Result: b}
}

// ResumeRequest is the body of POST /v1/runs/{resumeToken}/tool-results.
type ResumeRequest struct {
	Results []ToolResult `json:"results"`
	// Stream asks for server-sent events, as RunRequest.Stream.
	Stream bool `json:"stream,omitempty"`
}

// Step is one step of a run.
type Step struct {
	ID                  string          `json:"id"`
	Index               int             `json:"index"`
	Title               string          `json:"title"`
	Status              string          `json:"status"` // pending, running, success, failed, skipped
	ToolName            string          `json:"toolName,omitempty"`
	ToolArgs            json.RawMessage `json:"toolArgs,omitempty"`
	Thinking            string          `json:"thinking,omitempty"`
	ResultSummary       string          `json:"resultSummary,omitempty"`
	ProducedFilePath    string          `json:"producedFilePath,omitempty"`
	ProducedIsDirectory bool            `json:"producedIsDirectory,omitempty"`
	ProducedContent     string          `json:"producedContent,omitempty"`
	ProducedContentID   string          `json:"producedContentId,omitempty"`
	ConsumedContentIDs  []string        `json:"consumedContentIds,omitempty"`
}

// Step statuses.
const (
	StepPending = "pending"
	StepRunning = "running"
	StepSuccess = "success"
	StepFailed  = "failed"
	StepSkipped = "skipped"
)

// Usage is the token and timing metrics of a run.
type Usage struct {
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	GenerationMs int64   `json:"generationMs"`
	TTFTMs       int64   `json:"ttftMs"`
	TPS          float64 `json:"tps"`
}

// Backend describes the inference runtime.
type Backend struct {
	FlavorID    string `json:"flavorId"`
	Accelerator string `json:"accelerator"`
	CPUFallback bool   `json:"cpuFallback"`
}

// Event is one raw channel event of a run (shape chosen here; see
// docs/automate.md).
type Event struct {
	Seq     int             `json:"seq"`
	At      Timestamp       `json:"at"`
	Channel string          `json:"channel"`
	Payload json.RawMessage `json:"payload"`
}

// Event channels.
const (
	ChannelStatus    = "workflow-status"
	ChannelSteps     = "workflow-steps"
	ChannelToolCalls = "tool-calls"
	ChannelResult    = "workflow-result"
)

// RunRecord is the response of the run routes. Steps, Trace and Events are
// nil when the request excluded them (and then omitted on the wire); an
// included but empty block is an empty, non-nil slice.
type RunRecord struct {
	SchemaVersion int    `json:"schemaVersion"`
	RequestID     string `json:"requestId"`
	// Mode is "model" on the record of a model-mode call (a /v1/runs run
	// with mode "model", or a chat call that asked for its record with the
	// extension object's include); "" on runs of the assistant.
	Mode        string            `json:"mode,omitempty"`
	TaskID      string            `json:"taskId,omitempty"`
	Status      RunStatus         `json:"status"`
	ToolCalls   []ToolCall        `json:"toolCalls,omitempty"`
	ResumeToken string            `json:"resumeToken,omitempty"`
	Answer      string            `json:"answer"`
	FinalAnswer *string           `json:"finalAnswer,omitempty"`
	ErrorCode   string            `json:"errorCode,omitempty"`
	StartedAt   Timestamp         `json:"startedAt"`
	CompletedAt Timestamp         `json:"completedAt"`
	DurationMs  int64             `json:"durationMs"`
	Model       string            `json:"model"`
	AppVersion  string            `json:"appVersion"`
	Backend     *Backend          `json:"backend"`
	Steps       []Step            `json:"steps,omitzero"`
	Trace       []json.RawMessage `json:"trace,omitzero"`
	Usage       *Usage            `json:"usage"`
	Events      []Event           `json:"events,omitzero"`
}

// Health is the body of GET /health.
type Health struct {
	Status                    string          `json:"status"`
	Service                   string          `json:"service"`
	AppVersion                string          `json:"appVersion"`
	Platform                  string          `json:"platform"`
	Architecture              string          `json:"architecture"`
	OSRelease                 string          `json:"osRelease"`
	CPU                       string          `json:"cpu"`
	LogicalCPUCount           int             `json:"logicalCpuCount"`
	TotalMemoryBytes          uint64          `json:"totalMemoryBytes"`
	WorkflowStatus            string          `json:"workflowStatus"`
	ActiveRequestID           *string         `json:"activeRequestId"`
	ModelName                 *string         `json:"modelName"`
	WorkerRunning             bool            `json:"workerRunning"`
	Busy                      bool            `json:"busy"`
	AwaitingToolResults       bool            `json:"awaitingToolResults"`
	Workspace                 string          `json:"workspace"`
	Backend                   *Backend        `json:"backend"`
	ContextSize               *int            `json:"contextSize"`
	LaunchModelSelectionError *string         `json:"launchModelSelectionError"`
	AutomateModelSelection    *ModelSelection `json:"automateModelSelection"`
}

// Ready reports whether a new run can start now.
func (h *Health) Ready() bool { return !h.Busy && WorkflowReady(h.WorkflowStatus) }

// ModelSelection is the session pin reported as automateModelSelection.
type ModelSelection struct {
	ModelName string `json:"modelName"`
	Family    string `json:"family"`
	SizeCode  string `json:"sizeCode"`
}

// ModelOption is one entry of the on-device model catalog.
type ModelOption struct {
	Name                   string   `json:"name"`
	Family                 string   `json:"family"`
	SizeCode               string   `json:"sizeCode"`
	ParameterCountBillions *float64 `json:"parameterCountBillions"`
	FileSizeMb             *float64 `json:"fileSizeMb"`
	SupportsTools          bool     `json:"supportsTools"`
	AvailableForDevice     bool     `json:"availableForDevice"`
	Downloaded             bool     `json:"downloaded"`
	Selected               bool     `json:"selected"`
}

// Catalog statuses.
const (
	CatalogLoading = "loading"
	CatalogReady   = "ready"
)

// CatalogInfo is the catalog block of GET /v1/automate/models.
type CatalogInfo struct {
	Status     string `json:"status"`
	ModelCount int    `json:"modelCount"`
}

// CatalogResponse is the body of GET /v1/automate/models.
type CatalogResponse struct {
	Object  string        `json:"object"`
	Data    []ModelOption `json:"data"`
	Catalog CatalogInfo   `json:"catalog"`
}

// ModelList is the body of GET /v1/models.
type ModelList struct {
	Object string       `json:"object"`
	Data   []ModelEntry `json:"data"`
}

// ModelEntry is one entry of GET /v1/models.
type ModelEntry struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	OwnedBy string `json:"owned_by"`
	// Mode is what the desktop application's newer server adds to each
	// entry: "assistant" for "<product>-agent", "model" for
	// "<product>-model". Our spec has no such field; "" when absent.
	Mode string `json:"mode,omitempty"`
}

// ToolCatalog is the body of GET /v1/automate/tools (the newer desktop
// application's route): the assistant's built-in tools, the groups
// builtInTools may name, and the server-wide policy.
type ToolCatalog struct {
	Object string            `json:"object"` // "list"
	Data   []BuiltInToolInfo `json:"data"`
	// Groups maps each group ("@destructive") to its tools.
	Groups map[string][]string `json:"groups"`
	// Policy is the server-wide tool policy; nil: none is set, only each
	// run's builtInTools and allowDestructiveTools narrow the tools.
	Policy *BuiltInTools `json:"policy"`
}

// BuiltInToolInfo is one entry of ToolCatalog.
type BuiltInToolInfo struct {
	Name string `json:"name"`
	// Groups are the groups the tool belongs to, sorted.
	Groups []string `json:"groups"`
	// Destructive: the tool pauses for review and runs only in a run
	// with allowDestructiveTools true.
	Destructive bool `json:"destructive"`
}

// Settings is the body of GET and PATCH /v1/settings (the newer desktop
// application's route). A server whose settings are fixed at start
// (ours) answers PATCH with ErrInvalidRequest for any field.
type Settings struct {
	// Workspace is the absolute workspace folder (as /health reports it).
	Workspace string `json:"workspace"`
	// WorkspaceRestriction is the user's own workspace restriction, which
	// confines every run; nil: none (restrictToWorkspace decides per run).
	WorkspaceRestriction *string `json:"workspaceRestriction"`
	// DefaultTimeoutMs is the run timeout when a request sends none.
	DefaultTimeoutMs int64 `json:"defaultTimeoutMs"`
	// ToolResultWaitMs is how long a parked run waits for tool results
	// per round.
	ToolResultWaitMs int64 `json:"toolResultWaitMs"`
	// ConfiguredMcpServers are the names of the user's configured MCP
	// servers (an inline server may not take one); never their secrets.
	ConfiguredMcpServers []string `json:"configuredMcpServers"`
	// ReadOnly lists the settings PATCH cannot change.
	ReadOnly []string `json:"readOnly"`
}

// SpeechStatus is the body of GET /v1/speech/status (the newer desktop
// application's route).
type SpeechStatus struct {
	// Available is false on a server without a speech recogniser.
	Available bool `json:"available"`
	// Listening: the recogniser is listening now.
	Listening bool `json:"listening"`
	// State is "unavailable", "idle" or "listening".
	State string `json:"state"`
	// Reason says why speech is unavailable; "" when available.
	Reason string `json:"reason,omitempty"`
}

// SelectRequest is the body of POST /v1/automate/models/select. All criteria
// empty unpins.
type SelectRequest struct {
	ModelName string `json:"modelName,omitempty"`
	Family    string `json:"family,omitempty"`
	SizeCode  string `json:"sizeCode,omitempty"`
}

// SelectResponse is the body of a successful select.
type SelectResponse struct {
	Selected *ModelOption  `json:"selected"`
	Models   []ModelOption `json:"models"`
}

// CancelRequest is the optional body of POST /v1/automate/cancel.
type CancelRequest struct {
	Force bool `json:"force,omitempty"`
}

// Cancel modes.
const (
	CancelModeCancel    = "cancel"
	CancelModeTerminate = "terminate"
	CancelModeNone      = "none"
)

// CancelResponse is the body of POST /v1/automate/cancel.
type CancelResponse struct {
	Stopped        bool    `json:"stopped"`
	Mode           string  `json:"mode"`
	RequestID      *string `json:"requestId"`
	WorkflowStatus string  `json:"workflowStatus"`
}

// Error types of the error envelope.
const (
	ErrTypeAuthentication = "authentication_error"
	ErrTypeNotFound       = "not_found"
	ErrTypeConflict       = "conflict"
	ErrTypeInvalidRequest = "invalid_request_error"
)

// ErrorEnvelope is the body of every error answer.
type ErrorEnvelope struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the inside of an ErrorEnvelope.
type ErrorBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	// Code is a machine-readable detail some answers add (model mode:
	// context_length_exceeded, or a workflow error code); "" when none.
	Code string `json:"code,omitempty"`
}

// ChatRequest is the body of POST /v1/chat/completions as this package
// sends it. The server accepts more (see the spec); unknown fields are
// ignored.
type ChatRequest struct {
	Model     string        `json:"model,omitempty"`
	Messages  []ChatMessage `json:"messages"`
	Tools     []ChatTool    `json:"tools,omitempty"`
	TimeoutMs int64         `json:"timeout_ms,omitempty"`
	Service   *ChatService  `json:"service,omitempty"`
}

// ChatService is the `service` extension object of a chat request.
type ChatService struct {
	AnswerContract *string           `json:"answerContract,omitempty"`
	Include        *Include          `json:"include,omitempty"`
	Continuation   bool              `json:"continuation,omitempty"`
	ThinkingLevel  string            `json:"thinkingLevel,omitempty"`
	McpServers     []InlineMcpServer `json:"mcpServers,omitempty"`
	BuiltInTools   *BuiltInTools     `json:"builtInTools,omitempty"`
}

// ChatMessage is one chat message. Content is a string, null, or (from
// other clients) an array of content parts.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  []ChatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
}

// TextMessage builds a chat message with string content.
func TextMessage(role, content string) ChatMessage {
	b, _ := json.Marshal(content)
	return ChatMessage{Role: role, Content: b}
}

// ContentText returns the message content when it is a JSON string.
func (m ChatMessage) ContentText() (string, bool) {
	var s string
	if len(m.Content) == 0 || json.Unmarshal(m.Content, &s) != nil {
		return "", false
	}
	return s, true
}

// ChatTool is an entry of a chat request's tools.
type ChatTool struct {
	Type     string       `json:"type"`
	Function ChatFunction `json:"function"`
}

// ChatFunction declares one function tool.
type ChatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ChatToolCall is a tool call in an assistant chat message.
type ChatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function ChatFunctionCall `json:"function"`
}

// ChatFunctionCall names the function and carries JSON-encoded arguments.
type ChatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ChatCompletion is the response of POST /v1/chat/completions (200 and 500).
type ChatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []ChatChoice `json:"choices"`
	Usage   ChatUsage    `json:"usage"`
	Service *RunRecord   `json:"service"`
}

// ChatChoice is the single choice of a ChatCompletion.
type ChatChoice struct {
	Index        int              `json:"index"`
	Message      ChatReplyMessage `json:"message"`
	FinishReason string           `json:"finish_reason"`
}

// ChatReplyMessage is the assistant message of a ChatChoice.
type ChatReplyMessage struct {
	Role      string         `json:"role"`
	Content   string         `json:"content"`
	ToolCalls []ChatToolCall `json:"tool_calls,omitempty"`
}

// ChatUsage is the OpenAI-style usage block.
type ChatUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}
