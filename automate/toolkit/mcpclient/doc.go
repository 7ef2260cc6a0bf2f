// Package mcpclient owns hubgate's Model Context Protocol client: the
// JSON-RPC session (initialize handshake, tools/list, tools/call, ping,
// cancellation) over the three client transports a run's inline MCP
// servers use (stdio, streamable HTTP and the legacy HTTP+SSE). It is the
// small part of MCP that automate/toolkit needs, written here so that the
// daemon does not link the official Go SDK and its dependencies (whose
// package inits cost every hubgate process about 1.4 MB of idle memory,
// issue 18). It does not start processes (the caller starts a stdio
// server through internal/proc and hands over its pipes) and knows
// nothing of runs or tool policy.
//
// It follows the MCP specification 2025-06-18 (Basic protocol: Lifecycle,
// Transports, Utilities/Cancellation, Utilities/Ping; Server features:
// Tools), as the official Go SDK's client (v1.8.0) does for these parts:
//
//   - initialize sends protocolVersion 2025-06-18 (the newest supported
//     here), capabilities {} and clientInfo {name, version}. The server's
//     answer must name a version this client supports (2025-06-18,
//     2025-03-26 or 2024-11-05), else Connect fails with
//     ErrUnsupportedVersion; then notifications/initialized is sent.
//     Newer revisions (2025-11-25's resumable streams, 2026's stateless
//     discovery) are not spoken: a server that supports 2025-06-18 answers
//     with it.
//   - tools/list follows nextCursor until it is absent; tools/call returns
//     the result (content, structuredContent, isError).
//   - A server's ping is answered with an empty result; any other request
//     from the server (sampling, roots, elicitation: this client declares
//     no capability) is answered with JSON-RPC error -32601, never left
//     unanswered. Notifications from the server are logged at debug level
//     and otherwise ignored. A batch (a JSON array, allowed by 2025-03-26)
//     is taken apart.
//   - A call whose context ends sends notifications/cancelled {requestId,
//     reason} and returns the context's error (initialize is never
//     cancelled this way, as the spec says). A connection the server
//     closes fails every pending call with an error wrapping ErrClosed.
//   - Every message read is bounded by Options.MaxMessageSize (zero:
//     DefaultMaxMessageSize, 16 MiB); a larger one is an error wrapping
//     ErrMessageTooLarge (on stdio and on the SSE stream it ends the
//     connection, on a streamable HTTP answer it fails that call).
//
// Transports:
//
//   - Stdio: newline-delimited JSON-RPC on the child's stdin and stdout
//     (encoding/json never writes a raw newline inside a message). Close
//     closes stdin, waits TerminateDuration for the child to exit, then
//     calls Kill.
//   - StreamableHTTP: every message is POSTed with Content-Type
//     application/json and Accept "application/json, text/event-stream".
//     A request's answer is one JSON message or an event stream read until
//     the response to it arrives (requests and notifications arriving on
//     it are handled on the way); a notification or response is accepted
//     with any 2xx (202 Accepted). The Mcp-Session-Id of the initialize
//     answer is sent on every later request, and MCP-Protocol-Version after
//     initialize. Close DELETEs the session (a 405 or any failure is
//     ignored). The optional GET stream for server-initiated messages
//     (the spec says the client MAY open it) is not opened: this client
//     needs nothing the server would send unprompted. An answer stream
//     that ends before the response fails the call (no resumption).
//   - SSE (2024-11-05): a GET with Accept text/event-stream; the first
//     "endpoint" event gives the URL to POST messages to, resolved against
//     the GET URL and refused when it is on another origin (scheme, host
//     and port); "message" events carry the server's messages.
//
// Server-sent events are read with internal/localhttp's EventReader. The
// HTTP client is the caller's (it adds the server's headers); headers are
// never logged.
package mcpclient
