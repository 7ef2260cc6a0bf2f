package toolkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/proc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of McpConfig.
const (
	DefaultMcpConnectTimeout    = 30 * time.Second
	DefaultMcpTerminateDuration = 500 * time.Millisecond
	stderrTail                  = 2048 // bytes of a stdio server's stderr kept for error messages
)

// MaxMcpMessage bounds one message read from an MCP server (a stdio line,
// a server-sent event): the SDK's MaxLineLength and MaxEventSize.
const MaxMcpMessage = 16 << 20

// McpToolPrefix starts every exposed inline MCP tool name.
const McpToolPrefix = "mcp__"

// ErrMcpServerUnknown is wrapped by McpPool.Call for a server that is not
// in the pool.
var ErrMcpServerUnknown = errors.New("no such inline MCP server in this run")

// ErrMcpServerUnavailable is wrapped by McpPool.Call for a server that
// failed to connect.
var ErrMcpServerUnavailable = errors.New("inline MCP server is not connected")

// ErrMcpToolUnavailable is wrapped by McpPool.Call for a tool the server
// does not list or that is in its disabledTools.
var ErrMcpToolUnavailable = errors.New("MCP tool is not available")

// ErrMcpClosed is returned by McpPool.Call after Close.
var ErrMcpClosed = errors.New("MCP pool is closed")

// McpConfig configures ConnectMcp.
type McpConfig struct {
	// ConnectTimeout bounds connecting to all servers (they connect
	// concurrently) including listing their tools. Zero:
	// DefaultMcpConnectTimeout (30 s).
	ConnectTimeout time.Duration
	// TerminateDuration is how long Close waits for a stdio server to exit
	// after closing its stdin before its process group is killed. Zero:
	// DefaultMcpTerminateDuration.
	TerminateDuration time.Duration
	// HTTPClient is used for http and sse servers; its Transport is
	// wrapped to add each server's headers. Nil: a client with no overall
	// timeout (the streams are long-lived) over http.DefaultTransport.
	HTTPClient *http.Client
	// Env is the base environment of stdio servers, to which each server's
	// env is added. Nil: proc.RunEnviron(nil) (this process's environment
	// without hubgate's secrets and the D-Bus session bus).
	Env []string
	// ClientName and ClientVersion identify this client to the servers.
	// Zero: "hubgate" and "dev".
	ClientName, ClientVersion string
	// Logger receives connection lines (never headers or env values). Nil:
	// slog.Default().
	Logger *slog.Logger
	// Elicit answers a server's elicitation/create (a question for the
	// person; ElicitByAsking asks through the run's ask_person). The pool
	// asks one question at a time; an error cancels the elicitation. Nil:
	// every elicitation is declined at once.
	Elicit func(context.Context, McpElicitation) (McpElicitResult, error)
	// Secrets holds the OAuth tokens of remote servers that need
	// authorization (stored by McpLogin under McpAccount(url)); a streamable
	// HTTP server that answers 401 is then sent the stored access token,
	// refreshed and stored again when it expires. Nil, or nothing stored:
	// such a server fails to connect with ErrMcpLoginRequired.
	Secrets McpSecretStore
}

// McpTool is one tool of an inline MCP server.
type McpTool struct {
	Server      string          // the server's name
	Name        string          // the bare tool name
	Exposed     string          // mcp__<server>__<tool>
	Description string          // the server's description of the tool
	InputSchema json.RawMessage // JSON Schema of the arguments ({"type":"object"} when absent)
}

// McpResult is the result of an MCP tool call.
type McpResult struct {
	Text    string // the text of the result's content (see ResultText)
	IsError bool   // the server reported the call as failed
}

// McpPool holds the sessions to a run's inline MCP servers.
type McpPool struct {
	log *slog.Logger

	mu     sync.Mutex
	closed bool
	conns  []*mcpConn // in the order of the servers given
	errs   map[string]error
	// progress: the callback of each call in flight that asked for
	// progress (WithMcpProgress), by progress token.
	progress map[string]func(msg string, progress, total float64)

	elicitMu sync.Mutex // one elicitation at a time
}

type mcpConn struct {
	server    automate.InlineMcpServer
	session   *mcp.ClientSession
	cancel    context.CancelFunc // ends the session context (the SSE stream)
	group     *proc.Group        // stdio only: the server's process group, once started
	exited    <-chan struct{}    // stdio only: closed once the server is reaped
	stderr    *proc.Output       // stdio only: the tail of the server's stderr
	stdin     io.Closer          // stdio only: the server's stdin
	stdout    io.Closer          // stdio only: the read end of the server's stdout
	terminate time.Duration      // stdio only: McpConfig.TerminateDuration
	tools     []McpTool
	disabled  map[string]bool
	closeOnce sync.Once
}

// ConnectMcp connects to every server concurrently and lists their tools.
// It always returns a pool, which the caller must Close; servers that
// failed are in Errors and have no tools. ctx bounds connecting only: the
// sessions live until Close.
func ConnectMcp(ctx context.Context, servers []automate.InlineMcpServer, cfg McpConfig) *McpPool {
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultMcpConnectTimeout
	}
	if cfg.TerminateDuration <= 0 {
		cfg.TerminateDuration = DefaultMcpTerminateDuration
	}
	if cfg.ClientName == "" {
		cfg.ClientName = "hubgate"
	}
	if cfg.ClientVersion == "" {
		cfg.ClientVersion = "dev"
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	cfg.Logger = log
	p := &McpPool{log: log, errs: map[string]error{}, progress: map[string]func(string, float64, float64){}}
	p.conns = make([]*mcpConn, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			c, err := p.connectOne(ctx, s, cfg)
			p.conns[i], errs[i] = c, err
		})
	}
	wg.Wait()
	for i, s := range servers {
		if errs[i] != nil {
			p.errs[s.Name] = errs[i]
			log.Warn("toolkit: inline MCP server failed to connect", "server", s.Name, "transport", s.Transport, "err", errs[i])
		} else {
			log.Debug("toolkit: inline MCP server connected", "server", s.Name, "transport", s.Transport, "tools", len(p.conns[i].tools))
		}
	}
	return p
}

func (p *McpPool) connectOne(ctx context.Context, s automate.InlineMcpServer, cfg McpConfig) (*mcpConn, error) {
	c := &mcpConn{server: s, disabled: map[string]bool{}}
	for _, t := range s.DisabledTools {
		c.disabled[t] = true
	}
	var transport mcp.Transport
	switch s.Transport {
	case "stdio":
		if s.Command == "" {
			return nil, fmt.Errorf("mcp server %q: stdio needs a command", s.Name)
		}
		t, err := c.startStdio(s, cfg)
		if err != nil {
			c.close()
			return c, fmt.Errorf("mcp server %q (%s): %w", s.Name, s.Transport, err)
		}
		transport = t
	case "http", "sse":
		if s.URL == "" {
			return nil, fmt.Errorf("mcp server %q: %s needs a url", s.Name, s.Transport)
		}
		hc := httpClientWithHeaders(cfg.HTTPClient, s.Headers)
		if s.Transport == "http" {
			t := &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxEventSize: MaxMcpMessage}
			if cfg.Secrets != nil {
				h, err := mcpOAuthHandler(ctx, s, cfg)
				if err != nil {
					return nil, fmt.Errorf("mcp server %q (%s): %w", s.Name, s.Transport, err)
				}
				t.OAuthHandler = h
			} else {
				t.OAuthHandler = loginNeeded{err: loginRequired(s.Name)}
			}
			transport = t
		} else {
			transport = &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxEventSize: MaxMcpMessage}
		}
	default:
		return nil, fmt.Errorf("mcp server %q: unknown transport %q", s.Name, s.Transport)
	}

	// The session context outlives connecting (the SSE transport ties its
	// stream to the context given to Connect); the timeout and ctx cancel
	// it only while connecting.
	sessCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel = cancel
	connected := make(chan struct{})
	var timedOut atomic.Bool
	go func() {
		timer := time.NewTimer(cfg.ConnectTimeout)
		defer timer.Stop()
		select {
		case <-connected:
			return
		case <-ctx.Done():
		case <-timer.C:
			timedOut.Store(true)
		}
		cancel()
	}()

	client := mcp.NewClient(&mcp.Implementation{Name: cfg.ClientName, Version: cfg.ClientVersion}, c.clientOptions(p, cfg))
	session, err := client.Connect(sessCtx, transport, nil)
	if err == nil {
		c.session = session
		err = c.listTools(sessCtx)
	}
	close(connected)
	if err != nil {
		c.close()
		switch {
		case timedOut.Load():
			err = fmt.Errorf("timed out after %s: %w", cfg.ConnectTimeout, err)
		case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		if c.stderr != nil {
			if tail := strings.TrimSpace(c.stderr.String()); tail != "" {
				err = fmt.Errorf("%w (stderr: %s)", err, Preview(tail, 300))
			}
		}
		return c, fmt.Errorf("mcp server %q (%s): %w", s.Name, s.Transport, redactURL(err, s.URL))
	}
	return c, nil
}

// clientOptions are the SDK client's options for c: its handlers of
// what the server sends (progress of calls, elicitation: the client
// declares the elicitation capability, and declines without cfg.Elicit).
// The SDK gets no logger (its lines may quote a server's URL, whose query
// may hold a key); the pool logs what matters itself.
func (c *mcpConn) clientOptions(p *McpPool, cfg McpConfig) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ProgressNotificationHandler: p.progressHandler,
		ElicitationHandler:          c.elicitHandler(p, cfg),
	}
}

// startStdio starts a stdio server in its own process group and returns
// the transport over its stdin and stdout.
func (c *mcpConn) startStdio(s automate.InlineMcpServer, cfg McpConfig) (*mcp.IOTransport, error) {
	cmd := proc.Command(s.Command, s.Args...)
	env := cfg.Env
	if env == nil {
		env = proc.RunEnviron(nil)
	}
	env = slices.Clone(env)
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		env = append(env, k+"="+s.Env[k])
	}
	cmd.Env = env
	// stdout and stderr are pipes of our own, not exec's copying
	// goroutines, so that an orphan of a wrapper (npx) holding them
	// cannot block Wait.
	stderr, err := proc.NewOutput(stderrTail, proc.KeepTail)
	if err != nil {
		return nil, err
	}
	c.stderr = stderr
	cmd.Stderr = stderr.Writer()
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stderr.CloseWriter()
		return nil, err
	}
	cmd.Stdout = stdoutW
	stdin, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	stdoutW.Close() // the child has its own copies
	stderr.CloseWriter()
	if err != nil {
		stdoutR.Close()
		return nil, err
	}
	c.group = proc.Started(cmd)
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	c.exited = exited
	c.terminate = cfg.TerminateDuration
	c.stdin, c.stdout = stdin, stdoutR
	return &mcp.IOTransport{Reader: stdoutR, Writer: stdin, MaxLineLength: MaxMcpMessage}, nil
}

func (c *mcpConn) listTools(ctx context.Context) error {
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		if c.disabled[t.Name] {
			continue
		}
		schema := json.RawMessage(`{"type":"object"}`)
		if t.InputSchema != nil {
			if b, err := json.Marshal(t.InputSchema); err == nil && string(b) != "null" {
				schema = b
			}
		}
		c.tools = append(c.tools, McpTool{
			Server:      c.server.Name,
			Name:        t.Name,
			Exposed:     McpToolPrefix + c.server.Name + "__" + t.Name,
			Description: t.Description,
			InputSchema: schema,
		})
	}
	return nil
}

// close ends the session and kills the stdio server's process group, once.
func (c *mcpConn) close() { c.closeOnce.Do(c.doClose) }

func (c *mcpConn) doClose() {
	if c.session != nil {
		// Closes the connection: a stdio server's stdin and stdout.
		c.session.Close()
	} else if c.stdin != nil {
		c.stdin.Close()
		c.stdout.Close()
	}
	if c.cancel != nil {
		c.cancel()
	}
	if c.group != nil {
		// A stdio server has TerminateDuration to exit on its closed
		// stdin before its group is killed.
		timer := time.NewTimer(c.terminate)
		select {
		case <-c.exited:
		case <-timer.C:
		}
		timer.Stop()
		// The leader is reaped (or about to be); the group id stays in
		// use while any other member (an orphan of a wrapper) lives, and
		// is not handed out again before the pid counter wraps.
		c.group.Kill()
		<-c.exited
	}
	if c.stderr != nil {
		// Every process of the group is gone: the pipe reaches EOF unless
		// a process left the group; then stop reading after a grace period.
		c.stderr.Drain(proc.DrainWait)
	}
}

// Errors returns the connection error of every server that failed, by
// server name.
func (p *McpPool) Errors() map[string]error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.errs)
}

// ProtocolVersion is the MCP protocol version server agreed to, "" for
// a server that is not connected.
func (p *McpPool) ProtocolVersion(server string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if c != nil && c.server.Name == server && c.session != nil {
			if res := c.session.InitializeResult(); res != nil {
				return res.ProtocolVersion
			}
		}
	}
	return ""
}

// Tools lists the enabled tools of the connected servers, in server order.
func (p *McpPool) Tools() []McpTool {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []McpTool
	for _, c := range p.conns {
		if c != nil && c.session != nil {
			out = append(out, c.tools...)
		}
	}
	return out
}

// Call calls tool of server with a JSON object of arguments (nil or empty
// means {}; null is never sent). An error means the call could not
// be made (unknown server or tool, disabled tool, connection lost, ctx);
// a tool that ran and failed is a McpResult with IsError.
func (p *McpPool) Call(ctx context.Context, server, tool string, args json.RawMessage) (McpResult, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return McpResult{}, ErrMcpClosed
	}
	var conn *mcpConn
	for _, c := range p.conns {
		if c != nil && c.server.Name == server {
			conn = c
		}
	}
	connErr, failed := p.errs[server]
	p.mu.Unlock()
	if failed {
		return McpResult{}, fmt.Errorf("%w: %w", ErrMcpServerUnavailable, connErr)
	}
	if conn == nil || conn.session == nil {
		return McpResult{}, fmt.Errorf("%w: %q", ErrMcpServerUnknown, server)
	}
	if conn.disabled[tool] {
		return McpResult{}, fmt.Errorf("%w: %s is in disabledTools of %q", ErrMcpToolUnavailable, tool, server)
	}
	if !slices.ContainsFunc(conn.tools, func(t McpTool) bool { return t.Name == tool }) {
		return McpResult{}, fmt.Errorf("%w: %q does not list a tool named %q", ErrMcpToolUnavailable, server, tool)
	}
	arguments := map[string]any{}
	if trimmed := strings.TrimSpace(string(args)); trimmed != "" && trimmed != "null" {
		if err := json.Unmarshal([]byte(trimmed), &arguments); err != nil {
			return McpResult{}, &ArgsError{Tool: McpToolPrefix + server + "__" + tool, Message: "arguments must be a JSON object: " + err.Error()}
		}
		if arguments == nil {
			arguments = map[string]any{}
		}
	}
	params := &mcp.CallToolParams{Name: tool, Arguments: arguments}
	if f := McpProgressFunc(ctx); f != nil {
		token := "hubgate-" + strconv.FormatInt(progressToken.Add(1), 10)
		params.SetProgressToken(token)
		p.mu.Lock()
		p.progress[token] = func(msg string, progress, total float64) {
			f(McpProgress{Server: server, Tool: tool, Message: msg, Progress: progress, Total: total})
		}
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.progress, token)
			p.mu.Unlock()
		}()
	}
	res, err := conn.session.CallTool(ctx, params)
	if err != nil {
		return McpResult{}, fmt.Errorf("mcp %s/%s: %w", server, tool, redactURL(err, conn.server.URL))
	}
	return McpResult{Text: ResultText(res), IsError: res.IsError}, nil
}

// Close closes every session and kills the process group of every stdio
// server; no process started by the pool survives it. It is safe to call
// more than once.
func (p *McpPool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conns := slices.Clone(p.conns)
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		if c != nil {
			wg.Go(c.close)
		}
	}
	wg.Wait()
	return nil
}

// ResultText extracts the text of a tool result: text content as is,
// embedded text resources' text, a short note for other content, and the
// structured content as JSON when there is no text at all.
func ResultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		switch v := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, v.Text)
		case *mcp.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				parts = append(parts, v.Resource.Text)
			} else if v.Resource != nil {
				parts = append(parts, "[resource "+v.Resource.URI+"]")
			}
		case *mcp.ResourceLink:
			parts = append(parts, "[resource link "+v.URI+"]")
		case *mcp.ImageContent:
			parts = append(parts, "[image "+v.MIMEType+"]")
		case *mcp.AudioContent:
			parts = append(parts, "[audio "+v.MIMEType+"]")
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && string(b) != "null" {
			var out bytes.Buffer
			if json.Compact(&out, b) == nil {
				return out.String()
			}
		}
	}
	return strings.Join(parts, "\n")
}

// redactURL takes the query of rawURL, which may hold a key, out of err's
// text: the HTTP client's errors quote the URL, and they reach run records
// and logs. The result unwraps to err.
func redactURL(err error, rawURL string) error {
	u, perr := url.Parse(rawURL)
	if err == nil || rawURL == "" || perr != nil || (u.RawQuery == "" && u.User == nil) {
		return err
	}
	msg := err.Error()
	safe := *u
	safe.RawQuery, safe.User = "", nil
	if u.RawQuery != "" {
		safe.RawQuery = "REDACTED"
	}
	msg = strings.ReplaceAll(msg, rawURL, safe.String())
	if u.RawQuery != "" {
		msg = strings.ReplaceAll(msg, u.RawQuery, "REDACTED")
	}
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// httpClientWithHeaders returns a client that adds headers to every request.
func httpClientWithHeaders(base *http.Client, headers map[string]string) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if len(headers) > 0 {
		c.Transport = &headerTransport{base: rt, headers: maps.Clone(headers)}
	} else {
		c.Transport = rt
	}
	return &c
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}
