// Package engine owns the choice of the engine behind an Automate server
// (`hubgate run` co-hosted, `hubgate automate serve`): the scripted one,
// or the agent loop over an OpenAI-compatible model server, from plain
// values, with the names of the configured MCP servers the server needs
// beside it and how to close it.
package engine

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/llm"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/internal/proc"
)

// Options are the engine's settings.
type Options struct {
	// Kind is "scripted" (also "") or "openai".
	Kind string
	// Catalog replaces the scripted engine's model catalog (nil: its own).
	Catalog []automate.ModelOption
	// OpenAI is the openai engine's configuration, without its API key:
	// that is read from the environment variable APIKeyEnv names ("":
	// none is sent).
	OpenAI    llm.Config
	APIKeyEnv string
	// McpServers are the names of the user's configured MCP servers
	// (inline servers may not take them).
	McpServers []string
	// ChildEnvAllow names the variables the children of runs keep
	// although proc.RunEnviron withholds them (automate.child_env.allow).
	// Zero: none.
	ChildEnvAllow []string
	// McpSecrets holds the OAuth tokens of remote MCP servers that need
	// authorization (`hubgate mcp login`; see toolkit.McpConfig.Secrets).
	// Nil: such servers fail to connect with toolkit.ErrMcpLoginRequired.
	McpSecrets McpSecretStore
	Getenv     func(string) string // nil: no API key is read
	Logger     *slog.Logger        // nil: discarded
}

// McpSecretStore is the secret store the engines keep remote MCP
// servers' OAuth tokens in (toolkit.McpSecretStore: Get of nothing is an
// error matching fs.ErrNotExist); configs' SecretStore is one.
type McpSecretStore interface {
	Get(ctx context.Context, account string) (string, error)
	Set(ctx context.Context, account, value string) error
}

// Engine is a built engine.
type Engine struct {
	Assistant  assistant.Assistant
	McpServers []string
	close      func()
}

// Close stops what the engine runs (the openai engine's MCP servers).
func (e *Engine) Close() { e.close() }

// New builds the engine o.Kind names.
func New(o Options) (*Engine, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	switch o.Kind {
	case "openai":
		lc := o.OpenAI
		if lc.Logger == nil {
			lc.Logger = log.With("component", "engine")
		}
		if o.APIKeyEnv != "" {
			// The key is ours now: no child (a run's command, an MCP
			// server, the speech command) inherits it.
			proc.AlsoSecret(o.APIKeyEnv)
			if o.Getenv != nil {
				lc.APIKey = o.Getenv(o.APIKeyEnv)
			}
			if lc.APIKey == "" {
				log.Warn("automate.openai.api_key_env names a variable that is not set; no key is sent", "variable", o.APIKeyEnv)
			}
		}
		lc.ChildEnvAllow = o.ChildEnvAllow
		lc.McpSecrets = o.McpSecrets
		eng := llm.New(lc)
		log.Info("automate engine: openai", "upstream", lc.Upstream, "model", lc.Model, "mcp_servers", len(lc.McpServers), "skills_dir", lc.SkillsDir)
		return &Engine{Assistant: eng, McpServers: o.McpServers, close: func() { eng.Close() }}, nil
	case "scripted", "":
		return &Engine{Assistant: scripted.New(scripted.Config{Logger: log.With("component", "engine"), Catalog: o.Catalog, ChildEnvAllow: o.ChildEnvAllow, McpSecrets: o.McpSecrets}), close: func() {}}, nil
	}
	return nil, fmt.Errorf("unknown automate.engine %q", o.Kind)
}
