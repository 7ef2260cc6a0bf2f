// Package servecli owns `hubgate automate serve`: the engine the
// configuration names (Engine, which the daemon's co-hosted server uses
// too), the access key (the environment or the OS secret store, or one
// kept in memory only), the server started in its port window, its URL on
// stdout, and serving until stopped with the key read again on each
// SIGHUP. cmd wires the flags and loads the configuration; only cmd
// imports this package.
package servecli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/engine"
	"github.com/hubgate/hubgate/automate/llm"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/configs"
)

// Options is one `hubgate automate serve`.
type Options struct {
	Config *configs.Config // loaded, the flags applied
	// Launch is the catalogue model selected at launch (--model, --family,
	// --size); the openai engine's --model is its own setting instead.
	Launch server.LaunchSelection
	// AnyPort takes any free port (--port 0), where automate.port 0 is the
	// port window.
	AnyPort bool
	// EphemeralKey generates a key kept in this process only and prints
	// it once on Err; else the key comes from Getenv or Store.
	EphemeralKey bool
	Store        configs.SecretStore
	// Getenv reads the environment: the access key's variable, the openai
	// engine's API key.
	Getenv func(string) string
	// HUP receives the signals that re-read the key (SIGHUP).
	HUP        <-chan os.Signal
	AppVersion string
	Logger     *slog.Logger
	Out, Err   io.Writer
}

// Serve finds the access key, builds the engine, starts the Automate
// server, prints its URL on Out once it accepts connections, and serves
// until ctx ends or serving fails, then closes it.
func Serve(ctx context.Context, o Options) error {
	log := o.Logger
	key, source, err := o.key(ctx)
	if err != nil {
		return err
	}
	eng, err := Engine(o.Config, o.Store, o.Getenv, log)
	if err != nil {
		return err
	}
	defer eng.Close()
	run, err := server.Start(o.startOptions(eng, key))
	if err != nil {
		return err
	}
	if source == configs.KeyFromEphemeral {
		// Shown once, to the person who asked for it, as Jupyter shows its
		// token; never logged.
		fmt.Fprintf(o.Err, "hubgate: access key for this process only: %s\n", key)
	}
	log.Info("automate access key", "key_source", string(source))
	fmt.Fprintln(o.Out, run.URL())
	return run.ServeUntil(ctx, o.HUP, func() {
		if source == configs.KeyFromEphemeral {
			log.Warn("SIGHUP ignored: the key is ephemeral")
			return
		}
		key, newSource, err := o.key(ctx)
		if err == nil {
			err = run.Server().SetKey(key)
		}
		if err != nil {
			log.Error("reload access key", "err", err)
			return
		}
		log.Info("access key reloaded", "key_source", string(newSource))
	})
}

// key finds the access key: an ephemeral one, else the environment's or
// the secret store's.
func (o Options) key(ctx context.Context) (string, configs.KeySource, error) {
	if o.EphemeralKey {
		key, err := configs.GenerateAccessKey()
		return key, configs.KeyFromEphemeral, err
	}
	key, source, err := configs.AutomateKey(ctx, o.Store, o.Getenv)
	if err != nil {
		return "", "", fmt.Errorf("cannot start the Automate server without an access key: %w", err)
	}
	return key, source, nil
}

// startOptions are the Automate server's options.
func (o Options) startOptions(eng *engine.Engine, key string) server.StartOptions {
	cfg, launch := o.Config, o.Launch
	if cfg.Automate.Engine == "openai" {
		launch.ModelName = "" // --model is the engine's own selection (automate.openai.model), not a pin
	}
	port := cfg.Automate.Port // 0: the window
	if o.AnyPort {
		port = -1
	}
	// The ledger of the runs' process groups lives next to the journal, one
	// file per port: the next serve on a port (4317, the default, for
	// most) reaps what a killed one left.
	return server.StartOptions{Port: port, LedgerDir: filepath.Dir(cfg.Bridge.Journal), Config: server.Config{
		Key: key, Product: cfg.Automate.Product, Assistant: eng.Assistant, Workspace: cfg.Automate.Workspace,
		WorkspaceRestriction: cfg.Automate.WorkspaceRestriction, ToolWait: cfg.Automate.ToolWait, AppVersion: o.AppVersion,
		ConfiguredMcpServers: eng.McpServers, LaunchSelection: launch, Logger: o.Logger}}
}

// Engine makes the engine automate.engine names (automate/engine):
// the scripted one (with automate.models_file), or the OpenAI-compatible
// upstream engine of automate.openai, whose API key is read from the
// environment variable api_key_env names. store (nil: none) holds the
// OAuth tokens of remote MCP servers (`hubgate mcp login`).
func Engine(cfg *configs.Config, store configs.SecretStore, getenv func(string) string, log *slog.Logger) (*engine.Engine, error) {
	o := cfg.Automate.OpenAI
	opts := engine.Options{Kind: cfg.Automate.Engine, ChildEnvAllow: cfg.Automate.ChildEnv.Allow, Getenv: getenv, Logger: log}
	if store != nil {
		opts.McpSecrets = store
	}
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
