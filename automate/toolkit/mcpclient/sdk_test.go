package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official Go SDK's server (a test dependency only) against this
// client, on the three transports.

type sdkProbe struct {
	cancelled chan struct{} // the blocking tool's context ended
	started   chan struct{} // the blocking tool runs
	release   chan struct{} // closed at the test's end: the blocking tool gives up
}

func newSDKServer(p *sdkProbe) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk-server", Version: "1"}, &mcp.ServerOptions{PageSize: 2})
	obj := json.RawMessage(`{"type":"object"}`)
	for i := range 5 {
		name := fmt.Sprintf("tool%d", i)
		srv.AddTool(&mcp.Tool{Name: name, Description: "number " + name, InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " " + string(req.Params.Arguments)}}}, nil
		})
	}
	// ask-client asks the client for its roots (a request this client
	// does not serve: the text is the client's -32601 answer) and pings
	// it.
	srv.AddTool(&mcp.Tool{Name: "ask-client", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_, rootsErr := req.Session.ListRoots(ctx, nil)
		pingErr := req.Session.Ping(ctx, nil)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("roots: %v; ping: %v", rootsErr, pingErr)}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "block", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(p.started)
		select {
		case <-ctx.Done():
			close(p.cancelled)
			return nil, ctx.Err()
		case <-p.release: // no cancellation came: let the server close
			return nil, errors.New("not cancelled")
		}
	})
	return srv
}

func waitClosed(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(testutil.DefaultTimeout):
		t.Fatalf("%s: not within %s", what, testutil.DefaultTimeout)
	}
}

func TestAgainstTheSDKServer(t *testing.T) {
	for _, tr := range []string{"stdio", "http", "sse"} {
		t.Run(tr, func(t *testing.T) {
			p := &sdkProbe{cancelled: make(chan struct{}), started: make(chan struct{}), release: make(chan struct{})}
			srv := newSDKServer(p)
			var transport Transport
			switch tr {
			case "stdio":
				cr, sw := io.Pipe()
				sr, cw := io.Pipe()
				ss, err := srv.Connect(context.Background(), &mcp.IOTransport{Reader: sr, Writer: sw}, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ss.Wait() })
				transport = &Stdio{Stdin: cw, Stdout: cr}
			case "http":
				hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
				t.Cleanup(hs.Close)
				transport = &StreamableHTTP{URL: hs.URL, HTTPClient: hs.Client()}
			case "sse":
				hs := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
				t.Cleanup(hs.Close)
				transport = &SSE{URL: hs.URL, HTTPClient: hs.Client()}
			}
			t.Cleanup(func() { close(p.release) }) // runs before the servers' cleanups
			s, err := Connect(context.Background(), transport, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if info := s.Server(); info.ProtocolVersion != ProtocolVersion || info.Name != "sdk-server" {
				t.Fatalf("server %+v", info)
			}
			tools, err := s.ListTools(context.Background())
			if err != nil || len(tools) != 7 {
				t.Fatalf("%d tools over pages of 2: %v", len(tools), err)
			}
			res, err := s.CallTool(context.Background(), "tool3", map[string]any{"x": 1})
			if err != nil || res.IsError || res.Content[0].Text != `tool3 {"x":1}` {
				t.Fatalf("%+v %v", res, err)
			}
			res, err = s.CallTool(context.Background(), "ask-client", nil)
			if err != nil || !strings.Contains(res.Content[0].Text, "roots: ") || !strings.Contains(res.Content[0].Text, "method not found: roots/list") || !strings.HasSuffix(res.Content[0].Text, "ping: <nil>") {
				t.Fatalf("%+v %v", res, err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := s.CallTool(ctx, "block", nil)
				done <- err
			}()
			waitClosed(t, p.started, "the blocking tool to start")
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("%v", err)
			}
			waitClosed(t, p.cancelled, "notifications/cancelled to end the tool's context")
			if err := s.Ping(context.Background()); err != nil {
				t.Fatalf("ping after a cancelled call: %v", err)
			}
		})
	}
}
