package main

import (
	"log/slog"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/engine"
	"github.com/hubgate/hubgate/automate/llm"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/configs"
)

// buildAssistant makes the engine automate.engine names (automate/engine):
// the scripted one (with automate.models_file), or the OpenAI-compatible
// upstream engine of automate.openai, whose API key is read from the
// environment variable api_key_env names.
func buildAssistant(cfg *configs.Config, getenv func(string) string, log *slog.Logger) (*engine.Engine, error) {
	o := cfg.Automate.OpenAI
	opts := engine.Options{Kind: cfg.Automate.Engine, Getenv: getenv, Logger: log}
	switch opts.Kind {
	case "openai":
		opts.OpenAI, opts.APIKeyEnv, opts.McpServers = llmConfig(o), o.APIKeyEnv, o.McpServerNames()
	case "scripted", "":
		if cfg.Automate.ModelsFile != "" {
			cat, err := scripted.LoadCatalogFile(cfg.Automate.ModelsFile)
			if err != nil {
				return nil, &configs.ValidationError{Problems: []configs.FieldError{{Path: "automate.models_file", Message: err.Error(), Source: cfg.Source("automate.models_file")}}}
			}
			opts.Catalog = cat
		}
	}
	return engine.New(opts)
}

// llmConfig maps the automate.openai section onto the engine's Config
// (without the API key and the logger). Zero values of the file that mean
// "none" become the engine's negative values.
func llmConfig(o configs.OpenAIConfig) llm.Config {
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
