package server

import (
	"strconv"
	"strings"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
)

// runSpec is a validated run request of either contract: what the server
// keeps for the record, and the engine's Task.
type runSpec struct {
	taskID              string
	timeoutMs           int64
	include             includes
	restrictToWorkspace bool
	stream              bool           // answer as server-sent events (stream.go)
	task                assistant.Task // without RequestID, Workspace, Confine
}

// decodeRunRequest validates the body of POST /v1/runs. Fields are checked
// in the order of the contract's table, so the first problem is reported.
func decodeRunRequest(o object, configuredMcp []string) (*runSpec, error) {
	spec := &runSpec{}
	t := &spec.task
	var err error

	prompt, _, err := o.str("prompt", "prompt must be a non-empty string")
	if err != nil || strings.TrimSpace(prompt) == "" {
		return nil, invalid("prompt must be a non-empty string")
	}
	t.Prompt = prompt
	if spec.taskID, _, err = o.str("taskId", "taskId must be a string"); err != nil {
		return nil, err
	}
	if spec.timeoutMs, err = o.timeout("timeoutMs"); err != nil {
		return nil, err
	}
	level, ok, err := o.str("thinkingLevel", "thinkingLevel must be one of low, medium, high, max")
	if err != nil {
		return nil, err
	}
	if ok && !automate.ValidThinkingLevel(level) {
		return nil, invalid("thinkingLevel must be one of low, medium, high, max")
	}
	t.ThinkingLevel = level
	if t.AdditionalWorkflowPrompt, _, err = o.str("additionalWorkflowPrompt", "additionalWorkflowPrompt must be a string"); err != nil {
		return nil, err
	}
	contract, ok, err := o.str("answerContract", "answerContract must be a string")
	if err != nil {
		return nil, err
	}
	if ok {
		t.AnswerContract = &contract
	}
	if spec.include, err = decodeInclude(o, "include"); err != nil {
		return nil, err
	}
	if spec.restrictToWorkspace, err = o.boolean("restrictToWorkspace", "restrictToWorkspace must be a boolean"); err != nil {
		return nil, err
	}
	if t.Continuation, err = o.boolean("continuation", "continuation must be a boolean"); err != nil {
		return nil, err
	}
	if t.SelectedSkillIDs, err = o.strings("selectedSkillIds", "selectedSkillIds must be an array of strings"); err != nil {
		return nil, err
	}
	if t.SelectedMcpServerIDs, err = o.strings("selectedMcpServerIds", "selectedMcpServerIds must be an array of strings"); err != nil {
		return nil, err
	}
	if t.McpServers, err = decodeMcpServers(o, configuredMcp); err != nil {
		return nil, err
	}
	if t.ClientTools, err = decodeClientTools(o); err != nil {
		return nil, err
	}
	if t.HITLAnswers, err = decodeHITL(o); err != nil {
		return nil, err
	}
	if t.AllowDestructiveTools, err = o.boolean("allowDestructiveTools", "allowDestructiveTools must be a boolean"); err != nil {
		return nil, err
	}
	if t.BuiltInTools, err = decodeBuiltInTools(o); err != nil {
		return nil, err
	}
	if spec.stream, err = o.boolean("stream", "stream must be a boolean"); err != nil {
		return nil, err
	}
	return spec, nil
}

// decodeResults validates the body of POST /v1/runs/{token}/tool-results.
func decodeResults(o object) ([]automate.ToolResult, error) {
	arr, ok, err := o.array("results", "results must be an array")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, invalid("results is required")
	}
	results := make([]automate.ToolResult, 0, len(arr))
	for i, raw := range arr {
		field := "results[" + strconv.Itoa(i) + "]"
		e, err := decodeObject(raw, false)
		if err != nil {
			return nil, invalid("%s must be an object", field)
		}
		id, _, err := e.str("id", field+".id must be a string")
		if err != nil {
			return nil, err
		}
		if id == "" {
			return nil, invalid("%s.id is required", field)
		}
		r := automate.ToolResult{ID: id}
		if e.has("result") {
			r.Result = e["result"]
		}
		if r.Error, _, err = e.str("error", field+".error must be a string"); err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}
