// Package toolkit owns the built-in tools that every Automate engine shares
// (the scripted engine and the OpenAI-compatible upstream engine): path
// confinement to a run's workspace (Resolve, ResolveEntry, an os.Root), the
// file tools and the destructive tools run by Toolbox, content chaining
// (ContentChain), and the sessions to a run's inline MCP servers
// (ConnectMcp, over the official MCP Go SDK's client,
// github.com/modelcontextprotocol/go-sdk/mcp, at the newest protocol it
// negotiates), with what a server sends back during a call: progress
// (WithMcpProgress) and elicitation (McpConfig.Elicit; ElicitByAsking
// turns it into an ask_person question and the answer into the result),
// and OAuth for remote streamable HTTP servers through the SDK's
// auth.AuthorizationCodeHandler: McpLogin signs in on a loopback redirect
// and stores the tokens in a McpSecretStore (configs' secret store, wired
// in by cmd), from which runs take, refresh and store them again; a run
// without usable tokens fails that server with ErrMcpLoginRequired.
// It does not decide the tool policy: engines ask assistant.Task before
// they call a tool.
// Children start through internal/proc only.
//
// Design notes: docs/toolkit.md.
package toolkit
