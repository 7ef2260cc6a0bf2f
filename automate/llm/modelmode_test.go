package llm_test

// Model mode ("service-model") end to end: the official clients (openai-go
// here, the openai npm client through testdata/npm/openai-model-mode.mjs)
// run their own tool loops against the real server and this engine, in
// front of the scripted fake upstream. Checked on the upstream's side: the
// caller's messages and tools arrive as the caller sent them; on the
// caller's side: the upstream's tool calls and answers arrive intact,
// streamed or not.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

const modelID = "service-model"

// sameJSON reports whether a and b encode the same JSON value.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	norm := func(v any) any {
		var raw []byte
		switch x := v.(type) {
		case []byte:
			raw = x
		case json.RawMessage:
			raw = x
		default:
			var err error
			if raw, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		var out any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("not JSON: %s", raw)
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// upstreamField is one top-level field of a request the upstream saw.
func upstreamField(t *testing.T, req seenRequest, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(req.Raw, &m); err != nil {
		t.Fatal(err)
	}
	return m[key]
}

type npmModelSummary struct {
	Whole, Stream struct {
		Sent  [][]json.RawMessage `json:"sent"`
		Calls []struct {
			ID, Name, Arguments string
		} `json:"calls"`
		Final struct {
			Content      string              `json:"content"`
			FinishReason string              `json:"finishReason"`
			Usage        *automate.ChatUsage `json:"usage"`
		} `json:"final"`
		Requests int `json:"requests"`
	}
	Abort struct {
		FreedMs float64 `json:"freedMs"`
		After   string  `json:"after"`
	} `json:"abort"`
	Conflict struct {
		Status    int    `json:"status"`
		Type      string `json:"type"`
		Requests  int    `json:"requests"`
		RunStatus int    `json:"runStatus"`
	} `json:"conflict"`
	Errors []string `json:"errors"`
}

func TestModelModeOpenAINpm(t *testing.T) {
	node := testenv.RequireNode(t)
	testenv.NpmBin(t, "openai/package.json")
	script := filepath.Join(testenv.ModuleRoot(t), testenv.NpmDir, "openai-model-mode.mjs")
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	t.Cleanup(h.eng.CloseIdleConnections) // model mode keeps the upstream connection warm
	block := make(chan bool)
	defer close(block)
	up.script(
		reply{calls: []fakeCall{call("call_w1", "lookup_order", map[string]any{"id": "4471"})}},
		reply{content: "Order 4471 is held: SW-200 is backordered.", usage: usage(60, 9)},
		reply{calls: []fakeCall{call("call_s1", "lookup_order", map[string]any{"id": "4471"})}},
		reply{content: "Streamed: order 4471 is held.", usage: usage(70, 6)},
		// The aborted call may be stopped before its request goes out (the
		// slot is taken first): match keeps the next call off its reply.
		reply{content: "never sent", wait: block, match: "take your time"},
		reply{content: "Free again.", match: "after the abort"},
		reply{content: "never sent", wait: block}, // the run holding the slot
	)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+h.url+"/v1", "OPENAI_API_KEY="+testKey, "MODEL_ID="+modelID)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var s npmModelSummary
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &s); err != nil {
		t.Fatalf("node: %v; stdout %q; stderr %s", runErr, stdout.String(), stderr.String())
	}
	if runErr != nil || len(s.Errors) != 0 {
		t.Fatalf("node: %v; script errors:\n  %s\nstderr %s", runErr, strings.Join(s.Errors, "\n  "), stderr.String())
	}

	// The two loops made 4 upstream requests and the call after the abort
	// one; the aborted call and the run may or may not have reached the
	// upstream before they were stopped (the slot is taken before the
	// request goes out), but none of them was answered.
	seen := up.seen()
	if len(seen) < 5 || len(seen) > 7 {
		t.Fatalf("upstream saw %d requests, want 5 to 7", len(seen))
	}
	for i, loop := range []struct {
		name  string
		calls []struct{ ID, Name, Arguments string }
		sent  [][]json.RawMessage
		final string
		reqs  int
	}{
		{"whole", s.Whole.Calls, s.Whole.Sent, s.Whole.Final.Content, s.Whole.Requests},
		{"stream", s.Stream.Calls, s.Stream.Sent, s.Stream.Final.Content, s.Stream.Requests},
	} {
		wantID := []string{"call_w1", "call_s1"}[i]
		if len(loop.calls) != 1 || loop.calls[0].ID != wantID || loop.calls[0].Name != "lookup_order" || loop.calls[0].Arguments != `{"id":"4471"}` {
			t.Errorf("%s: the caller got calls %+v, want the upstream's %s", loop.name, loop.calls, wantID)
		}
		if want := []string{"Order 4471 is held: SW-200 is backordered.", "Streamed: order 4471 is held."}[i]; loop.final != want {
			t.Errorf("%s: final %q", loop.name, loop.final)
		}
		if loop.reqs != 2 || len(loop.sent) != 2 {
			t.Fatalf("%s: %d requests, %d sent", loop.name, loop.reqs, len(loop.sent))
		}
		// The caller's system prompt and whole history reach the upstream
		// as the caller sent them; the model is the engine's.
		for j := range 2 {
			req := seen[2*i+j]
			if !sameJSON(t, upstreamField(t, req, "messages"), loop.sent[j]) {
				t.Errorf("%s call %d: upstream messages\n %s\nwant the caller's\n %s", loop.name, j, upstreamField(t, req, "messages"), loop.sent[j])
			}
			if req.Model != qwen.name || !req.Stream || !slices.Equal(req.toolNames(), []string{"lookup_order"}) {
				t.Errorf("%s call %d: model %q stream %v tools %v", loop.name, j, req.Model, req.Stream, req.toolNames())
			}
		}
		if !slices.Equal(roles(seen[2*i+1]), []string{"system", "user", "assistant+calls", "tool"}) {
			t.Errorf("%s: second call roles %v", loop.name, roles(seen[2*i+1]))
		}
	}
	if u := s.Stream.Final.Usage; u == nil || u.PromptTokens != 70 || u.CompletionTokens != 6 {
		t.Errorf("streamed usage %+v, want the upstream's", u)
	}
	// Abort: the slot was freed while the upstream still held its answer
	// (block closes only when the test ends), so by the abort and not by
	// an answer; the next call was answered. How fast is measured by
	// BenchmarkModelModeAbortFreesSlot; the script's figure is only logged.
	t.Logf("npm client: the slot was free %.1f ms after the abort (polled on /health)", s.Abort.FreedMs)
	if s.Abort.After != "Free again." {
		t.Errorf("the call after the abort answered %q", s.Abort.After)
	}
	if c := s.Conflict; c.Status != 409 || c.Type != "conflict" || c.Requests != 1 || c.RunStatus != 500 {
		t.Errorf("conflict %+v", c)
	}
	waitAborted(t, up, len(seen)-5)
	if hl := h.health(); hl.Busy {
		t.Errorf("busy after the script: %+v", hl)
	}
}

func waitAborted(t *testing.T, up *fakeUpstream, n int) {
	t.Helper()
	testutil.Until(t, fmt.Sprintf("%d aborted requests at the upstream", n), up.changed.C(),
		func() bool { return up.abortedCount() >= n },
		func() string { return fmt.Sprintf("it saw %d", up.abortedCount()) })
}

func goClient(h *harness) openai.Client {
	return openai.NewClient(option.WithBaseURL(h.url+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}))
}

func goTools() []openai.ChatCompletionToolUnionParam {
	return []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
		Name: "lookup_order", Description: openai.String("Status of an order"),
		Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}},
	})}
}

func TestModelModeOpenAIGo(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	t.Cleanup(h.eng.CloseIdleConnections) // model mode keeps the upstream connection warm
	client := goClient(h)
	ctx := context.Background()
	up.script(
		reply{content: "Let me look.", calls: []fakeCall{call("call_a", "lookup_order", map[string]any{"id": "1"}), call("call_b", "lookup_order", map[string]any{"id": "2"})}},
		reply{content: "Both are held."},
		reply{calls: []fakeCall{call("call_c", "lookup_order", map[string]any{"id": "3"})}, usage: usage(40, 5)},
		reply{content: "Streamed and held.", reasoning: "the order says held", usage: usage(55, 4)},
	)
	sys := "You answer from the orders system only."
	for _, stream := range []bool{false, true} {
		params := openai.ChatCompletionNewParams{
			Model: modelID,
			Messages: []openai.ChatCompletionMessageParamUnion{
				openai.SystemMessage(sys), openai.UserMessage("Earlier question"), openai.AssistantMessage("Earlier answer"),
				openai.UserMessage("Where are my orders?"),
			},
			Tools: goTools(),
		}
		var sent [][]byte
		var final string
		for round := 0; ; round++ {
			if round > 3 {
				t.Fatal("the loop does not end")
			}
			b, _ := json.Marshal(params.Messages)
			sent = append(sent, b)
			var msg openai.ChatCompletionMessage
			var finish string
			if stream {
				params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
				st := client.Chat.Completions.NewStreaming(ctx, params)
				acc := openai.ChatCompletionAccumulator{}
				chunks := 0
				for st.Next() {
					acc.AddChunk(st.Current())
					chunks++
				}
				if err := st.Err(); err != nil {
					t.Fatalf("stream: %v", err)
				}
				if chunks < 4 {
					t.Errorf("only %d chunks: the answer was not streamed in pieces", chunks)
				}
				msg, finish = acc.Choices[0].Message, acc.Choices[0].FinishReason
				if finish == "stop" && (acc.Usage.PromptTokens != 55 || acc.Usage.CompletionTokens != 4) {
					t.Errorf("streamed usage %+v", acc.Usage)
				}
			} else {
				cc, err := client.Chat.Completions.New(ctx, params)
				if err != nil {
					t.Fatal(err)
				}
				if cc.Model != modelID {
					t.Errorf("model %q", cc.Model)
				}
				msg, finish = cc.Choices[0].Message, cc.Choices[0].FinishReason
			}
			if finish != "tool_calls" {
				final = msg.Content
				break
			}
			params.Messages = append(params.Messages, msg.ToParam())
			for _, c := range msg.ToolCalls {
				params.Messages = append(params.Messages, openai.ToolMessage("held: "+c.Function.Arguments, c.ID))
			}
			// The upstream's calls, reassembled by the client.
			want := map[bool][]string{false: {"call_a:{\"id\":\"1\"}", "call_b:{\"id\":\"2\"}"}, true: {"call_c:{\"id\":\"3\"}"}}[stream]
			var got []string
			for _, c := range msg.ToolCalls {
				got = append(got, c.ID+":"+c.Function.Arguments)
				if c.Function.Name != "lookup_order" {
					t.Errorf("call name %q", c.Function.Name)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("stream %v: calls %v, want %v", stream, got, want)
			}
		}
		if want := map[bool]string{false: "Both are held.", true: "Streamed and held."}[stream]; final != want {
			t.Errorf("stream %v: final %q", stream, final)
		}
		base := 0
		if stream {
			base = 2
		}
		callerTools, _ := json.Marshal(params.Tools)
		for j, b := range sent {
			req := up.seen()[base+j]
			if got := upstreamField(t, req, "messages"); !sameJSON(t, got, b) {
				t.Errorf("stream %v call %d: upstream messages %s, want the caller's %s", stream, j, got, b)
			}
			// Only the caller's tools, as sent (no built-in tool added),
			// and the engine's model, not the model-mode id.
			if got := upstreamField(t, req, "tools"); !sameJSON(t, got, callerTools) {
				t.Errorf("stream %v call %d: upstream tools %s, want the caller's %s", stream, j, got, callerTools)
			}
			if req.Model != qwen.name {
				t.Errorf("stream %v call %d: upstream model %q, want the engine's %q", stream, j, req.Model, qwen.name)
			}
		}
		if up.seen()[base].system() != sys {
			t.Errorf("system prompt %q", up.seen()[base].system())
		}
	}
}

// TestModelModeGoCancelAndConflict: a caller that gives up frees the slot
// (the upstream request is aborted with it); a run holding the slot gets
// a model call a 409, which the client does not retry.
func TestModelModeGoCancelAndConflict(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	t.Cleanup(h.eng.CloseIdleConnections) // model mode keeps the upstream connection warm
	client := goClient(h)
	block := make(chan bool)
	defer close(block)
	up.script(reply{content: "never", wait: block}, reply{content: "Free again."}, reply{content: "never", wait: block})

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		st := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: modelID,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("take your time")}})
		for st.Next() {
		}
		errc <- st.Err()
	}()
	up.waitRequests(1)
	h.waitFor("the model call", func(hl automate.Health) bool { return hl.Busy })
	// The upstream holds its answer (block closes when the test ends):
	// only the caller's abort can free the slot. How fast it does is
	// BenchmarkModelModeAbortFreesSlot's figure.
	cancel()
	h.waitFor("the slot freed", func(hl automate.Health) bool { return !hl.Busy })
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("stream error %v", err)
	}
	waitAborted(t, up, 1)
	expectAnswer(t, client, "after the abort", "Free again.")

	runDone := h.runAsync(map[string]any{"prompt": "a long task"})
	h.waitFor("the run", func(hl automate.Health) bool { return hl.Busy })
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: modelID,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 409 || apiErr.Type != "conflict" {
		t.Fatalf("want a 409 conflict, got %v", err)
	}
	h.do("POST", "/v1/automate/cancel", map[string]bool{"force": true})
	if st, _ := receive(t, runDone); st != 500 {
		t.Errorf("run status %d", st)
	}
}

// expectAnswer makes a whole (non-streamed) model call and checks its
// answer.
func expectAnswer(t *testing.T, client openai.Client, prompt, want string) {
	t.Helper()
	cc, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: modelID,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)}})
	if err != nil {
		t.Fatalf("model call %q: %v", prompt, err)
	}
	if got := cc.Choices[0].Message.Content; got != want {
		t.Fatalf("model call %q answered %q, want %q", prompt, got, want)
	}
}

// TestModelModeWholeCallCallerGoesAway: a non-streamed call whose caller
// gives up while the upstream still thinks frees the slot and cancels the
// upstream request; the next call is answered.
func TestModelModeWholeCallCallerGoesAway(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	t.Cleanup(h.eng.CloseIdleConnections) // model mode keeps the upstream connection warm
	client := goClient(h)
	block := make(chan bool)
	defer close(block) // the upstream never answers the first call by itself
	up.script(reply{content: "never", wait: block}, reply{content: "Free again."})

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: modelID,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("take your time")}})
		errc <- err
	}()
	up.waitRequests(1)
	h.waitFor("the model call", func(hl automate.Health) bool { return hl.Busy })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("call error %v", err)
	}
	h.waitFor("the slot freed", func(hl automate.Health) bool { return !hl.Busy })
	waitAborted(t, up, 1)
	expectAnswer(t, client, "after the abort", "Free again.")
}

// TestModelModeSendsThePinnedModel: a model pinned with
// /v1/automate/models/select is the model model mode asks the upstream
// for.
func TestModelModeSendsThePinnedModel(t *testing.T) {
	plain := fakeModel{name: "plain:1b", family: "plain", params: "1B", caps: []string{"completion", "tools"}}
	up := newFakeUpstream(t, "ollama", qwen, plain)
	h := newHarness(t, up.url(), func(o *harnessOpts) { o.engine.Model = qwen.name })
	t.Cleanup(h.eng.CloseIdleConnections)
	h.waitCatalog()
	if r := h.do("POST", "/v1/automate/models/select", map[string]string{"modelName": plain.name}); r.status != 200 {
		t.Fatalf("select: %d %s", r.status, r.body)
	}
	up.script(reply{content: "pinned"})
	r := h.do("POST", "/v1/chat/completions", map[string]any{"model": modelID, "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	var cc automate.ChatCompletion
	if err := json.Unmarshal(r.body, &cc); err != nil || r.status != 200 || cc.Model != modelID {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if seen := up.seen(); len(seen) != 1 || seen[0].Model != plain.name {
		t.Fatalf("the upstream was asked for %+v, want the pinned %s", seen, plain.name)
	}
}

// TestModelModeStreamsWithoutBuffering: the upstream sends its first
// content piece and then holds the rest; the caller gets that piece
// through hubgate before the upstream goes on.
func TestModelModeStreamsWithoutBuffering(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	// No keep-alive comment within the wait: its flush would push out a
	// buffered piece too.
	h := newHarness(t, up.url(), func(o *harnessOpts) { o.server.KeepAlive = time.Hour })
	t.Cleanup(h.eng.CloseIdleConnections)
	release := make(chan bool)
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	up.script(reply{content: "First piece. Then the rest.", pause: release})

	body, _ := json.Marshal(map[string]any{"model": modelID, "stream": true, "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	req, _ := http.NewRequest("POST", h.url+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	// The reader hands over each content delta and, at the end, the whole
	// stream.
	deltas := make(chan string, 16)
	whole := make(chan string, 1)
	go func() {
		var all strings.Builder
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			all.WriteString(line + "\n")
			var c struct {
				Choices []struct{ Delta struct{ Content string } }
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok && json.Unmarshal([]byte(d), &c) == nil {
				for _, ch := range c.Choices {
					if ch.Delta.Content != "" {
						deltas <- ch.Delta.Content
					}
				}
			}
		}
		close(deltas)
		whole <- all.String()
	}()
	first := splitIn("First piece. Then the rest.", 3)[0]
	select {
	case d := <-deltas:
		if d != first {
			t.Fatalf("first content delta %q, want %q", d, first)
		}
	case <-time.After(testutil.DefaultTimeout):
		t.Fatal("the first content piece did not reach the caller while the upstream held the rest: the stream is buffered")
	}
	if len(up.seen()) != 1 || up.remaining() != 0 {
		t.Fatalf("upstream state: %d requests, %d replies left", len(up.seen()), up.remaining())
	}
	released = true
	close(release)
	got := first
	for d := range deltas {
		got += d
	}
	if all := <-whole; got != "First piece. Then the rest." || !strings.HasSuffix(all, "data: [DONE]\n\n") {
		t.Fatalf("content %q; stream:\n%s", got, all)
	}
}

// TestModelModeContextAndUpstreamErrors: too long for the context is a 400
// before the upstream sees it; the upstream's own context refusal is a 400
// too; a lost upstream is a 502; all free the slot.
func TestModelModeContextAndUpstreamErrors(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url(), func(o *harnessOpts) { o.engine.ContextSize = 4096 })
	t.Cleanup(h.eng.CloseIdleConnections)
	long := strings.Repeat("too long ", 3000)
	r := h.do("POST", "/v1/chat/completions", map[string]any{"model": modelID, "messages": []any{map[string]any{"role": "user", "content": long}}})
	var env automate.ErrorEnvelope
	json.Unmarshal(r.body, &env)
	if r.status != 400 || env.Error.Code != "context_length_exceeded" || !strings.Contains(env.Error.Message, "context of 4096 tokens") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if len(up.seen()) != 0 {
		t.Fatal("the upstream saw a request that cannot fit")
	}
	up.script(reply{status: 400, errBody: `{"error":{"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`},
		reply{content: "half", cut: true})
	for _, stream := range []bool{false, true} {
		r = h.do("POST", "/v1/chat/completions", map[string]any{"model": modelID, "stream": stream, "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
		if !stream {
			json.Unmarshal(r.body, &env)
			if r.status != 400 || env.Error.Code != "context_length_exceeded" {
				t.Errorf("upstream context refusal: %d %s", r.status, r.body)
			}
			continue
		}
		// Cut mid-stream: the part the upstream sent arrives, then an
		// error event; no [DONE].
		b := string(r.body)
		part, lost := strings.Index(b, `"content":"ha"`), strings.Index(b, `"code":"SERVER_LOST"`)
		if r.status != 200 || part < 0 || lost < 0 || part > lost || strings.Contains(b, "[DONE]") {
			t.Errorf("lost upstream: want the partial content \"ha\" before the error event: %d %s", r.status, r.body)
		}
	}
	if h.health().Busy {
		t.Error("busy after the errors")
	}
}
