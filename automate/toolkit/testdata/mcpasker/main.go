// Command mcpasker is an MCP server of the official Go SDK over stdio, for
// tests: its tool "ask" elicits the person's name (multi round-trip input
// requests, which the SDK turns into elicitation/create for older
// clients) and answers "hello <name>", "declined" or "cancelled"; its tool
// "steps" sends three progress notifications (and a ping) before it
// answers "done".
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpasker", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask", Description: "Asks the person's name."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["name"]
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
					Message: "What is your name?",
					RequestedSchema: map[string]any{"type": "object",
						"properties": map[string]any{"name": map[string]any{"type": "string"}},
						"required":   []string{"name"}},
				}}}, nil, nil
			}
			res, _ := resp.(*mcp.ElicitResult)
			text := "cancelled"
			switch {
			case res != nil && res.Action == "accept":
				text = fmt.Sprintf("hello %v", res.Content["name"])
			case res != nil && res.Action == "decline":
				text = "declined"
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "steps", Description: "Reports progress."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 3; i++ {
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok,
						Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
				}
				// The client handles messages in order: once it answered
				// the ping, it has handled the notifications.
				req.Session.Ping(ctx, nil)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
