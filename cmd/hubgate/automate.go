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
	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
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

// serveFlags are automate serve's flags as given.
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

// serveOptions are automate serve's options.
type serveOptions struct {
	IO     Stdio
	Getenv func(string) string // the access key's variable, the openai engine's API key
	// LoadConfig loads and validates the configuration with overrides
	// (the flags') applied.
	LoadConfig func(overrides []configs.Override) (*configs.Config, error)
	Logger     func(cfg *configs.Config) *slog.Logger
	// SecretStore holds the access key and MCP tokens (cfg's setting).
	SecretStore func(cfg *configs.Config, log *slog.Logger) configs.SecretStore
	// DenyInspection makes the process non-dumpable; nil: nothing.
	DenyInspection func(log *slog.Logger)
	// Signals subscribes to the process's signals (Process.Signals): a
	// SIGHUP reads the access key again. Nil: no SIGHUP.
	Signals func(c chan<- os.Signal, sigs ...os.Signal) (stop func())

	Flags serveFlags
	// Overrides are the configuration overrides of the flags that were
	// set (serveOverrides).
	Overrides []configs.Override
	// UpstreamSet, ModelsSet, PortSet: --upstream, --models, --port were
	// given.
	UpstreamSet, ModelsSet, PortSet bool
}

func newServeCommand(a *app) *cobra.Command { return newCmdServe(a, nil) }

// newCmdServe builds automate serve; runF (nil: runServe) gets the parsed
// options.
func newCmdServe(a *app, runF func(context.Context, *serveOptions) error) *cobra.Command {
	o := &serveOptions{IO: a.stdio, Getenv: a.getenv, LoadConfig: a.loadConfig, Logger: a.logger, DenyInspection: denyInspection,
		Signals: a.signals,
		SecretStore: func(cfg *configs.Config, log *slog.Logger) configs.SecretStore {
			return a.secretStore(cfg, log, a.tellErr)
		}}
	f := &o.Flags
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
			var err error
			if o.Overrides, err = serveOverrides(cmd, *f); err != nil {
				return err
			}
			o.UpstreamSet, o.ModelsSet, o.PortSet = cmd.Flags().Changed("upstream"), cmd.Flags().Changed("models"), cmd.Flags().Changed("port")
			return cliout.Run(cmd, runF, runServe, o)
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

// runServe serves the Automate server (servecli.Serve) until ctx ends.
func runServe(ctx context.Context, o *serveOptions) error {
	f := o.Flags
	cfg, err := o.LoadConfig(o.Overrides)
	if err != nil {
		return err
	}
	log := o.Logger(cfg)
	if o.DenyInspection != nil {
		o.DenyInspection(log)
	}
	openai := cfg.Automate.Engine == "openai"
	if o.UpstreamSet && !openai {
		return &usageError{fmt.Errorf("--upstream applies to the openai engine; add --assistant openai")}
	}
	if o.ModelsSet && openai {
		return &usageError{fmt.Errorf("--models replaces the scripted engine's catalog; the openai engine reads its catalog from the upstream")}
	}
	hup := make(chan os.Signal, 1)
	if o.Signals != nil {
		defer o.Signals(hup, syscall.SIGHUP)()
	}
	return servecli.Serve(ctx, servecli.Options{Config: cfg, Launch: server.LaunchSelection{ModelName: f.model, Family: f.family, SizeCode: f.size},
		AnyPort: o.PortSet && f.port == 0, EphemeralKey: f.ephemeralKey, Store: o.SecretStore(cfg, log),
		Getenv: o.Getenv, HUP: hup, AppVersion: version(), Logger: log, Out: o.IO.Out, Err: o.IO.Err})
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

// keyOptions are automate key's options.
type keyOptions struct {
	IO Stdio
	// LoadConfig loads the configuration; on an error the secrets setting
	// is auto.
	LoadConfig func() (*configs.Config, error)
	// SecretStore holds the key (cfg nil: auto).
	SecretStore func(cfg *configs.Config) configs.SecretStore
	Rotate      bool // --rotate: replace the stored key
}

func newKeyCommand(a *app) *cobra.Command { return newCmdKey(a, nil) }

// newCmdKey builds automate key; runF (nil: runKey) gets the parsed
// options.
func newCmdKey(a *app, runF func(context.Context, *keyOptions) error) *cobra.Command {
	o := &keyOptions{IO: a.stdio, LoadConfig: func() (*configs.Config, error) { return a.loadConfig(nil) },
		SecretStore: func(cfg *configs.Config) configs.SecretStore {
			return a.secretStore(cfg, slog.New(slog.DiscardHandler), a.tellErr)
		}}
	cmd := &cobra.Command{
		Use: "key",
		Example: `  hubgate automate key            # print the key (creating it on first use)
  hubgate automate key --rotate   # replace it; a running server takes it on SIGHUP`,
		Short: "Print the Automate access key from the OS secret store (generated on first use)",
		Long: `Print the Automate access key stored in the OS secret store, generating it on
first use. --rotate replaces it; a running 'hubgate automate serve' picks the new
key up on SIGHUP or restart, and the old key stops working then.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runKey, o) },
	}
	cmd.Flags().BoolVar(&o.Rotate, "rotate", false, "replace the stored key with a new one")
	return cmd
}

// runKey prints the stored key, generating it on first use, or a new one
// (Rotate).
func runKey(ctx context.Context, o *keyOptions) error {
	cfg, err := o.LoadConfig() // its secrets setting when it loads; else auto
	if err != nil {
		cfg = nil
	}
	store := o.SecretStore(cfg)
	var key string
	if o.Rotate {
		key, err = configs.RotateAutomateKey(ctx, store)
	} else {
		key, _, err = configs.AutomateKey(ctx, store, func(string) string { return "" })
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(o.IO.Out, key)
	return err
}
