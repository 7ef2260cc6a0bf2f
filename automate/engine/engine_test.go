package engine

import (
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/llm"
	"github.com/hubgate/hubgate/automate/scripted"
)

func TestNewChoosesTheEngine(t *testing.T) {
	e, err := New(Options{Catalog: []automate.ModelOption{{Name: "only"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Assistant.(*scripted.Engine); !ok || e.McpServers != nil {
		t.Errorf("the default engine: %T %v", e.Assistant, e.McpServers)
	}
	e.Close()

	var asked []string
	e, err = New(Options{Kind: "openai", OpenAI: llm.Config{Upstream: "http://127.0.0.1:1", Model: "m"}, APIKeyEnv: "HUBGATE_TEST_ENGINE_KEY",
		McpServers: []string{"files"}, Getenv: func(k string) string { asked = append(asked, k); return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Assistant.(*llm.Engine); !ok || len(e.McpServers) != 1 || e.McpServers[0] != "files" || len(asked) != 1 || asked[0] != "HUBGATE_TEST_ENGINE_KEY" {
		t.Errorf("openai: %T %v, variables read %v", e.Assistant, e.McpServers, asked)
	}
	e.Close()

	if _, err := New(Options{Kind: "gpt"}); err == nil || !strings.Contains(err.Error(), `unknown automate.engine "gpt"`) {
		t.Errorf("an unknown engine: %v", err)
	}
}
