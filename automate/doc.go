// Package automate owns the Automate server contract
// (docs/specs/automate-server.md) as Go: the wire types of every route,
// the typed errors a caller branches on, and the HTTP client that hubgate's
// bridge and any Go caller use: port discovery over 127.0.0.1:4317..4328
// (or the window DiscoverOptions.Ports gives),
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
// The client also reads the desktop application's newer server, as the
// vendor's docs/api-cheatsheet.md (Cephable-Automate-Agent-Samples at
// a34cc04) and its stand-in server tools/fake-cephable/fake_cephable.py
// show it; the facts followed:
//   - The cheatsheet's status table answers 413 for a body over 1 MiB
//     (our spec: 400 with an error envelope) and does not show the 413's
//     body, so a 413 is an *APIError matching ErrInvalidRequest whatever
//     its body (an envelope's type and message are kept).
//   - The cheatsheet's /health example carries status, service
//     "<product>-agent", workflowStatus, busy, awaitingToolResults,
//     modelName, workspace, contextSize, backend and activeRequestId (not
//     appVersion or the machine fields); the stand-in server answers every
//     field of our spec. Discovery with ProductAuto therefore requires
//     only status "ok", service "<word>-agent", busy and workflowStatus
//     (HealthShape) and ignores the rest.
//   - /v1/models entries carry mode ("assistant" or "model"), read into
//     ModelEntry.Mode; the stand-in lists "<product>-agent" and
//     "<product>-model", owned_by the product word.
//   - The product word is the product's own name everywhere the spec says
//     "service"; with ProductAuto discovery reports it (Discovery.Product)
//     and the client speaks it (ClientOptions.Product).
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
