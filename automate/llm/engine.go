package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/toolkit"
	"github.com/hubgate/hubgate/internal/sysmem"
)

// DefaultUpstream is Ollama on loopback.
const DefaultUpstream = "http://127.0.0.1:11434"

// Defaults of Config.
const (
	DefaultMaxSteps          = 32
	DefaultToolTimeout       = 2 * time.Minute
	DefaultMaxOutputTokens   = 4096
	DefaultSchemaRetries     = 3
	DefaultFetchMaxBytes     = 1 << 20
	DefaultFetchTimeout      = 20 * time.Second
	DefaultSkillBudget       = 3
	DefaultSkillChars        = 12000
	DefaultMcpServerBudget   = 2
	DefaultCatalogRefresh    = 30 * time.Second
	DefaultCatalogTimeout    = 15 * time.Second
	DefaultMaxHistoryTurns   = 20
	DefaultToolResultChars   = 16000
	DefaultMaxContinuations  = 2
	DefaultDialRetries       = 2
	DefaultDialRetryWait     = 250 * time.Millisecond
	maxThinkingTokenMultiple = 4 // thinkingLevel max multiplies MaxOutputTokens
	catalogRetryWait         = 2 * time.Second
)

// Config configures New. Zero values are documented per field.
type Config struct {
	// Upstream is the root URL of the OpenAI-compatible server; a trailing
	// /v1 is accepted. Zero: DefaultUpstream (Ollama on loopback).
	Upstream string
	// Model is the upstream model serving runs (the application's own
	// selection). Zero: the first downloaded, tool-capable, available
	// model of the catalog, by name.
	Model string
	// APIKey is sent as a bearer token to the upstream. Zero: none. It is
	// never logged.
	APIKey string
	// HTTPClient talks to the upstream. Its idle connections are closed
	// when a run ends, so that no connection outlives a run. Zero: a client
	// with a 10 s dial timeout and no overall timeout (answers stream).
	HTTPClient *http.Client
	// FetchClient serves fetch_url. Zero: a client with FetchTimeout and at
	// most 10 redirects.
	FetchClient *http.Client
	// DisableStreaming asks for whole answers instead of streams (time to
	// first token then equals the time to the whole answer). Zero: stream.
	DisableStreaming bool
	// MaxSteps is the step budget (tool calls) of a run; beyond it the run
	// fails with EXECUTION_TIMEOUT. Zero: DefaultMaxSteps.
	MaxSteps int
	// ToolTimeout bounds one built-in or MCP tool call; a call beyond it
	// fails the run with TOOL_TIMEOUT. Zero: DefaultToolTimeout.
	ToolTimeout time.Duration
	// RunBudget bounds a run's execution; beyond it the run fails with
	// EXECUTION_TIMEOUT. Zero: none (the request's timeoutMs applies).
	RunBudget time.Duration
	// MaxOutputTokens is max_tokens of every upstream call (thinkingLevel
	// max multiplies it by 4). Zero: DefaultMaxOutputTokens; negative: not
	// sent.
	MaxOutputTokens int
	// ContextSize is the context window (tokens) reported and enforced.
	// Zero: what the upstream reports for the model, else 1024 tokens per
	// GiB of RAM clamped to [4096, 131072].
	ContextSize int
	// ThinkingLevel applies when a run sends none (low, medium, high,
	// max). Zero: nothing is sent.
	ThinkingLevel string
	// SchemaRetries is how many invalid calls of one tool in a row end the
	// run with SCHEMA_INVALID. Zero: DefaultSchemaRetries.
	SchemaRetries int
	// FetchMaxBytes and FetchTimeout limit fetch_url. Zero: 1 MiB, 20 s.
	FetchMaxBytes int64
	FetchTimeout  time.Duration
	// SkillsDir is the folder of AI Skills (see LoadSkills). Zero: none.
	SkillsDir string
	// SkillBudget caps the skills the relevance step adds; SkillChars
	// caps their instructions' total size. Zero: 3 skills, 12000
	// characters; negative: none added (selected skills still come in).
	SkillBudget, SkillChars int
	// McpServers are the user's configured MCP servers; RequireApproval is
	// taken as configured (configs defaults it to true). Values of Env and
	// Headers may reference this process's environment as ${VAR}. Zero:
	// none.
	McpServers []automate.InlineMcpServer
	// McpServerBudget caps the configured MCP servers the relevance step
	// adds. Zero: DefaultMcpServerBudget; negative: none.
	McpServerBudget int
	// McpSecrets holds the OAuth tokens of remote MCP servers that need
	// authorization (`hubgate mcp login`; see toolkit.McpConfig.Secrets).
	// Nil: such servers fail to connect with toolkit.ErrMcpLoginRequired.
	McpSecrets toolkit.McpSecretStore
	// MCPConnectTimeout bounds connecting a run's MCP servers. Zero:
	// toolkit.DefaultMcpConnectTimeout.
	MCPConnectTimeout time.Duration
	// ChildEnvAllow names the variables a run's children (run_command,
	// stdio MCP servers) keep although proc.RunEnviron withholds them (session
	// bus names; a secret is withheld whatever it says):
	// automate.child_env.allow. Zero: none.
	ChildEnvAllow []string
	// KnownModels are models known but not downloaded; they join the
	// catalog with Downloaded false. Zero: none.
	KnownModels []automate.ModelOption
	// ConversationStore is the JSON file keeping the conversation for
	// continuation across restarts and force cancels. Zero: memory only.
	ConversationStore string
	// MaxHistoryTurns bounds the turns kept in the conversation. Zero:
	// DefaultMaxHistoryTurns.
	MaxHistoryTurns int
	// ToolResultChars bounds the tool result text the model sees (steps
	// keep the full text). Zero: DefaultToolResultChars.
	ToolResultChars int
	// BasePrompt is the first section of the system prompt. Zero:
	// assistant.BasePrompt.
	BasePrompt string
	// CatalogRefresh is how old the catalog may get before Catalog fetches
	// it again (in the background). Zero: DefaultCatalogRefresh.
	CatalogRefresh time.Duration
	// CatalogTimeout bounds one catalog fetch. Zero: DefaultCatalogTimeout.
	CatalogTimeout time.Duration
	// DialRetries is how many times a request whose connection could not
	// be made is tried again, DialRetryWait apart (doubling). Zero: 2 and
	// 250 ms; negative retries: none.
	DialRetries   int
	DialRetryWait time.Duration
	// TotalMemory returns the machine's RAM for availableForDevice and the
	// context size. Zero: the machine's RAM.
	TotalMemory func() uint64
	// Logger receives run lines (counts, statuses, codes; never prompts,
	// arguments, keys or headers). Zero: slog.Default().
	Logger *slog.Logger
	// Now is the clock. Zero: time.Now.
	Now func() time.Time
}

// ErrUnknownModel is wrapped by ActivateModel for a name not in the catalog.
var ErrUnknownModel = errors.New("no such model in the catalog")

// ErrCatalogLoading is wrapped by ActivateModel while the catalog is
// still loading (the upstream has not answered yet).
var ErrCatalogLoading = errors.New("the model catalog is still loading")

// Engine is the OpenAI-compatible upstream engine. It is safe for
// concurrent use; the server runs one task at a time. Close it when done.
type Engine struct {
	cfg      Config
	log      *slog.Logger
	now      func() time.Time
	up       *upstream
	fetch    *fetcher
	ram      uint64
	local    bool // the upstream runs on this machine
	known    []automate.ModelOption
	ownHTTP  bool // cfg.HTTPClient was nil: the engine owns its client
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bg       sync.WaitGroup

	mu          sync.Mutex
	snap        *snapshot // last catalog fetch; nil while loading
	lastTry     time.Time // last fetch attempt
	refreshing  bool
	pinned      string // model activated through ActivateModel; "" = own selection
	noReasoning map[string]bool

	// conv is the warm worker and the stored conversation.
	conv *assistant.Conversation[turn, chatMessage]
}

// worker is the warm worker: the model proven to serve and the thread of
// the conversation (the exact messages, tool calls included).
type worker = assistant.Worker[chatMessage]

var _ assistant.Assistant = (*Engine)(nil)

// New returns an engine for cfg and starts loading the catalog in the
// background. A conversation store that cannot be read is logged and
// started afresh.
func New(cfg Config) *Engine {
	if cfg.Upstream == "" {
		cfg.Upstream = DefaultUpstream
	}
	setDefault(&cfg.MaxSteps, DefaultMaxSteps)
	setDefault(&cfg.ToolTimeout, DefaultToolTimeout)
	setDefault(&cfg.MaxOutputTokens, DefaultMaxOutputTokens)
	setDefault(&cfg.SchemaRetries, DefaultSchemaRetries)
	setDefault(&cfg.FetchMaxBytes, DefaultFetchMaxBytes)
	setDefault(&cfg.FetchTimeout, DefaultFetchTimeout)
	setDefault(&cfg.SkillBudget, DefaultSkillBudget)
	setDefault(&cfg.SkillChars, DefaultSkillChars)
	setDefault(&cfg.McpServerBudget, DefaultMcpServerBudget)
	setDefault(&cfg.CatalogRefresh, DefaultCatalogRefresh)
	setDefault(&cfg.CatalogTimeout, DefaultCatalogTimeout)
	setDefault(&cfg.MaxHistoryTurns, DefaultMaxHistoryTurns)
	setDefault(&cfg.ToolResultChars, DefaultToolResultChars)
	setDefault(&cfg.DialRetries, DefaultDialRetries)
	setDefault(&cfg.DialRetryWait, DefaultDialRetryWait)
	if cfg.DialRetries < 0 {
		cfg.DialRetries = 0
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	hc, own := cfg.HTTPClient, false
	if hc == nil {
		own = true
		hc = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       30 * time.Second,
			ResponseHeaderTimeout: 0, // a cold model may take minutes to answer
		}}
	}
	fc := cfg.FetchClient
	if fc == nil {
		// Its own transport, so that a run's cleanup closes only its
		// connections.
		fc = &http.Client{Timeout: cfg.FetchTimeout, Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			IdleConnTimeout:     30 * time.Second,
		}}
	}
	memFn := cfg.TotalMemory
	if memFn == nil {
		memFn = sysmem.TotalRAM
	}
	e := &Engine{
		cfg:         cfg,
		log:         log,
		now:         now,
		up:          &upstream{root: rootURL(cfg.Upstream), key: cfg.APIKey, hc: hc, now: now, log: log, dialRetries: cfg.DialRetries, retryWait: cfg.DialRetryWait},
		fetch:       &fetcher{hc: fc, maxBytes: cfg.FetchMaxBytes},
		ram:         memFn(),
		local:       isLoopbackURL(cfg.Upstream),
		known:       slices.Clone(cfg.KnownModels),
		ownHTTP:     own,
		noReasoning: map[string]bool{},
	}
	e.bgCtx, e.bgCancel = context.WithCancel(context.Background())
	history, err := loadStore(cfg.ConversationStore)
	if err != nil {
		log.Warn("llm: conversation store unreadable; starting a new conversation", "err", err)
	}
	e.conv = assistant.NewConversation(assistant.ConversationOptions[turn, chatMessage]{
		Thread:    threadFromHistory,
		MaxTurns:  cfg.MaxHistoryTurns,
		TurnStart: func(m chatMessage) bool { return m.Role == "user" },
	}, history)
	e.mu.Lock()
	e.kickRefreshLocked()
	e.mu.Unlock()
	return e
}

func setDefault[T int | int64 | time.Duration](p *T, def T) {
	if *p == 0 {
		*p = def
	}
}

// Close stops the background catalog refresh, waits for it and closes the
// engine's idle upstream connections.
func (e *Engine) Close() error {
	e.bgCancel()
	e.bg.Wait()
	e.up.hc.CloseIdleConnections()
	return nil
}

// kickRefreshLocked starts a background catalog fetch when none runs and
// the catalog is missing (after a short retry wait) or stale.
func (e *Engine) kickRefreshLocked() {
	if e.refreshing || e.bgCtx.Err() != nil {
		return
	}
	now := e.now()
	if e.snap == nil {
		if !e.lastTry.IsZero() && now.Sub(e.lastTry) < catalogRetryWait {
			return
		}
	} else if now.Sub(e.snap.fetchedAt) < e.cfg.CatalogRefresh {
		return
	}
	e.refreshing = true
	e.lastTry = now
	e.bg.Go(func() {
		ctx, cancel := context.WithTimeout(e.bgCtx, e.cfg.CatalogTimeout)
		defer cancel()
		snap, err := e.up.fetchSnapshot(ctx)
		e.mu.Lock()
		e.refreshing = false
		if err == nil {
			e.snap = snap
		}
		e.mu.Unlock()
		if err != nil {
			e.log.Debug("llm: catalog fetch failed", "err", err)
		}
		if e.ownHTTP {
			e.up.hc.CloseIdleConnections()
		}
	})
}

// refreshNow fetches the catalog in the caller's goroutine.
func (e *Engine) refreshNow(ctx context.Context) (*snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.CatalogTimeout)
	defer cancel()
	snap, err := e.up.fetchSnapshot(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lastTry = e.now()
	if err != nil {
		return nil, err
	}
	e.snap = snap
	return snap, nil
}

// catalogLocked is the merged catalog of the last fetch.
func (e *Engine) catalogLocked() []automate.ModelOption {
	return mergeCatalog(e.snap, e.known, e.ram, e.local)
}

// ownModelLocked is the engine's own selection: the configured model, else
// the first eligible catalog model.
func (e *Engine) ownModelLocked() string {
	if e.cfg.Model != "" {
		return e.cfg.Model
	}
	if e.snap == nil {
		return ""
	}
	for _, m := range e.catalogLocked() {
		if m.Downloaded && m.SupportsTools && m.AvailableForDevice {
			return m.Name
		}
	}
	return ""
}

// activeModelLocked is the model serving the next run.
func (e *Engine) activeModelLocked() string {
	if e.pinned != "" {
		return e.pinned
	}
	return e.ownModelLocked()
}

// Catalog implements assistant.Assistant: not ready (no models) until the
// upstream answered once; then the merged catalog, Selected on the
// engine's own selection. A stale catalog is refreshed in the background.
func (e *Engine) Catalog(context.Context) (assistant.Catalog, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.kickRefreshLocked()
	if e.snap == nil {
		return assistant.Catalog{Ready: false, Models: []automate.ModelOption{}}, nil
	}
	models := e.catalogLocked()
	own := e.ownModelLocked()
	for i := range models {
		models[i].Selected = models[i].Name == own
	}
	return assistant.Catalog{Ready: true, Models: models}, nil
}

// ActivateModel implements assistant.Assistant: name must be in the
// catalog ("" returns to the engine's own selection). A switch to another
// model drops the warm worker.
func (e *Engine) ActivateModel(ctx context.Context, name string) error {
	if name != "" {
		e.mu.Lock()
		loaded := e.snap != nil
		e.mu.Unlock()
		if !loaded {
			if _, err := e.refreshNow(ctx); err != nil {
				return fmt.Errorf("%w: %w", ErrCatalogLoading, err)
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if name != "" && !slices.ContainsFunc(e.catalogLocked(), func(m automate.ModelOption) bool { return m.Name == name }) {
		return fmt.Errorf("%w: %q", ErrUnknownModel, name)
	}
	before := e.activeModelLocked()
	e.pinned = name
	if after := e.activeModelLocked(); after != before {
		e.conv.Terminate()
		e.log.Info("llm: model activated", "model", after)
	}
	return nil
}

// Runtime implements assistant.Assistant.
func (e *Engine) Runtime() assistant.Runtime {
	e.mu.Lock()
	defer e.mu.Unlock()
	model := e.activeModelLocked()
	cs := e.contextSizeLocked(model)
	return assistant.Runtime{
		ModelName:     model,
		WorkerRunning: e.conv.Warm(),
		Backend:       e.backendLocked(model),
		ContextSize:   &cs,
	}
}

// Terminate implements assistant.Assistant: the warm worker and its thread
// are dropped (the run's requests were cancelled with its context); the
// stored conversation stays. The upstream process is not hubgate's to
// kill.
func (e *Engine) Terminate() {
	if model, ok := e.conv.Terminate(); ok {
		e.log.Info("llm: worker terminated", "model", model)
	}
}

// backendLocked describes the upstream; nil before it ever answered.
// Accelerator comes from Ollama's /api/ps for a loaded model (gpu, cpu or
// gpu+cpu) and is "unknown" otherwise; cpuFallback cannot be observed
// through these APIs and is always false.
func (e *Engine) backendLocked(model string) *automate.Backend {
	if e.snap == nil {
		return nil
	}
	b := &automate.Backend{FlavorID: e.snap.flavor, Accelerator: "unknown"}
	if m, ok := e.snap.model(model); ok && e.snap.flavor == FlavorOllama && m.loaded {
		switch {
		case m.sizeVRAM <= 0:
			b.Accelerator = "cpu"
		case m.sizeBytes > 0 && m.sizeVRAM < m.sizeBytes:
			b.Accelerator = "gpu+cpu"
		default:
			b.Accelerator = "gpu"
		}
	}
	return b
}

// contextSizeLocked is the context window of model: the configured one,
// else the upstream's (Ollama's for a loaded model, vLLM's max_model_len,
// llama-server's n_ctx), else the RAM rule (assistant.ContextSizeForRAM).
func (e *Engine) contextSizeLocked(model string) int {
	if e.cfg.ContextSize > 0 {
		return e.cfg.ContextSize
	}
	if e.snap != nil {
		if m, ok := e.snap.model(model); ok && m.contextLen > 0 {
			return m.contextLen
		}
		if e.snap.contextSize > 0 {
			return e.snap.contextSize
		}
	}
	return assistant.ContextSizeForRAM(e.ram)
}

// threadFromHistory rebuilds a thread from stored turns.
func threadFromHistory(h []turn) []chatMessage {
	var out []chatMessage
	for _, t := range h {
		out = append(out, chatMessage{Role: "user", Content: t.Prompt}, chatMessage{Role: "assistant", Content: t.Answer})
	}
	return out
}

// endConversation ends the conversation's run on w (see
// assistant.Conversation.End) and persists the stored turns.
func (e *Engine) endConversation(w *worker, msgs []chatMessage, t turn) {
	e.conv.End(w, msgs, t)
	if err := saveStore(e.cfg.ConversationStore, e.conv.History()); err != nil {
		e.log.Warn("llm: conversation not persisted", "err", err)
	}
}

// modelProblem says why model cannot serve according to the catalog, or "".
func (e *Engine) modelProblem(model string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.snap == nil {
		return ""
	}
	if _, ok := e.snap.model(model); ok {
		return ""
	}
	for _, k := range e.known {
		if strings.EqualFold(k.Name, model) {
			return fmt.Sprintf("Model %s is not downloaded on the model server at %s", model, e.up.root)
		}
	}
	served := e.snap.names()
	if len(served) == 0 {
		return fmt.Sprintf("Model %s is not served by the model server at %s (it serves no model)", model, e.up.root)
	}
	return fmt.Sprintf("Model %s is not served by the model server at %s (it serves: %s)", model, e.up.root, clip(strings.Join(served, ", "), 300))
}

// reasoningSupported reports whether reasoning_effort may be sent for model:
// not when Ollama says the model cannot think, nor after the upstream
// refused the parameter for it once.
func (e *Engine) reasoningSupported(model string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.noReasoning[model] {
		return false
	}
	if e.snap != nil {
		if m, ok := e.snap.model(model); ok && m.thinking != nil && !*m.thinking {
			return false
		}
	}
	return true
}

func (e *Engine) refuseReasoning(model string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.noReasoning[model] = true
}
