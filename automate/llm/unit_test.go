package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
)

func TestClassifyHTTP(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		kind   errKind
		msg    string
	}{
		{"llama-server context", 400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`, kindContext, "the request exceeds the available context size, try increasing it (exceed_context_size_error)"},
		{"vllm context", 400, `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError"}`, kindContext, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."},
		{"lm studio context", 400, `{"error":"Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens"}`, kindContext, ""},
		{"generic too long", 413, `prompt is too long`, kindContext, "prompt is too long"},
		{"ollama not found", 404, `{"error":{"message":"model \"x:1b\" not found, try pulling it first","type":"api_error"}}`, kindModel, ""},
		{"openai no such model", 404, `{"error":{"message":"The model ` + "`gpt-x`" + ` does not exist","type":"invalid_request_error"}}`, kindModel, ""},
		{"ollama runner load", 500, `{"error":"llama runner process has terminated: error loading model: bad file"}`, kindModel, ""},
		{"server error", 500, `{"error":{"message":"internal"}}`, kindLost, "internal"},
		{"bad gateway", 502, `<html>bad gateway</html>`, kindLost, "<html>bad gateway</html>"},
		{"tools unsupported", 400, `{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools"}}`, kindRejected, "registry.ollama.ai/library/gemma:2b does not support tools"},
		{"fastapi detail", 422, `{"detail":[{"msg":"field required"}]}`, kindRejected, `[{"msg":"field required"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := classifyHTTP(tc.status, []byte(tc.body))
			if e.Kind != tc.kind || e.Status != tc.status {
				t.Fatalf("kind %v status %d, want %v", e.Kind, e.Status, tc.kind)
			}
			if tc.msg != "" && e.Message != tc.msg {
				t.Fatalf("message %q, want %q", e.Message, tc.msg)
			}
		})
	}
	long := strings.Repeat("x", 5000)
	if e := classifyHTTP(500, []byte(long)); len([]rune(e.Message)) > maxMessage+1 {
		t.Fatalf("message not bounded: %d", len(e.Message))
	}
}

// TestErrorCodeMapping: each kind of upstream failure becomes its
// workflow error code, "at start" and "mid-run" told apart by whether the
// upstream answered in this run.
func TestErrorCodeMapping(t *testing.T) {
	tests := []struct {
		err       error
		answered  bool
		code      string
		canceled  bool
		runBudget bool
	}{
		{&UpstreamError{Kind: kindUnreachable, Err: errors.New("connection refused")}, false, automate.ErrorModelLoadFailed, false, false},
		{&UpstreamError{Kind: kindUnreachable, Err: errors.New("connection refused")}, true, automate.ErrorServerLost, false, false},
		{&UpstreamError{Kind: kindLost, Message: "cut"}, false, automate.ErrorServerLost, false, false},
		{&UpstreamError{Kind: kindContext, Status: 400}, true, automate.ErrorContextLimitExceeded, false, false},
		{&UpstreamError{Kind: kindModel, Status: 404}, false, automate.ErrorModelLoadFailed, false, false},
		{&UpstreamError{Kind: kindRejected, Status: 400}, false, automate.ErrorExecutionFailed, false, false},
		{errors.New("odd"), false, automate.ErrorExecutionFailed, false, false},
		{&UpstreamError{Kind: kindCanceled, Err: context.Canceled}, true, "", true, false},
		{&UpstreamError{Kind: kindCanceled, Err: context.DeadlineExceeded}, true, automate.ErrorExecutionTimeout, false, true},
	}
	for i, tc := range tests {
		e := New(Config{Logger: slog.New(slog.DiscardHandler), Upstream: "http://127.0.0.1:1"})
		parent, cancelParent := context.WithCancel(context.Background())
		r := &run{e: e, parent: parent, ctx: parent, log: e.log, res: &assistant.Result{}, gotAnswer: tc.answered, w: &worker{}}
		var ctx context.Context = parent
		switch {
		case tc.canceled:
			cancelParent()
		case tc.runBudget:
			c, cancel := context.WithTimeoutCause(parent, time.Nanosecond, errRunBudget)
			defer cancel()
			<-c.Done()
			ctx = c
		}
		r.ctx = ctx
		res, err := r.upstreamFailed(tc.err)
		if tc.canceled {
			if err == nil || res.Status != automate.StatusCanceled {
				t.Errorf("%d: canceled -> %v %+v", i, err, res)
			}
		} else if err != nil || res.Status != automate.StatusFailed || res.ErrorCode != tc.code {
			t.Errorf("%d: %v -> %v %s %s", i, tc.err, err, res.Status, res.ErrorCode)
		}
		cancelParent()
		e.Close()
	}
}

func newTestUpstream(url string) *upstream {
	return &upstream{root: rootURL(url), hc: &http.Client{}, now: time.Now, log: slog.New(slog.DiscardHandler), dialRetries: 2, retryWait: 10 * time.Millisecond}
}

// TestStreamParsing: deltas without an index, arguments sent as an
// object, reasoning fields, think tags, usage in the last chunk, and a
// stream that stops early.
func TestStreamParsing(t *testing.T) {
	var body atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body.Load().(string))
	}))
	defer srv.Close()
	u := newTestUpstream(srv.URL + "/v1/")
	chat := func(stream string) (*completion, error) {
		body.Store(stream)
		return u.chat(context.Background(), chatRequest{Model: "m", Stream: true})
	}

	c, err := chat(`: keep-alive
data: {"choices":[{"delta":{"role":"assistant","reasoning":"plan "}}]}

data: {"choices":[{"delta":{"content":"<think>hidden</think>Let me check."}}]}

data: {"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"th\":\"x\"}"}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"list_dir","arguments":{"path":"."}}}]}}]}

data: {"choices":[{"delta":{},"finish_reason":"stop"}]}

data: {"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7}}

data: [DONE]

`)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Message
	if m.Content != "Let me check." || m.Reasoning != "plan \nhidden" {
		t.Errorf("content %q reasoning %q", m.Content, m.Reasoning)
	}
	if len(m.ToolCalls) != 2 || m.ToolCalls[0].ID != "a" || m.ToolCalls[0].Function.Arguments != `{"path":"x"}` ||
		m.ToolCalls[1].Function.Name != "list_dir" || m.ToolCalls[1].Function.Arguments != `{"path":"."}` {
		t.Errorf("tool calls %+v", m.ToolCalls)
	}
	if c.FinishReason != "stop" || c.Usage == nil || c.Usage.PromptTokens != 11 || c.Usage.CompletionTokens != 7 || c.Deltas != 5 {
		t.Errorf("finish %q usage %+v deltas %d", c.FinishReason, c.Usage, c.Deltas)
	}

	// Ended before the answer did: the server is lost.
	_, err = chat("data: {\"choices\":[{\"delta\":{\"content\":\"half\"}}]}\n\n")
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != kindLost {
		t.Errorf("early end: %v", err)
	}
	// An error inside the stream is classified like an answer.
	_, err = chat("data: {\"error\":{\"message\":\"context length exceeded\"}}\n\n")
	if !errors.As(err, &ue) || ue.Kind != kindContext {
		t.Errorf("in-stream error: %v", err)
	}
	// Garbage.
	_, err = chat("data: {not json\n\n")
	if !errors.As(err, &ue) || ue.Kind != kindLost {
		t.Errorf("garbage: %v", err)
	}
	// A clean end with a finish reason but without [DONE] is accepted.
	if c, err = chat("data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\n"); err != nil || c.Message.Content != "ok" {
		t.Errorf("no [DONE]: %v %+v", err, c)
	}
}

// TestDialRetries: a refused connection is tried again (nothing was sent)
// and then reported unreachable; a server that takes the connection late
// is reached. The dialer refuses the first dials itself, so the attempts
// are counted, not timed, and no other program can take the port.
func TestDialRetries(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, `{"data":[]}`)
	}))
	defer srv.Close()
	var dials, refuse atomic.Int32
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		if dials.Add(1) <= refuse.Load() {
			return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused")}
		}
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	defer tr.CloseIdleConnections()
	u := newTestUpstream(srv.URL)
	u.hc = &http.Client{Transport: tr}
	u.retryWait = time.Millisecond

	// Every dial refused: 1 + dialRetries attempts, then unreachable.
	refuse.Store(1 << 20)
	var v any
	err := u.getJSON(context.Background(), "/v1/models", &v)
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != kindUnreachable {
		t.Fatalf("err %v", err)
	}
	if n := dials.Load(); n != int32(1+u.dialRetries) {
		t.Errorf("dials %d, want %d (1 + %d retries)", n, 1+u.dialRetries, u.dialRetries)
	}
	if strings.Contains(err.Error(), "http://") {
		t.Errorf("error carries the URL: %v", err)
	}
	if hits.Load() != 0 {
		t.Errorf("a refused dial reached the server %d times", hits.Load())
	}

	// The server comes up between attempts: the third dial connects.
	dials.Store(0)
	refuse.Store(2)
	u.dialRetries = 5
	if err := u.getJSON(context.Background(), "/v1/models", &v); err != nil {
		t.Fatal(err)
	}
	if n := dials.Load(); n != 3 {
		t.Errorf("dials %d, want 3", n)
	}
	if hits.Load() != 1 {
		t.Errorf("requests served %d, want 1", hits.Load())
	}
}

// TestNoRetryAfterTheRequestWasSent: a chat request whose connection broke
// after it was sent is not repeated.
func TestNoRetryAfterTheRequestWasSent(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		panic(http.ErrAbortHandler)
	}))
	defer srv.Close()
	u := newTestUpstream(srv.URL)
	_, err := u.chat(context.Background(), chatRequest{Model: "m", Stream: true})
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != kindLost || hits.Load() != 1 {
		t.Fatalf("err %v hits %d", err, hits.Load())
	}
}

func TestRootURLAndThink(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:11434":       "http://127.0.0.1:11434",
		"http://127.0.0.1:11434/":      "http://127.0.0.1:11434",
		"http://127.0.0.1:8080/v1":     "http://127.0.0.1:8080",
		"http://127.0.0.1:8080/v1/":    "http://127.0.0.1:8080",
		"https://h.example/proxy/v1":   "https://h.example/proxy",
		"https://h.example/proxy/v10/": "https://h.example/proxy/v10",
	} {
		if got := rootURL(in); got != want {
			t.Errorf("rootURL(%q) = %q", in, got)
		}
	}
	m := chatMessage{Content: "  <think>\nstep 1\n</think>\n\nAnswer"}
	splitThink(&m)
	if m.Content != "Answer" || m.Reasoning != "step 1" {
		t.Errorf("%+v", m)
	}
	m = chatMessage{Content: "<think>never closed"}
	splitThink(&m)
	if m.Content != "<think>never closed" {
		t.Errorf("%+v", m)
	}
}

func TestThinkingParams(t *testing.T) {
	for _, tc := range []struct {
		level, effort string
		in, tokens    int
	}{
		{"", "", 4096, 4096}, {"low", "low", 4096, 4096}, {"medium", "medium", 4096, 4096},
		{"high", "high", 4096, 4096}, {"max", "high", 4096, 16384}, {"max", "high", -1, 0}, {"bogus", "", 100, 100},
	} {
		effort, tokens := ThinkingParams(tc.level, tc.in)
		if effort != tc.effort || tokens != tc.tokens {
			t.Errorf("%q/%d -> %q %d", tc.level, tc.in, effort, tokens)
		}
	}
}

func TestValidateArgs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer","minimum":1},"tags":{"type":"array","items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`)
	tl := newTool("t", kindBuiltin, "", schema)
	if tl.schemaErr != nil {
		t.Fatal(tl.schemaErr)
	}
	for _, tc := range []struct {
		args, want, err string
	}{
		{`{"path":"a"}`, `{"path":"a"}`, ""},
		{` { "path" : "a", "n": 3, "tags": ["x"] } `, `{"path":"a","n":3,"tags":["x"]}`, ""},
		{`{"path":"a","n":0}`, "", "minimum"},
		{`{"path":"a","n":1.5}`, "", "integer"},
		{`{"n":2}`, "", "path"},
		{`{"path":"a","extra":1}`, "", "extra"},
		{`{"path":`, "", "not valid JSON"},
		{`["path"]`, "", "must be a JSON object"},
		{`{"path":"a"} {"path":"b"}`, "", "more than one JSON value"},
		{``, "", "path"},
	} {
		got, err := tl.validateArgs(tc.args)
		if tc.err == "" {
			if err != nil || string(got) != tc.want {
				t.Errorf("%s -> %s %v", tc.args, got, err)
			}
			continue
		}
		var se *SchemaError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s -> %v, want an error about %q", tc.args, err, tc.err)
		}
	}
	// No schema: any object; "" and null are {}.
	free := newTool("free", kindClient, "", nil)
	for _, a := range []string{"", "null", "{}"} {
		if got, err := free.validateArgs(a); err != nil || string(got) != "{}" {
			t.Errorf("%q -> %s %v", a, got, err)
		}
	}
	// Draft-07 and unknown $schema values still validate.
	d7 := newTool("d7", kindMCP, "", json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","required":["q"]}`))
	if _, err := d7.validateArgs(`{}`); err == nil {
		t.Errorf("draft-07 schema not enforced (%v)", d7.schemaErr)
	}
	d4 := newTool("d4", kindMCP, "", json.RawMessage(`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","required":["q"]}`))
	if _, err := d4.validateArgs(`{}`); err == nil {
		t.Errorf("draft-04 schema not enforced (%v)", d4.schemaErr)
	}
	// A schema that cannot be resolved is not enforced (but arguments must
	// still be an object).
	remote := newTool("r", kindMCP, "", json.RawMessage(`{"$ref":"https://example.com/schema.json"}`))
	if remote.schemaErr == nil {
		t.Errorf("remote ref resolved?")
	}
	if _, err := remote.validateArgs(`{"any":1}`); err != nil {
		t.Errorf("unenforced schema rejected %v", err)
	}
}

func TestParseAndLoadSkills(t *testing.T) {
	s, err := ParseSkill("x", []byte("\xef\xbb\xbf---\r\nname: Weekly report\r\ndescription: >\r\n  Write the weekly report\r\n---\r\n\r\nStep one.\r\nStep two.\r\n"))
	if err != nil || s.Name != "Weekly report" || s.Description != "Write the weekly report" || s.Instructions != "Step one.\nStep two." {
		t.Fatalf("%+v %v", s, err)
	}
	if s.Prompt() != "Weekly report: Write the weekly report\n\nStep one.\nStep two." {
		t.Errorf("prompt %q", s.Prompt())
	}
	s, err = ParseSkill("plain", []byte("Just instructions."))
	if err != nil || s.Name != "plain" || s.Description != "" || s.Instructions != "Just instructions." {
		t.Errorf("%+v %v", s, err)
	}
	if _, err := ParseSkill("bad", []byte("---\nname: x\nno end")); err == nil {
		t.Errorf("unclosed front matter accepted")
	}

	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "folder-skill"), 0o755)
	os.WriteFile(filepath.Join(dir, "folder-skill", "SKILL.md"), []byte("---\nname: F\n---\nbody"), 0o644)
	os.MkdirAll(filepath.Join(dir, "not-a-skill"), 0o755)
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("A"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ignored"), 0o644)
	os.WriteFile(filepath.Join(dir, ".hidden.md"), []byte("ignored"), 0o644)
	os.WriteFile(filepath.Join(dir, "huge.md"), []byte(strings.Repeat("x", maxSkillFileBytes+1)), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.md"), []byte("---\nname: [x\n---\n"), 0o644)
	skills, problems := LoadSkills(dir)
	var ids []string
	for _, s := range skills {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, []string{"a", "folder-skill"}) || len(problems) != 2 {
		t.Errorf("ids %v problems %v", ids, problems)
	}
	if _, problems := LoadSkills(filepath.Join(dir, "missing")); len(problems) != 1 {
		t.Errorf("missing folder: %v", problems)
	}
}

// TestRelevanceSelection pins the documented rule.
func TestRelevanceSelection(t *testing.T) {
	if got := terms("The Files, filing and FILED reports; a summary of summaries!"); !got["fil"] || !got["report"] || !got["summary"] || got["the"] || got["a"] || len(got) != 3 {
		t.Errorf("terms %v", got)
	}
	for in, want := range map[string]string{"emails": "email", "boxes": "box", "classes": "class", "class": "class", "writing": "writ",
		"write": "writ", "summaries": "summary", "notes": "not", "used": "used", "reading": "read", "bus": "bus"} {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
	cands := []candidate{
		{id: "folder-report", name: "Folder report", description: "Summarise the files of a folder", chars: 100},
		{id: "email", name: "Email drafting", description: "Draft polite emails", chars: 100},
		{id: "files-2", name: "Misc", description: "files and folders", chars: 100},
		{id: "invoices", name: "Invoices", description: "Extract totals", chars: 100},
		{id: "huge", name: "Report folder files", description: "", chars: 5000},
	}
	q := "Write a report about the files in this folder"
	sel := selectCandidates(cands, nil, q, 3, 1000)
	// folder-report: name folder,report (2+2) + description files (1) = 5;
	// files-2: files, folders (1+1) = 2; huge would score 6 but does not fit.
	if !slices.Equal(sel.IDs, []string{"folder-report", "files-2"}) || sel.Scores["huge"] != 6 || sel.Scores["folder-report"] != 5 || sel.Scores["email"] != 0 {
		t.Errorf("selection %v scores %v", sel.IDs, sel.Scores)
	}
	// Selected ids first (unknown ignored), counted against the budget.
	sel = selectCandidates(cands, []string{"invoices", "nope", "invoices"}, q, 2, 0)
	if !slices.Equal(sel.IDs, []string{"invoices", "huge"}) {
		t.Errorf("with selected %v", sel.IDs)
	}
	sel = selectCandidates(cands, []string{"invoices", "email"}, q, 1, 0)
	if !slices.Equal(sel.IDs, []string{"invoices", "email"}) {
		t.Errorf("selected beyond the budget %v", sel.IDs)
	}
	// Ties by id; a single description word is not enough.
	sel = selectCandidates([]candidate{{id: "b", name: "Zeta"}, {id: "a", name: "Zeta"}, {id: "c", description: "zeta"}}, nil, "zeta", 5, 0)
	if !slices.Equal(sel.IDs, []string{"a", "b"}) {
		t.Errorf("ties %v", sel.IDs)
	}
}

func TestCatalogHelpers(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for in, want := range map[string]*float64{"7.6B": f(7.6), "494.03M": f(0.49), "1.5b": f(1.5), "": nil, "big": nil, "2T": f(2000)} {
		got := parseParamSize(in)
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("parseParamSize(%q) = %v", in, got)
		}
	}
	for in, want := range map[string]*float64{"qwen2.5:7b": f(7), "Qwen/Qwen2.5-0.5B-Instruct": f(0.5), "llama-3.1-8b-instruct-q4_k_m.gguf": f(8),
		"smollm:135m": f(0.14), "mistral-small": nil, "phi3:mini": nil} {
		got := paramsFromName(in)
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("paramsFromName(%q) = %v", in, got)
		}
	}
	for in, want := range map[string]string{"qwen2.5:7b": "qwen2.5", "/models/Llama-3.1-8B.gguf": "llama", "mistral": "mistral", "gpt_oss:20b": "gpt"} {
		if got := familyFromName(in); got != want {
			t.Errorf("familyFromName(%q) = %q", in, got)
		}
	}
	for p, want := range map[float64]string{0.5: "S", 3.9: "S", 4: "M", 9.9: "M", 14: "L", 32: "XL", 99: "XL", 100: "XXL", 405: "XXL"} {
		if got := SizeCode(&p); got != want {
			t.Errorf("SizeCode(%v) = %s", p, got)
		}
	}
	if SizeCode(nil) != "" {
		t.Error("unknown size")
	}
	gib := uint64(1 << 30)
	for _, tc := range []struct {
		size   int64
		params *float64
		ram    uint64
		local  bool
		want   bool
	}{
		{5 << 30, nil, 8 * gib, true, true},    // 6 GiB needed
		{7 << 30, nil, 8 * gib, true, false},   // 8.4 GiB needed
		{0, f(70), 32 * gib, true, false},      // 42 GB * 1.2
		{0, f(14), 32 * gib, true, true},       // 8.4 GB * 1.2
		{0, nil, 8 * gib, true, true},          // unknown size
		{500 << 30, nil, 8 * gib, false, true}, // remote upstream
		{500 << 30, nil, 0, true, true},        // unknown RAM
	} {
		if got := AvailableFor(tc.size, tc.params, tc.ram, tc.local); got != tc.want {
			t.Errorf("AvailableFor(%d, %v, %d, %v) = %v", tc.size, tc.params, tc.ram, tc.local, got)
		}
	}
	if !isLoopbackURL("http://localhost:11434") || !isLoopbackURL("http://[::1]:1") || isLoopbackURL("http://10.0.0.2:8000") {
		t.Error("isLoopbackURL")
	}
}

// TestMergeCatalog: the upstream's models first by name, then known ones
// it does not serve; a known entry fills what the upstream leaves unknown.
func TestMergeCatalog(t *testing.T) {
	yes, no := true, false
	p7 := 7.0
	snap := &snapshot{models: []upModel{
		{name: "a:7b", tools: &yes},
		{name: "b", tools: &no, sizeBytes: 100 << 20},
		{name: "c"},
	}}
	sz := 4000.0
	known := []automate.ModelOption{
		{Name: "C", Family: "fam-c", ParameterCountBillions: &p7, FileSizeMb: &sz, SupportsTools: false},
		{Name: "z:70b", SupportsTools: true},
	}
	got := mergeCatalog(snap, known, 16<<30, true)
	var names []string
	for _, m := range got {
		names = append(names, m.Name)
	}
	if !slices.Equal(names, []string{"a:7b", "b", "c", "z:70b"}) {
		t.Fatalf("names %v", names)
	}
	if a := got[0]; a.Family != "a" || a.SizeCode != "M" || !a.SupportsTools || !a.Downloaded || a.FileSizeMb != nil {
		t.Errorf("a %+v", a)
	}
	if b := got[1]; b.SupportsTools || *b.FileSizeMb != 100 {
		t.Errorf("b %+v", b)
	}
	if c := got[2]; c.Family != "fam-c" || *c.ParameterCountBillions != 7 || *c.FileSizeMb != 4000 || !c.SupportsTools || !c.Downloaded {
		t.Errorf("c (known fills unknowns; tool capability unknown to the upstream counts as true) %+v", c)
	}
	if z := got[3]; z.Downloaded || z.SizeCode != "XL" || z.AvailableForDevice || z.Family != "z" {
		t.Errorf("z %+v", z)
	}
	if got := mergeCatalog(nil, nil, 0, true); got == nil || len(got) != 0 {
		t.Errorf("empty merge %v", got)
	}
}

// TestStorePersistence: atomic private writes, and a new engine
// continues the stored conversation.
func TestStorePersistence(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "conv.json")
	turns := []turn{{RequestID: "r1", Prompt: "p1", Answer: "a1", Status: "completed", At: time.Unix(100, 0).UTC()}}
	if err := saveStore(p, turns); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	got, err := loadStore(p)
	if err != nil || len(got) != 1 || got[0] != turns[0] {
		t.Fatalf("%+v %v", got, err)
	}
	if got, err := loadStore(filepath.Join(t.TempDir(), "none.json")); err != nil || got != nil {
		t.Errorf("missing store: %v %v", got, err)
	}
	os.WriteFile(p, []byte(`{"version":7,"turns":[]}`), 0o600)
	if _, err := loadStore(p); err == nil {
		t.Errorf("unknown version accepted")
	}
	os.WriteFile(p, []byte(`{garbage`), 0o600)
	e := New(Config{ConversationStore: p, Upstream: "http://127.0.0.1:1", Logger: slog.New(slog.DiscardHandler)})
	defer e.Close()
	if len(e.conv.History()) != 0 {
		t.Errorf("a garbage store gave history")
	}

	// Continuation across engine instances, at the engine level.
	saveStore(p, []turn{{Prompt: "p1", Answer: "a1"}, {Prompt: "p2", Answer: "a2"}})
	e2 := New(Config{ConversationStore: p, Upstream: "http://127.0.0.1:1", Logger: slog.New(slog.DiscardHandler), MaxHistoryTurns: 2})
	defer e2.Close()
	w := e2.conv.Start("m")
	prior := e2.conv.Begin(w, true)
	if len(prior) != 4 || prior[0].Content != "p1" || prior[3].Content != "a2" || prior[3].Role != "assistant" {
		t.Fatalf("rebuilt %+v", prior)
	}
	e2.endConversation(w, []chatMessage{{Role: "user", Content: "p3"}, {Role: "assistant", Content: "a3"}}, turn{Prompt: "p3", Answer: "a3"})
	got, _ = loadStore(p)
	if len(got) != 2 || got[0].Prompt != "p2" || got[1].Prompt != "p3" {
		t.Errorf("store after a third turn with MaxHistoryTurns 2: %+v", got)
	}
	if th := e2.conv.Thread(w); len(th) != 4 || th[0].Content != "p2" {
		t.Errorf("thread trimmed to 2 turns: %+v", th)
	}
}

func TestHTMLText(t *testing.T) {
	got := htmlText("<html><head><title>x</title><style>p{}</style></head><body><p>One&amp;two</p>\n\n\n<div>three<br>four</div><script>evil()</script></body></html>")
	if got != "One&two\n\nthree\nfour" {
		t.Errorf("%q", got)
	}
}

// TestContextSizeRule: with no configured size and no upstream answer,
// Runtime reports the RAM rule (assistant.ContextSizeForRAM) over
// Config.TotalMemory.
func TestContextSizeRule(t *testing.T) {
	for ram, want := range map[uint64]int{0: 4096, 2 << 30: 4096, 16 << 30: 16384, 512 << 30: 131072} {
		e := New(Config{Upstream: "http://127.0.0.1:1", Logger: slog.New(slog.DiscardHandler),
			TotalMemory: func() uint64 { return ram }})
		if cs := e.Runtime().ContextSize; cs == nil || *cs != want {
			t.Errorf("RAM %d: context size %v, want %d", ram, cs, want)
		}
		e.Close()
	}
}
