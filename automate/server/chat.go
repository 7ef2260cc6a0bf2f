package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/hubgate/hubgate/automate"
)

// toolCallSep joins a call id and the resume token in a chat tool call id.
const toolCallSep = "__"

// foldToolCallID folds the resume token into a chat tool call id.
func foldToolCallID(callID, token string) string { return callID + toolCallSep + token }

// unfoldToolCallID splits a chat tool call id into call id and token.
func unfoldToolCallID(id string) (callID, token string, ok bool) {
	i := strings.LastIndex(id, toolCallSep+"rt_")
	if i <= 0 {
		return "", "", false
	}
	return id[:i], id[i+len(toolCallSep):], true
}

// chatRequest is a decoded chat request.
type chatRequest struct {
	spec        *runSpec
	userContent error                            // non-nil when the latest user message has no string content
	toolResults map[string][]automate.ToolResult // by resume token
}

// decodeChatRequest validates a chat request and maps it onto run options.
// product is the key of the extension object.
func decodeChatRequest(o object, product string, configuredMcp []string) (*chatRequest, error) {
	msgs, ok, err := o.array("messages", "messages must be an array")
	if err != nil || !ok {
		return nil, invalid("messages must be an array")
	}
	cr := &chatRequest{spec: &runSpec{include: includes{true, true, true}}, toolResults: map[string][]automate.ToolResult{}}
	t := &cr.spec.task
	var systems []string
	lastUser := -1
	var userContent json.RawMessage
	for i, raw := range msgs {
		m, role, err := decodeMessage(raw, i)
		if err != nil {
			return nil, err
		}
		switch role {
		case "system", "developer":
			if text, ok := contentText(m["content"]); ok && text != "" {
				systems = append(systems, text)
			}
		case "user":
			lastUser = i
			userContent = m["content"]
		case "tool":
			id, _, err := m.str("tool_call_id", "messages["+strconv.Itoa(i)+"].tool_call_id must be a string")
			if err != nil {
				return nil, err
			}
			callID, token, ok := unfoldToolCallID(id)
			if !ok {
				continue // not one of ours: the request may start a fresh run
			}
			text, _ := contentText(m["content"])
			cr.toolResults[token] = append(cr.toolResults[token], automate.TextResult(callID, text))
		}
	}
	var s string
	if lastUser < 0 || json.Unmarshal(userContent, &s) != nil || isNull(userContent) {
		cr.userContent = invalid("The latest user message must contain string content")
	} else if strings.TrimSpace(s) == "" {
		cr.userContent = invalid("prompt must be a non-empty string")
	}
	t.Prompt = s
	t.AdditionalWorkflowPrompt = strings.Join(systems, "\n\n")
	if cr.spec.timeoutMs, err = o.timeout("timeout_ms"); err != nil {
		return nil, err
	}
	if t.ClientTools, err = decodeChatTools(o); err != nil {
		return nil, err
	}
	ext, err := o.sub(product, product+" must be an object")
	if err != nil {
		return nil, err
	}
	if ext != nil {
		contract, ok, err := ext.str("answerContract", "answerContract must be a string")
		if err != nil {
			return nil, err
		}
		if ok {
			t.AnswerContract = &contract
		}
		if cr.spec.include, err = decodeInclude(ext, "include"); err != nil {
			return nil, err
		}
		if t.Continuation, err = ext.boolean("continuation", "continuation must be a boolean"); err != nil {
			return nil, err
		}
		if level, _, _ := ext.str("thinkingLevel", ""); automate.ValidThinkingLevel(level) {
			t.ThinkingLevel = level // anything else is ignored on this route
		}
		if t.McpServers, err = decodeMcpServers(ext, configuredMcp); err != nil {
			return nil, err
		}
		if t.BuiltInTools, err = decodeBuiltInTools(ext); err != nil {
			return nil, err
		}
	}
	return cr, nil
}

// contentText reads message content: a string, or the text parts of a
// content-part array.
func contentText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || isNull(raw) {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}

// decodeChatTools maps `tools` entries of type function onto client tools.
func decodeChatTools(o object) ([]automate.ClientTool, error) {
	arr, _, err := o.array("tools", "tools must be an array")
	if err != nil {
		return nil, err
	}
	var tools []automate.ClientTool
	seen := map[string]bool{}
	for i, raw := range arr {
		field := "tools[" + strconv.Itoa(i) + "]"
		var entry struct {
			Type     string `json:"type"`
			Function *struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &entry); err != nil {
			return nil, invalid("%s must be a function tool object", field)
		}
		if entry.Type != "function" {
			continue
		}
		if entry.Function == nil {
			return nil, invalid("%s.function is required", field)
		}
		t := automate.ClientTool{Name: entry.Function.Name, Description: entry.Function.Description, Parameters: entry.Function.Parameters}
		if err := validateClientTool(t, field+".function", false); err != nil {
			return nil, err
		}
		if seen[t.Name] {
			return nil, invalid("%s.function.name must be unique in the run", field)
		}
		seen[t.Name] = true
		tools = append(tools, t)
	}
	if len(tools) > automate.MaxClientTools {
		return nil, invalid("tools must have at most %d function entries", automate.MaxClientTools)
	}
	return tools, nil
}

// chatMode is the mode the extension object names (the vendor's stand-in
// server: `<product>.mode: "model"` is model mode, as the model id
// "<product>-model" is): "" when it names none; a mode other than
// assistant or model is a 400. An extension object that is not an object
// is left to the request's own decoding.
func chatMode(o object, product string) (string, error) {
	ext, err := o.sub(product, "")
	if err != nil || ext == nil {
		return "", nil
	}
	msg := product + ".mode must be one of assistant, model"
	mode, ok, err := ext.str("mode", msg)
	switch {
	case err != nil:
		return "", err
	case ok && mode != automate.ModeAssistant && mode != automate.ModeModel:
		return "", invalid("%s", msg)
	}
	return mode, nil
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Should-Retry", "false")
	o, ok := s.readObject(w, r, false)
	if !ok {
		return
	}
	mode, err := chatMode(o, s.product)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	if model, _, _ := o.str("model", ""); model == automate.ModelID(s.product) || mode == automate.ModeModel {
		s.handleModelChat(w, r, o)
		return
	}
	cr, err := decodeChatRequest(o, s.product, s.cfg.ConfiguredMcpServers)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	// Tool messages naming the live run resume it; ids matching no live
	// run fall through to a fresh run.
	for token, results := range cr.toolResults {
		if run := s.liveRun(token); run != nil {
			run.deliver(results)
			s.answer(w, r, run, s.chatAnswer)
			return
		}
	}
	if cr.userContent != nil {
		writeError(w, s.log, cr.userContent)
		return
	}
	run, err := s.startRun(cr.spec)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	s.answer(w, r, run, s.chatAnswer)
}

func (s *Server) chatAnswer(rec *automate.RunRecord) any {
	return productCompletion{ChatCompletion: chatCompletion(rec, s.agentID), key: s.product}
}

// productCompletion is a chat completion whose record goes under the
// product word's key instead of automate.ChatCompletion's "service".
type productCompletion struct {
	automate.ChatCompletion
	key string
}

func (p productCompletion) MarshalJSON() ([]byte, error) {
	c := p.ChatCompletion
	rec := c.Service
	if p.key == automate.DefaultProduct {
		return json.Marshal(c)
	}
	c.Service = nil
	head, err := json.Marshal(struct {
		ID      string                `json:"id"`
		Object  string                `json:"object"`
		Created int64                 `json:"created"`
		Model   string                `json:"model"`
		Choices []automate.ChatChoice `json:"choices"`
		Usage   automate.ChatUsage    `json:"usage"`
	}{c.ID, c.Object, c.Created, c.Model, c.Choices, c.Usage})
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	key, _ := json.Marshal(p.key)
	out := append(head[:len(head)-1], ',')
	out = append(append(append(out, key...), ':'), body...)
	return append(out, '}'), nil
}

// chatCompletion maps a record onto the chat-completion answer; model is
// the assistant's model id.
func chatCompletion(rec *automate.RunRecord, model string) automate.ChatCompletion {
	msg := automate.ChatReplyMessage{Role: "assistant", Content: rec.Answer}
	if rec.FinalAnswer != nil {
		msg.Content = *rec.FinalAnswer
	}
	finish := "stop"
	if rec.Status == automate.StatusAwaitingToolResults {
		finish = "tool_calls"
		msg.Content = ""
		for _, c := range rec.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, automate.ChatToolCall{
				ID: foldToolCallID(c.ID, rec.ResumeToken), Type: "function",
				Function: automate.ChatFunctionCall{Name: c.Name, Arguments: string(c.Arguments)},
			})
		}
	}
	var usage automate.ChatUsage
	if rec.Usage != nil {
		usage = automate.ChatUsage{PromptTokens: rec.Usage.InputTokens, CompletionTokens: rec.Usage.OutputTokens,
			TotalTokens: rec.Usage.InputTokens + rec.Usage.OutputTokens}
	}
	return automate.ChatCompletion{
		ID: rec.RequestID, Object: "chat.completion", Created: rec.StartedAt.Unix(), Model: model,
		Choices: []automate.ChatChoice{{Index: 0, Message: msg, FinishReason: finish}},
		Usage:   usage, Service: rec,
	}
}

// decodeMessage decodes messages[i] of a chat or model-mode body: an
// object with a string role (which roles are allowed is the caller's).
func decodeMessage(raw json.RawMessage, i int) (object, string, error) {
	m, err := decodeObject(raw, false)
	if err != nil {
		return nil, "", invalid("messages[%d] must be an object", i)
	}
	role, _, err := m.str("role", "messages["+strconv.Itoa(i)+"].role must be a string")
	if err != nil {
		return nil, "", err
	}
	return m, role, nil
}
