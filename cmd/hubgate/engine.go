package main

import (
	"fmt"
	"log/slog"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/llm"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/internal/proc"
)

// assistantEngine is the configured engine of an Automate server, with the
// names of the user's configured MCP servers (inline servers may not take
// them) and what to do when the server is gone.
type assistantEngine struct {
	engine     assistant.Assistant
	mcpServers []string
	close      func()
}

// buildAssistant makes the engine automate.engine names: the scripted one
// (with automate.models_file), or the OpenAI-compatible upstream engine of
// automate.openai, whose API key is read from the environment variable
// api_key_env names.
func buildAssistant(cfg *configs.Config, getenv func(string) string, log *slog.Logger) (*assistantEngine, error) {
	switch cfg.Automate.Engine {
	case "openai":
		o := cfg.Automate.OpenAI
		lc := llmConfig(o, log.With("component", "engine"))
		if o.APIKeyEnv != "" {
			// The key is ours now: no child (a run's command, an MCP
			// server, the speech command) inherits it.
			proc.AlsoSecret(o.APIKeyEnv)
			lc.APIKey = getenv(o.APIKeyEnv)
			if lc.APIKey == "" {
				log.Warn("automate.openai.api_key_env names a variable that is not set; no key is sent", "variable", o.APIKeyEnv)
			}
		}
		eng := llm.New(lc)
		log.Info("automate engine: openai", "upstream", o.Upstream, "model", o.Model, "mcp_servers", len(o.McpServers), "skills_dir", o.SkillsDir)
		return &assistantEngine{engine: eng, mcpServers: o.McpServerNames(), close: func() { eng.Close() }}, nil
	case "scripted", "":
		engineCfg := scripted.Config{Logger: log.With("component", "engine")}
		if cfg.Automate.ModelsFile != "" {
			cat, err := scripted.LoadCatalogFile(cfg.Automate.ModelsFile)
			if err != nil {
				return nil, &configs.ValidationError{Problems: []configs.FieldError{{Path: "automate.models_file", Message: err.Error(), Source: cfg.Source("automate.models_file")}}}
			}
			engineCfg.Catalog = cat
		}
		return &assistantEngine{engine: scripted.New(engineCfg), close: func() {}}, nil
	}
	return nil, fmt.Errorf("unknown automate.engine %q", cfg.Automate.Engine)
}

// llmConfig maps the automate.openai section onto the engine's Config
// (without the API key). Zero values of the file that mean "none" become
// the engine's negative values.
func llmConfig(o configs.OpenAIConfig, log *slog.Logger) llm.Config {
	none := func(v int) int {
		if v == 0 {
			return -1
		}
		return v
	}
	lc := llm.Config{
		Upstream:          o.Upstream,
		Model:             o.Model,
		DisableStreaming:  !o.Stream,
		MaxSteps:          o.MaxSteps,
		ToolTimeout:       o.ToolTimeout,
		RunBudget:         o.RunBudget,
		MaxOutputTokens:   none(o.MaxOutputTokens),
		ContextSize:       o.ContextSize,
		ThinkingLevel:     o.ThinkingLevel,
		SchemaRetries:     o.SchemaRetries,
		FetchMaxBytes:     int64(o.FetchMaxBytes),
		FetchTimeout:      o.FetchTimeout,
		SkillsDir:         o.SkillsDir,
		SkillBudget:       none(o.SkillBudget),
		McpServerBudget:   none(o.McpServerBudget),
		ConversationStore: o.ConversationStore,
		Logger:            log,
	}
	for _, k := range o.KnownModels {
		m := automate.ModelOption{Name: k.Name, Family: k.Family, SupportsTools: k.SupportsTools}
		if k.ParameterCountBillions > 0 {
			v := k.ParameterCountBillions
			m.ParameterCountBillions = &v
		}
		if k.FileSizeMb > 0 {
			v := k.FileSizeMb
			m.FileSizeMb = &v
		}
		lc.KnownModels = append(lc.KnownModels, m)
	}
	for _, s := range o.McpServers {
		lc.McpServers = append(lc.McpServers, automate.InlineMcpServer{
			Name: s.Name, Description: s.Description, Transport: s.Transport,
			Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers,
			RequireApproval: s.NeedsApproval(), DisabledTools: s.DisabledTools,
		})
	}
	return lc
}
