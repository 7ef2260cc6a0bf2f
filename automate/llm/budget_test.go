package llm_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

// TestToolTimeout: a command beyond the per-tool budget is killed, with
// everything it started (its process group), and the run fails with
// TOOL_TIMEOUT.
func TestToolTimeout(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url(), func(o *harnessOpts) { o.engine.ToolTimeout = time.Second })
	// The shell leads its own process group: its pid is the group's id. A
	// background sleep stays in the group after the shell.
	up.script(reply{content: "Running it.", calls: []fakeCall{call("s1", "run_command",
		map[string]any{"command": "echo $$ > pid.tmp && mv pid.tmp pid; sleep 300 & sleep 300"})}})
	status, rec := h.run(map[string]any{"prompt": "run the slow thing", "allowDestructiveTools": true})
	if status != 500 || rec.ErrorCode != automate.ErrorToolTimeout || len(rec.Steps) != 1 || rec.Steps[0].Status != automate.StepFailed ||
		!strings.Contains(rec.Steps[0].ResultSummary, "Timed out") {
		t.Fatalf("%d %+v", status, rec)
	}
	pgid := testenv.ReadPidFile(t, filepath.Join(h.workspace, "pid"))
	if err := testenv.WaitGroupGone(pgid, testutil.DefaultTimeout); err != nil {
		t.Errorf("the command outlived its budget: %v", err)
	}
}

// TestStepAndRunBudgets: beyond max steps, and beyond the run budget, the
// run fails with EXECUTION_TIMEOUT.
func TestStepAndRunBudgets(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url(), func(o *harnessOpts) { o.engine.MaxSteps = 2 })
	for i := range 3 {
		up.script(reply{calls: []fakeCall{call(fmt.Sprint("l", i), "list_dir", map[string]any{})}})
	}
	status, rec := h.run(map[string]any{"prompt": "loop forever"})
	if status != 500 || rec.ErrorCode != automate.ErrorExecutionTimeout || len(rec.Steps) != 2 || !strings.Contains(rec.Answer, "budget of 2 steps") {
		t.Fatalf("%d %+v", status, rec)
	}

	up2 := newFakeUpstream(t, "ollama", qwen)
	h2 := newHarness(t, up2.url(), func(o *harnessOpts) { o.engine.RunBudget = 400 * time.Millisecond })
	never := make(chan bool)
	defer close(never)
	up2.script(reply{content: "too late", wait: never})
	status, rec = h2.run(map[string]any{"prompt": "think hard"})
	if status != 500 || rec.ErrorCode != automate.ErrorExecutionTimeout || !strings.Contains(rec.Answer, "execution budget") {
		t.Fatalf("%d %+v", status, rec)
	}
}

// TestDestructivePolicyAndUserInput: destructive calls are rejected with
// the policy message the model sees, and approved with
// allowDestructiveTools; request_user_input is answered from hitlAnswers,
// and a missing required answer cancels the run.
func TestDestructivePolicyAndUserInput(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	victim := filepath.Join(h.workspace, "old.txt")
	os.WriteFile(victim, []byte("x"), 0o644)
	ask := map[string]any{"title": "Which files?", "fields": []any{map[string]any{"id": "pattern", "required": true}, map[string]any{"id": "note"}}}
	up.script(
		reply{calls: []fakeCall{call("q1", "request_user_input", ask)}},
		reply{calls: []fakeCall{call("d1", "delete_path", map[string]any{"path": "old.txt"})}},
		reply{content: "could not delete"},
	)
	status, rec := h.run(map[string]any{"prompt": "clean up", "hitlAnswers": map[string]any{"pattern": "*.txt", "other": "ignored"}})
	if status != 200 || len(rec.Steps) != 2 {
		t.Fatalf("%d %+v", status, rec)
	}
	if s := rec.Steps[0]; s.Status != automate.StepSuccess || s.ResultSummary != `{"pattern":"*.txt"}` || s.Title != "Ask for input" {
		t.Errorf("ask step %+v", s)
	}
	if got, _ := up.seen()[1].toolResult("q1"); got != `{"pattern":"*.txt"}` {
		t.Errorf("model got answers %q", got)
	}
	del := rec.Steps[1]
	if del.Status != automate.StepSkipped || !strings.HasPrefix(del.ResultSummary, "Rejected by Automate HTTP server policy") {
		t.Errorf("delete step %+v", del)
	}
	if got, _ := up.seen()[2].toolResult("d1"); !strings.HasPrefix(got, "Rejected by Automate HTTP server policy") {
		t.Errorf("model saw %q", got)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("a rejected delete deleted: %v", err)
	}

	up.script(reply{calls: []fakeCall{call("d2", "delete_path", map[string]any{"path": "old.txt"})}}, reply{content: "deleted"})
	status, rec = h.run(map[string]any{"prompt": "clean up", "allowDestructiveTools": true})
	if status != 200 || rec.Steps[0].Status != automate.StepSuccess {
		t.Fatalf("%d %+v", status, rec)
	}
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Fatalf("approved delete did not delete: %v", err)
	}

	up.script(reply{calls: []fakeCall{call("q2", "request_user_input", ask)}})
	status, rec = h.run(map[string]any{"prompt": "clean up"})
	if status != 500 || rec.Status != automate.StatusCanceled || rec.ErrorCode != automate.ErrorCanceled || !strings.Contains(rec.Answer, "pattern") {
		t.Fatalf("%d %+v", status, rec)
	}
}

// TestWorkspaceConfinement: with restrictToWorkspace every file tool stays
// inside the workspace; an escape is a failed step the model sees.
func TestWorkspaceConfinement(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("top secret"), 0o644)
	up.script(
		reply{calls: []fakeCall{call("r1", "read_file", map[string]any{"path": outside}), call("r2", "write_file", map[string]any{"path": "../escape.txt", "content": "x"})}},
		reply{content: "blocked"},
	)
	status, rec := h.run(map[string]any{"prompt": "read it", "restrictToWorkspace": true})
	if status != 200 || len(rec.Steps) != 2 {
		t.Fatalf("%d %+v", status, rec)
	}
	for _, s := range rec.Steps {
		if s.Status != automate.StepFailed || !strings.Contains(s.ResultSummary, "outside the folder this run is confined to") || strings.Contains(s.ProducedContent, "top secret") {
			t.Errorf("confined step %+v", s)
		}
	}
	if got, _ := up.seen()[1].toolResult("r1"); strings.Contains(got, "top secret") {
		t.Errorf("the model saw the file outside the workspace")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.workspace), "escape.txt")); err == nil {
		t.Errorf("write escaped")
	}
	if !strings.Contains(up.seen()[0].system(), "confined to") {
		t.Errorf("the system prompt does not say the run is confined")
	}
}

// TestFetchURL: a page is fetched and reduced to text; the size limit
// truncates; an error status is a failed step.
func TestFetchURL(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><head><title>T</title><script>var x=1;</script></head><body><h1>Opening hours</h1><p>Mon&ndash;Fri 9&nbsp;to 5</p></body></html>`)
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, strings.Repeat("a", 5000))
		default:
			http.NotFound(w, r)
		}
	}))
	defer page.Close()
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url(), func(o *harnessOpts) { o.engine.FetchMaxBytes = 1000 })
	up.script(
		reply{calls: []fakeCall{
			call("f1", "fetch_url", map[string]any{"url": page.URL + "/page"}),
			call("f2", "fetch_url", map[string]any{"url": page.URL + "/big"}),
			call("f3", "fetch_url", map[string]any{"url": page.URL + "/missing"}),
			call("f4", "fetch_url", map[string]any{"url": "file:///etc/passwd"}),
		}},
		reply{content: "fetched"},
	)
	status, rec := h.run(map[string]any{"prompt": "when are they open?"})
	if status != 200 || len(rec.Steps) != 4 {
		t.Fatalf("%d %+v", status, rec)
	}
	p := rec.Steps[0]
	if p.Status != automate.StepSuccess || !strings.Contains(p.ProducedContent, "Opening hours") || strings.Contains(p.ProducedContent, "var x") ||
		strings.Contains(p.ProducedContent, "<h1>") || p.Title != "Fetch "+page.URL+"/page" || p.ProducedContentID != "s1" {
		t.Errorf("page step %+v", p)
	}
	if b := rec.Steps[1]; b.Status != automate.StepSuccess || !strings.Contains(b.ResultSummary, "truncated at 1000 bytes") || len(b.ProducedContent) > 1100 {
		t.Errorf("big step: %s (%d bytes)", b.ResultSummary, len(b.ProducedContent))
	}
	if m := rec.Steps[2]; m.Status != automate.StepFailed || !strings.Contains(m.ResultSummary, "HTTP 404") {
		t.Errorf("missing step %+v", m)
	}
	if f := rec.Steps[3]; f.Status != automate.StepFailed || !strings.Contains(f.ResultSummary, "absolute http or https URL") {
		t.Errorf("file URL step %+v", f)
	}
}

// TestThinkingLevels: the run's level (or the configured default) goes to
// the upstream as reasoning_effort; max is high with four times the
// tokens; a model that refuses the parameter gets none from then on.
func TestThinkingLevels(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen, fakeModel{name: "plain:1b", family: "plain", params: "1B", caps: []string{"completion", "tools"}})
	h := newHarness(t, up.url(), func(o *harnessOpts) {
		o.engine.ThinkingLevel = "medium"
		o.engine.MaxOutputTokens = 1000
		o.engine.Model = "qwen3:8b"
	})
	for _, tc := range []struct {
		level, effort string
		tokens        int
	}{{"low", "low", 1000}, {"high", "high", 1000}, {"max", "high", 4000}, {"", "medium", 1000}} {
		up.script(reply{content: "ok"})
		body := map[string]any{"prompt": "think"}
		if tc.level != "" {
			body["thinkingLevel"] = tc.level
		}
		if status, _ := h.run(body); status != 200 {
			t.Fatalf("level %q: %d", tc.level, status)
		}
		reqs := up.seen()
		last := reqs[len(reqs)-1]
		if last.ReasoningEffort != tc.effort || last.MaxTokens != tc.tokens {
			t.Errorf("level %q -> reasoning_effort %q max_tokens %d", tc.level, last.ReasoningEffort, last.MaxTokens)
		}
	}

	// Ollama says plain:1b cannot think: nothing is sent.
	h2 := newHarness(t, up.url(), func(o *harnessOpts) { o.engine.Model = "plain:1b" })
	up.script(reply{content: "ok"})
	h2.run(map[string]any{"prompt": "x", "thinkingLevel": "high"})
	if reqs := up.seen(); reqs[len(reqs)-1].ReasoningEffort != "" {
		t.Errorf("reasoning_effort sent to a model that cannot think")
	}

	// An upstream that refuses it: one retry without, then never again.
	up3 := newFakeUpstream(t, "llama", fakeModel{name: "m.gguf"})
	h3 := newHarness(t, up3.url())
	up3.script(reply{status: 400, errBody: `{"error":{"message":"reasoning_effort is not supported by this model"}}`}, reply{content: "fine"}, reply{content: "again"})
	if status, rec := h3.run(map[string]any{"prompt": "x", "thinkingLevel": "low"}); status != 200 || rec.Answer != "fine" {
		t.Fatalf("%d %+v", status, rec)
	}
	h3.run(map[string]any{"prompt": "y", "thinkingLevel": "low"})
	reqs := up3.seen()
	if len(reqs) != 3 || reqs[0].ReasoningEffort != "low" || reqs[1].ReasoningEffort != "" || reqs[2].ReasoningEffort != "" {
		t.Errorf("requests %+v", reqs)
	}
}
