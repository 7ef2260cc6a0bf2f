package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

// checkDecodeError fails unless err is nil or a 400 answer with a message.
func checkDecodeError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ae *apiError
	if !errors.As(err, &ae) || !errors.Is(err, errInvalidRequest) || ae.msg == "" {
		t.Fatalf("decode error %v (%T) is not a 400 answer", err, err)
	}
}

var fuzzSeeds = []string{
	`{"prompt":"hi"}`,
	`{"prompt":"x","timeoutMs":1000.5,"include":{"steps":false,"trace":null},"answerContract":"FINAL ANSWER: n"}`,
	`{"prompt":"x","mcpServers":[{"name":"a-b","description":"d","transport":"http","url":"http://127.0.0.1:1/mcp","headers":{"k":"v"}}]}`,
	`{"prompt":"x","mcpServers":[{"name":"s","description":"d","transport":"stdio","command":"node","args":["a"],"env":{"A":"1"},"disabledTools":["x"]}]}`,
	`{"prompt":"x","clientTools":[{"name":"t","description":"d","parameters":{"type":"object"}}],"hitlAnswers":{"a":"b","c":["d"]}}`,
	`{"prompt":"x","timeoutMs":1e308}`, `{"prompt":"x","timeoutMs":-1}`, `{"prompt":"\u0000"}`,
	`{"messages":[{"role":"system","content":[{"type":"text","text":"s"}]},{"role":"user","content":"u"},{"role":"tool","tool_call_id":"call_1__rt_ab","content":null}],"tools":[{"type":"function","function":{"name":"f"}}],"service":{"thinkingLevel":"max","include":{}}}`,
	`{"results":[{"id":"call_1","result":{"a":1}},{"id":"x","error":"e"}]}`,
	`[]`, `null`, `{`, ``, `"s"`, `{"prompt":{"a":1}}`, `{"messages":[null,1,"x"]}`,
}

// FuzzDecodeRequests feeds arbitrary bodies to every decoder of the
// routes: none may panic, and each either accepts or answers a 400 with a
// message.
func FuzzDecodeRequests(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := decodeObject(body, false)
		checkDecodeError(t, err)
		if err != nil {
			return
		}
		spec, err := decodeRunRequest(o, []string{"files"})
		checkDecodeError(t, err)
		if err == nil {
			if strings.TrimSpace(spec.task.Prompt) == "" {
				t.Fatal("accepted a blank prompt")
			}
			if spec.timeoutMs < 1000 || spec.timeoutMs > maxTimeoutMs {
				t.Fatalf("accepted timeoutMs %d", spec.timeoutMs)
			}
			if len(spec.task.McpServers) > 8 || len(spec.task.ClientTools) > 32 {
				t.Fatal("accepted too many servers or tools")
			}
			for _, s := range spec.task.McpServers {
				if automate.McpServerNameProblem(s.Name) != "" || s.Name == "files" {
					t.Fatalf("accepted MCP server name %q", s.Name)
				}
			}
		}
		cr, err := decodeChatRequest(o, "service", nil)
		checkDecodeError(t, err)
		if err == nil && cr.userContent == nil && strings.TrimSpace(cr.spec.task.Prompt) == "" {
			t.Fatal("chat accepted a blank prompt")
		}
		results, err := decodeResults(o)
		checkDecodeError(t, err)
		for _, r := range results {
			if r.ID == "" {
				t.Fatal("accepted a result without id")
			}
		}
	})
}

// FuzzFinalAnswer checks the marker rule against a plain reference.
func FuzzFinalAnswer(f *testing.F) {
	for _, s := range []string{"a FINAL ANSWER: b", "final answer:x final answer: y", "İ final ANSWER:z", "", "FINAL ANSWER:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		got := extractFinalAnswer(answer)
		// Reference: ASCII-lowercase copy keeps byte offsets.
		lower := []byte(answer)
		for i, c := range lower {
			if 'A' <= c && c <= 'Z' {
				lower[i] = c + 'a' - 'A'
			}
		}
		want := strings.TrimSpace(answer)
		if i := strings.LastIndex(string(lower), finalMarker); i >= 0 {
			want = strings.TrimSpace(answer[i+len(finalMarker):])
		}
		if got != want {
			t.Fatalf("extractFinalAnswer(%q) = %q, want %q", answer, got, want)
		}
	})
}

func FuzzUnfoldToolCallID(f *testing.F) {
	f.Add("call_1", "rt_0123")
	f.Add("a__rt_b", "rt_c")
	f.Fuzz(func(t *testing.T, call, token string) {
		// The server mints "rt_" + hex (newResumeToken): no '_' after the
		// prefix, so the last "__rt_" of a folded id is the token's own.
		if !strings.HasPrefix(token, "rt_") || strings.Contains(token[3:], "_") || call == "" {
			return
		}
		c, tok, ok := unfoldToolCallID(foldToolCallID(call, token))
		if !ok || c != call || tok != token {
			t.Fatalf("fold/unfold(%q, %q) = %q, %q, %v", call, token, c, tok, ok)
		}
	})
}

// The fold's property above holds for the tokens the server mints: "rt_"
// and hex, whatever the call id holds.
func TestMintedResumeTokensUnfold(t *testing.T) {
	for range 100 {
		tok := newResumeToken()
		if !strings.HasPrefix(tok, "rt_") || strings.Contains(tok[3:], "_") {
			t.Fatalf("minted token %q", tok)
		}
		for _, call := range []string{"call_1", "a__rt_b", "x__"} {
			if c, got, ok := unfoldToolCallID(foldToolCallID(call, tok)); !ok || c != call || got != tok {
				t.Fatalf("fold/unfold(%q, %q) = %q, %q, %v", call, tok, c, got, ok)
			}
		}
	}
}
