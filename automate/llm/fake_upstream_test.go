package llm_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
)

// fakeUpstream is a real HTTP server speaking the OpenAI chat-completions
// protocol (streamed or not) and, as flavor "ollama", Ollama's catalog
// endpoints. Each chat request takes the next reply of the script (the
// next one that matches it, for replies with match); every request is
// recorded for assertions.
type fakeUpstream struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	flavor   string // "ollama" or "llama" (llama-server: /v1/models owned_by llamacpp, /props)
	models   []fakeModel
	replies  []reply
	requests []seenRequest
	catalogs int           // catalog requests served
	gate     chan struct{} // when set, catalog endpoints wait for it
	ps       []psEntry
	nCtx     int // llama-server /props n_ctx
	aborted  int // chat requests whose client went away while the reply waited

	// changed signals each growth of requests or aborted: the event a
	// test's wait on them wakes on.
	changed testutil.Signal
}

type fakeModel struct {
	name, family, params string
	size                 int64
	caps                 []string // nil: no capabilities field
}

type psEntry struct {
	name          string
	size, vram    int64
	contextLength int
}

// reply is one scripted chat answer.
type reply struct {
	content   string
	reasoning string
	calls     []fakeCall
	finish    string      // default: tool_calls with calls, else stop
	usage     *usageJSON  // nil: none sent
	status    int         // an error answer with errBody
	errBody   string      //
	cut       bool        // stream part of the answer, then kill the connection
	plain     bool        // answer JSON although a stream was asked for
	wait      <-chan bool // block before answering until it is closed (or the request ends)
	pause     <-chan bool // streamed: block after the first content chunk until it is closed (or the request ends)
	check     func(seenRequest)
	match     string // only a request whose last user message is this takes the reply ("": any)
}

type fakeCall struct {
	id, name, args string
	noIndex        bool // stream the call without an index field
}

type usageJSON struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usage(in, out int) *usageJSON {
	return &usageJSON{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out}
}

// seenRequest is a chat request as the fake received it.
type seenRequest struct {
	Model             string        `json:"model"`
	Messages          []seenMessage `json:"messages"`
	Tools             []seenTool    `json:"tools"`
	ToolChoice        string        `json:"tool_choice"`
	ParallelToolCalls *bool         `json:"parallel_tool_calls"`
	Stream            bool          `json:"stream"`
	MaxTokens         int           `json:"max_tokens"`
	ReasoningEffort   string        `json:"reasoning_effort"`
	Authorization     string        `json:"-"`
	Raw               []byte        `json:"-"` // the body as received
}

type seenMessage struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type seenTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

func (r seenRequest) toolNames() []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

func (r seenRequest) system() string {
	if len(r.Messages) > 0 && r.Messages[0].Role == "system" {
		return r.Messages[0].Content
	}
	return ""
}

// toolResult returns the content of the tool message answering id.
func (r seenRequest) toolResult(id string) (string, bool) {
	for _, m := range r.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			return m.Content, true
		}
	}
	return "", false
}

func newFakeUpstream(t testing.TB, flavor string, models ...fakeModel) *fakeUpstream {
	t.Helper()
	f := &fakeUpstream{t: t, flavor: flavor, models: models}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/version", f.ollamaOnly(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]string{"version": "0.12.0-fake"})
	}))
	mux.HandleFunc("GET /api/tags", f.ollamaOnly(f.tags))
	mux.HandleFunc("GET /api/ps", f.ollamaOnly(f.psHandler))
	mux.HandleFunc("GET /v1/models", f.openaiModels)
	mux.HandleFunc("GET /props", func(w http.ResponseWriter, r *http.Request) {
		if f.flavor != "llama" {
			http.NotFound(w, r)
			return
		}
		f.mu.Lock()
		n := f.nCtx
		f.mu.Unlock()
		writeJSON(w, map[string]any{"default_generation_settings": map[string]int{"n_ctx": n}})
	})
	mux.HandleFunc("POST /v1/chat/completions", f.chat)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.close)
	return f
}

func (f *fakeUpstream) url() string { return f.srv.URL }

func (f *fakeUpstream) close() {
	f.srv.CloseClientConnections()
	f.srv.Close()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (f *fakeUpstream) ollamaOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if f.flavor != "ollama" {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}
}

func (f *fakeUpstream) waitGate(r *http.Request) {
	f.mu.Lock()
	g := f.gate
	f.mu.Unlock()
	if g != nil {
		select {
		case <-g:
		case <-r.Context().Done():
		}
	}
}

func (f *fakeUpstream) tags(w http.ResponseWriter, r *http.Request) {
	f.waitGate(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.catalogs++
	var list []map[string]any
	for _, m := range f.models {
		e := map[string]any{"name": m.name, "model": m.name, "size": m.size,
			"details": map[string]any{"family": m.family, "parameter_size": m.params, "quantization_level": "Q4_K_M"}}
		if m.caps != nil {
			e["capabilities"] = m.caps
		}
		list = append(list, e)
	}
	writeJSON(w, map[string]any{"models": list})
}

func (f *fakeUpstream) psHandler(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var list []map[string]any
	for _, p := range f.ps {
		list = append(list, map[string]any{"name": p.name, "model": p.name, "size": p.size, "size_vram": p.vram, "context_length": p.contextLength})
	}
	writeJSON(w, map[string]any{"models": list})
}

func (f *fakeUpstream) openaiModels(w http.ResponseWriter, r *http.Request) {
	f.waitGate(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.catalogs++
	owner := "library"
	if f.flavor == "llama" {
		owner = "llamacpp"
	}
	var data []map[string]any
	for _, m := range f.models {
		data = append(data, map[string]any{"id": m.name, "object": "model", "owned_by": owner})
	}
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

// script appends replies.
func (f *fakeUpstream) script(rs ...reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replies = append(f.replies, rs...)
}

// seen returns the chat requests received so far.
func (f *fakeUpstream) seen() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.requests...)
}

func (f *fakeUpstream) abortedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.aborted
}

// waitRequests waits until n chat requests arrived.
func (f *fakeUpstream) waitRequests(n int) {
	f.t.Helper()
	testutil.Until(f.t, fmt.Sprintf("%d chat requests at the fake upstream", n), f.changed.C(),
		func() bool { return len(f.seen()) >= n },
		func() string { return fmt.Sprintf("it saw %d", len(f.seen())) })
}

func (f *fakeUpstream) remaining() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.replies)
}

func (f *fakeUpstream) chat(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req seenRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, 400)
		return
	}
	req.Authorization = r.Header.Get("Authorization")
	req.Raw = body
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.changed.Notify()
	if len(f.replies) == 0 {
		f.mu.Unlock()
		f.t.Errorf("fake upstream: no scripted reply left for request %d", len(f.requests))
		w.WriteHeader(500)
		io.WriteString(w, `{"error":{"message":"script exhausted"}}`)
		return
	}
	i := slices.IndexFunc(f.replies, func(rp reply) bool { return rp.match == "" || rp.match == lastUser(req) })
	if i < 0 {
		f.mu.Unlock()
		f.t.Errorf("fake upstream: no scripted reply matches request %d (last user message %q)", len(f.requests), lastUser(req))
		w.WriteHeader(500)
		io.WriteString(w, `{"error":{"message":"no reply matches"}}`)
		return
	}
	rp := f.replies[i]
	f.replies = slices.Delete(f.replies, i, i+1)
	f.mu.Unlock()
	if rp.check != nil {
		rp.check(req)
	}
	if rp.wait != nil && !f.hold(r, rp.wait) {
		return
	}
	if rp.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rp.status)
		io.WriteString(w, rp.errBody)
		return
	}
	finish := rp.finish
	if finish == "" {
		finish = "stop"
		if len(rp.calls) > 0 {
			finish = "tool_calls"
		}
	}
	if !req.Stream || rp.plain {
		f.whole(w, req, rp, finish)
		return
	}
	f.stream(w, r, req, rp, finish)
}

// hold blocks until release is closed (true) or the request ends (false,
// counted as aborted).
func (f *fakeUpstream) hold(r *http.Request, release <-chan bool) bool {
	select {
	case <-release:
		return true
	case <-r.Context().Done():
		f.mu.Lock()
		f.aborted++
		f.changed.Notify()
		f.mu.Unlock()
		return false
	}
}

func (f *fakeUpstream) whole(w http.ResponseWriter, req seenRequest, rp reply, finish string) {
	msg := map[string]any{"role": "assistant", "content": rp.content}
	if rp.content == "" && len(rp.calls) > 0 {
		msg["content"] = nil
	}
	if rp.reasoning != "" {
		msg["reasoning_content"] = rp.reasoning
	}
	var calls []map[string]any
	for _, c := range rp.calls {
		calls = append(calls, map[string]any{"id": c.id, "type": "function", "function": map[string]string{"name": c.name, "arguments": c.args}})
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	out := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}}
	if rp.usage != nil {
		out["usage"] = rp.usage
	}
	writeJSON(w, out)
}

// stream sends the answer as server-sent events: content in pieces, each
// tool call as a header chunk and its arguments in two pieces, the finish
// reason, the usage chunk and [DONE]. With cut, the connection dies after
// the first half of the chunks. With pause, it stops after the first
// content chunk (flushed) until pause is closed.
func (f *fakeUpstream) stream(w http.ResponseWriter, r *http.Request, req seenRequest, rp reply, finish string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fl := w.(http.Flusher)
	var chunks []string
	chunk := func(delta map[string]any, fin any) {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}})
		chunks = append(chunks, string(b))
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if rp.reasoning != "" {
		chunk(map[string]any{"reasoning_content": rp.reasoning}, nil)
	}
	pauseAt := -1
	for i, piece := range splitIn(rp.content, 3) {
		if i == 0 {
			pauseAt = len(chunks) + 1 // after the first content chunk
		}
		chunk(map[string]any{"content": piece}, nil)
	}
	for i, c := range rp.calls {
		head := map[string]any{"id": c.id, "type": "function", "function": map[string]string{"name": c.name, "arguments": ""}}
		if !c.noIndex {
			head["index"] = i
		}
		chunk(map[string]any{"tool_calls": []any{head}}, nil)
		for _, piece := range splitIn(c.args, 2) {
			part := map[string]any{"function": map[string]string{"arguments": piece}}
			if !c.noIndex {
				part["index"] = i
			}
			chunk(map[string]any{"tool_calls": []any{part}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	if rp.usage != nil {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": []any{}, "usage": rp.usage})
		chunks = append(chunks, string(b))
	}
	chunks = append(chunks, "[DONE]")
	for i, c := range chunks {
		if rp.cut && i == len(chunks)/2 {
			fl.Flush()
			panic(http.ErrAbortHandler) // the connection dies mid-answer
		}
		if rp.pause != nil && i == pauseAt && !f.hold(r, rp.pause) {
			return
		}
		fmt.Fprintf(w, "data: %s\n\n", c)
		fl.Flush()
	}
}

// splitIn cuts s into n pieces (fewer when s is short); "" gives none.
func splitIn(s string, n int) []string {
	if s == "" {
		return nil
	}
	r := []rune(s)
	size := (len(r) + n - 1) / n
	var out []string
	for i := 0; i < len(r); i += size {
		out = append(out, string(r[i:min(i+size, len(r))]))
	}
	return out
}

// call builds a fakeCall with JSON-encoded arguments.
func call(id, name string, args any) fakeCall {
	if s, ok := args.(string); ok {
		return fakeCall{id: id, name: name, args: s}
	}
	b, _ := json.Marshal(args)
	return fakeCall{id: id, name: name, args: string(b)}
}

func lastUser(req seenRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}

func hasTool(req seenRequest, name string) bool {
	for _, n := range req.toolNames() {
		if n == name {
			return true
		}
	}
	return false
}

var _ = strings.Contains
