// Package automate owns the Automate server contract
// (docs/specs/automate-server.md) as Go: the wire types of every route,
// the typed errors a caller branches on, and the HTTP client that hubgate's
// bridge and any Go caller use: port discovery over 127.0.0.1:4317..4328,
// runs, resume, chat, cancel, models, select, and a helper that drives the
// caller-executed tool loop.
//
// The client never retries a request by itself: a retried POST can start a
// second run. It tells a failed run (HTTP 500 carrying a record with
// schemaVersion 1, returned as *RunError) from a failed request (*APIError).
// A client-side abort does not stop a run, so when a caller gives up on a
// run in flight (its context ends, the HTTP deadline of timeoutMs plus a
// margin passes, a tool executor fails) the client cancels the run
// explicitly if /health shows it still active, and returns an
// *AbandonedError.
//
// Choices where the spec is silent (shared with automate/server):
//   - Timestamps are ISO 8601 in UTC with milliseconds, as JavaScript's
//     toISOString writes them.
//   - A channel event (Event) is {seq, at, channel, payload}; the channels are
//     "workflow-status" (payload {status}), "workflow-steps" (payload: the
//     whole step list, rebroadcast on every update), "tool-calls" (payload:
//     the pending calls when a run parks) and "workflow-result" (payload
//     {status, errorCode?}).
//   - A trace element is one chat message object {role, content, ...} with
//     role system, user, assistant or tool.
//   - automateModelSelection is {modelName, family, sizeCode} of the pinned
//     model.
//   - Step fields id, index, title and status are always present; the others
//     only when they carry a value.
package automate
