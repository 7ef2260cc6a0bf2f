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
// loop.Execute, appends the assistant message and one tool message per
// result (the call ids echoed unchanged) to the conversation and posts it
// again, until the run completes or fails. The hooks see the parked record
// (the answer's service object). Outcomes, deadline, hooks and cancel are
// those of RunWithTools (the deadline counts timeout_ms once for the whole
// loop).
//
// The chat route starts a fresh run when tool messages name no live run,
// so a round whose run no longer waits is never posted: the loop ends
// with ErrRunLost instead, and should the server start a fresh run anyway
// (the run expired between the check and the post), that run is cancelled
// and the error is an *AbandonedError wrapping ErrRunLost.
func (c *Client) ChatWithTools(ctx context.Context, req ChatRequest, loop ToolLoop) (*ChatCompletion, error) {
	if loop.Execute == nil {
		return nil, errors.New("automate: chat with tools: nil ToolLoop.Execute")
	}
	ctx, cancel := context.WithTimeout(ctx, chatTimeout(req)+c.margin)
	defer cancel()
	msgs := slices.Clone(req.Messages)
	comp, err := c.postChat(ctx, req, "")
	return toolLoop(ctx, c, loop, "chat tool loop", comp, err,
		func(comp *ChatCompletion) (toolRound, bool) {
			if comp.FinishReason() != FinishToolCalls {
				return toolRound{}, false
			}
			r := toolRound{parked: comp.Service, requestID: completionRunID(comp, nil),
				calls: ToolCallsFromChat(comp.Choices[0].Message.ToolCalls)}
			if len(r.calls) == 0 {
				r.unresumable = errors.New("automate: finish_reason tool_calls without tool calls")
			}
			return r, true
		},
		func(ctx context.Context, comp *ChatCompletion, r toolRound, results []ToolResult) (*ChatCompletion, error) {
			reply := comp.Choices[0].Message
			assistantMsg := TextMessage(RoleAssistant, reply.Content)
			assistantMsg.ToolCalls = reply.ToolCalls
			msgs = append(msgs, assistantMsg)
			for _, res := range results {
				msgs = append(msgs, ToolMessage(res))
			}
			// Make sure our run still waits before posting, and cancel a
			// fresh run if the window between the check and the post was
			// lost.
			if h, herr := c.Health(ctx); herr == nil && (h.ActiveRequestID == nil || *h.ActiveRequestID != r.requestID || !h.AwaitingToolResults) {
				return nil, fmt.Errorf("chat tool loop, run %s: %w", r.requestID, ErrRunLost)
			}
			next := req
			next.Messages = slices.Clone(msgs)
			answer, err := c.postChat(ctx, next, r.requestID)
			if newID := completionRunID(answer, err); newID != "" && newID != r.requestID {
				lost := fmt.Errorf("chat tool loop, run %s: %w (the server started run %s instead)", r.requestID, ErrRunLost, newID)
				return nil, c.abandon(ctx, "chat tool loop", newID, lost)
			}
			return answer, err
		})
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
