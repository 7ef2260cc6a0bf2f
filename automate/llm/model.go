package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
)

var _ assistant.ModelChatter = (*Engine)(nil)

// ModelChat implements assistant.ModelChatter: one chat completion on the
// active model, passed to the upstream as the caller wrote it and streamed
// back piece by piece as the upstream sends it (see docs/llm-engine.md,
// Model mode).
func (e *Engine) ModelChat(ctx context.Context, req *assistant.ModelRequest, out assistant.ModelSink) (*assistant.ModelResult, error) {
	log := e.log.With("request_id", req.RequestID)
	e.mu.Lock()
	model, loaded := e.activeModelLocked(), e.snap != nil
	e.mu.Unlock()
	if !loaded || model == "" {
		if _, err := e.refreshNow(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &assistant.ModelError{Code: automate.ErrorModelLoadFailed,
				Message: fmt.Sprintf("The model server at %s cannot be reached: %v", e.up.root, err), Err: err}
		}
		e.mu.Lock()
		model = e.activeModelLocked()
		e.mu.Unlock()
	}
	if model == "" {
		return nil, &assistant.ModelError{Code: automate.ErrorModelLoadFailed,
			Message: fmt.Sprintf("No model to run: the model server at %s serves no tool-capable model; set automate.openai.model or select one", e.up.root)}
	}
	if p := e.modelProblem(model); p != "" {
		return nil, &assistant.ModelError{Code: automate.ErrorModelLoadFailed, Message: p}
	}
	e.mu.Lock()
	contextSize := e.contextSizeLocked(model)
	e.mu.Unlock()

	// Refuse what surely cannot fit before the upstream sees it: Ollama
	// would cut the conversation silently, others may spend minutes on a
	// prompt they then reject.
	chars := 0
	for _, m := range req.Messages {
		chars += len(m)
	}
	for _, t := range req.Tools {
		chars += len(t)
	}
	if est := chars / 4; est > contextSize {
		return nil, &assistant.ModelError{Code: automate.ErrorContextLimitExceeded,
			Message: fmt.Sprintf("The conversation does not fit the model's context: about %d tokens for a context of %d tokens.", est, contextSize)}
	}

	stream := !e.cfg.DisableStreaming
	body, err := e.modelBody(model, req, stream)
	if err != nil {
		return nil, &assistant.ModelError{Code: automate.ErrorExecutionFailed, Message: "The request cannot be encoded: " + err.Error(), Err: err}
	}
	accept := "application/json"
	if stream {
		accept = "text/event-stream"
	}
	log.Info("llm: model call", "model", model, "messages", len(req.Messages), "tools", len(req.Tools), "stream", stream)
	resp, err := e.up.send(ctx, http.MethodPost, "/v1/chat/completions", body, accept)
	if err != nil {
		return nil, e.modelFailed(ctx, model, contextSize, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if rerr != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, e.modelFailed(ctx, model, contextSize, classifyHTTP(resp.StatusCode, b))
	}
	if err := out.Begin(); err != nil {
		return nil, err
	}
	c := &completion{Started: e.now()}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		err = e.up.readStream(ctx, resp.Body, c, modelSink{out})
	} else {
		// A whole answer (asked for, or sent anyway): passed on at once.
		if err = e.up.readWhole(ctx, resp.Body, c); err == nil {
			err = sendWhole(c, out)
		}
	}
	if err != nil {
		return nil, e.modelFailed(ctx, model, contextSize, err)
	}
	res := &assistant.ModelResult{FinishReason: c.FinishReason}
	if c.Usage != nil {
		res.Usage = &automate.ChatUsage{PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens,
			TotalTokens: c.Usage.PromptTokens + c.Usage.CompletionTokens}
	}
	log.Info("llm: model call ended", "finish_reason", c.FinishReason, "tool_calls", len(c.Message.ToolCalls),
		"ttft_ms", c.FirstToken.Sub(c.Started).Milliseconds(), "duration_ms", c.Ended.Sub(c.Started).Milliseconds())
	return res, nil
}

// CloseIdleConnections closes the engine's idle connections to the
// upstream. Model mode keeps its connection warm between calls (a caller's
// loop calls again at once; a fresh connection per call costs about 0.2 ms
// on loopback, see BenchmarkModelModeStream); the engine's own client drops
// it after 30 s idle, and a run closes idle connections when it ends.
func (e *Engine) CloseIdleConnections() { e.up.hc.CloseIdleConnections() }

// modelBody is the upstream request: the caller's messages, tools and
// options byte for byte, the active model, and the engine's streaming.
// Without a caller's limit, the engine's max_tokens applies.
func (e *Engine) modelBody(model string, req *assistant.ModelRequest, stream bool) ([]byte, error) {
	fields := make(map[string]json.RawMessage, len(req.Options)+5)
	for k, v := range req.Options {
		fields[k] = v
	}
	var err error
	if fields["model"], err = json.Marshal(model); err != nil {
		return nil, err
	}
	fields["messages"] = rawArray(req.Messages)
	if len(req.Tools) > 0 {
		fields["tools"] = rawArray(req.Tools)
	}
	_, hasMax := fields["max_tokens"]
	_, hasMaxCompletion := fields["max_completion_tokens"]
	if !hasMax && !hasMaxCompletion && e.cfg.MaxOutputTokens > 0 {
		fields["max_tokens"] = json.RawMessage(fmt.Sprint(e.cfg.MaxOutputTokens))
	}
	if stream {
		fields["stream"] = json.RawMessage("true")
		fields["stream_options"] = json.RawMessage(`{"include_usage":true}`)
	} else {
		fields["stream"] = json.RawMessage("false")
	}
	return json.Marshal(fields)
}

func rawArray(items []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// modelSink adapts the server's sink to readStream.
type modelSink struct{ out assistant.ModelSink }

func (s modelSink) content(text string) error   { return s.out.Content(text) }
func (s modelSink) reasoning(text string) error { return s.out.Reasoning(text) }
func (s modelSink) toolCall(index int, id, name, args string) error {
	return s.out.ToolCall(assistant.ToolCallDelta{Index: index, ID: id, Name: name, Arguments: args})
}

// sendWhole passes a whole answer on.
func sendWhole(c *completion, out assistant.ModelSink) error {
	if err := out.Reasoning(c.Message.Reasoning); err != nil {
		return err
	}
	if err := out.Content(c.Message.Content); err != nil {
		return err
	}
	for i, tc := range c.Message.ToolCalls {
		if err := out.ToolCall(assistant.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}); err != nil {
			return err
		}
	}
	return nil
}

// modelFailed maps a failed upstream request onto a ModelError; a call
// whose context ended returns the context's error.
func (e *Engine) modelFailed(ctx context.Context, model string, contextSize int, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ue *UpstreamError
	if !errors.As(err, &ue) {
		return err // the caller went away (a sink error)
	}
	e.log.Warn("llm: model call failed", "kind", ue.Kind.String(), "status", ue.Status)
	switch ue.Kind {
	case kindCanceled:
		if ue.Err != nil {
			return ue.Err
		}
		return context.Canceled
	case kindContext:
		return &assistant.ModelError{Code: automate.ErrorContextLimitExceeded, Err: err,
			Message: fmt.Sprintf("The conversation does not fit the model's context of %d tokens: %s", contextSize, ue.Message)}
	case kindModel:
		return &assistant.ModelError{Code: automate.ErrorModelLoadFailed, Err: err, Message: "The model server could not load " + model + ": " + ue.Message}
	case kindUnreachable:
		return &assistant.ModelError{Code: automate.ErrorModelLoadFailed, Err: err,
			Message: fmt.Sprintf("The model server at %s cannot be reached: %v", e.up.root, ue.Err)}
	case kindLost:
		return &assistant.ModelError{Code: automate.ErrorServerLost, Err: err,
			Message: "The model server was lost during the call: " + strings.TrimPrefix(ue.Error(), "upstream lost: ")}
	}
	return &assistant.ModelError{Code: automate.ErrorExecutionFailed, Err: err,
		Message: "The model server refused the request: " + strings.TrimPrefix(ue.Error(), "upstream rejected ")}
}
