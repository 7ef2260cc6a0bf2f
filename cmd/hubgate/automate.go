package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/servecli"
	"github.com/hubgate/hubgate/configs"
)

func newAutomateCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use: "automate",
		Example: `  hubgate automate serve --ephemeral-key   # the Automate server alone, key printed once
  hubgate automate key                     # the stored access key`,
		Short: "The local Automate server and its access key",
	}
	cmd.AddCommand(newServeCommand(a), newKeyCommand(a))
	groupCommand(cmd)
	return cmd
}

type serveFlags struct {
	assistant    string
	product      string
	upstream     string
	port         int
	workspace    string
	toolWait     time.Duration
	modelsFile   string
	model        string
	family       string
	size         string
	ephemeralKey bool
}

func newServeCommand(a *app) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use: "serve",
		Example: `  hubgate automate serve --ephemeral-key
  hubgate automate serve --assistant openai --model qwen3:8b   # a model through Ollama
  hubgate automate serve --port 4317 --workspace ~/agent-work`,
		Short: "Serve the Automate server on 127.0.0.1 (scripted engine, or an OpenAI-compatible model server)",
		Long: `Serve the Automate server on the IPv4 loopback address.

--assistant picks the engine behind it: scripted (the default; deterministic,
for tests and demos) or openai, an agent loop over an OpenAI-compatible model
server such as Ollama, llama-server, vLLM or LM Studio, given by --upstream
(default http://127.0.0.1:11434, Ollama) and --model (default: the first
downloaded tool-capable model it serves). The rest of the openai engine's
settings (API key variable, budgets, skills, MCP servers) live in the automate
section of the config file.

Without --port it binds the first free port of 4317..4328 (and says so when 4317
was taken); --port N forces a port, --port 0 takes any free port. Once it accepts
connections it prints its endpoint URL on stdout. SIGINT or SIGTERM stops it
cleanly; SIGHUP re-reads the access key (after 'hubgate automate key --rotate').

The access key comes from HUBGATE_AUTOMATE_KEY when set (at least 24
characters), else from the OS secret store (generated on first use). It is never
accepted as a flag. --ephemeral-key generates a key that lives only in this
process and prints it once on stderr, for machines without a secret store.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.assistant, "assistant", "", "engine: scripted or openai (default from automate.engine: scripted)")
	fl.StringVar(&f.upstream, "upstream", "", "openai engine: the model server's URL (default http://127.0.0.1:11434)")
	fl.IntVar(&f.port, "port", 0, "force this port (0: any free port); default: first free of 4317..4328")
	fl.StringVar(&f.workspace, "workspace", "", "workspace folder (default <config dir>/hubgate/automate-http-workspace)")
	fl.DurationVar(&f.toolWait, "tool-wait", 0, "how long a parked run waits for tool results per round (default 2m)")
	fl.StringVar(&f.modelsFile, "models", "", "JSON file replacing the scripted engine's model catalog")
	fl.StringVar(&f.model, "model", "", "select this catalog model at launch (openai engine: the upstream model to use)")
	fl.StringVar(&f.family, "family", "", "select a model of this family at launch")
	fl.StringVar(&f.size, "size", "", "select a model of this size code at launch")
	fl.StringVar(&f.product, "product", "", "product word: /health service <word>-agent, model ids, chat extension key (default from automate.product: service; auto serves service)")
	fl.BoolVar(&f.ephemeralKey, "ephemeral-key", false, "use a random key kept in memory only, printed once on stderr")
	return cmd
}

func (a *app) serve(ctx context.Context, cmd *cobra.Command, f serveFlags) error {
	overrides, err := serveOverrides(cmd, f)
	if err != nil {
		return err
	}
	cfg, err := a.loadConfig(overrides)
	if err != nil {
		return err
	}
	log := a.logger(cfg)
	denyInspection(log)
	openai := cfg.Automate.Engine == "openai"
	if cmd.Flags().Changed("upstream") && !openai {
		return &usageError{fmt.Errorf("--upstream applies to the openai engine; add --assistant openai")}
	}
	if cmd.Flags().Changed("models") && openai {
		return &usageError{fmt.Errorf("--models replaces the scripted engine's catalog; the openai engine reads its catalog from the upstream")}
	}
	hup := make(chan os.Signal, 1)
	defer a.signals(hup, syscall.SIGHUP)()
	return servecli.Serve(ctx, servecli.Options{Config: cfg, Launch: server.LaunchSelection{ModelName: f.model, Family: f.family, SizeCode: f.size},
		AnyPort: cmd.Flags().Changed("port") && f.port == 0, EphemeralKey: f.ephemeralKey, Store: a.secretStore(cfg, log, a.tellErr),
		Getenv: a.getenv, HUP: hup, AppVersion: version(), Logger: log, Out: a.stdio.Out, Err: a.stdio.Err})
}

// serveOverrides maps serve's flags onto configuration overrides.
func serveOverrides(cmd *cobra.Command, f serveFlags) ([]configs.Override, error) {
	var overrides []configs.Override
	override := func(flag, path, value string) {
		if cmd.Flags().Changed(flag) {
			overrides = append(overrides, configs.Override{Path: path, Value: value, Origin: "flag --" + flag})
		}
	}
	override("workspace", "automate.workspace", f.workspace)
	override("tool-wait", "automate.tool_wait", f.toolWait.String())
	override("models", "automate.models_file", f.modelsFile)
	override("assistant", "automate.engine", f.assistant)
	override("upstream", "automate.openai.upstream", f.upstream)
	override("product", "automate.product", f.product)
	override("model", "automate.openai.model", f.model)
	if cmd.Flags().Changed("port") {
		if f.port < 0 || f.port > 65535 {
			return nil, &usageError{fmt.Errorf("--port must be between 0 and 65535, got %d", f.port)}
		}
		// --port 0 means "any free port" here, while automate.port 0 in
		// the file means "the window"; the config keeps the window.
		if f.port > 0 {
			override("port", "automate.port", strconv.Itoa(f.port))
		}
	}
	return overrides, nil
}

func newKeyCommand(a *app) *cobra.Command {
	var rotate bool
	cmd := &cobra.Command{
		Use: "key",
		Example: `  hubgate automate key            # print the key (creating it on first use)
  hubgate automate key --rotate   # replace it; a running server takes it on SIGHUP`,
		Short: "Print the Automate access key from the OS secret store (generated on first use)",
		Long: `Print the Automate access key stored in the OS secret store, generating it on
first use. --rotate replaces it; a running 'hubgate automate serve' picks the new
key up on SIGHUP or restart, and the old key stops working then.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _ := a.loadConfig(nil) // its secrets setting when it loads; else auto
			store := a.secretStore(cfg, slog.New(slog.DiscardHandler), a.tellErr)
			var key string
			var err error
			if rotate {
				key, err = configs.RotateAutomateKey(cmd.Context(), store)
			} else {
				key, _, err = configs.AutomateKey(cmd.Context(), store, func(string) string { return "" })
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(a.stdio.Out, key)
			return err
		},
	}
	cmd.Flags().BoolVar(&rotate, "rotate", false, "replace the stored key with a new one")
	return cmd
}
