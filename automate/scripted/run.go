package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/toolkit"
	"github.com/hubgate/hubgate/internal/proc"
)

// maxSummary bounds a resultSummary taken from a tool result (runes).
const maxSummary = 1000

// run is the state of one Run.
type run struct {
	e     *Engine
	ctx   context.Context
	task  *assistant.Task
	env   assistant.Env
	sc    script
	prior []turn // the conversation before this run
	res   *assistant.Result

	tools  *toolkit.Toolbox
	pool   *toolkit.McpPool
	steps  []automate.Step // the plan, updated as steps run
	chain  toolkit.ContentChain
	answer *string // set by #!answer / #!recall
	// lastResult is the text of the latest client or MCP tool result, for
	// #!answer's ${result}.
	lastResult string
	trace      []json.RawMessage
	// refused are the indexes into steps of the built-in tool steps whose
	// path left the confinement root (for the default answer).
	refused []int

	started   time.Time     // planning began
	firstStep time.Time     // the first step began
	parked    time.Duration // time spent waiting for client tool results
}

// execute plans and runs the directives.
func (r *run) execute() (*assistant.Result, error) {
	r.started = r.e.now()
	r.tools = toolkit.New(toolkit.Config{Workspace: r.task.Workspace, Confine: r.task.Confine, Env: proc.RunEnviron(r.e.cfg.ChildEnvAllow), Logger: r.e.log})
	r.chain = toolkit.ContentChain{Workspace: r.task.Workspace, Confine: r.task.Confine}
	r.trace = append(r.trace, assistant.TraceMessage("system", r.task.SystemPrompt(""), nil))
	for _, t := range r.prior {
		r.trace = append(r.trace,
			assistant.TraceMessage("user", t.prompt, nil),
			assistant.TraceMessage("assistant", t.answer, nil))
	}
	r.trace = append(r.trace, assistant.TraceMessage("user", r.task.Prompt, nil))

	// Planning: every step of the script, pending.
	r.env.SetStatus(automate.WorkflowPlanning)
	for i := range r.sc.directives {
		d := &r.sc.directives[i]
		for k := 0; k < d.steps(); k++ {
			st := r.describe(d, k)
			st.Index = len(r.steps) + 1
			st.ID = "step-" + strconv.Itoa(st.Index)
			st.Status = automate.StepPending
			r.steps = append(r.steps, st)
			r.env.Step(st)
		}
	}
	r.env.SetStatus(automate.WorkflowExecutingStart)

	next := 0 // index into r.steps of the directive's first step
	for i := range r.sc.directives {
		d := &r.sc.directives[i]
		if err := r.env.Checkpoint(); err != nil {
			return r.stopped(err)
		}
		if err := r.ctx.Err(); err != nil {
			return r.stopped(err)
		}
		if r.firstStep.IsZero() {
			r.firstStep = r.e.now()
		}
		r.env.SetStatus(automate.WorkflowExecutingProgress)
		failed, err := r.exec(d, next)
		next += d.steps()
		if err != nil {
			return r.stopped(err)
		}
		if failed {
			return r.final(), nil
		}
	}
	if err := r.env.Checkpoint(); err != nil {
		return r.stopped(err)
	}
	r.env.SetStatus(automate.WorkflowExecutingComplete)
	switch {
	case r.answer != nil:
		r.res.Answer = strings.ReplaceAll(*r.answer, resultToken, r.lastResult)
	case r.sc.firstLine != "":
		r.res.Answer = "Done: " + r.sc.firstLine + r.refusedSteps()
	default:
		r.res.Answer = "Done" + r.refusedSteps()
	}
	r.res.Status = automate.StatusCompleted
	return r.final(), nil
}

// refusedSteps is what the default answer says of the steps refused
// because their path leaves the folder the run is confined to, as a model
// would: " (step 2 refused: <its summary>)", or, for several, how many and
// the first one's summary; "" when none was. A person who asked for a
// file outside the workspace is told why nothing was written there.
func (r *run) refusedSteps() string {
	switch n := len(r.refused); n {
	case 0:
		return ""
	case 1:
		st := r.steps[r.refused[0]]
		return fmt.Sprintf(" (step %d refused: %s)", st.Index, toolkit.Preview(st.ResultSummary, 300))
	default:
		st := r.steps[r.refused[0]]
		return fmt.Sprintf(" (%d steps refused; step %d: %s)", n, st.Index, toolkit.Preview(st.ResultSummary, 300))
	}
}

// final completes the result with the trace and usage.
func (r *run) final() *assistant.Result {
	if r.res.Answer != "" || r.res.Status == automate.StatusCompleted {
		r.trace = append(r.trace, assistant.TraceMessage("assistant", r.res.Answer, nil))
	}
	r.res.Trace = r.trace
	end := r.e.now()
	gen := end.Sub(r.started) - r.parked
	if gen < 0 {
		gen = 0
	}
	first := r.firstStep
	if first.IsZero() {
		first = end
	}
	r.res.Usage = assistant.NewUsage(words(r.task.Prompt), words(r.res.Answer), gen, first.Sub(r.started), gen)
	return r.res
}

// stopped ends the run on a cancel (soft, force, user input missing) or a
// failure of the environment: the partial result goes with the error.
func (r *run) stopped(err error) (*assistant.Result, error) {
	r.res.Stopped(err)
	return r.final(), err
}

func (r *run) closeMcp() {
	if r.pool != nil {
		r.pool.Close()
	}
}

// describe gives the planned step of directive d (k-th call of #!tools).
func (r *run) describe(d *directive, k int) automate.Step {
	st := automate.Step{}
	obj := func(v any) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	switch d.name {
	case dAnswer:
		st.Title = "Compose the closing message"
		st.Thinking = "I have what I need and will close with the requested message."
	case dSleep:
		st.Title = fmt.Sprintf("Wait %d ms", d.ms)
		st.ToolName = "sleep"
		st.ToolArgs = obj(map[string]int64{"ms": d.ms})
		st.Thinking = "I need to wait before going on."
	case dTool, dTools:
		if d.err != nil || k >= len(d.calls) {
			st.Title = "Call a client tool"
			st.ToolName = d.name
			st.Thinking = "I will call the caller's tools."
			break
		}
		c := d.calls[k]
		st.Title = "Call client tool " + c.name
		st.ToolName = c.name
		st.ToolArgs = c.args
		st.Thinking = fmt.Sprintf("The caller's tool %s can do this part; I will call it.", c.name)
	case dAsk:
		st.Title = "Ask for input"
		st.ToolName = "request_user_input"
		st.ToolArgs = d.ask
		st.Thinking = "I need input from the person who asked before I can go on."
	case dWrite:
		st.Title = "Write " + d.path
		st.ToolName = toolkit.ToolWriteFile
		st.ToolArgs = obj(map[string]string{"path": d.path, "content": d.text})
		st.Thinking = fmt.Sprintf("I will write the file %s.", d.path)
	case dRead:
		st.Title = "Read " + d.path
		st.ToolName = toolkit.ToolReadFile
		st.ToolArgs = obj(map[string]string{"path": d.path})
		st.Thinking = fmt.Sprintf("I will read %s.", d.path)
	case dRun:
		st.Title = "Run " + toolkit.Preview(d.text, 60)
		st.ToolName = toolkit.ToolRunCommand
		st.ToolArgs = obj(map[string]string{"command": d.text})
		st.Thinking = "A shell command does this best; I will run it."
	case dDelete:
		st.Title = "Delete " + d.path
		st.ToolName = toolkit.ToolDeletePath
		st.ToolArgs = obj(map[string]string{"path": d.path})
		st.Thinking = fmt.Sprintf("%s is no longer needed; I will delete it.", d.path)
	case dMove:
		st.Title = fmt.Sprintf("Move %s to %s", d.path, d.path2)
		st.ToolName = toolkit.ToolMovePath
		st.ToolArgs = obj(map[string]string{"from": d.path, "to": d.path2})
		st.Thinking = fmt.Sprintf("I will move %s to %s.", d.path, d.path2)
	case dMcp:
		st.Title = fmt.Sprintf("Call %s of MCP server %s", d.tool, d.server)
		st.ToolName = toolkit.McpToolPrefix + d.server + "__" + d.tool
		st.ToolArgs = d.args
		st.Thinking = fmt.Sprintf("The MCP server %s offers %s; I will call it.", d.server, d.tool)
	case dFail:
		st.Title = "Fail with " + d.text
		st.Thinking = "This task cannot succeed; I will stop here."
	case dRecall:
		st.Title = "Recall the previous request"
		st.Thinking = "The task refers to the previous request; I will look it up in the conversation."
	default:
		st.Title = "Unknown directive #!" + d.name
		st.Thinking = "I do not understand this instruction."
	}
	if d.err != nil {
		st.ToolArgs = nil
	}
	if st.Title == "" || !utf8.ValidString(st.Title) {
		st.Title = "Step"
	}
	return st
}

// start marks step i running; finish records its outcome.
func (r *run) start(i int) *automate.Step {
	st := &r.steps[i]
	st.Status = automate.StepRunning
	r.env.Step(*st)
	return st
}

func (r *run) finish(st *automate.Step, status, summary string) {
	st.Status = status
	st.ResultSummary = summary
	r.env.Step(*st)
	if st.ToolName != "" {
		callID := "call_" + strconv.Itoa(st.Index)
		args := string(st.ToolArgs)
		if args == "" {
			args = "{}"
		}
		r.trace = append(r.trace,
			assistant.TraceMessage("assistant", st.Thinking, map[string]any{"tool_calls": []map[string]any{{
				"id": callID, "type": "function",
				"function": map[string]any{"name": st.ToolName, "arguments": args},
			}}}),
			assistant.TraceMessage("tool", summary, map[string]any{"tool_call_id": callID, "name": st.ToolName}))
	} else {
		r.trace = append(r.trace, assistant.TraceMessage("assistant", st.Thinking+" "+summary, nil))
	}
}

// exec runs directive d, whose first step is r.steps[i]. failed is true
// when the run fails (#!fail); err ends the run (cancel, missing input).
func (r *run) exec(d *directive, i int) (failed bool, err error) {
	if d.name == dTools || d.name == dTool {
		if d.err != nil {
			r.finish(r.start(i), automate.StepFailed, d.err.Error())
			return false, nil
		}
		return false, r.clientTools(d, i)
	}
	st := r.start(i)
	if d.err != nil {
		r.finish(st, automate.StepFailed, d.err.Error())
		return false, nil
	}
	switch d.name {
	case dAnswer:
		text := d.text
		r.answer = &text
		r.finish(st, automate.StepSuccess, "Closing message set")
	case dSleep:
		t := time.NewTimer(time.Duration(d.ms) * time.Millisecond)
		select {
		case <-t.C:
		case <-r.ctx.Done():
			t.Stop()
			r.finish(st, automate.StepFailed, "Interrupted: "+r.ctx.Err().Error())
			return false, r.ctx.Err()
		}
		r.finish(st, automate.StepSuccess, fmt.Sprintf("Waited %d ms", d.ms))
	case dAsk:
		return false, r.ask(d, st)
	case dWrite, dRead, dRun, dDelete, dMove:
		return false, r.builtin(d, st)
	case dMcp:
		return false, r.mcp(d, st)
	case dFail:
		r.res.Status = automate.StatusFailed
		if slices.Contains(automate.ErrorCodes, d.text) {
			r.res.ErrorCode = d.text
			r.res.Answer = "Failed: " + d.text
			r.finish(st, automate.StepFailed, "The run fails with "+d.text)
		} else {
			r.res.ErrorCode = automate.ErrorExecutionFailed
			r.res.Answer = fmt.Sprintf("Failed: %q is not a workflow error code", d.text)
			r.finish(st, automate.StepFailed, r.res.Answer)
		}
		return true, nil
	case dRecall:
		text := ""
		if n := len(r.prior); n > 0 {
			text = r.prior[n-1].task
		}
		r.answer = &text
		summary := "No previous request in this conversation"
		if len(r.prior) > 0 {
			summary = "Previous request: " + truncate(text, maxSummary)
		}
		r.finish(st, automate.StepSuccess, summary)
	}
	return false, nil
}

// clientTools runs #!tool / #!tools: one round of calls, one step each.
func (r *run) clientTools(d *directive, first int) error {
	var calls []assistant.ClientCall
	var callSteps []*automate.Step
	for k, c := range d.calls {
		st := r.start(first + k)
		if c.err != nil {
			r.finish(st, automate.StepFailed, c.err.Error())
			continue
		}
		if _, ok := r.task.ClientTool(c.name); !ok {
			r.finish(st, automate.StepFailed, fmt.Sprintf("%q is not a client tool declared for this run", c.name))
			continue
		}
		calls = append(calls, assistant.ClientCall{Name: c.name, Arguments: c.args})
		callSteps = append(callSteps, st)
	}
	if len(calls) == 0 {
		return nil
	}
	before := r.e.now()
	results, err := r.env.CallClientTools(r.ctx, calls)
	r.parked += r.e.now().Sub(before)
	if err != nil {
		for _, st := range callSteps {
			r.finish(st, automate.StepFailed, "No result: "+err.Error())
		}
		return err
	}
	for k, st := range callSteps {
		if k >= len(results) {
			r.finish(st, automate.StepFailed, "No result came back for this call")
			continue
		}
		res := results[k]
		if res.Error != "" {
			r.finish(st, automate.StepFailed, "Error: "+truncate(res.Error, maxSummary))
			continue
		}
		r.lastResult = res.ResultText()
		r.finish(st, automate.StepSuccess, truncate(r.lastResult, maxSummary))
	}
	return nil
}

// resultToken in #!answer's text stands for the latest client tool result.
const resultToken = "${result}"

// ask runs #!ask: request_user_input answered from hitlAnswers.
func (r *run) ask(d *directive, st *automate.Step) error {
	if err := r.task.ReviewBuiltIn(assistant.ToolRequestUserInput); err != nil {
		r.finish(st, automate.StepSkipped, err.Error())
		return nil
	}
	r.env.SetStatus(automate.WorkflowWaitingForUser)
	answers, err := r.task.AnswerUserInput(d.askReq)
	if err != nil {
		r.finish(st, automate.StepFailed, err.Error())
		return fmt.Errorf("#!ask on line %d: %w", d.line, err)
	}
	r.env.SetStatus(automate.WorkflowExecutingProgress)
	b, _ := json.Marshal(answers)
	r.finish(st, automate.StepSuccess, string(b))
	return nil
}

// builtin runs a file or command directive through the toolkit, after the
// destructive-tool review.
func (r *run) builtin(d *directive, st *automate.Step) error {
	if assistant.DestructiveTools[st.ToolName] {
		r.env.SetStatus(automate.WorkflowExecutingDestructive)
		err := r.task.ReviewBuiltIn(st.ToolName)
		r.env.SetStatus(automate.WorkflowExecutingProgress)
		if err != nil {
			r.finish(st, automate.StepSkipped, err.Error())
			return nil
		}
	} else if err := r.task.ReviewBuiltIn(st.ToolName); err != nil {
		r.finish(st, automate.StepSkipped, err.Error())
		return nil
	}
	out, err := r.tools.Call(r.ctx, st.ToolName, st.ToolArgs)
	if err != nil && r.ctx.Err() != nil {
		r.finish(st, automate.StepFailed, "Interrupted: "+r.ctx.Err().Error())
		return r.ctx.Err()
	}
	r.chain.Record(st, st.ToolName, st.ToolArgs, out, err)
	if err != nil {
		if esc := (*toolkit.EscapeError)(nil); errors.As(err, &esc) {
			r.refused = append(r.refused, st.Index-1)
		}
		r.finish(st, automate.StepFailed, err.Error())
		return nil
	}
	r.finish(st, automate.StepSuccess, out.Summary)
	return nil
}

// mcp runs #!mcp: review, connect the run's servers (at the first #!mcp),
// call.
func (r *run) mcp(d *directive, st *automate.Step) error {
	if err := r.task.ReviewMCP(d.server, d.tool); err != nil {
		r.finish(st, automate.StepSkipped, err.Error())
		return nil
	}
	if r.pool == nil {
		r.pool = toolkit.ConnectMcp(r.ctx, r.task.McpServers, toolkit.McpConfig{
			ConnectTimeout: r.e.cfg.MCPConnectTimeout,
			Env:            proc.RunEnviron(r.e.cfg.ChildEnvAllow),
			Logger:         r.e.log,
			Secrets:        r.e.cfg.McpSecrets,
			Elicit:         assistant.McpElicit(r.task, r.env),
		})
	}
	res, err := r.pool.Call(assistant.McpProgressSteps(r.ctx, r.env, *st), d.server, d.tool, d.args)
	if err != nil {
		r.finish(st, automate.StepFailed, err.Error())
		if r.ctx.Err() != nil {
			return r.ctx.Err()
		}
		return nil
	}
	st.ProducedContent = res.Text
	r.lastResult = res.Text
	if res.Text != "" {
		st.ProducedContentID = "s" + strconv.Itoa(st.Index)
	}
	if res.IsError {
		r.finish(st, automate.StepFailed, "Error: "+truncate(res.Text, maxSummary))
		return nil
	}
	r.finish(st, automate.StepSuccess, truncate(res.Text, maxSummary))
	return nil
}

// truncate shortens s to n runes, keeping its line breaks.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
