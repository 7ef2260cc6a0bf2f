package main

// `hubgate mcp login`: signing in to a remote MCP server that needs OAuth
// (servecli.McpLogin: toolkit.McpLogin, through the MCP Go SDK's authorization-code handler).
// Runs never open a browser: a voice-triggered run that meets such a
// server without tokens fails that server with an error naming this
// command, and the person signs in here once.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/servecli"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/internal/proc"
	"github.com/hubgate/hubgate/oauth"
)

// mcpLoginOptions are `mcp login`'s options.
type mcpLoginOptions struct {
	IO     Stdio
	Getenv func(string) string // BROWSER
	// LoadConfig loads and validates the configuration.
	LoadConfig func() (*configs.Config, error)
	Logger     func(cfg *configs.Config) *slog.Logger
	// SecretStore is where the tokens go (the secrets setting of cfg).
	SecretStore func(cfg *configs.Config, log *slog.Logger) configs.SecretStore
	// StartBrowser starts the browser command argv, detached; nil: none
	// is started.
	StartBrowser func(argv []string) error
	HTTPClient   *http.Client // nil: http.DefaultClient

	Server    string // the argument: a configured server's name, or a URL
	NoBrowser bool   // --no-browser: print the sign-in address only
}

// startDetached starts argv as every child of hubgate (internal/proc).
func startDetached(argv []string) error {
	_, err := proc.StartDetached(argv[0], argv[1:], nil)
	return err
}

func newMcpCommand(a *app) *cobra.Command { return newCmdMcp(a, nil) }

// newCmdMcp builds mcp and its login; runF (nil: runMcpLogin) gets
// login's parsed options.
func newCmdMcp(a *app, runF func(context.Context, *mcpLoginOptions) error) *cobra.Command {
	o := &mcpLoginOptions{IO: a.stdio, Getenv: a.getenv, LoadConfig: func() (*configs.Config, error) { return a.loadConfig(nil) },
		Logger: a.logger, StartBrowser: startDetached,
		SecretStore: func(cfg *configs.Config, log *slog.Logger) configs.SecretStore {
			return a.secretStore(cfg, log, a.tellErr)
		}}
	cmd := &cobra.Command{
		Use:     "mcp",
		Example: `  hubgate mcp login github          # sign in to the configured MCP server named github`,
		Short:   "Remote MCP servers: sign in to those that need OAuth",
		Args:    noArgs,
	}
	login := &cobra.Command{
		Use: "login <server-name | url>",
		Example: `  hubgate mcp login github
  hubgate mcp login --no-browser https://mcp.example.com/mcp   # a server a run names inline`,
		Short: "Sign in to a remote MCP server that needs OAuth and keep its tokens in the secret store",
		Long: `Sign in to a remote (streamable HTTP) MCP server that answers 401: hubgate
discovers its authorization server, registers itself there, opens the sign-in
address in a browser ($BROWSER or xdg-open; it is printed too), takes the answer
on a loopback redirect (127.0.0.1, a port the OS chooses), and keeps the tokens
in hubgate's secret store under a name derived from the server's URL. Runs then
use them and refresh them. The argument is the name of a server in
automate.openai.mcp_servers, or the URL of a server that runs name inline.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &usageError{fmt.Errorf("%s takes one argument, the server's name or URL", cmd.CommandPath())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Server = args[0]
			return cliout.Run(cmd, runF, runMcpLogin, o)
		},
	}
	login.Flags().BoolVar(&o.NoBrowser, "no-browser", false, "print the sign-in address only")
	cmd.AddCommand(login)
	return cmd
}

// runMcpLogin signs in to the server (servecli.McpLogin), showing the
// sign-in address on stderr and opening it in a browser.
func runMcpLogin(ctx context.Context, o *mcpLoginOptions) error {
	cfg, err := o.LoadConfig()
	if err != nil {
		return err
	}
	log := o.Logger(cfg)
	name, err := servecli.McpLogin(ctx, servecli.McpLoginOptions{Config: cfg, Server: o.Server, Store: o.SecretStore(cfg, log), Logger: log,
		HTTPClient: o.HTTPClient,
		ShowURL: func(u string) {
			fmt.Fprintf(o.IO.Err, "Open this address to sign in:\n  %s\n", u)
			if o.NoBrowser || o.StartBrowser == nil {
				return
			}
			if args, err := oauth.BrowserCommand(o.Getenv, u); err == nil {
				if err := o.StartBrowser(args); err != nil {
					tellOn(o.IO.Err, fmt.Sprintf("could not start a browser (%s); open the address yourself", args[0]))
				}
			}
		}})
	if errors.Is(err, servecli.ErrUnknownMcpServer) {
		return &usageError{err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "Signed in to %s; its tokens are in the secret store.\n", name)
	return nil
}
