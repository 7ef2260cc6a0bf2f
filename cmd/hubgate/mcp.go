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

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/cmd/hubgate/internal/servecli"
	"github.com/hubgate/hubgate/internal/proc"
	"github.com/hubgate/hubgate/oauth"
)

func newMcpCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "mcp",
		Example: `  hubgate mcp login github          # sign in to the configured MCP server named github`,
		Short:   "Remote MCP servers: sign in to those that need OAuth",
		Args:    noArgs,
	}
	var noBrowser bool
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
		RunE: func(cmd *cobra.Command, args []string) error { return a.mcpLogin(cmd.Context(), args[0], noBrowser) },
	}
	login.Flags().BoolVar(&noBrowser, "no-browser", false, "print the sign-in address only")
	cmd.AddCommand(login)
	return cmd
}

func (a *app) mcpLogin(ctx context.Context, arg string, noBrowser bool) error {
	cfg, err := a.loadConfig(nil)
	if err != nil {
		return err
	}
	log := a.logger(cfg)
	name, err := servecli.McpLogin(ctx, servecli.McpLoginOptions{Config: cfg, Server: arg, Store: a.secretStore(cfg, log, a.tellErr), Logger: log,
		ShowURL: func(u string) {
			fmt.Fprintf(a.stdio.Err, "Open this address to sign in:\n  %s\n", u)
			if noBrowser {
				return
			}
			if args, err := oauth.BrowserCommand(a.getenv, u); err == nil {
				if _, err := proc.StartDetached(args[0], args[1:], nil); err != nil {
					a.tellErr(fmt.Sprintf("could not start a browser (%s); open the address yourself", args[0]))
				}
			}
		}})
	if errors.Is(err, servecli.ErrUnknownMcpServer) {
		return &usageError{err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdio.Out, "Signed in to %s; its tokens are in the secret store.\n", name)
	return nil
}
