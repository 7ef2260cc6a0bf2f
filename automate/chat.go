package automate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Chat roles and finish reasons of the OpenAI-style contract.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"

	FinishStop      = "stop"
	FinishToolCalls = "tool_calls"
)

// NewChatRequest builds a chat request for one prompt: the system messages
// (joined by the server into additionalWorkflowPrompt) come first, then the
// user message that becomes the run's prompt.
func NewChatRequest(prompt string, system ...string) ChatRequest {
	msgs := make([]ChatMessage, 0, len(system)+1)
	for _, s := range system {
		msgs = append(msgs, TextMessage(RoleSystem, s))
	}
	msgs = append(msgs, TextMessage(RoleUser, prompt))
	return ChatRequest{Model: ServiceID, Messages: msgs}
}

// ChatTools turns client-tool declarations into chat function tools.
func ChatTools(tools []ClientTool) []ChatTool {
	out := make([]ChatTool, len(tools))
	for i, t := range tools {
		out[i] = ChatTool{Type: "function", Function: ChatFunction{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters}}
	}
	return out
}

// ToolCallsFromChat converts the tool calls of an assistant chat message to
// ToolCalls. A call's arguments (a JSON-encoded string on the wire) become
// raw JSON; arguments that are not valid JSON are kept as a JSON string.
func ToolCallsFromChat(calls []ChatToolCall) []ToolCall {
	out := make([]ToolCall, len(calls))
	for i, call := range calls {
		args := json.RawMessage(call.Function.Arguments)
		if call.Function.Arguments == "" {
			args = json.RawMessage("{}")
		} else if !json.Valid(args) {
			args, _ = json.Marshal(call.Function.Arguments)
		}
		out[i] = ToolCall{ID: call.ID, Name: call.Function.Name, Arguments: args}
	}
	return out
}

// ToolMessage builds the tool message that answers one call on the chat
// contract. Chat tool messages carry text only, so a failed call
// (ToolResult.Error) is sent as "Error: <message>".
func ToolMessage(r ToolResult) ChatMessage {
	text := r.ResultText()
	if r.Error != "" {
		text = "Error: " + r.Error
	}
	m := TextMessage(RoleTool, text)
	m.ToolCallID = r.ID
	return m
}

// Text returns the assistant's reply (choices[0].message.content): the
// finalAnswer when an answer contract was sent, else the answer.
func (c *ChatCompletion) Text() string {
	if c == nil || len(c.Choices) == 0 {
		return ""
	}
	return c.Choices[0].Message.Content
}

// FinishReason returns choices[0].finish_reason.
func (c *ChatCompletion) FinishReason() string {
	if c == nil || len(c.Choices) == 0 {
		return ""
	}
	return c.Choices[0].FinishReason
}

// Chat sends one OpenAI-style chat request (POST /v1/chat/completions) and
// blocks until the run completes or parks (finish_reason "tool_calls").
//
// Outcomes: a completion and a nil error for a completed or parked run; for
// a run that ended failed, canceled or terminated (HTTP 500 with a
// chat-shaped body whose service.schemaVersion is 1) the completion AND a
// *RunError carrying it and its record; otherwise an *APIError or
// *ResponseError. The HTTP deadline is timeout_ms (default 900000) plus the
// margin; ctx may shorten it. On giving up Chat cancels explicitly when the
// server is busy, with the race Run describes.
func (c *Client) Chat(ctx context.Context, req ChatRequest) (*ChatCompletion, error) {
	ctx, cancel := context.WithTimeout(ctx, chatTimeout(req)+c.margin)
	defer cancel()
	return c.postChat(ctx, req, "")
}

func chatTimeout(req ChatRequest) time.Duration {
	if req.TimeoutMs <= 0 {
		return DefaultTimeoutMs * time.Millisecond
	}
	return time.Duration(req.TimeoutMs) * time.Millisecond
}

func (c *Client) postChat(ctx context.Context, req ChatRequest, requestID string) (*ChatCompletion, error) {
	const path = "/v1/chat/completions"
	var body any = req
	if c.product != DefaultProduct {
		b, err := productChatBody(req, c.product)
		if err != nil {
			return nil, err
		}
		body = b
	}
	resp, sent, err := c.roundTrip(ctx, "POST", path, body)
	if err != nil {
		if sent && ctx.Err() != nil {
			return nil, c.abandon(ctx, "POST "+path, requestID, err)
		}
		return nil, err
	}
	return c.decodeChat(resp)
}

// productChatBody encodes req with its extension object under the
// product word instead of "service".
func productChatBody(req ChatRequest, product string) (json.RawMessage, error) {
	ext := req.Service
	req.Service = nil
	b, err := json.Marshal(req)
	if err != nil || ext == nil {
		return b, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	if fields[product], err = json.Marshal(ext); err != nil {
		return nil, err
	}
	return json.Marshal(fields)
}

// ChatWithTools drives the caller-executed tool loop on the chat contract:
// while the answer's finish_reason is "tool_calls" it hands the calls to
// exec, appends the assistant message and one tool message per result (the
// call ids echoed unchanged) to the conversation and posts it again, until
// the run completes or fails. Outcomes, deadline and cancel are those of
// RunWithTools (the deadline counts timeout_ms once for the whole loop).
func (c *Client) ChatWithTools(ctx context.Context, req ChatRequest, exec ToolExecutor) (*ChatCompletion, error) {
	if exec == nil {
		return nil, errors.New("automate: chat with tools: nil ToolExecutor")
	}
	ctx, cancel := context.WithDeadline(ctx, time.Now().Add(chatTimeout(req)+c.margin))
	defer cancel()
	msgs := slices.Clone(req.Messages)
	comp, err := c.postChat(ctx, req, "")
	for err == nil && comp.FinishReason() == FinishToolCalls {
		requestID := comp.ID
		if comp.Service != nil && comp.Service.RequestID != "" {
			requestID = comp.Service.RequestID
		}
		reply := comp.Choices[0].Message
		if len(reply.ToolCalls) == 0 {
			return nil, c.abandon(ctx, "chat tool loop", requestID,
				fmt.Errorf("automate: finish_reason tool_calls without tool calls"))
		}
		results, xerr := exec(ctx, ToolCallsFromChat(reply.ToolCalls))
		if xerr == nil {
			xerr = ctx.Err()
		}
		if xerr != nil {
			return nil, c.abandon(ctx, "tool executor", requestID, xerr)
		}
		assistantMsg := TextMessage(RoleAssistant, reply.Content)
		assistantMsg.ToolCalls = reply.ToolCalls
		msgs = append(msgs, assistantMsg)
		for _, r := range results {
			msgs = append(msgs, ToolMessage(r))
		}
		// The chat route starts a fresh run when the tool messages name no
		// live run: make sure ours still waits before posting, and cancel a
		// fresh run if the window between the check and the post was lost.
		if h, herr := c.Health(ctx); herr == nil && (h.ActiveRequestID == nil || *h.ActiveRequestID != requestID || !h.AwaitingToolResults) {
			return nil, fmt.Errorf("chat tool loop, run %s: %w", requestID, ErrRunLost)
		}
		next := req
		next.Messages = slices.Clone(msgs)
		comp, err = c.postChat(ctx, next, requestID)
		if newID := completionRunID(comp, err); newID != "" && newID != requestID {
			lost := fmt.Errorf("chat tool loop, run %s: %w (the server started run %s instead)", requestID, ErrRunLost, newID)
			return nil, c.abandon(ctx, "chat tool loop", newID, lost)
		}
	}
	return comp, err
}

// completionRunID is the request id of the run a chat answer (or a failed
// run's error) describes, or "".
func completionRunID(comp *ChatCompletion, err error) string {
	if comp == nil {
		var re *RunError
		if errors.As(err, &re) {
			comp = re.Completion
			if comp == nil && re.Record != nil {
				return re.Record.RequestID
			}
		}
	}
	if comp == nil {
		return ""
	}
	if comp.Service != nil && comp.Service.RequestID != "" {
		return comp.Service.RequestID
	}
	return comp.ID
}
