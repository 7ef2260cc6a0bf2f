// Package mcpclient owns hubgate's Model Context Protocol client: the
// JSON-RPC session (initialize, tools/list, tools/call, ping,
// cancellation) over the three transports a run's inline MCP servers use:
// Stdio, StreamableHTTP and the legacy SSE.
//
// It is the small part of MCP that automate/toolkit needs, written here so
// that the daemon does not link the official Go SDK, whose dependencies'
// package inits cost every hubgate process about 1.4 MB of idle memory
// (issue 18). It follows the MCP specification 2025-06-18 for these parts,
// as the SDK's client (v1.8.0) does: it asks for 2025-06-18 and accepts
// 2025-03-26 and 2024-11-05; a server's ping is answered and any other
// server request gets -32601; a call whose context ends sends
// notifications/cancelled; every message read is bounded by
// Options.MaxMessageSize. What each transport does on the wire, and what it
// leaves out (streamable HTTP's optional GET stream, resumption), is in
// docs/toolkit.md ("The MCP client").
//
// It does not start processes (the caller starts a stdio server through
// internal/proc and hands over its pipes) and knows nothing of runs or
// tool policy. Server-sent events are read with internal/localhttp's
// EventReader; headers are never logged.
package mcpclient
