package servecli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/toolkit"
	"github.com/hubgate/hubgate/configs"
)

// ErrUnknownMcpServer: `hubgate mcp login`'s argument names no configured
// MCP server that can sign in, and is not an http(s) URL.
var ErrUnknownMcpServer = errors.New("unknown MCP server")

// McpLoginOptions configure McpLogin.
type McpLoginOptions struct {
	Config *configs.Config
	// Server is the name of a server of automate.openai.mcp_servers, or
	// the URL of a streamable HTTP server (one a run names inline).
	Server string
	// Store receives the tokens. Required.
	Store configs.SecretStore
	// ShowURL shows the person the sign-in address. Required.
	ShowURL func(string)
	// HTTPClient: nil is http.DefaultClient. Logger: nil is slog.Default().
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// McpLogin signs in to the MCP server o.Server names (toolkit.McpLogin)
// and returns the server's name.
func McpLogin(ctx context.Context, o McpLoginOptions) (string, error) {
	s, err := mcpServerFor(o.Config, o.Server)
	if err != nil {
		return "", err
	}
	return s.Name, toolkit.McpLogin(ctx, s, toolkit.McpLoginConfig{Secrets: o.Store, ShowURL: o.ShowURL, HTTPClient: o.HTTPClient, Logger: o.Logger})
}

// mcpServerFor finds the server arg names: a configured one by name, or
// an http(s) URL as a streamable HTTP server.
func mcpServerFor(cfg *configs.Config, arg string) (automate.InlineMcpServer, error) {
	for _, m := range cfg.Automate.OpenAI.McpServers {
		if m.Name == arg {
			if m.Transport != "http" {
				return automate.InlineMcpServer{}, fmt.Errorf("%w: %q uses transport %s; sign-in is for streamable HTTP servers (transport http)", ErrUnknownMcpServer, arg, m.Transport)
			}
			return automate.InlineMcpServer{Name: m.Name, Transport: "http", URL: m.URL}, nil
		}
	}
	if u, err := url.Parse(arg); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return automate.InlineMcpServer{Name: u.Host, Transport: "http", URL: arg}, nil
	}
	known := "none are configured"
	if names := cfg.Automate.OpenAI.McpServerNames(); len(names) > 0 {
		known = "configured: " + strings.Join(names, ", ")
	}
	return automate.InlineMcpServer{}, fmt.Errorf("%w: no MCP server named %q (%s); give its name or its URL", ErrUnknownMcpServer, arg, known)
}
