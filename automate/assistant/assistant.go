// Package assistant owns the contract between the Automate server
// (automate/server) and the engines that do the work behind it (the scripted
// engine, the OpenAI-compatible upstream engine), as database/sql/driver
// separates database/sql from its drivers: Assistant, Task, Result, the
// optional ModelChatter (model mode), and what every engine must apply
// identically (Task's tool policy, human-input answers and system prompt;
// Conversation, Result.Stopped, NewUsage). The server owns what a run shares
// across engines; an engine owns its agent loop.
//
// Design notes: docs/assistant.md.
package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hubgate/hubgate/automate"
)

// Assistant is an engine behind the Automate server. The server calls Run
// for at most one task at a time; the other methods may be called
// concurrently with Run and with each other.
type Assistant interface {
	// Run executes one task and returns when it reaches a terminal state.
	// ctx is cancelled when the run must stop at once (force cancel, run
	// timeout, tool-result wait expired, initialization limit) and also when
	// a soft cancel lands while the run is parked in CallClientTools (a
	// parked run is between steps); the engine then returns promptly, with
	// any error. Otherwise a soft cancel is seen through env.Checkpoint.
	//
	// Errors: ErrCanceled (from Checkpoint) ends the run canceled;
	// *InitError fails the request with 400 and no record; any other error
	// ends the run failed with EXECUTION_FAILED and the error text as the
	// answer.
	Run(ctx context.Context, task *Task, env Env) (*Result, error)

	// Catalog returns the engine's model catalog. Ready is false while it
	// is still loading. Selected marks the engine's own (application)
	// selection, ignoring any pin the server holds.
	Catalog(ctx context.Context) (Catalog, error)

	// ActivateModel makes the named catalog model serve the next runs; ""
	// returns to the engine's own selection. Switching terminates a warm
	// worker (the next run cold starts).
	ActivateModel(ctx context.Context, name string) error

	// Runtime reports the engine's state for /health and run records.
	Runtime() Runtime

	// Terminate kills the warm worker after a force cancel; the next run
	// cold starts. It must not block for long.
	Terminate()
}

// Catalog is the engine's model catalog.
type Catalog struct {
	Ready  bool
	Models []automate.ModelOption
}

// Runtime is what an engine reports about itself.
type Runtime struct {
	ModelName     string // file name of the model serving runs; "" when unknown
	WorkerRunning bool
	Backend       *automate.Backend
	ContextSize   *int
}

// Env is the server's side of a running task. Its methods are safe to call
// from the goroutine running Run.
type Env interface {
	// SetStatus reports a workflow status (planning, executing-progress,
	// ...) for /health and the run's events.
	SetStatus(status string)

	// Step adds or replaces (by Index) one step of the run; every call
	// rebroadcasts the step list on the run's events and reaches streamed
	// answers at once (run.step), so an engine reports a step when it is
	// planned, when it starts and when it ends. An empty ID becomes
	// "step-<index>".
	Step(step automate.Step)

	// Checkpoint is called between steps. It returns ErrCanceled when a
	// soft cancel was requested; the engine then returns it from Run.
	Checkpoint() error

	// CallClientTools parks the run until the caller posts results for
	// every call, and returns them in the order of calls (each carrying
	// the id the server minted). It returns ctx's error when the run is
	// stopped while parked.
	CallClientTools(ctx context.Context, calls []ClientCall) ([]automate.ToolResult, error)
}

// ClientCall is a call of a caller-declared client tool.
type ClientCall struct {
	Name      string
	Arguments json.RawMessage // a JSON object; nil means {}
}

// Result is the outcome of a run as the engine sees it.
type Result struct {
	// Status is completed, failed or canceled; "" means completed.
	Status    automate.RunStatus
	ErrorCode string // a workflow error code when Status is failed
	Answer    string // the closing message as a person would see it
	Model     string // file name of the model that served; "" = Runtime().ModelName
	Usage     *automate.Usage
	Backend   *automate.Backend
	Trace     []json.RawMessage
}

// Stopped marks r as the result of a run that stopped on err: canceled for
// a cancel (ErrCanceled, ErrUserInputMissing, the run's context ending),
// else failed with EXECUTION_FAILED (a failure of the environment). The
// engine returns r with err.
func (r *Result) Stopped(err error) {
	r.Status = automate.StatusCanceled
	if !errors.Is(err, ErrCanceled) && !errors.Is(err, ErrUserInputMissing) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		r.Status = automate.StatusFailed
		r.ErrorCode = automate.ErrorExecutionFailed
	}
}

// NewUsage is the usage of a run: in and out tokens, gen the generation
// time, ttft the time to the first token (negative: 0), and out's tokens
// per second over decode (over gen where decode is not positive; two
// decimals, 0 over no time).
func NewUsage(in, out int, gen, ttft, decode time.Duration) *automate.Usage {
	u := &automate.Usage{
		InputTokens:  in,
		OutputTokens: out,
		GenerationMs: gen.Milliseconds(),
		TTFTMs:       max(ttft.Milliseconds(), 0),
	}
	if decode <= 0 {
		decode = gen
	}
	if s := decode.Seconds(); s > 0 {
		u.TPS = math.Round(float64(out)/s*100) / 100
	}
	return u
}

// ErrCanceled is returned by Env.Checkpoint after a soft cancel.
var ErrCanceled = errors.New("run canceled")

// ErrUserInputMissing is returned by Task.AnswerUserInput when a required
// field has no answer; the engine returns it (wrapped) from Run and the
// server ends the run canceled.
var ErrUserInputMissing = errors.New("request_user_input: a required field has no answer in hitlAnswers")

// InitError is a failure to bring the assistant up (the worker or the
// inference server). The request fails with 400 and no record.
type InitError struct {
	Message string // the 400 message, e.g. "Timed out initializing the on-device assistant"
	Err     error
}

func (e *InitError) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *InitError) Unwrap() error { return e.Err }

// MessageInitTimeout is the 400 message when initialization outlives its limit.
const MessageInitTimeout = "Timed out initializing the on-device assistant"

// Task is a validated run request with the server's defaults applied.
type Task struct {
	RequestID                string
	Prompt                   string
	AdditionalWorkflowPrompt string
	AnswerContract           *string // nil when the request sent none
	ThinkingLevel            string  // "" means the user's setting
	Continuation             bool
	SelectedSkillIDs         []string
	SelectedMcpServerIDs     []string
	McpServers               []automate.InlineMcpServer
	ClientTools              []automate.ClientTool
	HITLAnswers              map[string]any
	AllowDestructiveTools    bool
	// BuiltInTools narrows the built-in tools that may run (the request's
	// builtInTools); nil allows all. Engines apply it with ReviewBuiltIn.
	BuiltInTools *ToolFilter

	// Workspace is the absolute workspace folder. Confine, when not "",
	// is the folder every file and command tool must stay inside (the
	// user's own restriction, or Workspace when restrictToWorkspace holds).
	Workspace string
	Confine   string
}

// DestructiveTools are the built-in tools that pause for review.
var DestructiveTools = map[string]bool{"delete_path": true, "run_command": true, "move_path": true}

// PolicyRejectionPrefix starts every message the agent sees when a tool
// call is rejected by the request's policy.
const PolicyRejectionPrefix = "Rejected by Automate HTTP server policy"

// PolicyError is a tool call rejected by the request's policy. The agent
// sees Error() and the run goes on.
type PolicyError struct {
	Tool   string
	Reason string
}

func (e *PolicyError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", PolicyRejectionPrefix, e.Reason, e.Tool)
}

// ReviewDestructive decides a built-in tool call before it runs: nil for a
// tool that is not destructive or when allowDestructiveTools is true, a
// *PolicyError otherwise.
func (t *Task) ReviewDestructive(tool string) error {
	if !DestructiveTools[tool] || t.AllowDestructiveTools {
		return nil
	}
	return &PolicyError{Tool: tool, Reason: "destructive tools are not allowed for this run (allowDestructiveTools is false)"}
}

// ReviewMCP decides a call of a tool of the inline MCP server named server:
// servers with requireApproval are approved only when allowDestructiveTools
// is true.
func (t *Task) ReviewMCP(server, tool string) error {
	for _, s := range t.McpServers {
		if s.Name != server {
			continue
		}
		if s.RequireApproval && !t.AllowDestructiveTools {
			return &PolicyError{Tool: "mcp__" + server + "__" + tool, Reason: "this MCP server requires approval and allowDestructiveTools is false"}
		}
		return nil
	}
	return nil
}

// ClientTool returns the declared client tool called name.
func (t *Task) ClientTool(name string) (automate.ClientTool, bool) {
	for _, c := range t.ClientTools {
		if c.Name == name {
			return c, true
		}
	}
	return automate.ClientTool{}, false
}

// UserInputField is one field of a request_user_input question.
type UserInputField struct {
	ID       string `json:"id"`
	Label    string `json:"label,omitempty"`
	Required bool   `json:"required,omitempty"`
	Multi    bool   `json:"multi,omitempty"`
}

// UserInputRequest is the question of a request_user_input call.
type UserInputRequest struct {
	Title  string           `json:"title,omitempty"`
	Fields []UserInputField `json:"fields"`
}

// AnswerUserInput answers a request_user_input question from hitlAnswers.
// Keys the question does not ask for are ignored. A required field without
// an answer (or with an empty one) yields ErrUserInputMissing naming it.
func (t *Task) AnswerUserInput(q UserInputRequest) (map[string]any, error) {
	answers := make(map[string]any, len(q.Fields))
	for _, f := range q.Fields {
		v, ok := t.HITLAnswers[f.ID]
		if ok {
			switch x := v.(type) {
			case string:
				if x == "" {
					ok = false
				}
			case []any:
				if len(x) == 0 {
					ok = false
				}
			case []string:
				if len(x) == 0 {
					ok = false
				}
			}
		}
		if !ok {
			if f.Required {
				return nil, fmt.Errorf("%w: field %q", ErrUserInputMissing, f.ID)
			}
			continue
		}
		answers[f.ID] = v
	}
	return answers, nil
}

// BasePrompt is the default first section of the system prompt.
const BasePrompt = "You are the on-device assistant. Plan the task, call tools when they help, and close with a message for the person who asked."

// SystemPrompt renders the system prompt of a run: the base prompt, the
// skills' instructions, the advisory workflow preferences, and the answer
// contract as its own final section (it outranks the usual style).
func (t *Task) SystemPrompt(base string, skills ...string) string {
	if base == "" {
		base = BasePrompt
	}
	sections := []string{base}
	for _, s := range skills {
		if strings.TrimSpace(s) != "" {
			sections = append(sections, "## Skill\n"+s)
		}
	}
	if strings.TrimSpace(t.AdditionalWorkflowPrompt) != "" {
		sections = append(sections, "## Workflow preferences (advisory)\n"+t.AdditionalWorkflowPrompt)
	}
	if t.AnswerContract != nil {
		sections = append(sections, "## Answer contract (binding; it outranks every style rule above)\n"+*t.AnswerContract)
	}
	return strings.Join(sections, "\n\n")
}

// TraceMessage encodes one trace element {role, content, ...extra}.
func TraceMessage(role, content string, extra map[string]any) json.RawMessage {
	m := map[string]any{"role": role, "content": content}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}
