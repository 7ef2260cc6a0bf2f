package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/toolkit"
	"github.com/hubgate/hubgate/internal/proc"
)

// Causes of the run's own budgets.
var (
	errRunBudget   = errors.New("the run used its execution budget")
	errToolTimeout = errors.New("the tool call used its time budget")
)

// continuePrompt asks the model to go on after an answer was cut off.
const continuePrompt = "Your previous message was cut off by the output limit. Continue exactly where it stopped, without repeating anything."

// maxThinking bounds the reasoning text kept as a step's thinking.
const maxThinking = 4000

// maxSummary bounds a step's resultSummary (runes).
const maxSummary = 1000

// ThinkingParams maps a run's thinking level onto the upstream request:
// low, medium and high become reasoning_effort with the configured
// max_tokens; max becomes reasoning_effort high with 4x the max_tokens
// (the larger budget is what "max" adds, as no upstream has a level above
// high); "" sends no reasoning_effort. maxTokens <= 0 means max_tokens is
// not sent (and stays unsent for max).
func ThinkingParams(level string, maxTokens int) (effort string, tokens int) {
	tokens = max(maxTokens, 0)
	switch level {
	case "low", "medium", "high":
		return level, tokens
	case "max":
		return "high", tokens * maxThinkingTokenMultiple
	}
	return "", tokens
}

// run is the state of one Run.
type run struct {
	e      *Engine
	parent context.Context // the server's context for the run
	ctx    context.Context // parent plus the run budget
	task   *assistant.Task
	env    assistant.Env
	log    *slog.Logger

	model       string
	w           *worker
	res         *assistant.Result
	contextSize int
	effort      string
	maxTokens   int

	tools      *toolset
	pool       *toolkit.McpPool
	mcpHTTP    *http.Client                        // the run's MCP HTTP connections, closed with the run
	configured map[string]automate.InlineMcpServer // the run's configured MCP servers by name
	box        *toolkit.Toolbox

	msgs      []chatMessage // the conversation as sent upstream
	runStart  int           // index of this run's user message in msgs; -1 before
	steps     []*automate.Step
	chain     toolkit.ContentChain
	invalid   map[string]int // invalid calls in a row, by tool name
	executing bool           // a tool step ran

	calls      int           // completions received
	inTok      int           // input tokens (summed over calls)
	outTok     int           // output tokens (summed over calls)
	gen        time.Duration // request sent to answer ended, summed
	decode     time.Duration // first token to answer ended, summed
	ttft       time.Duration // first call: request sent to first token
	parked     time.Duration
	lastTotal  int // prompt+completion tokens of the last completion; 0 unknown
	lastLen    int // len(msgs) covered by lastTotal
	gotAnswer  bool
	convBegun  bool
	cancelCtx  context.CancelFunc
	startedRun time.Time
}

// Run implements assistant.Assistant; see docs/llm-engine.md (Runs).
func (e *Engine) Run(ctx context.Context, task *assistant.Task, env assistant.Env) (*assistant.Result, error) {
	r := &run{
		e: e, parent: ctx, ctx: ctx, task: task, env: env,
		log:        e.log.With("request_id", task.RequestID),
		runStart:   -1,
		invalid:    map[string]int{},
		configured: map[string]automate.InlineMcpServer{},
		startedRun: e.now(),
	}
	defer r.cleanup()
	res, err := r.execute()
	res.Trace = r.trace()
	if r.convBegun {
		r.endConversation(res)
	}
	r.log.Info("llm: run ended", "model", r.model, "status", res.Status, "error_code", res.ErrorCode,
		"steps", len(r.steps), "upstream_calls", r.calls, "err", err)
	return res, err
}

// cleanup closes what the run opened: MCP sessions (and their processes),
// the budget timer, and the idle upstream connections.
func (r *run) cleanup() {
	if r.pool != nil {
		r.pool.Close()
	}
	if r.mcpHTTP != nil {
		r.mcpHTTP.CloseIdleConnections()
	}
	if r.cancelCtx != nil {
		r.cancelCtx()
	}
	r.e.up.hc.CloseIdleConnections()
	if r.e.cfg.FetchClient == nil {
		r.e.fetch.hc.CloseIdleConnections()
	}
}

func (r *run) execute() (*assistant.Result, error) {
	e := r.e
	e.mu.Lock()
	r.model = e.activeModelLocked()
	e.mu.Unlock()
	r.res = &assistant.Result{Model: r.model}

	w := e.conv.Acquire(r.model)
	if w == nil || r.model == "" {
		// Cold start: the upstream must answer and serve the model.
		r.env.SetStatus(automate.WorkflowInitializing)
		if _, err := e.refreshNow(r.parent); err != nil {
			if r.parent.Err() != nil {
				return r.stopped(r.parent.Err())
			}
			return r.fail(automate.ErrorModelLoadFailed, fmt.Sprintf("The model server at %s cannot be reached: %v", e.up.root, err))
		}
		e.mu.Lock()
		r.model = e.activeModelLocked()
		e.mu.Unlock()
		r.res.Model = r.model
		if r.model == "" {
			return r.fail(automate.ErrorModelLoadFailed, fmt.Sprintf("No model to run: the model server at %s serves no tool-capable model; set automate.openai.model or select one", e.up.root))
		}
		if p := e.modelProblem(r.model); p != "" {
			return r.fail(automate.ErrorModelLoadFailed, p)
		}
		w = e.conv.Start(r.model)
		r.log.Info("llm: worker started", "model", r.model, "upstream", e.up.root)
	}
	r.w = w
	e.mu.Lock()
	r.contextSize = e.contextSizeLocked(r.model)
	r.res.Backend = e.backendLocked(r.model)
	e.mu.Unlock()

	prior := e.conv.Begin(w, r.task.Continuation)
	r.convBegun = true
	if e.cfg.RunBudget > 0 {
		r.ctx, r.cancelCtx = context.WithTimeoutCause(r.parent, e.cfg.RunBudget, errRunBudget)
	}
	level := r.task.ThinkingLevel
	if level == "" {
		level = e.cfg.ThinkingLevel
	}
	r.effort, r.maxTokens = ThinkingParams(level, e.cfg.MaxOutputTokens)

	r.env.SetStatus(automate.WorkflowPlanning)
	skills := r.chooseSkills()
	if err := r.openTools(); err != nil {
		return r.interrupted() // the run's context ended while servers connected
	}
	base := e.cfg.BasePrompt
	if base == "" {
		base = assistant.BasePrompt
	}
	base += "\n\nRelative paths are taken under the workspace folder " + r.task.Workspace + "."
	if r.task.Confine != "" {
		base += " File tools are confined to " + r.task.Confine + "; commands start there."
	}
	if _, ok := r.task.ClientTool("notify"); ok {
		// The caller's (hubgate's) notify tool: the run's commands start
		// without the desktop's session bus, so notify-send cannot work.
		base += " To notify the person, call the notify tool; commands cannot reach the desktop's notifications."
	}
	r.msgs = append(r.msgs, chatMessage{Role: "system", Content: r.task.SystemPrompt(base, skills...)})
	r.msgs = append(r.msgs, prior...)
	r.runStart = len(r.msgs)
	r.msgs = append(r.msgs, chatMessage{Role: "user", Content: r.task.Prompt})
	r.log.Info("llm: run", "model", r.model, "continuation", r.task.Continuation, "prior_messages", len(prior),
		"tools", len(r.tools.list), "skills", len(skills), "context_size", r.contextSize, "thinking", level)
	return r.loop()
}

// chooseSkills loads the skills folder and applies the relevance step.
func (r *run) chooseSkills() []string {
	skills, problems := LoadSkills(r.e.cfg.SkillsDir)
	for _, p := range problems {
		r.log.Warn("llm: skill skipped", "err", p)
	}
	if len(skills) == 0 {
		return nil
	}
	byID := map[string]Skill{}
	var cands []candidate
	for _, s := range skills {
		byID[s.ID] = s
		cands = append(cands, candidate{id: s.ID, name: s.Name, description: s.Description, chars: len(s.Prompt())})
	}
	var selected []string
	for _, want := range r.task.SelectedSkillIDs {
		for _, s := range skills {
			if s.ID == want || strings.EqualFold(s.Name, want) {
				selected = append(selected, s.ID)
				break
			}
		}
	}
	sel := selectCandidates(cands, selected, r.task.Prompt+"\n"+r.task.AdditionalWorkflowPrompt, max(r.e.cfg.SkillBudget, 0), r.e.cfg.SkillChars)
	var out []string
	for _, id := range sel.IDs {
		out = append(out, byID[id].Prompt())
	}
	r.log.Info("llm: skills chosen", "skills", sel.IDs, "selected", len(selected), "available", len(skills))
	return out
}

// chooseMcpServers applies the relevance step to the configured MCP
// servers and expands their ${VAR} references.
func (r *run) chooseMcpServers() []automate.InlineMcpServer {
	cfgServers := r.e.cfg.McpServers
	if len(cfgServers) == 0 {
		return nil
	}
	byName := map[string]automate.InlineMcpServer{}
	var cands []candidate
	for _, s := range cfgServers {
		byName[s.Name] = s
		cands = append(cands, candidate{id: s.Name, name: s.Name, description: s.Description})
	}
	sel := selectCandidates(cands, r.task.SelectedMcpServerIDs, r.task.Prompt+"\n"+r.task.AdditionalWorkflowPrompt,
		max(r.e.cfg.McpServerBudget, 0), 0)
	var out []automate.InlineMcpServer
	for _, name := range sel.IDs {
		s := byName[name]
		s.Env = expandRefs(s.Env)
		s.Headers = expandRefs(s.Headers)
		out = append(out, s)
		r.configured[name] = s
	}
	r.log.Info("llm: configured MCP servers chosen", "servers", sel.IDs, "configured", len(cfgServers))
	return out
}

// expandRefs expands ${VAR} in the values from this process's environment;
// hubgate's own variables (HUBGATE_*) are never handed out.
func expandRefs(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = os.Expand(v, func(name string) string {
			if strings.HasPrefix(strings.ToUpper(name), "HUBGATE_") {
				return ""
			}
			return os.Getenv(name)
		})
	}
	return out
}

// openTools builds the run's tool set, connecting its MCP servers.
func (r *run) openTools() error {
	childEnv := proc.RunEnviron(r.e.cfg.ChildEnvAllow)
	r.box = toolkit.New(toolkit.Config{Workspace: r.task.Workspace, Confine: r.task.Confine, Env: childEnv, Logger: r.e.log})
	r.chain = toolkit.ContentChain{Workspace: r.task.Workspace, Confine: r.task.Confine}
	r.tools = &toolset{}
	for _, t := range builtinTools() {
		r.tools.add(t)
	}
	servers := append(slices.Clone(r.task.McpServers), r.chooseMcpServers()...)
	if len(servers) > 0 {
		r.mcpHTTP = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
		}}
		r.pool = toolkit.ConnectMcp(r.ctx, servers, toolkit.McpConfig{ConnectTimeout: r.e.cfg.MCPConnectTimeout, HTTPClient: r.mcpHTTP, Env: childEnv, Logger: r.e.log, Secrets: r.e.cfg.McpSecrets,
			Elicit: assistant.McpElicit(r.task, r.env)})
		if err := r.ctx.Err(); err != nil {
			return err
		}
		for name, err := range r.pool.Errors() {
			r.log.Warn("llm: MCP server unavailable for this run", "server", name, "err", err)
		}
		for _, t := range mcpTools(r.pool.Tools()) {
			r.tools.add(t)
		}
	}
	for _, t := range clientTools(r.task.ClientTools) {
		r.tools.add(t)
	}
	for _, t := range r.tools.list {
		if t.schemaErr != nil {
			r.log.Debug("llm: tool schema not enforced", "tool", t.name, "err", t.schemaErr)
		}
	}
	return nil
}

// loop is the agent loop.
func (r *run) loop() (*assistant.Result, error) {
	var partial strings.Builder // text of an answer cut off by the output limit
	continuations := 0
	for {
		if err := r.env.Checkpoint(); err != nil {
			return r.stopped(err)
		}
		if r.ctx.Err() != nil {
			return r.interrupted()
		}
		if res := r.contextPrecheck(); res != nil {
			return res, nil
		}
		if r.calls > 0 {
			r.env.SetStatus(automate.WorkflowThinking)
		}
		comp, err := r.complete()
		if err != nil {
			return r.upstreamFailed(err)
		}
		r.account(comp)
		if comp.Usage != nil && comp.Usage.PromptTokens >= r.contextSize {
			// The prompt alone filled the context: the upstream cut it
			// (Ollama does so silently), so the answer is about a mutilated
			// conversation.
			return r.fail(automate.ErrorContextLimitExceeded,
				fmt.Sprintf("The conversation outgrew the model's context: the upstream counted %d prompt tokens for a context of %d tokens.", comp.Usage.PromptTokens, r.contextSize))
		}
		msg := comp.Message
		if len(msg.ToolCalls) > 0 {
			for i := range msg.ToolCalls {
				if msg.ToolCalls[i].ID == "" {
					msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", r.calls, i+1)
				}
				msg.ToolCalls[i].Type = "function"
			}
			r.msgs = append(r.msgs, msg)
			r.lastLen = len(r.msgs)
			if res, err, stop := r.toolTurn(msg); stop {
				return res, err
			}
			continue
		}
		r.msgs = append(r.msgs, msg)
		r.lastLen = len(r.msgs)
		partial.WriteString(msg.Content)
		if comp.FinishReason == "length" {
			if r.contextFull(comp) {
				return r.fail(automate.ErrorContextLimitExceeded, fmt.Sprintf("The conversation outgrew the model's context of %d tokens.", r.contextSize))
			}
			if continuations < DefaultMaxContinuations {
				continuations++
				r.msgs = append(r.msgs, chatMessage{Role: "user", Content: continuePrompt})
				continue
			}
			return r.fail(automate.ErrorExecutionFailed, partial.String()+"\n\n[The answer was cut off: the model reached its output limit.]")
		}
		r.env.SetStatus(automate.WorkflowExecutingComplete)
		r.res.Status = automate.StatusCompleted
		r.res.Answer = partial.String()
		return r.final(), nil
	}
}

// complete asks the upstream for the next message. A 400 that names the
// reasoning parameter is tried once more without it (the request was
// refused, so nothing happened), and the model is remembered as one that
// does not take it.
func (r *run) complete() (*completion, error) {
	req := chatRequest{
		Model:     r.model,
		Messages:  r.msgs,
		Stream:    !r.e.cfg.DisableStreaming,
		MaxTokens: r.maxTokens,
	}
	if len(r.tools.list) > 0 {
		req.Tools = r.tools.specs()
		req.ToolChoice = "auto"
		parallel := true
		req.ParallelToolCalls = &parallel
	}
	if r.effort != "" && r.e.reasoningSupported(r.model) {
		req.ReasoningEffort = r.effort
	}
	comp, err := r.e.up.chat(r.ctx, req)
	var ue *UpstreamError
	if err != nil && req.ReasoningEffort != "" && errors.As(err, &ue) && ue.Kind == kindRejected && ue.Status == 400 &&
		reasoningRefusalRE.MatchString(ue.Message) {
		r.log.Info("llm: upstream refused reasoning_effort; sending none for this model", "model", r.model)
		r.e.refuseReasoning(r.model)
		req.ReasoningEffort = ""
		comp, err = r.e.up.chat(r.ctx, req)
	}
	return comp, err
}

// account adds a completion's metrics. Tokens come from the upstream's
// usage; when it sends none, output tokens are the streamed deltas (one
// token per chunk on the common servers) and input tokens a quarter of
// the request's characters.
func (r *run) account(c *completion) {
	if r.calls == 0 {
		r.ttft = c.FirstToken.Sub(c.Started)
	}
	r.calls++
	r.gotAnswer = true
	r.gen += c.Ended.Sub(c.Started)
	r.decode += c.Ended.Sub(c.FirstToken)
	if c.Usage != nil {
		r.inTok += c.Usage.PromptTokens
		r.outTok += c.Usage.CompletionTokens
		r.lastTotal = c.Usage.PromptTokens + c.Usage.CompletionTokens
	} else {
		r.inTok += approxTokens(r.msgs)
		r.outTok += c.Deltas
		r.lastTotal = 0
	}
}

// approxTokens estimates the tokens of messages: a quarter of their JSON
// characters (an underestimate for dense text, so that the pre-check
// refuses only what surely does not fit).
func approxTokens(msgs []chatMessage) int {
	n := 0
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		n += len(b)
	}
	return n / 4
}

// contextPrecheck fails the run before a request that cannot fit the
// context (Ollama would silently cut the conversation instead).
func (r *run) contextPrecheck() *assistant.Result {
	var est int
	if r.lastTotal > 0 && r.lastLen <= len(r.msgs) {
		est = r.lastTotal + approxTokens(r.msgs[r.lastLen:])
	} else {
		est = approxTokens(r.msgs)
		if r.tools != nil {
			b, _ := json.Marshal(r.tools.specs())
			est += len(b) / 4
		}
	}
	if est <= r.contextSize {
		return nil
	}
	res, _ := r.fail(automate.ErrorContextLimitExceeded,
		fmt.Sprintf("The conversation outgrew the model's context: about %d tokens for a context of %d tokens.", est, r.contextSize))
	return res
}

// contextFull reports whether a cut-off answer reached the end of the
// context.
func (r *run) contextFull(c *completion) bool {
	return c.Usage != nil && c.Usage.PromptTokens+c.Usage.CompletionTokens >= r.contextSize
}

// upstreamFailed maps a failed upstream request onto the run's outcome.
func (r *run) upstreamFailed(err error) (*assistant.Result, error) {
	var ue *UpstreamError
	if !errors.As(err, &ue) {
		return r.fail(automate.ErrorExecutionFailed, err.Error())
	}
	r.log.Warn("llm: upstream request failed", "kind", ue.Kind.String(), "status", ue.Status, "answered_before", r.gotAnswer)
	switch ue.Kind {
	case kindCanceled:
		return r.interrupted()
	case kindContext:
		return r.fail(automate.ErrorContextLimitExceeded, fmt.Sprintf("The conversation outgrew the model's context of %d tokens: %s", r.contextSize, ue.Message))
	case kindModel:
		r.e.conv.Forget(r.w)
		return r.fail(automate.ErrorModelLoadFailed, "The model server could not load "+r.model+": "+ue.Message)
	case kindUnreachable:
		r.e.conv.Forget(r.w)
		if !r.gotAnswer {
			return r.fail(automate.ErrorModelLoadFailed, fmt.Sprintf("The model server at %s cannot be reached: %v", r.e.up.root, ue.Err))
		}
		return r.fail(automate.ErrorServerLost, fmt.Sprintf("The model server at %s went away during the run: %v", r.e.up.root, ue.Err))
	case kindLost:
		r.e.conv.Forget(r.w)
		return r.fail(automate.ErrorServerLost, "The model server was lost during the run: "+strings.TrimPrefix(ue.Error(), "upstream lost: "))
	}
	return r.fail(automate.ErrorExecutionFailed, "The model server refused the request: "+strings.TrimPrefix(ue.Error(), "upstream rejected "))
}

// interrupted ends a run whose context ended: the run budget is this
// engine's own failure; anything else is the server's stop.
func (r *run) interrupted() (*assistant.Result, error) {
	if r.parent.Err() == nil && errors.Is(context.Cause(r.ctx), errRunBudget) {
		return r.fail(automate.ErrorExecutionTimeout, fmt.Sprintf("The run used its execution budget of %s.", r.e.cfg.RunBudget))
	}
	if err := r.parent.Err(); err != nil {
		return r.stopped(err)
	}
	return r.stopped(r.ctx.Err())
}

// fail ends the run failed with code.
func (r *run) fail(code, answer string) (*assistant.Result, error) {
	r.res.Status = automate.StatusFailed
	r.res.ErrorCode = code
	r.res.Answer = answer
	return r.final(), nil
}

// stopped ends the run on a cancel (soft, force, timeout, missing input);
// the partial result goes with the error.
func (r *run) stopped(err error) (*assistant.Result, error) {
	r.res.Stopped(err)
	return r.final(), err
}

// trace is the run's message list as the record's trace: the messages
// sent upstream (system prompt, prior conversation, prompt, tool calls
// and results) and the closing message, with the model's reasoning.
func (r *run) trace() []json.RawMessage {
	trace := make([]json.RawMessage, 0, len(r.msgs))
	for _, m := range r.msgs {
		extra := map[string]any{}
		if len(m.ToolCalls) > 0 {
			extra["tool_calls"] = m.ToolCalls
		}
		if m.ToolCallID != "" {
			extra["tool_call_id"] = m.ToolCallID
			extra["name"] = m.Name
		}
		if m.Reasoning != "" {
			extra["reasoning"] = m.Reasoning
		}
		trace = append(trace, assistant.TraceMessage(m.Role, m.Content, extra))
	}
	return trace
}

// final completes the result's usage.
func (r *run) final() *assistant.Result {
	if r.calls > 0 {
		r.res.Usage = assistant.NewUsage(r.inTok, r.outTok, r.gen, r.ttft, r.decode)
	}
	return r.res
}

// endConversation hands the run's messages and turn to the engine. The
// thread stays well formed: every tool call has a result and the run ends
// with an assistant message.
func (r *run) endConversation(res *assistant.Result) {
	var msgs []chatMessage
	if r.runStart >= 0 && r.runStart < len(r.msgs) {
		msgs = slices.Clone(r.msgs[r.runStart:])
	} else {
		msgs = []chatMessage{{Role: "user", Content: r.task.Prompt}}
	}
	closing := res.Answer
	if closing == "" && res.Status != automate.StatusCompleted {
		closing = fmt.Sprintf("(The run ended %s before it finished.)", res.Status)
	}
	if last := msgs[len(msgs)-1]; last.Role != "assistant" || len(last.ToolCalls) > 0 {
		msgs = append(msgs, chatMessage{Role: "assistant", Content: closing})
	}
	r.e.endConversation(r.w, msgs, turn{
		RequestID: r.task.RequestID, Model: r.model, Prompt: r.task.Prompt,
		Answer: closing, Status: string(res.Status), At: r.startedRun,
	})
}

// toolTurn executes the tool calls of one assistant message: built-in
// and MCP calls in order, then every client call of the turn in one
// parked round. stop is true when the run ends.
func (r *run) toolTurn(msg chatMessage) (res *assistant.Result, err error, stop bool) {
	thinking := strings.TrimSpace(msg.Content)
	if thinking == "" {
		thinking = clip(strings.TrimSpace(msg.Reasoning), maxThinking)
	}
	results := make([]string, len(msg.ToolCalls))
	defer func() { r.closeTurn(msg, results) }()
	if !r.executing {
		r.executing = true
		r.env.SetStatus(automate.WorkflowExecutingStart)
	}
	type clientCall struct {
		i    int
		st   *automate.Step
		args json.RawMessage
	}
	var client []clientCall
	for i, c := range msg.ToolCalls {
		if err := r.env.Checkpoint(); err != nil {
			res, err := r.stopped(err)
			return res, err, true
		}
		if r.ctx.Err() != nil {
			res, err := r.interrupted()
			return res, err, true
		}
		if len(r.steps) >= r.e.cfg.MaxSteps {
			res, err := r.fail(automate.ErrorExecutionTimeout, fmt.Sprintf("The run used its budget of %d steps before it finished.", r.e.cfg.MaxSteps))
			return res, err, true
		}
		r.env.SetStatus(automate.WorkflowExecutingProgress)
		name := c.Function.Name
		st := r.newStep(name, thinking)
		t, ok := r.tools.byName[name]
		var args json.RawMessage
		var verr error
		if !ok {
			verr = &SchemaError{Tool: name, Message: "there is no tool of that name in this run"}
			st.ToolArgs = argsForStep(c.Function.Arguments)
		} else if args, verr = t.validateArgs(c.Function.Arguments); verr != nil {
			st.ToolArgs = argsForStep(c.Function.Arguments)
		} else {
			st.ToolArgs = args
		}
		st.Title = stepTitle(name, t, args)
		if verr != nil {
			results[i] = "Error: " + verr.Error() + ". Call the tool again with arguments that match its parameters."
			r.finish(st, automate.StepFailed, verr.Error())
			r.invalid[name]++
			if r.invalid[name] >= r.e.cfg.SchemaRetries {
				res, err := r.fail(automate.ErrorSchemaInvalid, fmt.Sprintf("The model called %s with invalid arguments %d times in a row: %s", name, r.invalid[name], verr.Error()))
				return res, err, true
			}
			continue
		}
		r.invalid[name] = 0
		if t.kind == kindClient {
			r.env.Step(*st)
			client = append(client, clientCall{i: i, st: st, args: args})
			continue
		}
		r.env.Step(*st) // running: a slow tool shows while it works (streamed answers)
		text, res, err, stop := r.runTool(t, args, st)
		results[i] = text
		if stop {
			return res, err, true
		}
	}
	if len(client) == 0 {
		return nil, nil, false
	}
	calls := make([]assistant.ClientCall, len(client))
	for k, c := range client {
		calls[k] = assistant.ClientCall{Name: msg.ToolCalls[c.i].Function.Name, Arguments: c.args}
	}
	before := r.e.now()
	out, cerr := r.env.CallClientTools(r.ctx, calls)
	r.parked += r.e.now().Sub(before)
	if cerr != nil {
		for _, c := range client {
			r.finish(c.st, automate.StepFailed, "No result: "+cerr.Error())
		}
		if r.parent.Err() == nil && errors.Is(context.Cause(r.ctx), errRunBudget) {
			res, err := r.interrupted()
			return res, err, true
		}
		res, err := r.stopped(cerr)
		return res, err, true
	}
	for k, c := range client {
		if k >= len(out) {
			results[c.i] = "Error: no result came back for this call"
			r.finish(c.st, automate.StepFailed, "No result came back for this call")
			continue
		}
		tr := out[k]
		if tr.Error != "" {
			results[c.i] = "Error: " + tr.Error
			r.finish(c.st, automate.StepFailed, "Error: "+clip(tr.Error, maxSummary))
			continue
		}
		text := tr.ResultText()
		results[c.i] = text
		c.st.ProducedContent = text
		if text != "" {
			c.st.ProducedContentID = "s" + strconv.Itoa(c.st.Index)
		}
		r.finish(c.st, automate.StepSuccess, clip(text, maxSummary))
	}
	return nil, nil, false
}

// closeTurn appends the tool messages of a turn, in the order of its
// calls; a call that never ran gets a note.
func (r *run) closeTurn(msg chatMessage, results []string) {
	for i, c := range msg.ToolCalls {
		text := results[i]
		if text == "" {
			text = "(no result)"
		}
		r.msgs = append(r.msgs, chatMessage{Role: "tool", ToolCallID: c.ID, Name: c.Function.Name, Content: forModel(text, r.e.cfg.ToolResultChars)})
	}
}

// argsForStep keeps arguments that are not a JSON object as they came,
// as {"_raw": "<text>"}.
func argsForStep(raw string) json.RawMessage {
	trimmed := strings.TrimSpace(raw)
	var obj map[string]any
	if json.Unmarshal([]byte(trimmed), &obj) == nil && obj != nil {
		return json.RawMessage(trimmed)
	}
	b, _ := json.Marshal(map[string]string{"_raw": raw})
	return b
}

// newStep adds a running step.
func (r *run) newStep(tool, thinking string) *automate.Step {
	idx := len(r.steps) + 1
	st := &automate.Step{
		ID: "step-" + strconv.Itoa(idx), Index: idx, Title: "Call " + tool, Status: automate.StepRunning,
		ToolName: tool, Thinking: thinking,
	}
	r.steps = append(r.steps, st)
	return st
}

// finish records a step's outcome.
func (r *run) finish(st *automate.Step, status, summary string) {
	st.Status = status
	st.ResultSummary = clip(summary, maxSummary)
	r.env.Step(*st)
}

// stepTitle describes a call for a person.
func stepTitle(name string, t *tool, args json.RawMessage) string {
	var a struct {
		Path, From, To, Command, URL string
	}
	_ = json.Unmarshal(args, &a)
	switch {
	case t == nil:
		return "Call " + name
	case t.kind == kindMCP:
		return fmt.Sprintf("Call %s of MCP server %s", t.mcpTool, t.server)
	case t.kind == kindClient:
		return "Call client tool " + name
	case t.kind == kindFetch && a.URL != "":
		return "Fetch " + clip(a.URL, 80)
	case t.kind == kindAsk:
		return "Ask for input"
	}
	switch name {
	case toolkit.ToolReadFile:
		return "Read " + a.Path
	case toolkit.ToolWriteFile:
		return "Write " + a.Path
	case toolkit.ToolListDir:
		if a.Path == "" {
			return "List the workspace"
		}
		return "List " + a.Path
	case toolkit.ToolDeletePath:
		return "Delete " + a.Path
	case toolkit.ToolMovePath:
		return fmt.Sprintf("Move %s to %s", a.From, a.To)
	case toolkit.ToolRunCommand:
		return "Run " + toolkit.Preview(a.Command, 60)
	}
	return "Call " + name
}

// withToolBudget runs f under the per-tool timeout and reports whether
// that timeout (not the run's end) stopped it.
func (r *run) withToolBudget(f func(ctx context.Context)) (timedOut bool) {
	ctx, cancel := context.WithTimeoutCause(r.ctx, r.e.cfg.ToolTimeout, errToolTimeout)
	defer cancel()
	f(ctx)
	return r.ctx.Err() == nil && errors.Is(context.Cause(ctx), errToolTimeout)
}

// runTool executes a built-in, fetch, ask or MCP call whose arguments
// are valid, finishing its step. It returns the text the model sees; stop
// is true when the run ends.
func (r *run) runTool(t *tool, args json.RawMessage, st *automate.Step) (text string, res *assistant.Result, err error, stop bool) {
	timeout := func() (string, *assistant.Result, error, bool) {
		msg := fmt.Sprintf("%s did not finish within its time budget of %s", t.name, r.e.cfg.ToolTimeout)
		r.finish(st, automate.StepFailed, "Timed out: "+msg)
		res, err := r.fail(automate.ErrorToolTimeout, "The run stopped: "+msg+".")
		return "Error: " + msg, res, err, true
	}
	interrupted := func() (string, *assistant.Result, error, bool) {
		r.finish(st, automate.StepFailed, "Interrupted: the run was stopped")
		res, err := r.interrupted()
		return "Not run: the run was stopped", res, err, true
	}
	if t.kind == kindAsk || t.kind == kindFetch || (t.kind == kindBuiltin && !assistant.DestructiveTools[t.name]) {
		// The request's builtInTools; destructive tools are reviewed below,
		// under their own workflow status.
		if perr := r.task.ReviewBuiltIn(t.name); perr != nil {
			r.finish(st, automate.StepSkipped, perr.Error())
			return perr.Error(), nil, nil, false
		}
	}
	switch t.kind {
	case kindAsk:
		var q assistant.UserInputRequest
		_ = json.Unmarshal(args, &q)
		r.env.SetStatus(automate.WorkflowWaitingForUser)
		answers, aerr := r.task.AnswerUserInput(q)
		r.env.SetStatus(automate.WorkflowExecutingProgress)
		if aerr != nil {
			r.finish(st, automate.StepFailed, aerr.Error())
			res, err := r.stopped(fmt.Errorf("request_user_input: %w", aerr))
			return aerr.Error(), res, err, true
		}
		b, _ := json.Marshal(answers)
		r.finish(st, automate.StepSuccess, string(b))
		return string(b), nil, nil, false

	case kindFetch:
		var a struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(args, &a)
		var out fetchResult
		var ferr error
		if r.withToolBudget(func(ctx context.Context) { out, ferr = r.e.fetch.fetch(ctx, a.URL) }) {
			return timeout()
		}
		if r.ctx.Err() != nil {
			return interrupted()
		}
		st.ProducedContent = out.text
		if out.text != "" {
			st.ProducedContentID = "s" + strconv.Itoa(st.Index)
		}
		if ferr != nil {
			summary := ferr.Error()
			if out.summary != "" {
				summary = out.summary
			}
			r.finish(st, automate.StepFailed, summary)
			return "Error: " + ferr.Error() + "\n" + out.text, nil, nil, false
		}
		r.finish(st, automate.StepSuccess, out.summary)
		return out.text, nil, nil, false

	case kindMCP:
		if perr := r.reviewMCP(t.server, t.mcpTool); perr != nil {
			r.finish(st, automate.StepSkipped, perr.Error())
			return perr.Error(), nil, nil, false
		}
		var out toolkit.McpResult
		var merr error
		if r.withToolBudget(func(ctx context.Context) {
			out, merr = r.pool.Call(assistant.McpProgressSteps(ctx, r.env, *st), t.server, t.mcpTool, args)
		}) {
			return timeout()
		}
		if r.ctx.Err() != nil {
			return interrupted()
		}
		if merr != nil {
			r.finish(st, automate.StepFailed, merr.Error())
			return "Error: " + merr.Error(), nil, nil, false
		}
		st.ProducedContent = out.Text
		if out.Text != "" {
			st.ProducedContentID = "s" + strconv.Itoa(st.Index)
		}
		if out.IsError {
			r.finish(st, automate.StepFailed, "Error: "+out.Text)
			return "Error: " + out.Text, nil, nil, false
		}
		r.finish(st, automate.StepSuccess, out.Text)
		return out.Text, nil, nil, false
	}

	// A built-in tool of the toolkit.
	if assistant.DestructiveTools[t.name] {
		r.env.SetStatus(automate.WorkflowExecutingDestructive)
		perr := r.task.ReviewBuiltIn(t.name)
		r.env.SetStatus(automate.WorkflowExecutingProgress)
		if perr != nil {
			r.finish(st, automate.StepSkipped, perr.Error())
			return perr.Error(), nil, nil, false
		}
	}
	var out toolkit.Outcome
	var berr error
	if r.withToolBudget(func(ctx context.Context) { out, berr = r.box.Call(ctx, t.name, args) }) {
		st.ProducedContent = out.Content
		return timeout()
	}
	if r.ctx.Err() != nil {
		return interrupted()
	}
	r.chain.Record(st, t.name, args, out, berr)
	if berr != nil {
		r.finish(st, automate.StepFailed, berr.Error())
		text := "Error: " + berr.Error()
		var ee *toolkit.ExitError
		if errors.As(berr, &ee) {
			text = fmt.Sprintf("exit code %d\n%s", ee.Code, out.Content)
		}
		return text, nil, nil, false
	}
	r.finish(st, automate.StepSuccess, out.Summary)
	switch t.name {
	case toolkit.ToolReadFile:
		return out.Content, nil, nil, false
	case toolkit.ToolListDir:
		if out.Content == "" {
			return "(the folder is empty)", nil, nil, false
		}
		return out.Content, nil, nil, false
	case toolkit.ToolRunCommand:
		return fmt.Sprintf("exit code %d\n%s", out.ExitCode, out.Content), nil, nil, false
	}
	return out.Summary, nil, nil, false
}

// reviewMCP applies the approval rule: a configured server's
// requireApproval (true unless configured otherwise), an inline server's
// through the task.
func (r *run) reviewMCP(server, tool string) error {
	if s, ok := r.configured[server]; ok {
		if s.RequireApproval && !r.task.AllowDestructiveTools {
			return &assistant.PolicyError{Tool: toolkit.McpToolPrefix + server + "__" + tool,
				Reason: "this configured MCP server requires approval and allowDestructiveTools is false"}
		}
		return nil
	}
	return r.task.ReviewMCP(server, tool)
}
