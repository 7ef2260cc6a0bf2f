package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/toolkit"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/rules"
)

// Notification is a message the notify tool reported to the user.
type Notification = control.Notification

// ToolsOptions configures NewTools.
type ToolsOptions struct {
	// Rules holds the command tools the user declared. Zero: none.
	Rules *rules.Set
	// Notify receives notify calls in addition to the log. Zero: log only.
	Notify func(Notification)
	// MaxOutput caps a command tool's output kept for the agent when its
	// spec sets none. Zero: 64 KiB.
	MaxOutput int
	Logger    *slog.Logger // Zero: slog.Default()
}

// Tools executes the client tools hubgate runs itself when a run parks:
// the built-in notify, and the command tools the user declared (enabled
// explicitly in the config; they run an argv, never a shell string, with
// hubgate's secrets removed from the environment).
type Tools struct {
	opts     ToolsOptions
	rules    atomic.Pointer[rules.Set] // opts.Rules, replaced by SetRules
	log      *slog.Logger
	onNotify func(Notification) // set by the bridge for status
}

// NewTools returns an executor for opts.
func NewTools(opts ToolsOptions) *Tools {
	t := &Tools{opts: opts, log: opts.Logger}
	if t.log == nil {
		t.log = slog.Default()
	}
	if t.opts.MaxOutput <= 0 {
		t.opts.MaxOutput = 64 << 10
	}
	t.rules.Store(opts.Rules)
	return t
}

// SetRules replaces the set whose command tools are executed, for the
// calls that come after it (a configuration reload).
func (t *Tools) SetRules(set *rules.Set) { t.rules.Store(set) }

// Execute runs every call, in parallel, and returns one result per call.
// A tool that fails answers with an error the agent sees; it never fails
// the whole round.
func (t *Tools) Execute(ctx context.Context, calls []automate.ToolCall) []automate.ToolResult {
	results := make([]automate.ToolResult, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, err := t.call(ctx, c)
			if err != nil {
				results[i] = automate.ToolResult{ID: c.ID, Error: err.Error()}
				t.log.Info("client tool failed", "tool", c.Name, "call_id", c.ID, "err", err)
				return
			}
			results[i] = automate.TextResult(c.ID, text)
		}()
	}
	wg.Wait()
	return results
}

func (t *Tools) call(ctx context.Context, c automate.ToolCall) (string, error) {
	if c.Name == rules.NotifyToolName {
		return t.notify(c.Arguments)
	}
	if set := t.rules.Load(); set != nil {
		if spec, ok := set.CommandTool(c.Name); ok && spec.Enabled {
			argv, err := set.ToolArgv(c.Name, c.Arguments)
			if err != nil {
				return "", err
			}
			return t.command(ctx, spec, argv)
		}
	}
	return "", fmt.Errorf("tool %q is not one hubgate executes", c.Name)
}

func (t *Tools) notify(raw json.RawMessage) (string, error) {
	parsed, err := rules.ParseNotify(raw)
	if err != nil {
		return "", err
	}
	n := Notification{At: time.Now(), Level: parsed.Level, Message: parsed.Message}
	t.log.Info("notify", "level", n.Level, "message", n.Message)
	if t.onNotify != nil {
		t.onNotify(n)
	}
	if t.opts.Notify != nil {
		t.opts.Notify(n)
	}
	return "delivered", nil
}

// command runs a declared command tool: its argv templates over the
// call's arguments, in its own process group (killed whole on timeout).
func (t *Tools) command(ctx context.Context, spec rules.CommandToolSpec, argv []string) (string, error) {
	if len(argv) == 0 || argv[0] == "" {
		return "", fmt.Errorf("%s: empty argv", spec.Name)
	}
	timeout := spec.Timeout
	if timeout <= 0 {
		timeout = rules.DefaultToolTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = spec.Workdir
	if cmd.Dir == "" {
		// No workdir: the user's home, never the daemon's own directory.
		if home, err := os.UserHomeDir(); err == nil {
			cmd.Dir = home
		}
	}
	cmd.Env = toolkit.ChildEnviron()
	toolkit.SetProcessGroup(cmd)
	limit := spec.MaxOutput
	if limit <= 0 {
		limit = t.opts.MaxOutput
	}
	out := &capped{limit: limit}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("%s: %w", spec.Name, err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-ctx.Done():
		toolkit.KillProcessGroup(cmd)
		<-waited
		return out.String(), fmt.Errorf("%s: stopped after %s: %w", spec.Name, timeout, ctx.Err())
	}
	toolkit.KillProcessGroup(cmd) // leftovers of the group
	if err != nil {
		return out.String(), fmt.Errorf("%s: %w; output: %s", spec.Name, err, toolkit.Preview(out.String(), 400))
	}
	return out.String(), nil
}

// capped keeps the first limit bytes written to it.
type capped struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
	cut   bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.limit - c.buf.Len(); room < len(p) {
		c.buf.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return c.buf.String() + "\n[output truncated]"
	}
	return c.buf.String()
}
