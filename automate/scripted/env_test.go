package scripted

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/internal/testutil"
)

// fakeEnv records what the engine reports and answers client tool calls
// with canned results.
type fakeEnv struct {
	mu          sync.Mutex
	statuses    []string
	updates     []automate.Step       // every Step call, in order
	steps       map[int]automate.Step // latest state by index
	checkpoints int
	rounds      [][]assistant.ClientCall
	statusSet   testutil.Signal // each SetStatus

	// onStep runs after each Step call (outside the lock).
	onStep func(automate.Step)
	// checkpoint decides Checkpoint's answer; n counts from 1. Nil: nil.
	checkpoint func(n int) error
	// respond answers a round. Nil: TextResult("<name> ok") per call.
	respond func(ctx context.Context, calls []assistant.ClientCall) ([]automate.ToolResult, error)
}

func newEnv() *fakeEnv { return &fakeEnv{steps: map[int]automate.Step{}} }

func (f *fakeEnv) SetStatus(s string) {
	f.mu.Lock()
	f.statuses = append(f.statuses, s)
	f.mu.Unlock()
	f.statusSet.Notify()
}

func (f *fakeEnv) Step(st automate.Step) {
	f.mu.Lock()
	f.updates = append(f.updates, st)
	f.steps[st.Index] = st
	hook := f.onStep
	f.mu.Unlock()
	if hook != nil {
		hook(st)
	}
}

func (f *fakeEnv) Checkpoint() error {
	f.mu.Lock()
	f.checkpoints++
	n, cp := f.checkpoints, f.checkpoint
	f.mu.Unlock()
	if cp != nil {
		return cp(n)
	}
	return nil
}

func (f *fakeEnv) CallClientTools(ctx context.Context, calls []assistant.ClientCall) ([]automate.ToolResult, error) {
	f.mu.Lock()
	f.rounds = append(f.rounds, slices.Clone(calls))
	respond := f.respond
	f.mu.Unlock()
	if respond != nil {
		return respond(ctx, calls)
	}
	out := make([]automate.ToolResult, len(calls))
	for i, c := range calls {
		out[i] = automate.TextResult("call-"+c.Name, c.Name+" ok")
	}
	return out, nil
}

// stepList returns the latest state of every step, by index.
func (f *fakeEnv) stepList() []automate.Step {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []automate.Step
	for i := 1; i <= len(f.steps); i++ {
		out = append(out, f.steps[i])
	}
	return out
}

func (f *fakeEnv) statusList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.statuses)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newEngine returns an engine with the default catalog and a quiet logger.
func newEngine(cfg Config) *Engine {
	if cfg.Logger == nil {
		cfg.Logger = quiet()
	}
	return New(cfg)
}

// workspace returns a resolved temporary workspace folder.
func workspace(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return ws
}

func task(prompt string) *assistant.Task {
	return &assistant.Task{RequestID: "automate-run-test", Prompt: prompt}
}

func traceRoles(t *testing.T, trace []json.RawMessage) []string {
	t.Helper()
	var roles []string
	for _, m := range trace {
		var v struct {
			Role string `json:"role"`
		}
		if err := json.Unmarshal(m, &v); err != nil {
			t.Fatalf("trace element %s: %v", m, err)
		}
		roles = append(roles, v.Role)
	}
	return roles
}
