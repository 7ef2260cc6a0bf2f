package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/hubgate/hubgate/internal/lazyregexp"
)

// errKind classifies a failed upstream request.
type errKind int

const (
	// kindUnreachable: no connection could be made (nothing was sent).
	kindUnreachable errKind = iota + 1
	// kindLost: the connection broke, the stream was cut, or the upstream
	// answered with a server error.
	kindLost
	// kindContext: the conversation does not fit the model's context.
	kindContext
	// kindModel: the upstream cannot load or does not know the model.
	kindModel
	// kindRejected: the upstream refused the request (another 4xx).
	kindRejected
	// kindCanceled: the run's context ended.
	kindCanceled
)

func (k errKind) String() string {
	switch k {
	case kindUnreachable:
		return "unreachable"
	case kindLost:
		return "lost"
	case kindContext:
		return "context"
	case kindModel:
		return "model"
	case kindRejected:
		return "rejected"
	case kindCanceled:
		return "canceled"
	}
	return "unknown"
}

// UpstreamError is a failed request to the upstream. Message is the
// upstream's own error text (bounded), or what went wrong on the wire.
type UpstreamError struct {
	Kind    errKind
	Status  int // HTTP status; 0 when there was no answer
	Message string
	Err     error
}

func (e *UpstreamError) Error() string {
	var b strings.Builder
	b.WriteString("upstream ")
	b.WriteString(e.Kind.String())
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *UpstreamError) Unwrap() error { return e.Err }

// maxStreamedCalls bounds the index of a streamed tool call (a garbled
// index must not allocate without end).
const maxStreamedCalls = 1024

// maxErrorBody bounds the error body read from the upstream; maxMessage
// the part of it kept in an UpstreamError.
const (
	maxErrorBody = 64 << 10
	maxMessage   = 500
)

var (
	// contextRE matches the context-overflow messages of the common
	// upstreams: llama-server ("the request exceeds the available context
	// size", type exceed_context_size_error), vLLM and OpenAI ("maximum
	// context length is N tokens"), LM Studio ("context length"), and
	// generic "prompt is too long" / "too many tokens".
	contextRE = lazyregexp.New(`(?i)context[ _-]?(length|size|window|overflow)|exceed[s]?[ _](the )?(available )?context|maximum context|prompt is too long|too many tokens|n_ctx`)
	// modelRE matches "the model is unknown or cannot load" messages
	// (Ollama: `model "x" not found, try pulling it first`, "llama runner
	// process has terminated: error loading model"; vLLM/OpenAI: "The model
	// `x` does not exist").
	modelRE = lazyregexp.New(`(?i)model\b.*\b(not found|does not exist|not exist)|no such model|(failed|error) (to )?load(ing)? (the )?model|try pulling`)
)

// reasoningRefusalRE matches a refusal of the reasoning parameter
// (Ollama: `"x" does not support thinking`).
var reasoningRefusalRE = lazyregexp.New(`(?i)reasoning|think|effort`)

// classifyHTTP turns an error answer of the upstream into an UpstreamError.
func classifyHTTP(status int, body []byte) *UpstreamError {
	msg := errorMessage(body)
	e := &UpstreamError{Status: status, Message: msg}
	switch {
	case contextRE.MatchString(msg):
		e.Kind = kindContext
	case modelRE.MatchString(msg) || (status == http.StatusNotFound && strings.Contains(strings.ToLower(msg), "model")):
		e.Kind = kindModel
	case status >= 500:
		e.Kind = kindLost
	default:
		e.Kind = kindRejected
	}
	return e
}

// errorMessage extracts the message of an error body: {"error":{"message"}},
// {"error":"..."}, {"message":"..."} or the text itself, bounded.
func errorMessage(body []byte) string {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(body, &env) == nil {
		var inner struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		}
		var s string
		switch {
		case len(env.Error) > 0 && json.Unmarshal(env.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
			if inner.Type != "" && !strings.Contains(msg, inner.Type) {
				msg += " (" + inner.Type + ")"
			}
		case len(env.Error) > 0 && json.Unmarshal(env.Error, &s) == nil:
			msg = s
		case env.Message != "":
			msg = env.Message
		case env.Detail != nil:
			b, _ := json.Marshal(env.Detail)
			msg = string(b)
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(string(body))
	}
	return clip(msg, maxMessage)
}

// isDialError reports whether err happened while connecting, that is
// before any byte of the request was sent.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// upstream speaks to the OpenAI-compatible server.
type upstream struct {
	root        string // scheme://host[:port][/prefix], no trailing slash, no /v1
	key         string // bearer key; "" sends none
	hc          *http.Client
	now         func() time.Time
	log         *slog.Logger
	dialRetries int           // extra attempts after a failed dial
	retryWait   time.Duration // first wait between dial attempts (doubles)
}

// rootURL normalises a configured upstream URL: trailing slashes and one
// trailing /v1 are removed.
func rootURL(raw string) string {
	s := strings.TrimRight(raw, "/")
	s = strings.TrimSuffix(s, "/v1")
	return strings.TrimRight(s, "/")
}

// send performs one request, retrying only failed dials (nothing reached
// the upstream, so nothing can have happened twice): at most dialRetries
// times, waiting retryWait doubled at each retry (cenkalti/backoff's
// ExponentialBackOff, no jitter, no cap); the context ends a wait.
func (u *upstream) send(ctx context.Context, method, path string, body []byte, accept string) (*http.Response, error) {
	attempt := 0
	resp, err := backoff.RetryNotifyWithData(func() (*http.Response, error) {
		attempt++
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, u.root+path, rd)
		if err != nil {
			return nil, backoff.Permanent(&UpstreamError{Kind: kindRejected, Err: err})
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		if u.key != "" {
			req.Header.Set("Authorization", "Bearer "+u.key)
		}
		resp, err := u.hc.Do(req)
		switch {
		case err == nil:
			return resp, nil
		case ctx.Err() != nil:
			return nil, backoff.Permanent(&UpstreamError{Kind: kindCanceled, Err: ctx.Err()})
		case !isDialError(err):
			return nil, backoff.Permanent(&UpstreamError{Kind: kindLost, Err: scrubURL(err)})
		}
		return nil, &UpstreamError{Kind: kindUnreachable, Err: scrubURL(err)}
	}, backoff.WithContext(backoff.WithMaxRetries(backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(u.retryWait),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxInterval(math.MaxInt64),
		backoff.WithMaxElapsedTime(0),
	), uint64(max(u.dialRetries, 0))), ctx), func(error, time.Duration) {
		u.log.Debug("llm: upstream dial failed, retrying", "path", path, "attempt", attempt)
	})
	var ue *UpstreamError
	switch {
	case err == nil:
		return resp, nil
	case errors.As(err, &ue):
		return nil, ue
	}
	// The context ended a wait between attempts.
	return nil, &UpstreamError{Kind: kindCanceled, Err: err}
}

// scrubURL drops the URL from a *url.Error (it may carry a path the user
// configured; the key never is in it, but keep errors short).
func scrubURL(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// getJSON GETs path and decodes a 200 answer into v.
func (u *upstream) getJSON(ctx context.Context, path string, v any) error {
	return u.doJSON(ctx, http.MethodGet, path, nil, v)
}

// postJSON POSTs in and decodes a 200 answer into v (reads only, such as
// Ollama's /api/show).
func (u *upstream) postJSON(ctx context.Context, path string, in, v any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return u.doJSON(ctx, http.MethodPost, path, b, v)
}

func (u *upstream) doJSON(ctx context.Context, method, path string, body []byte, v any) error {
	resp, err := u.send(ctx, method, path, body, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return &UpstreamError{Kind: kindLost, Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		return classifyHTTP(resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &UpstreamError{Kind: kindRejected, Status: resp.StatusCode, Message: "answer is not the expected JSON", Err: err}
	}
	return nil
}

// chatMessage is one message of the upstream conversation.
type chatMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
	// Reasoning is the model's reasoning text; it goes into the trace and
	// steps, never back to the upstream.
	Reasoning string `json:"-"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// toolSpec is one entry of the request's tools.
type toolSpec struct {
	Type     string       `json:"type"`
	Function toolSpecFunc `json:"function"`
}

type toolSpecFunc struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type chatRequest struct {
	Model             string         `json:"model"`
	Messages          []chatMessage  `json:"messages"`
	Tools             []toolSpec     `json:"tools,omitempty"`
	ToolChoice        string         `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool          `json:"parallel_tool_calls,omitempty"`
	Stream            bool           `json:"stream"`
	StreamOptions     *streamOptions `json:"stream_options,omitempty"`
	MaxTokens         int            `json:"max_tokens,omitempty"`
	ReasoningEffort   string         `json:"reasoning_effort,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type tokenUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// completion is one answer of the upstream.
type completion struct {
	Message      chatMessage // role assistant: content, tool calls, reasoning
	FinishReason string
	Usage        *tokenUsage // nil when the upstream reported none
	Deltas       int         // streamed chunks that carried text or tool arguments
	Started      time.Time   // request sent
	FirstToken   time.Time   // first text, reasoning or tool-call byte; = Ended without streaming
	Ended        time.Time
}

// argText is a tool call's arguments: a JSON string of JSON (the OpenAI
// shape), or an object some servers send as is.
type argText string

func (a *argText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		*a = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = argText(s)
	default:
		*a = argText(b)
	}
	return nil
}

// contentText is a message content: a string, null, or an array of parts
// whose text parts are joined.
type contentText string

func (c *contentText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		*c = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = contentText(s)
	case b[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Text)
		}
		*c = contentText(sb.String())
	default:
		return fmt.Errorf("content is neither a string nor a list of parts")
	}
	return nil
}

type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string  `json:"name"`
		Arguments argText `json:"arguments"`
	} `json:"function"`
}

type wireMessage struct {
	Role             string         `json:"role"`
	Content          contentText    `json:"content"`
	ReasoningContent string         `json:"reasoning_content"` // llama-server, vLLM, DeepSeek
	Reasoning        string         `json:"reasoning"`         // Ollama, OpenRouter
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

type wireChoice struct {
	Message      *wireMessage `json:"message"`
	Delta        *wireMessage `json:"delta"`
	FinishReason *string      `json:"finish_reason"`
}

type wireCompletion struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *tokenUsage     `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

// chat runs one chat completion. With req.Stream the answer is read as
// server-sent events; an upstream that answers with plain JSON anyway is
// read as such.
func (u *upstream) chat(ctx context.Context, req chatRequest) (*completion, error) {
	if req.Stream {
		req.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, &UpstreamError{Kind: kindRejected, Err: err}
	}
	c := &completion{Started: u.now()}
	accept := "application/json"
	if req.Stream {
		accept = "text/event-stream"
	}
	resp, err := u.send(ctx, http.MethodPost, "/v1/chat/completions", body, accept)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if rerr != nil && ctx.Err() != nil {
			return nil, &UpstreamError{Kind: kindCanceled, Err: ctx.Err()}
		}
		return nil, classifyHTTP(resp.StatusCode, b)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		err = u.readStream(ctx, resp.Body, c, nil)
	} else {
		err = u.readWhole(ctx, resp.Body, c)
	}
	if err != nil {
		return nil, err
	}
	splitThink(&c.Message)
	return c, nil
}

// readWhole reads a non-streamed completion.
func (u *upstream) readWhole(ctx context.Context, r io.Reader, c *completion) error {
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	c.Ended = u.now()
	c.FirstToken = c.Ended
	if err != nil {
		if ctx.Err() != nil {
			return &UpstreamError{Kind: kindCanceled, Err: ctx.Err()}
		}
		return &UpstreamError{Kind: kindLost, Message: "the connection broke while the answer was read", Err: err}
	}
	var w wireCompletion
	if err := json.Unmarshal(b, &w); err != nil {
		return &UpstreamError{Kind: kindLost, Message: "the answer is not a chat completion (cut off or garbled)", Err: err}
	}
	if len(w.Error) > 0 && string(w.Error) != "null" {
		e := classifyHTTP(http.StatusInternalServerError, b)
		return e
	}
	if len(w.Choices) == 0 || w.Choices[0].Message == nil {
		return &UpstreamError{Kind: kindLost, Message: "the answer has no choices"}
	}
	ch := w.Choices[0]
	m := ch.Message
	c.Message = chatMessage{Role: "assistant", Content: string(m.Content), Reasoning: m.ReasoningContent + m.Reasoning}
	for _, tc := range m.ToolCalls {
		c.Message.ToolCalls = append(c.Message.ToolCalls, toolCall{ID: tc.ID, Type: "function",
			Function: toolFunction{Name: tc.Function.Name, Arguments: string(tc.Function.Arguments)}})
	}
	if ch.FinishReason != nil {
		c.FinishReason = *ch.FinishReason
	}
	c.Usage = w.Usage
	c.Deltas = 1
	return nil
}

// streamSink receives the pieces of a streamed answer as they are read
// (model mode passes them on); an error stops the read.
type streamSink interface {
	content(text string) error
	reasoning(text string) error
	toolCall(index int, id, name, args string) error
}

// readStream reads a streamed completion, accumulating the deltas. A
// stream that ends before the answer did (no finish_reason, no [DONE]) or
// breaks is a lost server. sink, when not nil, gets every piece as it is
// read.
func (u *upstream) readStream(ctx context.Context, r io.Reader, c *completion, sink streamSink) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var content, reasoning strings.Builder
	type acc struct {
		id, name string
		args     strings.Builder
	}
	var calls []*acc
	done, finished := false, false
	for !done && sc.Scan() {
		line := sc.Bytes()
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue // event:, id:, comments, blank lines
		}
		data = bytes.TrimSpace(data)
		if bytes.Equal(data, []byte("[DONE]")) {
			done = true
			break
		}
		var w wireCompletion
		if err := json.Unmarshal(data, &w); err != nil {
			return &UpstreamError{Kind: kindLost, Message: "a streamed chunk is not JSON", Err: err}
		}
		if len(w.Error) > 0 && string(w.Error) != "null" {
			return classifyHTTP(http.StatusInternalServerError, data)
		}
		if w.Usage != nil {
			c.Usage = w.Usage
		}
		for _, ch := range w.Choices {
			d := ch.Delta
			if d == nil {
				d = ch.Message
			}
			if d != nil {
				got := false
				if d.Content != "" {
					content.WriteString(string(d.Content))
					got = true
					if sink != nil {
						if err := sink.content(string(d.Content)); err != nil {
							return &UpstreamError{Kind: kindCanceled, Err: err}
						}
					}
				}
				if rs := d.ReasoningContent + d.Reasoning; rs != "" {
					reasoning.WriteString(rs)
					got = true
					if sink != nil {
						if err := sink.reasoning(rs); err != nil {
							return &UpstreamError{Kind: kindCanceled, Err: err}
						}
					}
				}
				for _, tc := range d.ToolCalls {
					var a *acc
					switch {
					case tc.Index != nil:
						if *tc.Index < 0 || *tc.Index > maxStreamedCalls {
							return &UpstreamError{Kind: kindLost, Message: fmt.Sprintf("a streamed tool call has index %d", *tc.Index)}
						}
						for len(calls) <= *tc.Index {
							calls = append(calls, &acc{})
						}
						a = calls[*tc.Index]
					case len(calls) == 0 || (tc.ID != "" && calls[len(calls)-1].id != "" && calls[len(calls)-1].id != tc.ID):
						a = &acc{}
						calls = append(calls, a)
					default:
						a = calls[len(calls)-1]
					}
					if sink != nil {
						if err := sink.toolCall(slices.Index(calls, a), tc.ID, tc.Function.Name, string(tc.Function.Arguments)); err != nil {
							return &UpstreamError{Kind: kindCanceled, Err: err}
						}
					}
					if tc.ID != "" {
						a.id = tc.ID
					}
					if tc.Function.Name != "" {
						a.name += tc.Function.Name
					}
					a.args.WriteString(string(tc.Function.Arguments))
					got = true
				}
				if got {
					c.Deltas++
					if c.FirstToken.IsZero() {
						c.FirstToken = u.now()
					}
				}
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				c.FinishReason = *ch.FinishReason
				finished = true
			}
		}
	}
	c.Ended = u.now()
	if c.FirstToken.IsZero() {
		c.FirstToken = c.Ended
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return &UpstreamError{Kind: kindCanceled, Err: ctx.Err()}
		}
		return &UpstreamError{Kind: kindLost, Message: "the connection broke in the middle of the answer", Err: err}
	}
	if ctx.Err() != nil {
		return &UpstreamError{Kind: kindCanceled, Err: ctx.Err()}
	}
	if !done && !finished {
		return &UpstreamError{Kind: kindLost, Message: "the stream ended before the answer did"}
	}
	c.Message = chatMessage{Role: "assistant", Content: content.String(), Reasoning: reasoning.String()}
	for _, a := range calls {
		if a.name == "" && a.id == "" && a.args.Len() == 0 {
			continue
		}
		c.Message.ToolCalls = append(c.Message.ToolCalls, toolCall{ID: a.id, Type: "function",
			Function: toolFunction{Name: a.name, Arguments: a.args.String()}})
	}
	return nil
}

// splitThink moves a leading <think>...</think> block of the content (as
// some reasoning models emit inline) into the reasoning.
func splitThink(m *chatMessage) {
	s := strings.TrimLeft(m.Content, " \t\r\n")
	if !strings.HasPrefix(s, "<think>") {
		return
	}
	end := strings.Index(s, "</think>")
	if end < 0 {
		return
	}
	think := strings.TrimSpace(s[len("<think>"):end])
	if m.Reasoning != "" && think != "" {
		m.Reasoning += "\n"
	}
	m.Reasoning += think
	m.Content = strings.TrimLeft(s[end+len("</think>"):], " \t\r\n")
}
