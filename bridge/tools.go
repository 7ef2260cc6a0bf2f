package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/internal/proc"
)

// ToolsOptions configures NewTools.
type ToolsOptions struct {
	// Rules holds the command tools the user declared. Zero: none.
	Rules *rules.Set
	// Notify receives notify calls in addition to the log. Zero: log only.
	Notify func(Notification)
	// MaxOutput caps a command tool's output kept for the agent when its
	// spec sets none. Zero: 64 KiB.
	MaxOutput int
	// ChildEnvAllow names the variables command tools keep although
	// proc.RunEnviron withholds them (automate.child_env.allow). Zero:
	// none.
	ChildEnvAllow []string
	Logger        *slog.Logger // Zero: slog.Default()
}

// Tools executes the client tools hubgate runs itself when a run parks:
// the built-in notify, and the command tools the user declared (enabled
// explicitly in the config; they run an argv, never a shell string, in
// the environment of a run's children: proc.RunEnviron, without hubgate's
// secrets and the D-Bus session bus).
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
	cmd := proc.Command(argv[0], argv[1:]...)
	cmd.Env = proc.RunEnviron(t.opts.ChildEnvAllow)
	cmd.Dir = spec.Workdir
	if cmd.Dir == "" {
		// No workdir: the user's home, never the daemon's own directory.
		if home, err := os.UserHomeDir(); err == nil {
			cmd.Dir = home
		}
	}
	limit := spec.MaxOutput
	if limit <= 0 {
		limit = t.opts.MaxOutput
	}
	res, err := proc.Run(ctx, cmd, limit)
	out := res.Output
	if res.Truncated {
		out += "\n[output truncated]"
	}
	switch {
	case err == nil:
		return out, nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return out, fmt.Errorf("%s: stopped after %s: %w", spec.Name, timeout, ctx.Err())
	case errors.As(err, new(*exec.ExitError)):
		return out, fmt.Errorf("%s: %w; output: %s", spec.Name, err, preview(out, 400))
	}
	return out, fmt.Errorf("%s: %w", spec.Name, err)
}

// preview is s on one line (blanks collapsed), cut to at most n bytes on
// a rune boundary, with "…" when cut.
func preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
