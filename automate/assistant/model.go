package assistant

import (
	"context"
	"encoding/json"

	"github.com/hubgate/hubgate/automate"
)

// ModelChatter is the optional interface of an engine with a model mode:
// one plain, stateless chat completion on the engine's model, for callers
// that run their own agent loop (the chat route with model
// "<product>-model"). The caller owns everything a run would own: the
// system prompt, the whole history, the tools and their execution. The
// engine adds nothing (no built-in tools, no system prompt), parks
// nothing and keeps nothing between calls. The server lists
// "<product>-model" in /v1/models only for an engine that implements it.
//
// The server holds the single inference slot for the call, as for a run,
// and calls ModelChat at most once at a time and never during a run.
type ModelChatter interface {
	// ModelChat answers req. It passes the answer to out as the model
	// produces it (content, reasoning and tool-call deltas, in order) and
	// returns once the model is done. Nothing may be buffered beyond what
	// the model server sends at once: the server streams each delta to the
	// caller as it comes.
	//
	// ctx ends when the caller goes away, on a cancel and on the call's
	// timeout; the engine then stops the model at once and returns. An
	// error from out means the caller is gone: the engine stops too.
	//
	// Errors: a *ModelError says what failed in the terms of the contract
	// (a conversation too long for the context, no model, a lost model
	// server); any other error counts as EXECUTION_FAILED.
	ModelChat(ctx context.Context, req *ModelRequest, out ModelSink) (*ModelResult, error)
}

// ModelRequest is a model-mode chat request as the caller sent it.
type ModelRequest struct {
	RequestID string
	// Messages are the caller's messages, each exactly as sent (system
	// prompt, history, assistant tool calls, tool results). At least one.
	Messages []json.RawMessage
	// Tools are the caller's tools entries, each exactly as sent. Zero:
	// none.
	Tools []json.RawMessage
	// Options are the caller's generation options, as sent, among
	// ModelOptions (temperature, max_tokens, tool_choice, ...). The
	// engine passes them to its model where it can.
	Options map[string]json.RawMessage
}

// ModelOptions are the request fields the server passes to a model-mode
// engine in ModelRequest.Options. The others (model, messages, tools,
// stream, stream_options, n, timeout_ms, the extension object, user,
// metadata, store) are the server's.
var ModelOptions = []string{
	"temperature", "top_p", "top_k", "min_p", "max_tokens", "max_completion_tokens", "stop", "seed",
	"presence_penalty", "frequency_penalty", "repeat_penalty", "logit_bias", "logprobs", "top_logprobs",
	"tool_choice", "parallel_tool_calls", "response_format", "reasoning_effort",
}

// ModelSink receives a model-mode answer as it is produced. Its methods
// are called from the goroutine running ModelChat, in the order of the
// answer; an error means the caller went away.
type ModelSink interface {
	// Begin says the model accepted the request and the answer starts.
	// Calling it is optional (the first delta implies it); an error found
	// before Begin can still answer the caller with an HTTP error status.
	Begin() error
	// Content is the next piece of the answer's text.
	Content(text string) error
	// Reasoning is the next piece of the model's reasoning text (sent to
	// the caller as reasoning_content, as llama-server and vLLM do).
	Reasoning(text string) error
	// ToolCall is the next piece of a tool call.
	ToolCall(d ToolCallDelta) error
}

// ToolCallDelta is one piece of a streamed tool call. The first piece of
// a call carries its ID and Name; later pieces carry more Arguments text.
type ToolCallDelta struct {
	Index     int // position of the call in the answer, from 0
	ID        string
	Name      string
	Arguments string // the next fragment of the JSON-encoded arguments
}

// ModelResult is how a model-mode answer ended.
type ModelResult struct {
	// FinishReason is the model's finish reason (stop, length, ...). The
	// server answers tool_calls whenever the answer has tool calls,
	// whatever the model said. "" counts as stop.
	FinishReason string
	// Usage is the model's token usage; nil when unknown.
	Usage *automate.ChatUsage
}

// ModelError is a failed model-mode call. Code is a workflow error code
// (automate.ErrorContextLimitExceeded, ErrorModelLoadFailed,
// ErrorServerLost, ErrorExecutionFailed); Message says what happened in a
// sentence fit for the caller.
type ModelError struct {
	Code    string
	Message string
	Err     error
}

func (e *ModelError) Error() string { return e.Message }

func (e *ModelError) Unwrap() error { return e.Err }
