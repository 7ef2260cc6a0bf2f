// Package llm owns the OpenAI-compatible upstream engine behind the
// Automate server: an assistant.Assistant that runs an agent loop over a
// local model server's /v1/chat/completions with tools (Ollama,
// llama.cpp's llama-server, vLLM, LM Studio), so that the co-hosted
// server does real work. Configure it with Config; New starts it, Close
// stops its background catalog refresh.
//
// # Upstream client
//
// The engine speaks to the upstream with net/http directly rather than
// openai-go: it streams every answer (server-sent events, with
// stream_options.include_usage) so that hubgate itself measures the time
// to the first token; it reads what the official client does not model
// (reasoning_content / reasoning, tool-call arguments sent as an object,
// tool-call deltas without an index, <think> blocks, errors inside a
// stream, llama-server's and vLLM's error bodies); and it owns the retry
// policy, which must never repeat a generation: openai-go retries 5xx and
// broken connections by default. A request is tried again only when its
// connection could not be made (a failed dial: nothing reached the
// upstream), Config.DialRetries times (default 2, 250 ms then 500 ms
// apart). The one other repeat is a request refused with 400 because of
// reasoning_effort (see Thinking). An upstream that answers plain JSON to
// a streamed request is read as such; Config.DisableStreaming asks for
// whole answers.
//
// Config.Upstream is the server's root URL (a trailing /v1 is dropped);
// the engine uses /v1/chat/completions and /v1/models, and where the
// upstream is Ollama (recognised by /api/version) /api/tags, /api/show and
// /api/ps; for llama-server (/v1/models owned_by "llamacpp") /props. The
// API key, when configured, is a bearer token; it is never logged.
//
// # Runs
//
// A cold run (no warm worker: the first run, after Terminate, after a
// model switch or after the upstream was lost) reports initializing while
// it fetches the catalog, which proves the upstream answers and serves
// the model. Then planning (skills and MCP servers are chosen and
// connected, the first model call), thinking for later model calls,
// executing-start at the first tool call, executing-progress per step,
// executing-destructive-block during a destructive review, waitingForUser
// during request_user_input, executing-complete at the end.
//
// The system prompt is Task.SystemPrompt: the base prompt (Config.BasePrompt
// or assistant.BasePrompt, plus the workspace folder and the confinement),
// the chosen skills, the additionalWorkflowPrompt and the answer contract
// as the last section. A turn is a tool turn when the message has tool
// calls, whatever finish_reason says. Every tool call is a step
// ("step-<n>", from 1) with the exact arguments (a call whose arguments
// are not a JSON object keeps its text as {"_raw": "..."}), the assistant
// text before the calls as thinking (the reasoning text when there is
// none, at most 4000 characters), a resultSummary (at most 1000
// characters), producedFilePath/producedIsDirectory for a write or move
// (the resolved path), and producedContent: the full text written, read,
// listed, fetched, output by a command, returned by an MCP tool or a
// client tool. The model sees tool results up to Config.ToolResultChars
// (16000) characters. Content chaining: a write produces g<index>; a
// read, listing, fetch, command output, MCP or client result s<index>; a
// read of a path this run wrote consumes that write's id, a move carries
// it, a delete consumes it. There is no step for the closing message.
//
// The calls of one turn run in order; the client-tool calls among them
// park the run once, in one env.CallClientTools round, after the others
// ran; results go back to the model as tool messages in the turn's order.
// env.Checkpoint is called before every model call and every step, so a
// soft cancel lands between steps and never interrupts a model call in
// flight; the run's context (force cancel, timeout) aborts the upstream
// request, kills a running command and interrupts MCP calls and parking.
//
// # Tools
//
//	read_file, write_file, list_dir        automate/toolkit, confined to Task.Confine
//	delete_path, move_path, run_command    the same, after the destructive-tool policy
//	fetch_url {url}                        GET over http(s); Config.FetchMaxBytes (1 MiB, then
//	                                       truncated and said so), Config.FetchTimeout (20 s);
//	                                       HTML reduced to text; an error status fails the step
//	request_user_input {title?, fields}    answered by Task.AnswerUserInput; a missing
//	                                       required answer ends the run canceled
//	mcp__<server>__<tool>                  the run's inline MCP servers (all of them) and the
//	                                       configured ones chosen for the run, minus disabledTools
//	<client tool>                          the caller's; parks the run
//
// Every built-in tool (the toolkit's, fetch_url, request_user_input) is
// reviewed by Task.ReviewBuiltIn before it runs: the request's
// builtInTools, then the destructive-tool policy. A refused call is a
// skipped step and the model sees the rejection as the tool's result; the
// tools stay offered to the model (the contract narrows what runs, and a
// model told "no" adapts). A built-in tool's step is reported running
// (env.Step) before the tool runs and again when it ends.
//
// A client tool named like a built-in replaces it for that run. Every
// call's arguments are validated against the tool's JSON Schema
// (github.com/google/jsonschema-go; draft 2020-12 and draft-07, any other
// $schema read as 2020-12; a schema that cannot be resolved, for example
// one with remote references, is not enforced beyond "a JSON object").
// An invalid call fails its step and the model sees the error and may try
// again; the same tool invalid Config.SchemaRetries (3) times in a row
// (or an unknown tool name that often) ends the run failed with
// SCHEMA_INVALID. Invalid calls never reach a server or the caller.
//
// MCP approval: an inline server's requireApproval through
// Task.ReviewMCP; a configured server's own RequireApproval (configs
// defaults it to true) the same way: approved only with
// allowDestructiveTools. A rejection is a skipped step whose summary (and
// the model's result) starts with "Rejected by Automate HTTP server
// policy". A configured server's Env and Headers values may name
// environment variables as ${VAR}, expanded when the run connects
// (hubgate's own HUBGATE_* variables expand to nothing). MCP sessions are
// opened when the run plans and closed (with every process of a stdio
// server's group) when the run ends, parked time included.
//
// # Error codes
//
//	MODEL_LOAD_FAILED       no model to run; the model is not served or not downloaded;
//	                        the upstream cannot be reached before it answered once in this
//	                        run; the upstream says it cannot find or load the model
//	SERVER_LOST             the connection broke or the stream ended early, the upstream
//	                        answered 5xx, or it could not be reached after it answered
//	CONTEXT_LIMIT_EXCEEDED  an upstream error naming the context (llama-server, vLLM, LM
//	                        Studio); a request the engine estimates beyond the context size
//	                        (a quarter of its JSON characters, or the last usage plus that
//	                        estimate for what was added; Ollama would silently cut it); an
//	                        answer whose prompt tokens (upstream usage) reach the context
//	                        size (the upstream cut the conversation); an answer cut off
//	                        at the end of the context
//	TOOL_TIMEOUT            a built-in, fetch or MCP call beyond Config.ToolTimeout (2 min);
//	                        the call is cancelled (a command's process group is killed)
//	EXECUTION_TIMEOUT       more tool steps than Config.MaxSteps (32), or a run beyond
//	                        Config.RunBudget (none by default)
//	SCHEMA_INVALID          see Tools
//	EXECUTION_FAILED        another refusal of the upstream (for example a model without
//	                        tool support); an answer still cut off by the output limit after
//	                        two continuations
//
// An answer cut off by the output limit (finish_reason length, context not
// full) is continued: the partial message stays in the conversation with
// a user message asking to go on, at most twice, and the parts are joined.
// After SERVER_LOST or a load failure the warm worker is dropped, so the
// next run cold starts and probes the upstream again.
//
// # Usage
//
// inputTokens and outputTokens are the sums of the upstream's usage over
// the run's model calls (each call's prompt counts again, as an API bill
// does). An upstream that reports no usage gets estimates: the streamed
// chunks carrying text or arguments as output tokens, a quarter of the
// request's characters as input tokens. generationMs is the sum of the
// model calls' durations (request sent to answer read; parked time and
// tool time excluded); ttftMs is the first call's request to its first
// streamed text, reasoning or tool-call byte; tps is outputTokens per
// second of decoding (first token to end, summed). Usage is null when no
// model call answered.
//
// # Catalog and models
//
// The catalog reports loading (no models) until the upstream answered a
// catalog fetch once; New starts the first fetch, Catalog refreshes a
// catalog older than Config.CatalogRefresh (30 s) in the background, and a
// cold run fetches it in its own goroutine. Ollama: /api/tags gives name,
// size, family and parameter_size; tool capability (and thinking) come
// from its capabilities field, or from /api/show for builds that lack it.
// Other upstreams: /v1/models ids (llama-server's meta adds size and
// parameters); family and parameters are then read from the name
// ("Qwen2.5-7B" -> qwen2.5, 7), and tool capability counts as true. The
// configured known models follow the upstream's, downloaded false (a
// known model the upstream serves fills what the upstream leaves
// unknown). sizeCode: S below 4B parameters, M below 10B, L below 30B, XL
// below 100B, XXL above. fileSizeMb is MiB. availableForDevice: with a
// loopback upstream, the file size (else 0.6 GB per billion parameters)
// times 1.2 must fit the machine's RAM; a remote upstream's machine is
// unknown, so its models count as available.
//
// The engine's own selection (Selected) is Config.Model, else the first
// downloaded, tool-capable, available model by name. ActivateModel pins a
// catalog model; "" returns to the own selection; a change drops the warm
// worker. Runtime's contextSize is Config.ContextSize, else the upstream's
// (Ollama's context_length of a loaded model, vLLM's max_model_len,
// llama-server's n_ctx), else 1024 tokens per GiB of RAM clamped to
// [4096, 131072]. backend is {flavorId: ollama | llama.cpp | vllm |
// openai-compatible, accelerator: gpu | gpu+cpu | cpu from Ollama's
// /api/ps for a loaded model, else unknown, cpuFallback: false (no
// upstream API tells a failed GPU apart)}, null before the upstream ever
// answered.
//
// # Thinking
//
// thinkingLevel (or Config.ThinkingLevel when the run sends none) becomes
// reasoning_effort: low, medium, high as such, max as high with four times
// Config.MaxOutputTokens as max_tokens (see ThinkingParams). Nothing is
// sent to an Ollama model whose capabilities lack "thinking"; an upstream
// that refuses the parameter with a 400 naming it is asked again without
// it, once, and never gets it again for that model.
//
// # Conversation
//
// The warm worker keeps the exact thread of the conversation (tool calls
// and results included, at most Config.MaxHistoryTurns runs). The stored
// conversation keeps each run's prompt and closing message (or a note
// that the run ended before it finished) in Config.ConversationStore, a
// JSON file written atomically (temporary file, fsync, rename) with mode
// 0600, read again by New. continuation true continues the warm thread, or
// after a restart, Terminate (force cancel), a model switch or a lost
// upstream, a thread rebuilt from the stored turns; continuation false
// starts a new conversation and forgets the stored one. Every run that
// reached planning is added, whatever its outcome. The upstream process
// is not hubgate's: Terminate drops the worker, the run's context has
// already aborted its request.
//
// # Skills
//
// Config.SkillsDir holds <id>.md files and <id>/SKILL.md folders, each
// with an optional front matter (name, description) and the instructions
// as the body (see LoadSkills); the folder is read at every run. The
// relevance step (see selectCandidates in skills.go) is lexical and
// deterministic: selectedSkillIds (by id or name) always come in first
// and count against Config.SkillBudget (3) and Config.SkillChars (12000);
// the rest goes to skills scoring at least 2, by score then id, where a
// prompt word found in a skill's name or id weighs 2 and in its
// description 1 (words of 3+ letters, stop words dropped, light English
// stemming). Configured MCP servers are chosen the same way by name and
// description, within Config.McpServerBudget (2), selectedMcpServerIds
// first.
//
// # Model mode
//
// The engine implements assistant.ModelChatter (a chat request naming
// "<product>-model"): one chat completion on the active model (the pin, else
// the engine's own selection; a cold engine fetches the catalog first). The
// upstream gets the caller's messages and tools byte for byte, the caller's
// generation options (assistant.ModelOptions) as sent, the active model as
// model, Config.MaxOutputTokens as max_tokens when the caller set no limit,
// and stream true with include_usage (Config.DisableStreaming: a whole
// answer). Nothing is added: no system prompt, no built-in tool, no
// reasoning_effort, no conversation. Every content, reasoning and tool-call
// piece goes to the server's sink as it is read from the stream, so nothing
// waits for the whole answer; tool-call pieces keep the upstream's ids and
// get an index when the upstream sent none; <think> blocks are passed on as
// they came. A conversation whose size (a quarter of its JSON characters,
// tools included) exceeds the context size fails with
// CONTEXT_LIMIT_EXCEEDED before the upstream sees it; an upstream context
// refusal does too. Other failures: MODEL_LOAD_FAILED (no model, not
// served, unreachable), SERVER_LOST (connection or stream broke, 5xx),
// EXECUTION_FAILED (another refusal). The call's context aborts the
// upstream request. Unlike a run, a model-mode call leaves its upstream
// connection idle and warm for the caller's next call (Engine.
// CloseIdleConnections; the engine's own client drops it after 30 s).
//
// # Nothing outlives a run
//
// When Run returns, the run's MCP sessions are closed and their process
// groups killed, its commands are gone (toolkit), its idle connections to
// the upstream, to fetched hosts and to MCP HTTP servers are closed, and
// no goroutine of the run is left; the tests check this after every
// finished run, with the engine still open.
package llm
