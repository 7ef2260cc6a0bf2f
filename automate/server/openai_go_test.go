package server_test

// Black-box tests of POST /v1/chat/completions driven by the official Go
// client github.com/openai/openai-go/v3 against the real server and the
// real scripted engine: the caller-executed tool loop (one round, several
// rounds, parallel calls), the `service` extension, how a 409 and a
// failed run surface through the client, and the newer contract's model
// mode (the modes of /v1/models, a caller-owned loop on service-model). Every client is built with
// WithMaxRetries(0) as the spec asks of callers, and with an http.Client
// whose transport counts the requests that really reach the wire.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/hubgate/hubgate/automate"
)

// countingTransport counts the requests that reach the wire (every retry
// of the SDK included) and keeps their bodies.
type countingTransport struct {
	n      atomic.Int32
	mu     sync.Mutex
	bodies [][]byte
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.bodies = append(c.bodies, b)
		c.mu.Unlock()
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (c *countingTransport) body(i int) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i >= len(c.bodies) {
		return nil
	}
	return c.bodies[i]
}

// openaiClient builds the official client against the harness: base URL
// with the /v1/ prefix, the bearer key, no automatic retries, a client
// timeout well above any run of these tests.
func openaiClient(h *harness, extra ...option.RequestOption) (openai.Client, *countingTransport) {
	ct := &countingTransport{}
	opts := []option.RequestOption{
		option.WithBaseURL(h.url + "/v1/"),
		option.WithAPIKey(h.key),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: ct, Timeout: 2 * time.Minute}),
	}
	return openai.NewClient(append(opts, extra...)...), ct
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// serviceOf reads the `service` extension (the RunRecord) from a raw
// chat-completion body.
func serviceOf(t *testing.T, raw string) automate.RunRecord {
	t.Helper()
	var body struct {
		Service *automate.RunRecord `json:"service"`
	}
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	if body.Service == nil {
		t.Fatalf("no service record in %s", raw)
	}
	return *body.Service
}

func functionTool(name, description string, params map[string]any) openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        name,
		Description: openai.String(description),
		Parameters:  shared.FunctionParameters(params),
	})
}

var (
	weatherTool = functionTool("get_weather", "Current weather of a city", map[string]any{
		"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"},
	})
	timeTool = functionTool("get_time", "Current time in a time zone", map[string]any{
		"type": "object", "properties": map[string]any{"tz": map[string]any{"type": "string"}},
	})
)

// executeTool is the caller side of the loop: it really reads the
// arguments the server sent, so a result names what it was asked.
func executeTool(t *testing.T, call openai.ChatCompletionMessageToolCallUnion) string {
	t.Helper()
	if call.Type != "function" {
		t.Fatalf("tool call type %q", call.Type)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(call.Function.Arguments), &args); err != nil {
		t.Fatalf("arguments of %s are not a JSON object string: %q", call.Function.Name, call.Function.Arguments)
	}
	switch call.Function.Name {
	case "get_weather":
		return fmt.Sprintf("%s: 21C, clear sky (measured by the caller)", args["city"])
	case "get_time":
		return fmt.Sprintf("14:05 in %s (caller clock)", args["tz"])
	}
	t.Fatalf("unexpected tool %q", call.Function.Name)
	return ""
}

func TestOpenAIGoToolLoop(t *testing.T) {
	h := newHarness(t)
	client, wire := openaiClient(h)
	ctx := testCtx(t)

	params := openai.ChatCompletionNewParams{
		Model: "service-agent",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("Answer in one sentence."),
			openai.UserMessage("What is the weather in Oslo?\n#!tool get_weather {\"city\":\"Oslo\"}\n#!answer Oslo is clear today."),
		},
		Tools: []openai.ChatCompletionToolUnionParam{weatherTool},
	}
	first, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatalf("first request: %v", err)
	}
	if len(first.Choices) != 1 || first.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("want one choice with finish_reason tool_calls: %s", first.RawJSON())
	}
	msg := first.Choices[0].Message
	if len(msg.ToolCalls) != 1 {
		t.Fatalf("tool calls: %s", first.RawJSON())
	}
	call := msg.ToolCalls[0]
	if call.ID == "" || call.Function.Name != "get_weather" || call.Function.Arguments != `{"city":"Oslo"}` {
		t.Fatalf("tool call %s", call.RawJSON())
	}
	parked := serviceOf(t, first.RawJSON())
	if parked.Status != automate.StatusAwaitingToolResults || first.ID != parked.RequestID || len(parked.ToolCalls) != 1 {
		t.Fatalf("parked record: %s", first.RawJSON())
	}
	if hl := h.health(); !hl.Busy || !hl.AwaitingToolResults {
		t.Errorf("health while parked: busy %v awaiting %v", hl.Busy, hl.AwaitingToolResults)
	}

	// Execute the tool, send the history back as the client has it.
	result := executeTool(t, call)
	params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage(result, call.ID))
	final, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatalf("second request: %v", err)
	}
	if final.Choices[0].FinishReason != "stop" || final.Choices[0].Message.Content != "Oslo is clear today." || len(final.Choices[0].Message.ToolCalls) != 0 {
		t.Fatalf("final answer: %s", final.RawJSON())
	}
	if final.ID != first.ID {
		t.Errorf("the tool results started run %s instead of resuming %s", final.ID, first.ID)
	}
	rec := serviceOf(t, final.RawJSON())
	if rec.Status != automate.StatusCompleted || len(rec.Steps) != 2 {
		t.Fatalf("final record: %s", final.RawJSON())
	}
	st := rec.Steps[0]
	if st.ToolName != "get_weather" || st.Status != automate.StepSuccess || string(st.ToolArgs) != `{"city":"Oslo"}` {
		t.Errorf("tool step %+v", st)
	}
	if !strings.Contains(st.ResultSummary, result) {
		t.Errorf("the caller's result did not reach the run: resultSummary %q, want it to contain %q", st.ResultSummary, result)
	}
	if final.Usage.TotalTokens != final.Usage.PromptTokens+final.Usage.CompletionTokens || final.Usage.PromptTokens == 0 {
		t.Errorf("usage %+v", final.Usage)
	}
	if n := wire.n.Load(); n != 2 {
		t.Errorf("requests on the wire = %d, want 2", n)
	}
	// What the client sent back: the assistant message as it got it, and a
	// tool message naming the call id unchanged.
	var sent struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(wire.body(1), &sent); err != nil {
		t.Fatalf("second request body: %v", err)
	}
	if m := sent.Messages; len(m) != 4 || m[2].Role != "assistant" || len(m[2].ToolCalls) != 1 || m[2].ToolCalls[0].ID != call.ID ||
		m[3].Role != "tool" || m[3].ToolCallID != call.ID {
		t.Errorf("second request messages: %s", wire.body(1))
	}
	if hl := h.health(); hl.Busy || hl.AwaitingToolResults {
		t.Errorf("health after the run: busy %v awaiting %v", hl.Busy, hl.AwaitingToolResults)
	}
}

// toolLoop drives the loop until the run stops asking for tools; it
// returns every round's tool calls and the final completion. The history
// grows the way an OpenAI caller keeps it.
func toolLoop(t *testing.T, ctx context.Context, client openai.Client, params openai.ChatCompletionNewParams,
	answer func([]openai.ChatCompletionMessageToolCallUnion) []openai.ChatCompletionMessageParamUnion,
) ([][]openai.ChatCompletionMessageToolCallUnion, *openai.ChatCompletion) {
	t.Helper()
	var rounds [][]openai.ChatCompletionMessageToolCallUnion
	for range 10 {
		cc, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatalf("round %d: %v", len(rounds)+1, err)
		}
		if len(cc.Choices) != 1 {
			t.Fatalf("choices: %s", cc.RawJSON())
		}
		msg := cc.Choices[0].Message
		if cc.Choices[0].FinishReason != "tool_calls" {
			if len(msg.ToolCalls) != 0 {
				t.Fatalf("tool calls with finish_reason %q", cc.Choices[0].FinishReason)
			}
			return rounds, cc
		}
		if rec := serviceOf(t, cc.RawJSON()); rec.Status != automate.StatusAwaitingToolResults {
			t.Fatalf("finish_reason tool_calls with service.status %q", rec.Status)
		}
		rounds = append(rounds, msg.ToolCalls)
		params.Messages = append(params.Messages, msg.ToParam())
		params.Messages = append(params.Messages, answer(msg.ToolCalls)...)
	}
	t.Fatal("the run still asks for tools after 10 rounds")
	return nil, nil
}

func TestOpenAIGoToolLoopSeveralRounds(t *testing.T) {
	h := newHarness(t)
	client, wire := openaiClient(h)
	ctx := testCtx(t)
	params := openai.ChatCompletionNewParams{
		Model: "service-agent",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(
			"Compare two cities\n#!tool get_weather {\"city\":\"Oslo\"}\n#!tool get_weather {\"city\":\"Bergen\"}\n#!tool get_time {\"tz\":\"Europe/Oslo\"}\n#!answer compared")},
		Tools: []openai.ChatCompletionToolUnionParam{weatherTool, timeTool},
	}
	var results []string
	rounds, final := toolLoop(t, ctx, client, params, func(calls []openai.ChatCompletionMessageToolCallUnion) []openai.ChatCompletionMessageParamUnion {
		var msgs []openai.ChatCompletionMessageParamUnion
		for _, c := range calls {
			r := executeTool(t, c)
			results = append(results, r)
			msgs = append(msgs, openai.ToolMessage(r, c.ID))
		}
		return msgs
	})
	if len(rounds) != 3 {
		t.Fatalf("rounds = %d, want 3", len(rounds))
	}
	seen := map[string]bool{}
	for i, want := range []string{`{"city":"Oslo"}`, `{"city":"Bergen"}`, `{"tz":"Europe/Oslo"}`} {
		if len(rounds[i]) != 1 || rounds[i][0].Function.Arguments != want {
			t.Fatalf("round %d calls: %+v", i+1, rounds[i])
		}
		if seen[rounds[i][0].ID] {
			t.Errorf("tool call id %q reused in round %d", rounds[i][0].ID, i+1)
		}
		seen[rounds[i][0].ID] = true
	}
	if final.Choices[0].Message.Content != "compared" {
		t.Errorf("final content %q", final.Choices[0].Message.Content)
	}
	rec := serviceOf(t, final.RawJSON())
	if rec.Status != automate.StatusCompleted || len(rec.Steps) != 4 {
		t.Fatalf("record: %s", final.RawJSON())
	}
	for i, r := range results {
		if st := rec.Steps[i]; st.Status != automate.StepSuccess || !strings.Contains(st.ResultSummary, r) {
			t.Errorf("step %d: status %s resultSummary %q, want %q", i+1, st.Status, st.ResultSummary, r)
		}
	}
	if n := wire.n.Load(); n != 4 {
		t.Errorf("requests on the wire = %d, want 4", n)
	}
}

func TestOpenAIGoParallelToolCalls(t *testing.T) {
	h := newHarness(t)
	client, _ := openaiClient(h)
	ctx := testCtx(t)
	params := openai.ChatCompletionNewParams{
		Model: "service-agent",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(
			`Weather and time at once` + "\n" +
				`#!tools [{"name":"get_weather","arguments":{"city":"Tromsø"}},{"name":"get_time","arguments":{"tz":"Europe/Oslo"}}]` + "\n" +
				`#!answer both known`)},
		Tools: []openai.ChatCompletionToolUnionParam{weatherTool, timeTool},
	}
	byName := map[string]string{}
	rounds, final := toolLoop(t, ctx, client, params, func(calls []openai.ChatCompletionMessageToolCallUnion) []openai.ChatCompletionMessageParamUnion {
		var msgs []openai.ChatCompletionMessageParamUnion
		// Answer in reverse order: results match by id, not by position.
		for i := len(calls) - 1; i >= 0; i-- {
			r := executeTool(t, calls[i])
			byName[calls[i].Function.Name] = r
			msgs = append(msgs, openai.ToolMessage(r, calls[i].ID))
		}
		return msgs
	})
	if len(rounds) != 1 || len(rounds[0]) != 2 {
		t.Fatalf("want one round of two calls, got %d rounds: %+v", len(rounds), rounds)
	}
	if rounds[0][0].ID == rounds[0][1].ID {
		t.Errorf("both calls share id %q", rounds[0][0].ID)
	}
	if rounds[0][0].Function.Name != "get_weather" || rounds[0][0].Function.Arguments != `{"city":"Tromsø"}` ||
		rounds[0][1].Function.Name != "get_time" || rounds[0][1].Function.Arguments != `{"tz":"Europe/Oslo"}` {
		t.Errorf("calls %s / %s", rounds[0][0].RawJSON(), rounds[0][1].RawJSON())
	}
	rec := serviceOf(t, final.RawJSON())
	if rec.Status != automate.StatusCompleted || final.Choices[0].Message.Content != "both known" || len(rec.Steps) != 3 {
		t.Fatalf("final: %s", final.RawJSON())
	}
	for _, st := range rec.Steps[:2] {
		if want := byName[st.ToolName]; want == "" || st.Status != automate.StepSuccess || !strings.Contains(st.ResultSummary, want) {
			t.Errorf("step %s (%s): status %s resultSummary %q, want %q", st.ID, st.ToolName, st.Status, st.ResultSummary, want)
		}
	}
}

func TestOpenAIGoServiceExtension(t *testing.T) {
	h := newHarness(t)
	ctx := testCtx(t)
	contract := "End with FINAL ANSWER: <one word>"
	prompt := "Will it rain?\n#!answer The front arrives at noon. Final answer: maybe. FINAL ANSWER: rain"

	// Through option.WithJSONSet on the request.
	client, _ := openaiClient(h)
	cc, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "service-agent",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
	}, option.WithJSONSet("service", map[string]any{"answerContract": contract, "include": map[string]bool{"events": false, "trace": false}}))
	if err != nil {
		t.Fatal(err)
	}
	rec := serviceOf(t, cc.RawJSON())
	if got := cc.Choices[0].Message.Content; strings.TrimSpace(got) != "rain" || rec.FinalAnswer == nil || *rec.FinalAnswer != got {
		t.Errorf("content %q finalAnswer %v", got, rec.FinalAnswer)
	}
	if rec.Answer != "The front arrives at noon. Final answer: maybe. FINAL ANSWER: rain" {
		t.Errorf("service.answer %q", rec.Answer)
	}
	var raw struct{ Service map[string]json.RawMessage }
	json.Unmarshal([]byte(cc.RawJSON()), &raw)
	for k, want := range map[string]bool{"events": false, "trace": false, "steps": true} {
		if _, ok := raw.Service[k]; ok != want {
			t.Errorf("service.%s present = %v, want %v", k, ok, want)
		}
	}
	if len(rec.Trace) != 0 {
		t.Errorf("trace sent although include.trace was false")
	}

	// Through the params' extra fields, in a tool loop: the contract is the
	// run's, so the resumed answer is the finalAnswer too.
	params := openai.ChatCompletionNewParams{
		Model: "service-agent",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(
			"Weather?\n#!tool get_weather {\"city\":\"Oslo\"}\n#!answer Looked it up. FINAL ANSWER: clear")},
		Tools: []openai.ChatCompletionToolUnionParam{weatherTool},
	}
	params.SetExtraFields(map[string]any{"service": map[string]any{"answerContract": contract}})
	_, final := toolLoop(t, ctx, client, params, func(calls []openai.ChatCompletionMessageToolCallUnion) []openai.ChatCompletionMessageParamUnion {
		return []openai.ChatCompletionMessageParamUnion{openai.ToolMessage(executeTool(t, calls[0]), calls[0].ID)}
	})
	rec = serviceOf(t, final.RawJSON())
	if got := final.Choices[0].Message.Content; strings.TrimSpace(got) != "clear" || rec.Answer != "Looked it up. FINAL ANSWER: clear" {
		t.Errorf("content %q answer %q", got, rec.Answer)
	}
	// The contract reached the system prompt.
	var sys struct{ Content string }
	if len(rec.Trace) == 0 || json.Unmarshal(rec.Trace[0], &sys) != nil || !strings.Contains(sys.Content, contract) {
		t.Errorf("contract not in the system prompt: %q", sys.Content)
	}
}

// apiError unwraps the client's API error and reads its response body.
func apiError(t *testing.T, err error) (*openai.Error, []byte) {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %T %v is not an *openai.Error", err, err)
	}
	if apiErr.Response == nil {
		t.Fatal("API error without a response")
	}
	body, rerr := io.ReadAll(apiErr.Response.Body)
	if rerr != nil {
		t.Fatal(rerr)
	}
	return apiErr, body
}

func TestOpenAIGoConflictIsNotRetried(t *testing.T) {
	h := newHarness(t)
	ctx := testCtx(t)
	// Park a run: it holds the slot.
	holder, _ := openaiClient(h)
	parked, err := holder.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "service-agent",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hold\n#!tool get_weather {\"city\":\"Oslo\"}")},
		Tools:    []openai.ChatCompletionToolUnionParam{weatherTool},
	})
	if err != nil || parked.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("park: %v", err)
	}
	t.Cleanup(func() { h.do("POST", "/v1/automate/cancel", map[string]bool{"force": true}) })
	fresh := openai.ChatCompletionNewParams{
		Model:    "service-agent",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("another task")},
	}

	for _, c := range []struct {
		name string
		opts []option.RequestOption
	}{
		{"maxRetries 0", nil},
		// The client's default would retry a 409 twice; the server's
		// x-should-retry: false keeps it at one request.
		{"default retries", []option.RequestOption{option.WithMaxRetries(2)}},
	} {
		client, wire := openaiClient(h, c.opts...)
		_, err := client.Chat.Completions.New(ctx, fresh)
		if err == nil {
			t.Fatalf("%s: a second run was accepted while one is parked", c.name)
		}
		apiErr, body := apiError(t, err)
		if apiErr.StatusCode != 409 || apiErr.Type != "conflict" ||
			!strings.HasPrefix(apiErr.Message, "The on-device assistant is already running or preparing (") {
			t.Errorf("%s: status %d type %q message %q; body %s", c.name, apiErr.StatusCode, apiErr.Type, apiErr.Message, body)
		}
		if n := wire.n.Load(); n != 1 {
			t.Errorf("%s: requests on the wire = %d, want exactly 1", c.name, n)
		}
	}
	// The parked run was not disturbed.
	if hl := h.health(); !hl.AwaitingToolResults || hl.ActiveRequestID == nil || *hl.ActiveRequestID != parked.ID {
		t.Errorf("health after the 409s: %+v", hl)
	}
}

// TestOpenAIGoCountsRetries is the control of the counting transport: the
// same client setup does count the SDK's retries when a server allows them
// (a bare 409 without x-should-retry), so the "exactly one" above is real.
func TestOpenAIGoCountsRetries(t *testing.T) {
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "10")
		w.WriteHeader(409)
		io.WriteString(w, `{"error":{"message":"busy","type":"conflict"}}`)
	}))
	defer stub.Close()
	h := &harness{url: stub.URL, key: testKey}
	client, wire := openaiClient(h, option.WithMaxRetries(2))
	_, err := client.Chat.Completions.New(testCtx(t), openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")},
	})
	if err == nil {
		t.Fatal("no error from a 409")
	}
	if n := wire.n.Load(); n != 3 {
		t.Errorf("requests on the wire = %d, want 3 (one try and two retries)", n)
	}
}

func TestOpenAIGoFailedRunIsAnError(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		name string
		opts []option.RequestOption
	}{
		{"maxRetries 0", nil},
		// A retried 500 would start a duplicate run: x-should-retry: false.
		{"default retries", []option.RequestOption{option.WithMaxRetries(2)}},
	} {
		client, wire := openaiClient(h, c.opts...)
		_, err := client.Chat.Completions.New(testCtx(t), openai.ChatCompletionNewParams{
			Model:    "service-agent",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Try it\n#!fail EXECUTION_FAILED")},
		})
		if err == nil {
			t.Fatalf("%s: a failed run came back without an error", c.name)
		}
		apiErr, body := apiError(t, err)
		if apiErr.StatusCode != 500 {
			t.Errorf("%s: status %d", c.name, apiErr.StatusCode)
		}
		var cc struct {
			Object  string             `json:"object"`
			ID      string             `json:"id"`
			Service automate.RunRecord `json:"service"`
		}
		if err := json.Unmarshal(body, &cc); err != nil {
			t.Fatalf("%s: body %s: %v", c.name, body, err)
		}
		if cc.Object != "chat.completion" || cc.Service.SchemaVersion != 1 || cc.Service.Status != automate.StatusFailed ||
			cc.Service.ErrorCode != "EXECUTION_FAILED" || cc.ID != cc.Service.RequestID {
			t.Errorf("%s: body %s", c.name, body)
		}
		if n := wire.n.Load(); n != 1 {
			t.Errorf("%s: requests on the wire = %d, want exactly 1", c.name, n)
		}
	}
}

// TestOpenAIGoNewerModelMode is the newer vendor contract through the
// official client: each /v1/models entry's mode, and the caller's own
// loop on "service-model" (the caller keeps the history; the server
// keeps nothing between turns).
func TestOpenAIGoNewerModelMode(t *testing.T) {
	h := newHarness(t)
	client, ct := openaiClient(h)
	ctx := testCtx(t)
	page, err := client.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]string{}
	for _, m := range page.Data {
		modes[m.ID] = m.JSON.ExtraFields["mode"].Raw()
	}
	if want := map[string]string{"service-agent": `"assistant"`, "service-model": `"model"`}; fmt.Sprint(modes) != fmt.Sprint(want) {
		t.Errorf("modes %v, want %v", modes, want)
	}
	msgs := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("You answer with the weather tool."),
		openai.UserMessage(`#!tool get_weather {"city":"Bergen"}`),
	}
	first, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "service-model", Messages: msgs,
		Tools: []openai.ChatCompletionToolUnionParam{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	calls := first.Choices[0].Message.ToolCalls
	if first.Choices[0].FinishReason != "tool_calls" || len(calls) != 1 || calls[0].Function.Name != "get_weather" {
		t.Fatalf("first turn %s", first.RawJSON())
	}
	msgs = append(msgs, first.Choices[0].Message.ToParam(), openai.ToolMessage(executeTool(t, calls[0]), calls[0].ID))
	second, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "service-model", Messages: msgs,
		Tools: []openai.ChatCompletionToolUnionParam{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	if got := second.Choices[0].Message.Content; got != "Tool results: Bergen: 21C, clear sky (measured by the caller)" ||
		second.Choices[0].FinishReason != "stop" {
		t.Errorf("second turn %s", second.RawJSON())
	}
	// Three requests, none retried; the whole history (4 messages) went
	// out on the second turn (the second body: the list had none).
	if n := ct.n.Load(); n != 3 {
		t.Errorf("%d requests reached the wire, want 3", n)
	}
	var sent struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(ct.body(1), &sent); err != nil || len(sent.Messages) != 4 {
		t.Errorf("second turn sent %d messages (%v)", len(sent.Messages), err)
	}
}
