package scripted

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/toolkit"
	"github.com/hubgate/hubgate/internal/sysmem"
)

// Config configures New.
type Config struct {
	// Catalog is the model catalog; its selected entry (the first one, if
	// several are) is the application's default. Nil: DefaultCatalog().
	// Validate a catalog from a file with LoadCatalogFile.
	Catalog []automate.ModelOption
	// CatalogLoadDelay is how long after New the catalog reports loading
	// (Ready false, no models). Zero: ready at once.
	CatalogLoadDelay time.Duration
	// ColdStart is how long a cold worker takes to start (the run reports
	// initializing meanwhile; the run's context cuts it short). Zero: none.
	ColdStart time.Duration
	// MCPConnectTimeout bounds connecting to a run's inline MCP servers.
	// Zero: toolkit.DefaultMcpConnectTimeout (30 s).
	MCPConnectTimeout time.Duration
	// ChildEnvAllow names the variables a run's children (#!run, stdio
	// MCP servers) keep although proc.RunEnviron withholds them (session
	// bus names; a secret is withheld whatever it says):
	// automate.child_env.allow. Zero: none.
	ChildEnvAllow []string
	// McpSecrets holds the OAuth tokens of remote MCP servers that need
	// authorization (`hubgate mcp login`; see toolkit.McpConfig.Secrets).
	// Nil: such servers fail to connect with toolkit.ErrMcpLoginRequired.
	McpSecrets toolkit.McpSecretStore
	// Logger receives run lines (counts and statuses, never prompt text,
	// headers or env values). Nil: slog.Default().
	Logger *slog.Logger
	// Now is the clock for the catalog delay and the usage timings. Nil:
	// time.Now.
	Now func() time.Time
}

// Engine is the scripted assistant. It is safe for concurrent use; the
// server runs one task at a time.
type Engine struct {
	cfg          Config
	log          *slog.Logger
	now          func() time.Time
	created      time.Time
	catalog      []automate.ModelOption
	defaultModel string
	contextSize  int

	// conv is the warm worker (its thread: the turns it holds in memory)
	// and the stored history of the current conversation.
	conv *assistant.Conversation[turn, turn]

	mu     sync.Mutex
	active string // the model serving the next runs ("" = none)
}

// worker is the warm worker: the model it loaded and its in-memory thread.
type worker = assistant.Worker[turn]

// turn is one run of a conversation.
type turn struct {
	prompt string // the prompt as sent
	task   string // its task text
	answer string // its closing message
}

var _ assistant.Assistant = (*Engine)(nil)

// New returns a scripted engine.
func New(cfg Config) *Engine {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	catalog := slices.Clone(cfg.Catalog)
	if catalog == nil {
		catalog = DefaultCatalog()
	}
	def := ""
	for _, m := range catalog {
		if m.Selected {
			def = m.Name
			break
		}
	}
	return &Engine{
		cfg:          cfg,
		log:          log,
		now:          now,
		created:      now(),
		catalog:      catalog,
		defaultModel: def,
		contextSize:  assistant.ContextSizeForRAM(sysmem.TotalRAM()),
		conv:         assistant.NewConversation(assistant.ConversationOptions[turn, turn]{Thread: slices.Clone[[]turn]}, nil),
		active:       def,
	}
}

func backend() *automate.Backend {
	return &automate.Backend{FlavorID: "scripted", Accelerator: "cpu", CPUFallback: false}
}

// Catalog implements assistant.Assistant: no models while loading, then the
// catalog with Selected on the active model (the application's default, or
// the model activated last).
func (e *Engine) Catalog(context.Context) (assistant.Catalog, error) {
	if e.now().Sub(e.created) < e.cfg.CatalogLoadDelay {
		return assistant.Catalog{Ready: false, Models: []automate.ModelOption{}}, nil
	}
	e.mu.Lock()
	active := e.active
	e.mu.Unlock()
	models := slices.Clone(e.catalog)
	for i := range models {
		models[i].Selected = models[i].Name == active
	}
	return assistant.Catalog{Ready: true, Models: models}, nil
}

// ActivateModel implements assistant.Assistant. The name must be in the
// catalog (exact name); "" returns to the application's default. The
// eligibility rules (downloaded, tool-capable, available) are the server's
// to apply. Switching to another model tears the warm worker down; the
// same model keeps it.
func (e *Engine) ActivateModel(_ context.Context, name string) error {
	if name == "" {
		name = e.defaultModel
	} else if !slices.ContainsFunc(e.catalog, func(m automate.ModelOption) bool { return m.Name == name }) {
		return fmt.Errorf("%w: %q", ErrUnknownModel, name)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.active != name {
		e.active = name
		e.conv.Terminate()
		e.log.Info("scripted: model activated", "model", name)
	}
	return nil
}

// Runtime implements assistant.Assistant.
func (e *Engine) Runtime() assistant.Runtime {
	e.mu.Lock()
	defer e.mu.Unlock()
	cs := e.contextSize
	return assistant.Runtime{
		ModelName:     e.active,
		WorkerRunning: e.conv.Warm(),
		Backend:       backend(),
		ContextSize:   &cs,
	}
}

// Terminate implements assistant.Assistant: the warm worker (and its
// thread) is gone; the stored history stays.
func (e *Engine) Terminate() {
	if model, ok := e.conv.Terminate(); ok {
		e.log.Info("scripted: worker terminated", "model", model)
	}
}

func (e *Engine) model(name string) (automate.ModelOption, bool) {
	for _, m := range e.catalog {
		if m.Name == name {
			return m, true
		}
	}
	return automate.ModelOption{}, false
}

// Run implements assistant.Assistant; see docs/scripted.md.
func (e *Engine) Run(ctx context.Context, task *assistant.Task, env assistant.Env) (*assistant.Result, error) {
	e.mu.Lock()
	modelName := e.active
	e.mu.Unlock()
	r := &run{
		e: e, ctx: ctx, task: task, env: env,
		sc:  parseScript(task.Prompt),
		res: &assistant.Result{Model: modelName, Backend: backend()},
	}
	defer r.closeMcp()

	if failure := e.loadable(modelName); failure != "" {
		e.log.Warn("scripted: model cannot load", "request_id", task.RequestID, "model", modelName)
		r.res.Status, r.res.ErrorCode, r.res.Answer = automate.StatusFailed, automate.ErrorModelLoadFailed, failure
		return r.res, nil
	}

	w, cold, err := e.acquireWorker(ctx, env, modelName)
	if err != nil {
		return r.res, fmt.Errorf("starting the worker: %w", err)
	}
	r.prior = e.conv.Begin(w, task.Continuation)
	defer func() {
		t := turn{prompt: task.Prompt, task: r.sc.taskText, answer: r.res.Answer}
		e.conv.End(w, []turn{t}, t)
	}()

	e.log.Info("scripted: run", "request_id", task.RequestID, "model", modelName, "cold", cold,
		"directives", len(r.sc.directives), "continuation", task.Continuation, "prior_turns", len(r.prior))
	res, err := r.execute()
	e.log.Info("scripted: run ended", "request_id", task.RequestID, "status", res.Status, "error_code", res.ErrorCode, "err", err)
	return res, err
}

// loadable returns why the model cannot serve a run, or "".
func (e *Engine) loadable(name string) string {
	if name == "" {
		return "No model is selected; select one with POST /v1/automate/models/select"
	}
	m, ok := e.model(name)
	switch {
	case !ok:
		return fmt.Sprintf("Model %s is not in the catalog", name)
	case !m.Downloaded:
		return fmt.Sprintf("Model %s is not downloaded", name)
	case !m.AvailableForDevice:
		return fmt.Sprintf("Model %s cannot run on this device", name)
	}
	return ""
}

// acquireWorker returns the warm worker, starting one (initializing,
// ColdStart) when there is none.
func (e *Engine) acquireWorker(ctx context.Context, env assistant.Env, model string) (*worker, bool, error) {
	if w := e.conv.Acquire(model); w != nil {
		return w, false, nil
	}
	env.SetStatus(automate.WorkflowInitializing)
	if d := e.cfg.ColdStart; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, true, ctx.Err()
		}
	}
	// The new worker rebuilds its thread from the stored history.
	return e.conv.Start(model), true, nil
}

// words counts blank-separated words (the deterministic token figure).
func words(s string) int { return len(strings.Fields(s)) }
