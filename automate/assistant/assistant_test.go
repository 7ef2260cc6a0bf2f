package assistant

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

func TestReviewDestructive(t *testing.T) {
	for _, c := range []struct {
		tool   string
		allow  bool
		reject bool
	}{
		{"delete_path", false, true}, {"run_command", false, true}, {"move_path", false, true},
		{"delete_path", true, false}, {"run_command", true, false},
		{"write_file", false, false}, {"read_file", false, false},
	} {
		err := (&Task{AllowDestructiveTools: c.allow}).ReviewDestructive(c.tool)
		var pe *PolicyError
		if got := errors.As(err, &pe); got != c.reject {
			t.Errorf("%s allow=%v: %v", c.tool, c.allow, err)
		}
		if c.reject && !strings.HasPrefix(err.Error(), "Rejected by Automate HTTP server policy") {
			t.Errorf("message %q", err)
		}
	}
}

func TestReviewMCP(t *testing.T) {
	servers := []automate.InlineMcpServer{{Name: "gated", RequireApproval: true}, {Name: "open"}}
	if err := (&Task{McpServers: servers}).ReviewMCP("gated", "echo"); err == nil ||
		!strings.HasPrefix(err.Error(), PolicyRejectionPrefix) || !strings.Contains(err.Error(), "mcp__gated__echo") {
		t.Errorf("gated without approval: %v", err)
	}
	if err := (&Task{McpServers: servers, AllowDestructiveTools: true}).ReviewMCP("gated", "echo"); err != nil {
		t.Errorf("gated with approval: %v", err)
	}
	if err := (&Task{McpServers: servers}).ReviewMCP("open", "echo"); err != nil {
		t.Errorf("open server: %v", err)
	}
}

func TestAnswerUserInput(t *testing.T) {
	q := UserInputRequest{Fields: []UserInputField{{ID: "city", Required: true}, {ID: "tags", Multi: true}, {ID: "note"}}}
	task := &Task{HITLAnswers: map[string]any{"city": "Oslo", "tags": []string{"a"}, "stray": "x"}}
	got, err := task.AnswerUserInput(q)
	if err != nil || got["city"] != "Oslo" || len(got) != 2 {
		t.Fatalf("answers %v %v", got, err)
	}
	if _, ok := got["stray"]; ok {
		t.Error("a key the question did not ask for was kept")
	}
	for _, answers := range []map[string]any{nil, {"city": ""}, {"city": []string{}}, {"tags": "a"}} {
		_, err := (&Task{HITLAnswers: answers}).AnswerUserInput(q)
		if !errors.Is(err, ErrUserInputMissing) || !strings.Contains(err.Error(), `"city"`) {
			t.Errorf("answers %v: %v", answers, err)
		}
	}
}

func TestSystemPromptPutsTheContractLast(t *testing.T) {
	contract := "End with FINAL ANSWER: <n>"
	p := (&Task{AdditionalWorkflowPrompt: "Prefer metric.", AnswerContract: &contract}).SystemPrompt("", "skill text")
	if !strings.HasPrefix(p, BasePrompt) || !strings.HasSuffix(p, contract) {
		t.Errorf("prompt %q", p)
	}
	if i, j := strings.Index(p, "skill text"), strings.Index(p, "Prefer metric."); i < 0 || j < i {
		t.Errorf("section order: %q", p)
	}
	if p := (&Task{}).SystemPrompt("base"); p != "base" {
		t.Errorf("bare prompt %q", p)
	}
	var m map[string]any
	if err := json.Unmarshal(TraceMessage("tool", "r", map[string]any{"tool_call_id": "c"}), &m); err != nil || m["tool_call_id"] != "c" || m["role"] != "tool" {
		t.Errorf("trace message %v %v", m, err)
	}
}
