package llm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

// TestLiveUpstream runs the engine against a real model server. It is
// skipped unless HUBGATE_TEST_UPSTREAM_URL is set, for example
//
//	HUBGATE_TEST_UPSTREAM_URL=http://127.0.0.1:11434 HUBGATE_TEST_UPSTREAM_MODEL=qwen3:8b \
//	  go test -run TestLiveUpstream -v ./automate/llm/
//
// HUBGATE_TEST_UPSTREAM_MODEL picks the model (default: the first
// tool-capable one); HUBGATE_TEST_UPSTREAM_API_KEY is sent as a bearer
// token when set. The model must call read_file to learn a word that is
// only in a file of the workspace.
func TestLiveUpstream(t *testing.T) {
	url := os.Getenv("HUBGATE_TEST_UPSTREAM_URL")
	if url == "" {
		t.Skip("set HUBGATE_TEST_UPSTREAM_URL (and optionally HUBGATE_TEST_UPSTREAM_MODEL) to run against a real model server")
	}
	h := newHarness(t, url, func(o *harnessOpts) {
		o.engine.Model = os.Getenv("HUBGATE_TEST_UPSTREAM_MODEL")
		o.engine.APIKey = os.Getenv("HUBGATE_TEST_UPSTREAM_API_KEY")
	})
	c := h.waitCatalog()
	t.Logf("catalog: %d models", len(c.Data))
	for _, m := range c.Data {
		t.Logf("  %s family=%s size=%s tools=%v downloaded=%v available=%v selected=%v", m.Name, m.Family, m.SizeCode, m.SupportsTools, m.Downloaded, m.AvailableForDevice, m.Selected)
	}
	os.WriteFile(filepath.Join(h.workspace, "notes.txt"), []byte("The secret word is pineapple.\n"), 0o644)
	status, rec := h.run(map[string]any{
		"prompt":              "The file notes.txt in the workspace holds a secret word. Read it with the read_file tool and tell me the word.",
		"answerContract":      "Close with a line of the form FINAL ANSWER: <the word, lower case>",
		"restrictToWorkspace": true,
		"include":             map[string]bool{"events": false},
	})
	t.Logf("status %d, %s, model %s, backend %+v, usage %+v", status, rec.Status, rec.Model, rec.Backend, rec.Usage)
	for _, s := range rec.Steps {
		t.Logf("  step %d %s %s args=%s -> %s", s.Index, s.Status, s.ToolName, s.ToolArgs, s.ResultSummary)
	}
	t.Logf("answer: %s", rec.Answer)
	if status != 200 || rec.Status != automate.StatusCompleted {
		t.Fatalf("run %d %s %s: %s", status, rec.Status, rec.ErrorCode, rec.Answer)
	}
	read, ok := stepNamed(rec, "read_file")
	if !ok || read.Status != automate.StepSuccess {
		t.Errorf("the model did not read the file: %+v", rec.Steps)
	}
	if rec.FinalAnswer == nil || !strings.Contains(strings.ToLower(*rec.FinalAnswer), "pineapple") {
		t.Errorf("final answer %v", rec.FinalAnswer)
	}
	if rec.Usage == nil || rec.Usage.OutputTokens == 0 || rec.Usage.InputTokens == 0 {
		t.Errorf("usage %+v", rec.Usage)
	}
}
