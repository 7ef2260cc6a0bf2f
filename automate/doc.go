// Package automate owns the Automate server contract
// (docs/specs/automate-server.md) as Go: the wire types of every route, the
// typed errors a caller branches on (*RunError for a failed run, *APIError
// for a failed request, *AbandonedError for a run given up on), and the HTTP
// client that the bridge and any Go caller use: port discovery over
// 127.0.0.1:4317..4328, runs (model-mode runs too), resume, chat, cancel,
// models, select, the newer vendor contract's tools, settings and speech
// status, and a helper that drives the caller-executed tool loop.
//
// The client never retries a request by itself (a retried POST can start a
// second run), and it cancels explicitly a run it gives up on. It must not
// depend on the server (automate/server).
//
// Design notes and the choices where the spec is silent: docs/automate.md.
package automate
