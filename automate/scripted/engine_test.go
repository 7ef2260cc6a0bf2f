package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/internal/sysmem"
	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

func mustRun(t *testing.T, e *Engine, tk *assistant.Task, env *fakeEnv) *assistant.Result {
	t.Helper()
	res, err := e.Run(context.Background(), tk, env)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestDefaultAnswerTaskTextAndResult(t *testing.T) {
	e := newEngine(Config{})
	env := newEnv()
	contract := "Reply with one line."
	tk := task("\n  Summarize the notes  \nthen mail them\n")
	tk.AnswerContract = &contract
	tk.AdditionalWorkflowPrompt = "Be brief."
	res := mustRun(t, e, tk, env)
	if res.Status != automate.StatusCompleted || res.Answer != "Done: Summarize the notes" || res.ErrorCode != "" {
		t.Fatalf("result %+v", res)
	}
	if res.Model != "scripted-mini" || *res.Backend != (automate.Backend{FlavorID: "scripted", Accelerator: "cpu"}) {
		t.Fatalf("model %q backend %+v", res.Model, res.Backend)
	}
	if got := env.statusList(); !slices.Equal(got, []string{"initializing", "planning", "executing-start", "executing-complete"}) {
		t.Fatalf("statuses %v", got)
	}
	if env.checkpoints != 1 {
		t.Fatalf("checkpoints %d, want 1 (after the last step)", env.checkpoints)
	}
	if roles := traceRoles(t, res.Trace); !slices.Equal(roles, []string{"system", "user", "assistant"}) {
		t.Fatalf("trace roles %v", roles)
	}
	var sys struct{ Content string }
	json.Unmarshal(res.Trace[0], &sys)
	if !strings.HasSuffix(sys.Content, contract) || !strings.Contains(sys.Content, "Be brief.") {
		t.Fatalf("system prompt %q", sys.Content)
	}
	u := res.Usage
	if u == nil || u.InputTokens != 6 || u.OutputTokens != 4 || u.GenerationMs < 0 || u.TTFTMs < 0 || math.IsNaN(u.TPS) || math.IsInf(u.TPS, 0) {
		t.Fatalf("usage %+v", u)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Fatal(err)
	}

	// No task text at all.
	res = mustRun(t, e, task("#!sleep 0"), newEnv())
	if res.Answer != "Done" {
		t.Fatalf("answer %q", res.Answer)
	}
}

func TestAnswerDirectiveAndWarmWorker(t *testing.T) {
	e := newEngine(Config{})
	if e.Runtime().WorkerRunning {
		t.Fatal("worker warm before any run")
	}
	mustRun(t, e, task("hello"), newEnv())
	if !e.Runtime().WorkerRunning {
		t.Fatal("worker not warm after a run")
	}
	env := newEnv()
	res := mustRun(t, e, task("Say it\n#!answer  The answer is 42.  \n#!sleep 1"), env)
	if res.Answer != "The answer is 42." {
		t.Fatalf("answer %q", res.Answer)
	}
	if slices.Contains(env.statusList(), "initializing") {
		t.Fatalf("warm worker initialized again: %v", env.statusList())
	}
	steps := env.stepList()
	if len(steps) != 2 || steps[0].Status != "success" || steps[0].ToolName != "" || steps[0].ID != "step-1" || steps[1].ToolName != "sleep" {
		t.Fatalf("steps %+v", steps)
	}
	if env.checkpoints != 3 {
		t.Fatalf("checkpoints %d, want one per step plus one", env.checkpoints)
	}
	// Planning reported every step pending first.
	if env.updates[0].Status != "pending" || env.updates[1].Status != "pending" || env.updates[2].Status != "running" {
		t.Fatalf("updates %+v", env.updates[:3])
	}
	// Empty #!answer is an empty closing message.
	if res := mustRun(t, e, task("x\n#!answer"), newEnv()); res.Answer != "" {
		t.Fatalf("empty answer %q", res.Answer)
	}
}

func TestColdStartHonoursContext(t *testing.T) {
	e := newEngine(Config{ColdStart: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	env := newEnv()
	env.onStep = nil
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(ctx, task("x"), env)
		done <- err
	}()
	testutil.Until(t, "the cold start", env.statusSet.C(), func() bool { return slices.Contains(env.statusList(), "initializing") })
	cancel()
	// The cold start lasts an hour: only the context can end it.
	if err := receiveErr(t, done, "Run to return after the cancel during the cold start"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if e.Runtime().WorkerRunning {
		t.Fatal("worker running after an interrupted cold start")
	}
}

func TestSoftCancelLandsAfterSleep(t *testing.T) {
	e := newEngine(Config{})
	env := newEnv()
	var requested atomic.Bool
	env.onStep = func(st automate.Step) {
		if st.ToolName == "sleep" && st.Status == "running" {
			requested.Store(true) // a soft cancel arrives while the sleep runs
		}
	}
	env.checkpoint = func(int) error {
		if requested.Load() {
			return assistant.ErrCanceled
		}
		return nil
	}
	res, err := e.Run(context.Background(), task("x\n#!sleep 100\n#!answer never"), env)
	if !errors.Is(err, assistant.ErrCanceled) {
		t.Fatalf("err %v", err)
	}
	steps := env.stepList()
	if steps[0].Status != "success" || steps[1].Status != "pending" {
		t.Fatalf("the sleep must finish and the next step never start: %+v", steps)
	}
	if res == nil || res.Status != automate.StatusCanceled || res.Answer == "never" {
		t.Fatalf("result %+v", res)
	}
}

func TestForceCancelInterruptsSleep(t *testing.T) {
	e := newEngine(Config{})
	env := newEnv()
	ctx, cancel := context.WithCancel(context.Background())
	env.onStep = func(st automate.Step) {
		if st.ToolName == "sleep" && st.Status == "running" {
			cancel()
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(ctx, task("#!sleep 3600000\n#!answer never"), env)
		done <- err
	}()
	// The sleep lasts an hour: only the cancel can end it.
	if err := receiveErr(t, done, "Run to return after the cancel during the sleep"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if st := env.stepList()[0]; st.Status != "failed" || !strings.Contains(st.ResultSummary, "Interrupted") {
		t.Fatalf("step %+v", st)
	}
}

func TestForceCancelKillsRunCommand(t *testing.T) {
	ws := workspace(t)
	e := newEngine(Config{})
	env := newEnv()
	tk := task("#!run sleep 300 & echo $$ > pid.tmp; mv pid.tmp pid; sleep 300")
	tk.Workspace, tk.AllowDestructiveTools = ws, true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(ctx, tk, env)
		done <- err
	}()
	pgid := testenv.ReadPidFile(t, filepath.Join(ws, "pid"))
	cancel()
	if err := receiveErr(t, done, "Run to return after the force cancel"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if err := testenv.WaitGroupGone(pgid, testutil.DefaultTimeout); err != nil {
		t.Fatal(err)
	}
	if st := env.stepList()[0]; st.Status != "failed" {
		t.Fatalf("step %+v", st)
	}
}

func declared(names ...string) []automate.ClientTool {
	var out []automate.ClientTool
	for _, n := range names {
		out = append(out, automate.ClientTool{Name: n, Description: "d"})
	}
	return out
}

func TestClientTool(t *testing.T) {
	e := newEngine(Config{})
	env := newEnv()
	env.respond = func(_ context.Context, calls []assistant.ClientCall) ([]automate.ToolResult, error) {
		switch calls[0].Name {
		case "get_weather":
			return []automate.ToolResult{automate.TextResult("c1", "sunny\n22 C")}, nil
		case "lookup":
			return []automate.ToolResult{{ID: "c2", Result: json.RawMessage(`{"n": 3}`)}}, nil
		default:
			return []automate.ToolResult{{ID: "c3", Error: "service down"}}, nil
		}
	}
	tk := task(`Weather please
#!tool get_weather {"city": "Paris",  "days": [1, 2]}
#!tool lookup
#!tool broken {}
#!tool undeclared {"x":1}
#!tool get_weather [1,2]`)
	tk.ClientTools = declared("get_weather", "lookup", "broken")
	res := mustRun(t, e, tk, env)
	if res.Status != automate.StatusCompleted || res.Answer != "Done: Weather please" {
		t.Fatalf("result %+v", res)
	}
	if len(env.rounds) != 3 {
		t.Fatalf("rounds %v", env.rounds)
	}
	if got := string(env.rounds[0][0].Arguments); got != `{"city":"Paris","days":[1,2]}` {
		t.Fatalf("arguments %s", got)
	}
	if got := string(env.rounds[1][0].Arguments); got != `{}` {
		t.Fatalf("no-argument call sent %s", got)
	}
	steps := env.stepList()
	want := []struct{ status, summary string }{
		{"success", "sunny\n22 C"},
		{"success", `{"n": 3}`},
		{"failed", "Error: service down"},
		{"failed", `"undeclared" is not a client tool declared for this run`},
		{"failed", "must be a JSON object"},
	}
	for i, w := range want {
		if steps[i].Status != w.status || !strings.Contains(steps[i].ResultSummary, w.summary) {
			t.Errorf("step %d: %s %q, want %s %q", i+1, steps[i].Status, steps[i].ResultSummary, w.status, w.summary)
		}
	}
	if steps[0].ToolName != "get_weather" || string(steps[0].ToolArgs) != `{"city":"Paris","days":[1,2]}` {
		t.Fatalf("step 1 tool %q args %s", steps[0].ToolName, steps[0].ToolArgs)
	}
	// The trace carries the call and its result.
	roles := traceRoles(t, res.Trace)
	if roles[2] != "assistant" || roles[3] != "tool" || !strings.Contains(string(res.Trace[2]), `"tool_calls"`) || !strings.Contains(string(res.Trace[3]), "sunny") {
		t.Fatalf("trace %s", res.Trace[2:4])
	}
}

// #!answer's ${result} is the latest client tool result's text ("" before
// any; a failed call does not change it).
func TestAnswerCarriesTheToolResult(t *testing.T) {
	e := newEngine(Config{})
	env := newEnv()
	env.respond = func(_ context.Context, calls []assistant.ClientCall) ([]automate.ToolResult, error) {
		if calls[0].Name == "broken" {
			return []automate.ToolResult{{ID: "c", Error: "down"}}, nil
		}
		return []automate.ToolResult{automate.TextResult("c", "blue")}, nil
	}
	for prompt, want := range map[string]string{
		"#!answer [${result}]": "[]",
		"#!tool ask_person {\"question\":\"Which?\"}\n#!tool broken\n#!answer you chose ${result}, ${result}": "you chose blue, blue",
	} {
		tk := task(prompt)
		tk.ClientTools = declared("ask_person", "broken")
		if res := mustRun(t, e, tk, env); res.Answer != want {
			t.Errorf("%q: answer %q, want %q", prompt, res.Answer, want)
		}
	}
}

func TestClientToolsRound(t *testing.T) {
	e := newEngine(Config{})
	env := newEnv()
	env.respond = func(_ context.Context, calls []assistant.ClientCall) ([]automate.ToolResult, error) {
		return []automate.ToolResult{automate.TextResult("a", "first"), {ID: "b", Error: "nope"}}, nil
	}
	tk := task(`#!tools [{"name":"a","arguments":{"q":1}},{"name":"zzz"},{"name":"b","arguments":null},{"arguments":{}},{"name":"a","arguments":[1]}]
#!answer fin`)
	tk.ClientTools = declared("a", "b")
	res := mustRun(t, e, tk, env)
	if res.Answer != "fin" {
		t.Fatalf("answer %q", res.Answer)
	}
	if len(env.rounds) != 1 || len(env.rounds[0]) != 2 || env.rounds[0][0].Name != "a" || env.rounds[0][1].Name != "b" || string(env.rounds[0][1].Arguments) != "{}" {
		t.Fatalf("one round of the two declared calls, got %+v", env.rounds)
	}
	steps := env.stepList()
	if len(steps) != 6 {
		t.Fatalf("%d steps, want 5 calls + answer", len(steps))
	}
	wantStatus := []string{"success", "failed", "failed", "failed", "failed", "success"}
	for i, w := range wantStatus {
		if steps[i].Status != w {
			t.Errorf("step %d %s (%q), want %s", i+1, steps[i].Status, steps[i].ResultSummary, w)
		}
	}
	if steps[0].ResultSummary != "first" || steps[2].ResultSummary != "Error: nope" {
		t.Fatalf("summaries %q %q", steps[0].ResultSummary, steps[2].ResultSummary)
	}
	// A #!tools round is one directive: one checkpoint before it.
	if env.checkpoints != 3 {
		t.Fatalf("checkpoints %d", env.checkpoints)
	}
}

func TestClientToolsStoppedWhileParked(t *testing.T) {
	e := newEngine(Config{})
	env := newEnv()
	env.respond = func(ctx context.Context, _ []assistant.ClientCall) ([]automate.ToolResult, error) {
		return nil, context.Canceled
	}
	tk := task("#!tool a {}\n#!answer never")
	tk.ClientTools = declared("a")
	res, err := e.Run(context.Background(), tk, env)
	if !errors.Is(err, context.Canceled) || res.Answer == "never" {
		t.Fatalf("res %+v err %v", res, err)
	}
}

func TestAsk(t *testing.T) {
	e := newEngine(Config{})
	env := newEnv()
	tk := task(`#!ask {"title":"Trip","fields":[{"id":"city","required":true},{"id":"days"},{"id":"tags","multi":true}]}`)
	tk.HITLAnswers = map[string]any{"city": "Oslo", "tags": []any{"a", "b"}, "unasked": "x"}
	mustRun(t, e, tk, env)
	st := env.stepList()[0]
	if st.Status != "success" || st.ToolName != "request_user_input" || st.ResultSummary != `{"city":"Oslo","tags":["a","b"]}` {
		t.Fatalf("step %+v", st)
	}
	if !slices.Contains(env.statusList(), "waitingForUser") {
		t.Fatalf("statuses %v", env.statusList())
	}

	// The required field has no answer (an empty one counts as none).
	tk2 := *tk
	tk2.Prompt += "\n#!answer never"
	tk2.HITLAnswers = map[string]any{"days": "3", "city": ""}
	env = newEnv()
	res, err := e.Run(context.Background(), &tk2, env)
	if !errors.Is(err, assistant.ErrUserInputMissing) || !strings.Contains(err.Error(), "city") {
		t.Fatalf("err %v", err)
	}
	if res.Status != automate.StatusCanceled || env.stepList()[0].Status != "failed" || env.stepList()[1].Status != "pending" {
		t.Fatalf("res %+v steps %+v", res, env.stepList())
	}
}

func TestWriteReadChaining(t *testing.T) {
	ws := workspace(t)
	e := newEngine(Config{})
	env := newEnv()
	tk := task(`Keep notes
#!write notes/today.txt Buy milk  
#!write "with space.txt" "line 1\nline 2"
#!read notes/today.txt
#!read with space.txt
#!read missing.txt`)
	tk.Workspace = ws
	res := mustRun(t, e, tk, env)
	if res.Status != automate.StatusCompleted {
		t.Fatalf("%+v", res)
	}
	s := env.stepList()
	p1 := filepath.Join(ws, "notes", "today.txt")
	p2 := filepath.Join(ws, "with space.txt")
	if b, _ := os.ReadFile(p1); string(b) != "Buy milk  " {
		t.Fatalf("file 1 holds %q", b)
	}
	if b, _ := os.ReadFile(p2); string(b) != "line 1\nline 2" {
		t.Fatalf("file 2 holds %q", b)
	}
	if s[0].ProducedFilePath != p1 || s[0].ProducedContentID != "g1" || s[0].ProducedContent != "Buy milk  " || s[0].ToolName != "write_file" {
		t.Fatalf("write step %+v", s[0])
	}
	var args map[string]string
	json.Unmarshal(s[0].ToolArgs, &args)
	if args["path"] != "notes/today.txt" || args["content"] != "Buy milk  " {
		t.Fatalf("write args %s", s[0].ToolArgs)
	}
	if s[1].ProducedFilePath != p2 || s[1].ProducedContentID != "g2" {
		t.Fatalf("write 2 %+v", s[1])
	}
	if s[2].ProducedContent != "Buy milk  " || s[2].ProducedContentID != "s3" || !slices.Equal(s[2].ConsumedContentIDs, []string{"g1"}) || s[2].ProducedFilePath != "" {
		t.Fatalf("read step %+v", s[2])
	}
	if s[3].ProducedContent != "line 1\nline 2" || !slices.Equal(s[3].ConsumedContentIDs, []string{"g2"}) {
		t.Fatalf("read 2 %+v", s[3])
	}
	if s[4].Status != "failed" || !strings.Contains(s[4].ResultSummary, "no such file") {
		t.Fatalf("read missing %+v", s[4])
	}
}

func TestConfinement(t *testing.T) {
	ws := workspace(t)
	outside := filepath.Join(filepath.Dir(ws), "outside")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644)
	os.Symlink(outside, filepath.Join(ws, "out"))
	e := newEngine(Config{})
	env := newEnv()
	tk := task(`#!write ../escape.txt x
#!write out/planted.txt x
#!read out/secret.txt
#!read ../outside/secret.txt
#!write ` + filepath.Join(outside, "abs.txt") + ` x
#!move out/secret.txt stolen.txt
#!delete ../outside/secret.txt
#!write inside/ok.txt fine`)
	tk.Workspace, tk.Confine, tk.AllowDestructiveTools = ws, ws, true
	res := mustRun(t, e, tk, env)
	if res.Status != automate.StatusCompleted {
		t.Fatalf("%+v", res)
	}
	s := env.stepList()
	for i := 0; i < 7; i++ {
		if s[i].Status != "failed" || !strings.Contains(s[i].ResultSummary, "outside the folder this run is confined to") || s[i].ProducedFilePath != "" || s[i].ProducedContent != "" {
			t.Errorf("step %d (%s): %s %q", i+1, s[i].Title, s[i].Status, s[i].ResultSummary)
		}
	}
	if s[7].Status != "success" || s[7].ProducedFilePath != filepath.Join(ws, "inside", "ok.txt") {
		t.Fatalf("inside write %+v", s[7])
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Fatalf("outside changed: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(ws), "escape.txt")); !os.IsNotExist(err) {
		t.Fatal("escape.txt written")
	}

	// Without confinement the same absolute path is allowed.
	env = newEnv()
	tk = task("#!write " + filepath.Join(outside, "abs.txt") + " free")
	tk.Workspace = ws
	mustRun(t, e, tk, env)
	if st := env.stepList()[0]; st.Status != "success" || st.ProducedFilePath != filepath.Join(outside, "abs.txt") {
		t.Fatalf("unconfined %+v", st)
	}
}

func TestDestructivePolicy(t *testing.T) {
	ws := workspace(t)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("b"), 0o644)
	prompt := "Tidy up\n#!run touch ran.txt\n#!delete a.txt\n#!move b.txt sub/b.txt\n#!answer tidied"
	e := newEngine(Config{})

	env := newEnv()
	tk := task(prompt)
	tk.Workspace = ws
	res := mustRun(t, e, tk, env)
	if res.Status != automate.StatusCompleted || res.Answer != "tidied" {
		t.Fatalf("%+v", res)
	}
	for i, st := range env.stepList()[:3] {
		if st.Status != "skipped" || !strings.HasPrefix(st.ResultSummary, assistant.PolicyRejectionPrefix) {
			t.Errorf("step %d: %s %q", i+1, st.Status, st.ResultSummary)
		}
	}
	for _, p := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
			t.Fatalf("%s touched despite the policy", p)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); !os.IsNotExist(err) {
		t.Fatal("command ran despite the policy")
	}
	if !slices.Contains(env.statusList(), "executing-destructive-block") {
		t.Fatalf("statuses %v", env.statusList())
	}

	env = newEnv()
	tk.AllowDestructiveTools = true
	mustRun(t, e, tk, env)
	s := env.stepList()
	if s[0].Status != "success" || !strings.HasPrefix(s[0].ResultSummary, "exit code 0") {
		t.Fatalf("run %+v", s[0])
	}
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err != nil {
		t.Fatal("command did not run in the workspace")
	}
	if s[1].Status != "success" || s[1].ProducedFilePath != "" {
		t.Fatalf("delete %+v", s[1])
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); !os.IsNotExist(err) {
		t.Fatal("a.txt not deleted")
	}
	if s[2].Status != "success" || s[2].ProducedFilePath != filepath.Join(ws, "sub", "b.txt") || s[2].ProducedIsDirectory {
		t.Fatalf("move %+v", s[2])
	}

	// A failing command fails its step; the run goes on.
	env = newEnv()
	tk = task("#!run echo oops; exit 4\n#!answer went on")
	tk.Workspace, tk.AllowDestructiveTools = ws, true
	res = mustRun(t, e, tk, env)
	st := env.stepList()[0]
	if res.Answer != "went on" || st.Status != "failed" || !strings.Contains(st.ResultSummary, "code 4") || st.ProducedContent != "oops\n" {
		t.Fatalf("res %+v step %+v", res, st)
	}
}

func TestMoveCarriesContentIDAndFolders(t *testing.T) {
	ws := workspace(t)
	e := newEngine(Config{})
	env := newEnv()
	tk := task("#!write d/f.txt x\n#!move d/f.txt e/g.txt\n#!read e/g.txt\n#!move e newdir\n#!delete newdir")
	tk.Workspace, tk.Confine, tk.AllowDestructiveTools = ws, ws, true
	mustRun(t, e, tk, env)
	s := env.stepList()
	if !slices.Equal(s[1].ConsumedContentIDs, []string{"g1"}) || !slices.Equal(s[2].ConsumedContentIDs, []string{"g1"}) {
		t.Fatalf("chaining %+v / %+v", s[1], s[2])
	}
	if s[3].ProducedFilePath != filepath.Join(ws, "newdir") || !s[3].ProducedIsDirectory {
		t.Fatalf("folder move %+v", s[3])
	}
	if s[4].Status != "success" {
		t.Fatalf("delete folder %+v", s[4])
	}
}

func TestFail(t *testing.T) {
	e := newEngine(Config{})
	env := newEnv()
	res := mustRun(t, e, task("x\n#!fail TOOL_TIMEOUT\n#!answer never"), env)
	if res.Status != automate.StatusFailed || res.ErrorCode != "TOOL_TIMEOUT" || res.Answer != "Failed: TOOL_TIMEOUT" {
		t.Fatalf("%+v", res)
	}
	if s := env.stepList(); s[0].Status != "failed" || s[1].Status != "pending" {
		t.Fatalf("steps %+v", s)
	}
	for _, code := range automate.ErrorCodes {
		if res := mustRun(t, e, task("#!fail "+code), newEnv()); res.ErrorCode != code {
			t.Errorf("%s: %+v", code, res)
		}
	}
	for _, bad := range []string{"#!fail BOGUS", "#!fail", "#!fail tool_timeout"} {
		res := mustRun(t, e, task(bad), newEnv())
		if res.Status != automate.StatusFailed || res.ErrorCode != "EXECUTION_FAILED" {
			t.Errorf("%q: %+v", bad, res)
		}
	}
}

func TestRecallAndContinuation(t *testing.T) {
	e := newEngine(Config{})
	mustRun(t, e, task("Plan my trip to Oslo\nwith trains"), newEnv())

	cont := task("#!recall")
	cont.Continuation = true
	res := mustRun(t, e, cont, newEnv())
	if res.Answer != "Plan my trip to Oslo\nwith trains" {
		t.Fatalf("recall %q", res.Answer)
	}
	// The previous turn is in the trace.
	if roles := traceRoles(t, res.Trace); !slices.Equal(roles[:4], []string{"system", "user", "assistant", "user"}) {
		t.Fatalf("roles %v", roles)
	}
	// The recall run itself is now the previous run (empty task text).
	res = mustRun(t, e, cont, newEnv())
	if res.Answer != "" {
		t.Fatalf("recall of a recall %q", res.Answer)
	}

	// No continuation: a new conversation.
	mustRun(t, e, task("Alpha"), newEnv())
	res = mustRun(t, e, task("#!recall"), newEnv())
	if res.Answer != "" {
		t.Fatalf("recall without continuation %q", res.Answer)
	}

	// After Terminate the thread is rebuilt from the stored history.
	mustRun(t, e, task("Beta task"), newEnv())
	e.Terminate()
	if e.Runtime().WorkerRunning {
		t.Fatal("worker still running after Terminate")
	}
	env := newEnv()
	res = mustRun(t, e, cont, env)
	if res.Answer != "Beta task" || !slices.Contains(env.statusList(), "initializing") {
		t.Fatalf("after terminate: %q statuses %v", res.Answer, env.statusList())
	}
	// Runs that failed or were cancelled are part of the conversation too.
	mustRun(t, e, task("Gamma\n#!fail TOOL_TIMEOUT"), newEnv())
	res = mustRun(t, e, cont, newEnv())
	if res.Answer != "Gamma" {
		t.Fatalf("after failed run: %q", res.Answer)
	}
}

func TestTerminateDuringRunKeepsHistory(t *testing.T) {
	e := newEngine(Config{})
	env := newEnv()
	env.onStep = func(st automate.Step) {
		if st.ToolName == "sleep" && st.Status == "running" {
			e.Terminate()
		}
	}
	mustRun(t, e, task("Delta\n#!sleep 1"), env)
	if e.Runtime().WorkerRunning {
		t.Fatal("a run resurrected the terminated worker")
	}
	cont := task("#!recall")
	cont.Continuation = true
	if res := mustRun(t, e, cont, newEnv()); res.Answer != "Delta" {
		t.Fatalf("%q", res.Answer)
	}
}

func TestBadSyntaxFailsTheStepOnly(t *testing.T) {
	e := newEngine(Config{})
	for _, line := range []string{
		"#!sleep abc", "#!sleep -1", "#!sleep 99999999999999999999", "#!sleep 86400001",
		"#!tool", `#!tool x [1]`, `#!tool x {"a":`, `#!tool x null`, `#!tool "unterminated {}`,
		"#!tools {}", "#!tools []", "#!tools", "#!tools [1",
		"#!ask {}", "#!ask nope", `#!ask {"fields":[{"label":"no id"}]}`, `#!ask {"fields":"x"}`,
		"#!write", `#!write "bad\q" x`, "#!read", "#!delete", "#!move a", `#!move "a" "b" c`, "#!run", "#!run   ",
		"#!mcp", "#!mcp s", "#!mcp s t [1]", "#!mcp s t {", "#!bogus", "#!", "#!ANSWER x",
	} {
		env := newEnv()
		res, err := e.Run(context.Background(), task("Do it\n"+line+"\n#!answer went on"), env)
		if err != nil || res.Status != automate.StatusCompleted || res.Answer != "went on" {
			t.Errorf("%q: res %+v err %v", line, res, err)
			continue
		}
		st := env.stepList()[0]
		if st.Status != "failed" || st.ResultSummary == "" {
			t.Errorf("%q: step %s %q", line, st.Status, st.ResultSummary)
		}
	}
}

func TestCatalogAndModels(t *testing.T) {
	var now atomic.Int64
	base := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	now.Store(base.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	e := newEngine(Config{CatalogLoadDelay: 10 * time.Second, Now: clock})
	cat, _ := e.Catalog(context.Background())
	if cat.Ready || len(cat.Models) != 0 {
		t.Fatalf("loading catalog %+v", cat)
	}
	now.Store(base.Add(10 * time.Second).UnixNano())
	cat, _ = e.Catalog(context.Background())
	if !cat.Ready || len(cat.Models) != 5 {
		t.Fatalf("ready catalog %+v", cat)
	}
	selected := func(c assistant.Catalog) []string {
		var out []string
		for _, m := range c.Models {
			if m.Selected {
				out = append(out, m.Name)
			}
		}
		return out
	}
	if got := selected(cat); !slices.Equal(got, []string{"scripted-mini"}) {
		t.Fatalf("selected %v", got)
	}
	rt := e.Runtime()
	if rt.ModelName != "scripted-mini" || rt.ContextSize == nil || *rt.ContextSize < 4096 || rt.Backend.FlavorID != "scripted" {
		t.Fatalf("runtime %+v", rt)
	}

	mustRun(t, e, task("x"), newEnv())
	if err := e.ActivateModel(context.Background(), "scripted-mini"); err != nil || !e.Runtime().WorkerRunning {
		t.Fatal("activating the active model tore the worker down")
	}
	if err := e.ActivateModel(context.Background(), "scripted-pro"); err != nil {
		t.Fatal(err)
	}
	if rt := e.Runtime(); rt.ModelName != "scripted-pro" || rt.WorkerRunning {
		t.Fatalf("after switch %+v", rt)
	}
	cat, _ = e.Catalog(context.Background())
	if got := selected(cat); !slices.Equal(got, []string{"scripted-pro"}) {
		t.Fatalf("selected %v", got)
	}
	env := newEnv()
	if res := mustRun(t, e, task("x"), env); res.Model != "scripted-pro" || !slices.Contains(env.statusList(), "initializing") {
		t.Fatalf("run after switch: model %q statuses %v", res.Model, env.statusList())
	}
	if err := e.ActivateModel(context.Background(), "nope"); !errors.Is(err, ErrUnknownModel) {
		t.Fatalf("unknown %v", err)
	}
	if err := e.ActivateModel(context.Background(), "SCRIPTED-PRO"); !errors.Is(err, ErrUnknownModel) {
		t.Fatalf("activation takes the exact name: %v", err)
	}
	e.ActivateModel(context.Background(), "")
	if e.Runtime().ModelName != "scripted-mini" {
		t.Fatal("\"\" did not return to the default")
	}

	// Models that cannot load fail the run with MODEL_LOAD_FAILED.
	for _, name := range []string{"scripted-max", "scripted-huge"} {
		e.ActivateModel(context.Background(), name)
		res := mustRun(t, e, task("x\n#!answer no"), newEnv())
		if res.Status != automate.StatusFailed || res.ErrorCode != automate.ErrorModelLoadFailed || res.Model != name {
			t.Errorf("%s: %+v", name, res)
		}
	}
	none := newEngine(Config{Catalog: []automate.ModelOption{{Name: "only", Downloaded: true, AvailableForDevice: true, SupportsTools: true}}})
	if res := mustRun(t, none, task("x"), newEnv()); res.ErrorCode != automate.ErrorModelLoadFailed || none.Runtime().ModelName != "" {
		t.Fatalf("no selection: %+v", res)
	}
	none.ActivateModel(context.Background(), "only")
	if res := mustRun(t, none, task("x"), newEnv()); res.Status != automate.StatusCompleted || res.Model != "only" {
		t.Fatalf("after activation: %+v", res)
	}
}

func TestDefaultCatalogShape(t *testing.T) {
	c := DefaultCatalog()
	if err := ValidateCatalog(c); err != nil {
		t.Fatal(err)
	}
	byName := map[string]automate.ModelOption{}
	for _, m := range c {
		byName[m.Name] = m
		if m.ParameterCountBillions == nil || m.FileSizeMb == nil {
			t.Errorf("%s lacks sizes", m.Name)
		}
	}
	if m := byName["scripted-max"]; m.Downloaded || !m.SupportsTools || m.SizeCode != "XL" {
		t.Errorf("max %+v", m)
	}
	if m := byName["scripted-text"]; m.SupportsTools || m.Family != "text" {
		t.Errorf("text %+v", m)
	}
	if m := byName["scripted-huge"]; m.AvailableForDevice || m.SizeCode != "XXL" {
		t.Errorf("huge %+v", m)
	}
	if m := byName["scripted-pro"]; !m.Downloaded || m.SizeCode != "L" || m.Selected {
		t.Errorf("pro %+v", m)
	}
	c[0].Name = "changed"
	if DefaultCatalog()[0].Name != "scripted-mini" {
		t.Fatal("DefaultCatalog shares its slice")
	}
}

func TestLoadCatalogFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	good := write("good.json", `[{"name":"a","family":"f","sizeCode":"S","parameterCountBillions":7,"fileSizeMb":null,"supportsTools":true,"availableForDevice":true,"downloaded":true,"selected":true},{"name":"b","family":"f","sizeCode":"M"}]`)
	models, err := LoadCatalogFile(good)
	if err != nil || len(models) != 2 || *models[0].ParameterCountBillions != 7 || models[0].FileSizeMb != nil || !models[0].Selected {
		t.Fatalf("%+v %v", models, err)
	}
	e := newEngine(Config{Catalog: models})
	if e.Runtime().ModelName != "a" {
		t.Fatal("file's selected entry is not the default")
	}
	for name, body := range map[string]string{
		"dup.json":      `[{"name":"a"},{"name":"A"}]`,
		"two.json":      `[{"name":"a","selected":true},{"name":"b","selected":true}]`,
		"noname.json":   `[{"name":" "}]`,
		"unknown.json":  `[{"name":"a","colour":"red"}]`,
		"object.json":   `{"name":"a"}`,
		"null.json":     `null`,
		"trailing.json": `[] []`,
		"broken.json":   `[`,
	} {
		if _, err := LoadCatalogFile(write(name, body)); !errors.Is(err, ErrInvalidCatalog) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := LoadCatalogFile(filepath.Join(dir, "absent.json")); err == nil {
		t.Fatal("missing file accepted")
	}
	if m, err := LoadCatalogFile(write("empty.json", `[]`)); err != nil || len(m) != 0 {
		t.Fatalf("empty: %v", err)
	}
}

// TestContextSizeRule: Runtime reports the RAM rule over the machine's
// RAM (the rule's own table is assistant.TestContextSizeForRAM).
func TestContextSizeRule(t *testing.T) {
	want := assistant.ContextSizeForRAM(sysmem.TotalRAM())
	if cs := newEngine(Config{}).Runtime().ContextSize; cs == nil || *cs != want {
		t.Errorf("context size %v, want %d", cs, want)
	}
}

func TestConcurrentCallsDuringRun(t *testing.T) {
	e := newEngine(Config{})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			e.Runtime()
			e.Catalog(context.Background())
			e.ActivateModel(context.Background(), "scripted-mini")
			e.Terminate()
		}
	}()
	for i := 0; i < 20; i++ {
		tk := task("run " + strconv.Itoa(i) + "\n#!sleep 1\n#!recall")
		tk.Continuation = i%2 == 1
		mustRun(t, e, tk, newEnv())
	}
	close(stop)
	<-done
}

// receiveErr waits for what done delivers, failing naming what after
// testutil.DefaultTimeout.
func receiveErr(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(testutil.DefaultTimeout):
		t.Fatalf("timed out after %s waiting for %s", testutil.DefaultTimeout, what)
		return nil
	}
}
