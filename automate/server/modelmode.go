package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// Model mode: a chat request whose model is "<product>-model" is one plain,
// stateless chat completion on the engine's model (assistant.ModelChatter).
// It holds the inference slot like a run; the answer is one completion, or
// server-sent events in the OpenAI chunk format with `stream: true`.

// DefaultKeepAlive is the interval of the comment lines that keep a quiet
// model-mode stream alive.
const DefaultKeepAlive = 10 * time.Second

// modelCall is a model-mode call holding the slot.
type modelCall struct {
	id     string
	cancel context.CancelCauseFunc
	prev   string // the workflow status before the call
}

// modelChatter is the engine's model mode, or nil when it has none.
func (s *Server) modelChatter() assistant.ModelChatter {
	mc, _ := s.engine.(assistant.ModelChatter)
	return mc
}

// modelSpec is a validated model-mode request.
type modelSpec struct {
	req          assistant.ModelRequest
	stream       bool
	includeUsage bool
	timeoutMs    int64
	// record holds the include switches when the extension object asked
	// for the call's record (a whole answer carries it); nil: no record.
	record *includes
	// native: a /v1/runs run with mode "model", answered with its record
	// alone (recordOutput); record is then never nil.
	native bool
	taskID string
}

var modelRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// decodeModelRequest validates a model-mode chat request. Messages and
// tools are checked for shape only and kept byte for byte. product is the
// key of the extension object.
func decodeModelRequest(o object, product string) (*modelSpec, error) {
	msgs, err := decodeModelMessages(o)
	if err != nil {
		return nil, err
	}
	spec := &modelSpec{}
	spec.req.Messages = msgs
	tools, _, err := o.array("tools", "tools must be an array")
	if err != nil {
		return nil, err
	}
	for i, raw := range tools {
		var entry struct {
			Type     string `json:"type"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(raw, &entry) != nil || entry.Type != "function" || entry.Function == nil || entry.Function.Name == "" {
			return nil, invalid("tools[%d] must be a function tool with a name", i)
		}
		spec.req.Tools = append(spec.req.Tools, raw)
	}
	if spec.stream, err = o.boolean("stream", "stream must be a boolean"); err != nil {
		return nil, err
	}
	so, err := o.sub("stream_options", "stream_options must be an object")
	if err != nil {
		return nil, err
	}
	if so != nil {
		if spec.includeUsage, err = so.boolean("include_usage", "stream_options.include_usage must be a boolean"); err != nil {
			return nil, err
		}
	}
	if o.has("n") {
		var n int
		if json.Unmarshal(o["n"], &n) != nil || n != 1 {
			return nil, invalid("n must be 1: model mode answers one choice")
		}
	}
	if spec.timeoutMs, err = o.timeout("timeout_ms"); err != nil {
		return nil, err
	}
	ext, err := o.sub(product, product+" must be an object")
	if err != nil {
		return nil, err
	}
	if ext != nil && ext.has("include") {
		inc, err := decodeInclude(ext, "include")
		if err != nil {
			return nil, err
		}
		spec.record = &inc
	}
	for _, k := range assistant.ModelOptions {
		if o.has(k) {
			if spec.req.Options == nil {
				spec.req.Options = map[string]json.RawMessage{}
			}
			spec.req.Options[k] = o[k]
		}
	}
	return spec, nil
}

// decodeModelMessages checks the shape of a model-mode conversation
// (objects with a known role; a tool message names its call) and keeps
// each message byte for byte.
func decodeModelMessages(o object) ([]json.RawMessage, error) {
	msgs, ok, err := o.array("messages", "messages must be an array")
	if err != nil || !ok {
		return nil, invalid("messages must be an array")
	}
	if len(msgs) == 0 {
		return nil, invalid("messages must not be empty")
	}
	for i, raw := range msgs {
		m, role, err := decodeMessage(raw, i)
		if err != nil {
			return nil, err
		}
		if !modelRoles[role] {
			return nil, invalid("messages[%d].role must be one of system, developer, user, assistant, tool", i)
		}
		if role == "tool" {
			if _, _, err := m.str("tool_call_id", "messages["+strconv.Itoa(i)+"].tool_call_id must be a string"); err != nil {
				return nil, err
			}
		}
	}
	return msgs, nil
}

// runMode is the mode of a /v1/runs body: "assistant" (also when absent)
// or "model".
func runMode(o object) (string, error) {
	const msg = "mode must be one of assistant, model"
	mode, ok, err := o.str("mode", msg)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return automate.ModeAssistant, nil
	case mode != automate.ModeAssistant && mode != automate.ModeModel:
		return "", invalid(msg)
	}
	return mode, nil
}

// decodeModelRun validates a /v1/runs body with mode "model": one
// stateless model turn over messages, with clientTools as the model's
// only tools (passed on as OpenAI function tools). taskId, timeoutMs and
// include apply as on a run; the assistant's options (answerContract,
// continuation, mcpServers, skills, hitlAnswers, workspace and
// destructive-tool switches, builtInTools, thinkingLevel,
// additionalWorkflowPrompt) have nothing to act on and are ignored, as
// unknown fields are. A prompt is refused rather than dropped, and so is
// stream (the streamed model turn is the chat route's).
func decodeModelRun(o object, product string) (*modelSpec, error) {
	if prompt, _, _ := o.str("prompt", ""); strings.TrimSpace(prompt) != "" {
		return nil, invalid("prompt is not used with mode model: send the conversation in messages")
	}
	msgs, err := decodeModelMessages(o)
	if err != nil {
		return nil, err
	}
	spec := &modelSpec{native: true}
	spec.req.Messages = msgs
	if spec.taskID, _, err = o.str("taskId", "taskId must be a string"); err != nil {
		return nil, err
	}
	if spec.timeoutMs, err = o.timeout("timeoutMs"); err != nil {
		return nil, err
	}
	inc, err := decodeInclude(o, "include")
	if err != nil {
		return nil, err
	}
	spec.record = &inc
	tools, err := decodeClientTools(o)
	if err != nil {
		return nil, err
	}
	for _, t := range tools {
		fn := map[string]any{"name": t.Name, "description": t.Description}
		if len(t.Parameters) > 0 && !isNull(t.Parameters) {
			fn["parameters"] = t.Parameters
		}
		raw, err := json.Marshal(map[string]any{"type": "function", "function": fn})
		if err != nil {
			return nil, err
		}
		spec.req.Tools = append(spec.req.Tools, raw)
	}
	stream, err := o.boolean("stream", "stream must be a boolean")
	if err != nil {
		return nil, err
	}
	if stream {
		return nil, invalid("stream is not supported with mode model on /v1/runs: stream a model turn on /v1/chat/completions with model %s", automate.ModelID(product))
	}
	return spec, nil
}

// startModelCall takes the slot for a model-mode call; ctx is the call's
// context, cancelled by Cancel and Close.
func (s *Server) startModelCall(ctx context.Context) (*modelCall, context.Context, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.slotRefusalLocked(); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	mc := &modelCall{id: newRequestID(), cancel: cancel, prev: s.workflowStatus}
	s.model = mc
	s.workflowStatus = automate.WorkflowThinking
	return mc, ctx, nil
}

// endModelCall frees the slot.
func (s *Server) endModelCall(mc *modelCall) {
	s.mu.Lock()
	if s.model == mc {
		s.model = nil
		s.workflowStatus = mc.prev
	}
	s.mu.Unlock()
	mc.cancel(context.Canceled)
}

// handleModelChat answers a model-mode chat request.
func (s *Server) handleModelChat(w http.ResponseWriter, r *http.Request, o object) {
	if s.modelChatter() == nil {
		writeError(w, s.log, s.noModelMode())
		return
	}
	spec, err := decodeModelRequest(o, s.product)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	s.serveModelCall(w, r, spec)
}

// handleModelRun answers POST /v1/runs with mode "model": the same model
// call as the chat route's model mode, answered with its record.
func (s *Server) handleModelRun(w http.ResponseWriter, r *http.Request, o object) {
	if s.modelChatter() == nil {
		writeError(w, s.log, s.noModelMode())
		return
	}
	spec, err := decodeModelRun(o, s.product)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	s.serveModelCall(w, r, spec)
}

func (s *Server) noModelMode() error {
	return invalid("The model %s is not available: this assistant engine has no model mode", automate.ModelID(s.product))
}

// serveModelCall runs one validated model-mode call and answers it.
func (s *Server) serveModelCall(w http.ResponseWriter, r *http.Request, spec *modelSpec) {
	chatter := s.modelChatter()
	ctx, stopTimer := context.WithTimeoutCause(r.Context(), time.Duration(spec.timeoutMs)*time.Millisecond, causeTimeout)
	defer stopTimer()
	mc, ctx, err := s.startModelCall(ctx)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	spec.req.RequestID = mc.id
	started := s.now()
	head := chunkHead{ID: mc.id, Object: "chat.completion.chunk", Created: started.Unix(), Model: automate.ModelID(s.product)}
	var out modelOutput
	var stopKeepAlive func()
	reblock := func() {}
	if spec.stream {
		sse := &sseOutput{w: w, rc: http.NewResponseController(w), head: head, includeUsage: spec.includeUsage}
		stopKeepAlive = sse.keepAlive(s.keepAlive)
		// A cancel or a timeout unblocks a write stuck on a caller that
		// stopped reading, so the engine returns and the slot is freed;
		// once it returned, the closing answer gets a bounded write again.
		stopUnblock := context.AfterFunc(ctx, sse.unblock)
		reblock = func() {
			stopUnblock()
			sse.settle()
		}
		out = sse
	} else if spec.native {
		out = &recordOutput{wholeOutput: wholeOutput{w: w}, record: func(answer string, calls []automate.ToolCall, usage *automate.ChatUsage) *automate.RunRecord {
			rec := s.modelRecord(mc.id, started, answer, usage, *spec.record)
			rec.TaskID, rec.ToolCalls = spec.taskID, calls
			return rec
		}}
	} else {
		whole := &wholeOutput{w: w}
		if spec.record != nil {
			whole.record = func(answer string, usage *automate.ChatUsage) *automate.RunRecord {
				return s.modelRecord(mc.id, started, answer, usage, *spec.record)
			}
		}
		out = whole
	}
	s.log.Info("model call started", "request_id", mc.id, "messages", len(spec.req.Messages), "tools", len(spec.req.Tools),
		"stream", spec.stream)

	res, err := func() (res *assistant.ModelResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("assistant panicked: %v", p)
				s.log.Error("assistant panicked", "request_id", mc.id, "panic", p)
			}
		}()
		return chatter.ModelChat(ctx, &spec.req, out)
	}()
	reblock()
	cause := context.Cause(ctx)
	if ctx.Err() == nil {
		cause = nil
	}
	// Free the slot before the end of the answer becomes visible: a caller
	// that has its answer may send the next call at once.
	s.endModelCall(mc)
	if stopKeepAlive != nil {
		stopKeepAlive()
	}
	if r.Context().Err() != nil && cause != causeTimeout {
		s.log.Info("model call ended: the caller went away", "request_id", mc.id, "duration_ms", s.now().Sub(started).Milliseconds())
		return
	}
	var fail error
	switch {
	case cause != nil:
		fail = s.modelStopped(cause, spec.timeoutMs)
	case err != nil:
		fail = modelFailure(err)
	}
	if fail != nil {
		s.log.Info("model call failed", "request_id", mc.id, "err", fail)
		out.fail(s, fail)
		return
	}
	if res == nil {
		res = &assistant.ModelResult{}
	}
	out.finish(s, head, res)
	s.log.Info("model call ended", "request_id", mc.id, "duration_ms", s.now().Sub(started).Milliseconds())
}

// modelStopped is the answer to a call whose context ended for cause.
func (s *Server) modelStopped(cause error, timeoutMs int64) error {
	switch cause {
	case causeTimeout:
		return runTimedOut(timeoutMs)
	case causeForce:
		return &apiError{kind: errCallCanceled, msg: "The model call was stopped (forced cancel)", code: automate.ErrorCanceled}
	case causeShutdown:
		return &apiError{kind: errCallCanceled, msg: "The model call was stopped: the server is shutting down", code: automate.ErrorCanceled}
	}
	return &apiError{kind: errCallCanceled, msg: "The model call was canceled", code: automate.ErrorCanceled}
}

// modelFailure maps an engine's error onto the answer of errorTable.
func modelFailure(err error) error {
	var me *assistant.ModelError
	if !errors.As(err, &me) {
		return &apiError{kind: errModelFailed, msg: "The model failed: " + err.Error(), code: automate.ErrorExecutionFailed}
	}
	switch me.Code {
	case automate.ErrorContextLimitExceeded:
		// OpenAI's own code for this, which clients and frameworks know.
		return &apiError{kind: errInvalidRequest, msg: me.Message, code: "context_length_exceeded"}
	case automate.ErrorModelLoadFailed:
		return &apiError{kind: errModelUnavailable, msg: me.Message, code: me.Code}
	}
	code := me.Code
	if !slices.Contains(automate.ErrorCodes, code) {
		code = automate.ErrorExecutionFailed
	}
	return &apiError{kind: errModelFailed, msg: me.Message, code: code}
}

// modelOutput is where a model-mode answer goes: a stream or one
// completion.
type modelOutput interface {
	assistant.ModelSink
	finish(s *Server, head chunkHead, res *assistant.ModelResult)
	fail(s *Server, err error)
}

// chunkHead are the fields every chunk (and the completion) carries.
type chunkHead struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
}

type chunk struct {
	chunkHead
	Choices []chunkChoice       `json:"choices"`
	Usage   *automate.ChatUsage `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
}

type chunkDelta struct {
	Role             string          `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []chunkToolCall `json:"tool_calls,omitempty"`
}

type chunkToolCall struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function chunkFunction `json:"function"`
}

type chunkFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// errClientGone is what a sink answers once the caller cannot be written.
var errClientGone = errors.New("the caller went away")

// sseOutput streams the answer as server-sent events. Headers go out with
// the first chunk (the model accepted the request) or the first keep-alive,
// so that a request the model refuses at once still gets its HTTP status.
type sseOutput struct {
	w            http.ResponseWriter
	rc           *http.ResponseController // for write deadlines
	stream       *localhttp.EventStream   // from the first write
	head         chunkHead
	includeUsage bool

	dl      sync.Mutex // guards settled, cut and the write deadline
	settled bool
	cut     bool // unblocked: no write may start until settle

	mu      sync.Mutex
	begun   bool
	broken  bool
	toolIDs int // tool calls seen (for finish_reason)
}

// keepAlive writes a comment line every interval until stop is called.
func (o *sseOutput) keepAlive(interval time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				o.mu.Lock()
				if o.beginLocked() == nil && o.armLocked() == nil {
					o.sentLocked(o.stream.Comment("keep-alive"))
				}
				o.mu.Unlock()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// beginLocked sends the headers and the role chunk once.
func (o *sseOutput) beginLocked() error {
	if o.broken {
		return errClientGone
	}
	if o.begun {
		return nil
	}
	o.begun = true
	h := o.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	o.stream = localhttp.NewEventStream(o.w) // 200 and these headers go out with the first event
	empty := ""
	return o.chunkLocked(chunkDelta{Role: "assistant", Content: &empty}, nil, nil)
}

// chunkLocked writes one data event.
func (o *sseOutput) chunkLocked(d chunkDelta, finish *string, usage *automate.ChatUsage) error {
	c := chunk{chunkHead: o.head, Choices: []chunkChoice{{Delta: d, FinishReason: finish}}, Usage: usage}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return o.dataLocked(b)
}

// dataLocked writes one data event.
func (o *sseOutput) dataLocked(b []byte) error {
	if err := o.armLocked(); err != nil {
		return err
	}
	return o.sentLocked(o.stream.Data(b))
}

// sseWriteTimeout bounds one write of the stream: a caller that stops
// reading without closing its connection must not hold the inference slot
// (the engine waits on the sink, the slot on the engine).
const sseWriteTimeout = 30 * time.Second

// unblock makes a write in progress, and every later one, fail at once,
// unless the call has settled (the engine returned: the closing answer is
// written under a fresh deadline). It never takes mu, which a blocked
// writer holds.
func (o *sseOutput) unblock() {
	o.dl.Lock()
	defer o.dl.Unlock()
	if !o.settled {
		o.cut = true
		_ = o.rc.SetWriteDeadline(time.Now())
	}
}

// settle ends unblock's reach (an unblock that runs late does nothing) and
// gives the closing answer a bounded write.
func (o *sseOutput) settle() {
	o.dl.Lock()
	defer o.dl.Unlock()
	o.settled, o.cut = true, false
	_ = o.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
}

// armLocked readies the next write: it fails once the stream broke or was
// cut, else bounds the write by sseWriteTimeout.
func (o *sseOutput) armLocked() error {
	if o.broken {
		return errClientGone
	}
	// Not every ResponseWriter can set deadlines (httptest's recorder): the
	// write is then unbounded, as before.
	o.dl.Lock()
	cut := o.cut
	if !cut {
		_ = o.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	}
	o.dl.Unlock()
	if cut {
		o.broken = true
		return errClientGone
	}
	return nil
}

// sentLocked records the outcome of a write: a failed one breaks the
// stream.
func (o *sseOutput) sentLocked(err error) error {
	if err != nil {
		o.broken = true
		return errClientGone
	}
	return nil
}

func (o *sseOutput) Begin() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.beginLocked()
}

func (o *sseOutput) Content(text string) error {
	if text == "" {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.beginLocked(); err != nil {
		return err
	}
	return o.chunkLocked(chunkDelta{Content: &text}, nil, nil)
}

func (o *sseOutput) Reasoning(text string) error {
	if text == "" {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.beginLocked(); err != nil {
		return err
	}
	return o.chunkLocked(chunkDelta{ReasoningContent: text}, nil, nil)
}

func (o *sseOutput) ToolCall(d assistant.ToolCallDelta) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.beginLocked(); err != nil {
		return err
	}
	tc := chunkToolCall{Index: d.Index, ID: d.ID, Function: chunkFunction{Name: d.Name, Arguments: d.Arguments}}
	if d.ID != "" || d.Name != "" {
		tc.Type = "function"
	}
	if d.Index+1 > o.toolIDs {
		o.toolIDs = d.Index + 1
	}
	return o.chunkLocked(chunkDelta{ToolCalls: []chunkToolCall{tc}}, nil, nil)
}

func (o *sseOutput) finish(s *Server, _ chunkHead, res *assistant.ModelResult) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.beginLocked() != nil {
		return
	}
	reason := finishReason(res.FinishReason, o.toolIDs > 0)
	if o.chunkLocked(chunkDelta{}, &reason, nil) != nil {
		return
	}
	if o.includeUsage {
		usage := res.Usage
		if usage == nil {
			usage = &automate.ChatUsage{}
		}
		b, err := json.Marshal(chunk{chunkHead: o.head, Choices: []chunkChoice{}, Usage: usage})
		if err != nil || o.dataLocked(b) != nil {
			return
		}
	}
	_ = o.dataLocked([]byte("[DONE]"))
}

// fail answers err: with its HTTP status while nothing was sent, else as
// an error event that ends the stream without [DONE] (the official
// clients raise it as an error).
func (o *sseOutput) fail(s *Server, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.broken {
		return
	}
	if !o.begun {
		o.begun = true
		writeError(o.w, s.log, err)
		return
	}
	_, env := errorAnswer(s.log, err)
	if b, merr := json.Marshal(env); merr == nil {
		_ = o.dataLocked(b)
	}
}

// finishReason is tool_calls whenever the answer has tool calls, whatever
// the model said (vLLM keeps "stop" for named tool choices).
func finishReason(model string, hasCalls bool) string {
	switch {
	case hasCalls:
		return "tool_calls"
	case model == "":
		return "stop"
	}
	return model
}

// wholeOutput collects the answer into one completion.
type wholeOutput struct {
	w                  http.ResponseWriter
	record             func(answer string, usage *automate.ChatUsage) *automate.RunRecord // nil: no record asked for
	content, reasoning strings.Builder
	calls              []*automate.ChatToolCall
}

func (o *wholeOutput) Begin() error { return nil }

func (o *wholeOutput) Content(text string) error {
	o.content.WriteString(text)
	return nil
}

func (o *wholeOutput) Reasoning(text string) error {
	o.reasoning.WriteString(text)
	return nil
}

func (o *wholeOutput) ToolCall(d assistant.ToolCallDelta) error {
	if d.Index < 0 || d.Index > 1024 {
		return fmt.Errorf("tool call index %d out of range", d.Index)
	}
	for len(o.calls) <= d.Index {
		o.calls = append(o.calls, &automate.ChatToolCall{Type: "function"})
	}
	c := o.calls[d.Index]
	if d.ID != "" {
		c.ID = d.ID
	}
	c.Function.Name += d.Name
	c.Function.Arguments += d.Arguments
	return nil
}

// wholeMessage is the assistant message of a model-mode completion:
// content is null when the answer is only tool calls, as OpenAI sends it.
type wholeMessage struct {
	Role             string                  `json:"role"`
	Content          *string                 `json:"content"`
	ReasoningContent string                  `json:"reasoning_content,omitempty"`
	ToolCalls        []automate.ChatToolCall `json:"tool_calls,omitempty"`
}

type wholeChoice struct {
	Index        int          `json:"index"`
	Message      wholeMessage `json:"message"`
	FinishReason string       `json:"finish_reason"`
}

type wholeCompletion struct {
	chunkHead
	Choices []wholeChoice      `json:"choices"`
	Usage   automate.ChatUsage `json:"usage"`
}

func (o *wholeOutput) finish(s *Server, head chunkHead, res *assistant.ModelResult) {
	msg := wholeMessage{Role: "assistant", ReasoningContent: o.reasoning.String()}
	if text := o.content.String(); text != "" || len(o.calls) == 0 {
		msg.Content = &text
	}
	for _, c := range o.calls {
		if c.Function.Arguments == "" {
			c.Function.Arguments = "{}"
		}
		msg.ToolCalls = append(msg.ToolCalls, *c)
	}
	head.Object = "chat.completion"
	comp := wholeCompletion{chunkHead: head,
		Choices: []wholeChoice{{Message: msg, FinishReason: finishReason(res.FinishReason, len(o.calls) > 0)}}}
	if res.Usage != nil {
		comp.Usage = *res.Usage
	}
	if o.record == nil {
		writeJSON(o.w, s.log, http.StatusOK, comp)
		return
	}
	writeJSON(o.w, s.log, http.StatusOK, withRecord{comp, s.product, o.record(o.content.String(), res.Usage)})
}

// withRecord is a model-mode completion with the call's record under the
// product word.
type withRecord struct {
	wholeCompletion
	key    string
	record *automate.RunRecord
}

func (w withRecord) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(w.wholeCompletion)
	if err != nil {
		return nil, err
	}
	rec, err := json.Marshal(w.record)
	if err != nil {
		return nil, err
	}
	key, _ := json.Marshal(w.key)
	out := append(head[:len(head)-1], ',')
	out = append(append(append(out, key...), ':'), rec...)
	return append(out, '}'), nil
}

// modelRecord is the record of a model-mode call, asked for with the
// extension object's include: mode "model", the answer, timings, the
// model, usage. Steps are the engine's hidden work; the engines here do
// none, so the list is empty. No trace or events are kept.
func (s *Server) modelRecord(id string, started time.Time, answer string, usage *automate.ChatUsage, inc includes) *automate.RunRecord {
	rt := s.engine.Runtime()
	now := s.now()
	rec := &automate.RunRecord{
		SchemaVersion: automate.SchemaVersion, RequestID: id, Mode: "model", Status: automate.StatusCompleted, Answer: answer,
		StartedAt: automate.Timestamp{Time: started}, CompletedAt: automate.Timestamp{Time: now},
		DurationMs: now.Sub(started).Milliseconds(), Model: rt.ModelName, AppVersion: s.appVersion, Backend: rt.Backend,
	}
	if rec.Model == "" {
		rec.Model = "unknown"
	}
	if usage != nil {
		rec.Usage = &automate.Usage{InputTokens: usage.PromptTokens, OutputTokens: usage.CompletionTokens,
			GenerationMs: rec.DurationMs}
	}
	if inc.steps {
		rec.Steps = []automate.Step{}
	}
	return rec
}

func (o *wholeOutput) fail(s *Server, err error) { writeError(o.w, s.log, err) }

// recordOutput collects the answer of a /v1/runs model-mode run into its
// record: the content is the answer, the model's tool calls are toolCalls
// (arguments as an object; text that is not a JSON object is kept as a
// JSON string). There is no resume token: the call is stateless, the
// caller runs the tools and sends the next turn with the whole history.
// Failures are the error envelopes of the chat route's model mode.
type recordOutput struct {
	wholeOutput
	record func(answer string, calls []automate.ToolCall, usage *automate.ChatUsage) *automate.RunRecord
}

func (o *recordOutput) finish(s *Server, _ chunkHead, res *assistant.ModelResult) {
	var calls []automate.ToolCall
	for _, c := range o.calls {
		args := json.RawMessage(strings.TrimSpace(c.Function.Arguments))
		switch {
		case len(args) == 0:
			args = json.RawMessage("{}")
		case args[0] != '{' || !json.Valid(args):
			args, _ = json.Marshal(c.Function.Arguments)
		}
		calls = append(calls, automate.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args})
	}
	writeJSON(o.w, s.log, http.StatusOK, o.record(o.content.String(), calls, res.Usage))
}
