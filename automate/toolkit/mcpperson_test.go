package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askerPool connects to the SDK server of testdata/mcpasker over stdio.
func askerPool(t *testing.T, elicit func(context.Context, McpElicitation) (McpElicitResult, error)) *McpPool {
	t.Helper()
	bin := testenv.GoBuild(t, "./automate/toolkit/testdata/mcpasker")
	srv := automate.InlineMcpServer{Name: "asker", Description: "d", Transport: "stdio", Command: bin}
	pool := ConnectMcp(context.Background(), []automate.InlineMcpServer{srv}, McpConfig{Elicit: elicit})
	t.Cleanup(func() { pool.Close() })
	if errs := pool.Errors(); len(errs) != 0 {
		t.Fatalf("connect: %v", errs)
	}
	return pool
}

func TestMcpNegotiatesTheSDKsNewestProtocol(t *testing.T) {
	pool := askerPool(t, nil)
	if got, want := pool.ProtocolVersion("asker"), mcp.SupportedProtocolVersions()[0]; got != want {
		t.Fatalf("negotiated %q, want the SDK's newest %q", got, want)
	}
	// The npm reference server negotiates what it speaks, one of the SDK's.
	ev := ConnectMcp(context.Background(), []automate.InlineMcpServer{stdioEverything(t, "ev")}, McpConfig{})
	defer ev.Close()
	if v := ev.ProtocolVersion("ev"); !strings.HasPrefix(v, "20") || !contains(mcp.SupportedProtocolVersions(), v) {
		t.Fatalf("server-everything negotiated %q", v)
	}
	t.Logf("server-everything negotiated %s", ev.ProtocolVersion("ev"))
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestMcpElicitationWithoutAPersonIsDeclined(t *testing.T) {
	pool := askerPool(t, nil)
	res, err := pool.Call(context.Background(), "asker", "ask", nil)
	if err != nil || res.Text != "declined" {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestMcpElicitationAsksThePerson(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	answer := automate.TextResult("call_1", "Ada")
	var askErr error
	ask := func(_ context.Context, args json.RawMessage) (automate.ToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, string(args))
		return answer, askErr
	}
	pool := askerPool(t, ElicitByAsking(ask))
	for _, tc := range []struct {
		name   string
		answer automate.ToolResult
		err    error
		want   string
	}{
		{"accepted", automate.TextResult("c", "Ada"), nil, "hello Ada"},
		{"declined", automate.TextResult("c", "Decline"), nil, "declined"},
		{"no answer", automate.TextResult("c", automate.AskPersonNoAnswer+"the person did not answer within 100 s."), nil, "cancelled"},
		{"ask failed", automate.ToolResult{}, errors.New("the run ended"), "cancelled"},
		{"tool error", automate.ToolResult{ID: "c", Error: "ask_person: another question is pending"}, nil, "cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			answer, askErr, asked = tc.answer, tc.err, nil
			mu.Unlock()
			res, err := pool.Call(context.Background(), "asker", "ask", nil)
			if err != nil || res.Text != tc.want {
				t.Fatalf("%+v %v, want %q", res, err, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || !strings.Contains(asked[0], `"question":"The MCP server asker asks: What is your name?"`) {
				t.Fatalf("asked %q", asked)
			}
		})
	}
}

func TestElicitByAskingForms(t *testing.T) {
	var args json.RawMessage
	reply := ""
	elicit := ElicitByAsking(func(_ context.Context, a json.RawMessage) (automate.ToolResult, error) {
		args = a
		return automate.TextResult("c", reply), nil
	})
	for _, tc := range []struct {
		schema, reply string
		action        string
		content       map[string]any
		choices       string
	}{
		{`{"type":"object","properties":{"ok":{"type":"boolean"}}}`, "yes", ElicitAccept, map[string]any{"ok": true}, `["yes","no","decline"]`},
		{`{"type":"object","properties":{"size":{"type":"string","enum":["S","M"]}}}`, "m", ElicitAccept, map[string]any{"size": "M"}, `["S","M","decline"]`},
		{`{"type":"object","properties":{"size":{"type":"string","enum":["S","M"]}}}`, "XL", ElicitDecline, nil, `["S","M","decline"]`},
		{`{"type":"object","properties":{"n":{"type":"integer"}}}`, "42", ElicitAccept, map[string]any{"n": int64(42)}, ``},
		{`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}}}`, `{"a":"x","b":2}`, ElicitAccept, map[string]any{"a": "x", "b": 2.0}, ``},
		{`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}}}`, `x and 2`, ElicitDecline, nil, ``},
	} {
		reply = tc.reply
		got, err := elicit(context.Background(), McpElicitation{Server: "s", Message: "m", Mode: "form", Schema: json.RawMessage(tc.schema)})
		if err != nil || got.Action != tc.action || !jsonEqual(got.Content, tc.content) {
			t.Errorf("%s %q: %+v %v", tc.schema, tc.reply, got, err)
		}
		var a struct{ Choices json.RawMessage }
		json.Unmarshal(args, &a)
		if string(a.Choices) != tc.choices {
			t.Errorf("%s: choices %s, want %s", tc.schema, a.Choices, tc.choices)
		}
	}
	if ElicitByAsking(nil) != nil {
		t.Fatal("no ask must mean no elicitation handler (declined at once)")
	}
}

func jsonEqual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestMcpProgressReachesTheCaller(t *testing.T) {
	pool := askerPool(t, nil)
	var mu sync.Mutex
	var got []string
	ctx := WithMcpProgress(context.Background(), func(p McpProgress) {
		mu.Lock()
		got = append(got, p.Server+"/"+p.Tool+" "+p.String())
		mu.Unlock()
	})
	res, err := pool.Call(ctx, "asker", "steps", nil)
	if err != nil || res.Text != "done" {
		t.Fatalf("%+v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"asker/steps 1/3 step 1", "asker/steps 2/3 step 2", "asker/steps 3/3 step 3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("progress %q, want %q", got, want)
	}
	// Without WithMcpProgress no token is sent, and nothing is reported.
	if res, err := pool.Call(context.Background(), "asker", "steps", nil); err != nil || res.Text != "done" {
		t.Fatalf("%+v %v", res, err)
	}
}
