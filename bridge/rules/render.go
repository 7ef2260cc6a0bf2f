package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/deviceapi"
)

// ErrBlankPrompt is the error of a prompt that rendered blank (the server
// would reject it).
var ErrBlankPrompt = errors.New("rendered a blank prompt; the Automate server requires a non-blank one")

// Data builds the template data of cmd for this rule, after completing cmd
// from cat (see Catalog.Complete).
func (r *Rule) Data(cmd Command, cat Catalog) TemplateData {
	cmd = cat.Complete(cmd)
	d := TemplateData{Command: cmd.Text, Received: cmd.Received, Seq: cmd.Seq, Rule: r.name, Named: map[string]string{}}
	if cmd.Macro != nil {
		d.Macro, d.HasMacro = *cmd.Macro, true
		d.Events = cmd.Macro.Events
		var typed strings.Builder
		var speech []string
		for _, e := range cmd.Macro.Events {
			if e.Is(deviceapi.EventType) {
				typed.WriteString(e.Text())
			}
			if a, ok := e.CustomAction(); ok {
				d.CustomActions = append(d.CustomActions, a)
			}
			if e.OutputSpeech != nil && *e.OutputSpeech != "" {
				speech = append(speech, *e.OutputSpeech)
			}
		}
		d.TypedText = typed.String()
		if len(d.CustomActions) > 0 {
			d.CustomAction = d.CustomActions[0]
		}
		d.OutputSpeech = strings.Join(speech, " ")
	}
	if r.re != nil {
		// Every named group is a key, "" when the command does not match
		// (a rule rendered for another command): the static check lets
		// templates name exactly these keys.
		m := r.re.FindStringSubmatch(cmd.Text)
		d.Groups = m
		for i, name := range r.re.SubexpNames() {
			if name != "" {
				d.Named[name] = ""
				if i < len(m) {
					d.Named[name] = m[i]
				}
			}
		}
	}
	return d
}

// Render builds the run request for cmd: it completes cmd from cat,
// executes the templates over TemplateData and copies the options. The
// clientTools are the definitions of the rule's client_tools (notify's and
// the command tools' name, description and parameters). Errors are
// *RenderError: a template that failed, a blank prompt (ErrBlankPrompt),
// a request larger than the server's 1 MiB body limit.
func (r *Rule) Render(cmd Command, cat Catalog) (automate.RunRequest, error) {
	data := r.Data(cmd, cat)
	run := r.run
	fail := func(field string, err error) (automate.RunRequest, error) {
		return automate.RunRequest{}, &RenderError{Rule: r.name, Field: field, Err: err}
	}
	exec := func(t *template.Template) (string, error) {
		if t == nil {
			return "", nil
		}
		return execute(t, data)
	}
	req := automate.RunRequest{
		TimeoutMs:             run.timeoutMs,
		ThinkingLevel:         run.thinking,
		RestrictToWorkspace:   run.restrict,
		AllowDestructiveTools: run.destructive,
		Continuation:          run.cont,
		SelectedSkillIDs:      slices.Clone(run.skills),
		SelectedMcpServerIDs:  slices.Clone(run.mcpIDs),
		McpServers:            cloneMcp(run.mcp),
	}
	if run.include != nil {
		req.Include = &automate.Include{Steps: cloneBool(run.include.Steps), Trace: cloneBool(run.include.Trace), Events: cloneBool(run.include.Events)}
	}
	var err error
	if req.Prompt, err = exec(run.prompt); err != nil {
		return fail("run.prompt", err)
	}
	if strings.TrimSpace(req.Prompt) == "" {
		return fail("run.prompt", ErrBlankPrompt)
	}
	if req.TaskID, err = exec(run.taskID); err != nil {
		return fail("run.task_id", err)
	}
	if req.AdditionalWorkflowPrompt, err = exec(run.awp); err != nil {
		return fail("run.additional_workflow_prompt", err)
	}
	contract, err := exec(run.contract)
	if err != nil {
		return fail("run.answer_contract", err)
	}
	if contract != "" {
		req.AnswerContract = &contract
	}
	for _, h := range run.hitl {
		if req.HITLAnswers == nil {
			req.HITLAnswers = map[string]any{}
		}
		vals := make([]string, len(h.tmpls))
		for i, t := range h.tmpls {
			if vals[i], err = exec(t); err != nil {
				field := "run.hitl_answers." + h.id
				if h.list {
					field = fmt.Sprintf("%s[%d]", field, i)
				}
				return fail(field, err)
			}
		}
		if h.list {
			req.HITLAnswers[h.id] = vals
		} else {
			req.HITLAnswers[h.id] = vals[0]
		}
	}
	if len(r.clientTools) > 0 {
		req.ClientTools = make([]automate.ClientTool, len(r.clientTools))
		for i, t := range r.clientTools {
			t.Parameters = slices.Clone(t.Parameters)
			req.ClientTools[i] = t
		}
	}
	body, err := json.Marshal(&req)
	if err != nil {
		return fail("", err)
	}
	if len(body) > automate.MaxBodyBytes {
		return fail("", fmt.Errorf("the run request is %d bytes; the Automate server accepts at most %d", len(body), automate.MaxBodyBytes))
	}
	return req, nil
}
