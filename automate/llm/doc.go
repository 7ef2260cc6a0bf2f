// Package llm owns the OpenAI-compatible upstream engine behind the
// Automate server: an assistant.Assistant that runs an agent loop over a
// local model server's /v1/chat/completions with tools (Ollama, llama.cpp's
// llama-server, vLLM, LM Studio), so that the co-hosted server does real
// work, and its model mode (assistant.ModelChatter). It owns the upstream
// client and its retry policy (a generation is never repeated), the
// catalog, the conversation store, skills and the choice of configured MCP
// servers. Configure it with Config; New starts it, Close stops its
// background catalog refresh. Nothing of a run outlives it.
//
// Design notes and the choices where the spec is silent: docs/llm-engine.md
// (section "The engine in detail").
package llm
