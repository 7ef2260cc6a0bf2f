// Package scripted owns the deterministic scripted engine behind the
// Automate server: an assistant.Assistant whose "model" executes the
// directive lines ("#!...") of the prompt, so that every behaviour of the
// contract (steps, caller tools, parking, human input, the destructive-tool
// policy, inline MCP servers, failures, cancel, continuation, model
// selection, model mode) can be driven and tested without an inference
// server. It is our picture of a model, not a model.
//
// The directive language, runs, results, model mode and models:
// docs/scripted.md.
package scripted
