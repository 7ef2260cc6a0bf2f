// Package scripted owns the deterministic scripted engine behind the
// Automate server: an assistant.Assistant whose "model" executes directive
// lines of the prompt, so that every behaviour of the contract (steps,
// caller tools, parking, human input, the destructive-tool policy, inline
// MCP servers, failures, cancel, continuation, model selection) can be
// driven and tested without an inference server.
//
// # Prompts
//
// The engine executes the directive lines of the prompt (lines starting
// with "#!", after any leading white space), in order, each as one step; other
// lines are the task text (the non-directive lines joined with "\n",
// trimmed). The default answer (no #!answer) is "Done: " followed by the
// first non-blank non-directive line, or "Done" when there is none.
//
//	#!answer <text>               closing message (rest of the line)
//	#!sleep <ms>                  a step that waits (0..86400000); a soft cancel lands after it
//	#!tool <name> <json object>   call a declared client tool (parks the run); no JSON means {}
//	#!tools <json array>          several client calls in one round: [{"name":..,"arguments":{..}}]
//	#!ask <json>                  request_user_input: {"fields":[{"id":"x","required":true}]}
//	#!write <path> <text>         write a file (relative paths are under the workspace)
//	#!read <path>                 read a file into the step's producedContent
//	#!run <command>               run_command (destructive: policy applies)
//	#!delete <path>               delete_path (destructive)
//	#!move <from> <to>            move_path (destructive)
//	#!mcp <server> <tool> <json>  call a tool of an inline MCP server; no JSON means {}
//	#!fail <ERROR_CODE>           the run fails with that errorCode
//	#!recall                      answer = the previous run's task text in this conversation ("" if none)
//
// Paths (and #!write's text) may be written as JSON strings ("my file.txt",
// "line 1\nline 2"); #!read and #!delete take the rest of the line as the
// path, #!write and #!move take one token (quote paths with blanks). When
// several directives set the answer (#!answer, #!recall), the last wins.
// In #!answer's text, ${result} stands for the text of the run's latest
// client tool result ("" before any), e.g. the person's reply to a
// caller's ask_person tool.
//
// A directive that cannot be parsed (bad JSON, missing arguments, unknown
// name) is a failed step whose resultSummary says why; the run goes on. The
// engine never panics on any prompt (see FuzzParseScript).
//
// # Runs
//
// Statuses: initializing while a cold worker starts (Config.ColdStart,
// cut short by the run's context), planning, executing-start, then
// executing-progress per step (waitingForUser during #!ask,
// executing-destructive-block during a destructive review), and
// executing-complete when the script is done. The server reports the
// terminal statuses.
//
// Planning emits every step as pending (a #!tools array is one step per
// call); steps then go running and end success, failed or skipped. Steps a
// stopped run never reached stay pending. Step ids are "step-<index>",
// indexes start at 1. Every step carries toolName and toolArgs (the exact
// arguments; none for #!answer, #!fail, #!recall), a one-sentence thinking,
// and a resultSummary (tool results up to 1000 characters).
//
// env.Checkpoint is called before each directive and after the last one, so
// a soft cancel lands between steps (after a #!sleep, never during it); a
// #!tools round is one directive. The run's context (force cancel, timeout)
// interrupts #!sleep, run_command, MCP calls and parking at once.
//
// Client tools (#!tool, #!tools): the name must be declared in the run's
// clientTools, else that step fails and the run goes on. The declared calls
// of the directive park the run in one env.CallClientTools round; each
// result's text becomes the resultSummary, a result with error fails its
// step and the run goes on.
//
// #!ask answers from hitlAnswers (assistant.Task.AnswerUserInput); a
// missing required field fails the step and Run returns an error wrapping
// assistant.ErrUserInputMissing (the server ends the run canceled).
//
// File and command tools (automate/toolkit) really act, on the workspace
// and confined to Task.Confine when it is set, so steps carry real
// resolved producedFilePath values (write and move; producedIsDirectory for
// a moved folder). #!read puts the file's text in producedContent,
// #!write the text written, #!run the command output. Every built-in tool
// (file and command tools, #!ask's request_user_input) is reviewed first
// (assistant.Task.ReviewBuiltIn: the request's builtInTools, then, for
// #!run, #!delete and #!move, the destructive-tool policy): a rejection
// makes the step skipped with the rejection message ("Rejected by
// Automate HTTP server policy...") as resultSummary, and the run goes on. A tool error (escape, missing
// file, non-zero exit) fails the step; the run goes on.
//
// Content chaining: a write produces "g<index>" (content generated by the
// run); a read, a command's output and an MCP result produce "s<index>"
// (content from a source). A read of a path this run wrote consumes that
// write's id, a move carries it to the new path (consuming it), a delete
// consumes it.
//
// #!mcp: the run's inline MCP servers are connected at the run's first
// #!mcp (lazily: runs that never call one start no process), all together
// under Config.MCPConnectTimeout, and always closed when Run returns, so
// that no server process outlives the run. assistant.Task.ReviewMCP
// applies first (requireApproval: a rejection is a skipped step).
// disabledTools, unknown tools and servers that failed to connect fail the
// step. The result text is the resultSummary and the producedContent; a
// result flagged isError fails the step.
//
// #!fail CODE fails the run with that errorCode (answer "Failed: CODE")
// when CODE is one of automate.ErrorCodes; otherwise the step fails and
// the run fails with EXECUTION_FAILED. Later directives do not run.
//
// # Conversation
//
// The engine keeps the stored history of the current conversation (each
// run's prompt, task text and answer) apart from the warm worker's thread.
// continuation false starts a new conversation; true continues it: a warm
// worker continues its thread, a new worker (after Terminate or a model
// switch) rebuilds its thread from the stored history. #!recall reads the
// previous run's task text. Every run that reached planning is added,
// whatever its outcome. The previous turns appear in the trace.
//
// # Results
//
// Trace: the system prompt (Task.SystemPrompt(""), the answer contract as
// its last section), the previous turns of the conversation, the user
// prompt, per step an assistant message with the tool call and a tool
// message with the result (or an assistant message for steps without a
// tool), and the closing message. Usage is deterministic where it can be:
// inputTokens = the words of the prompt, outputTokens = the words of the
// answer; generationMs is the measured time from planning to the end minus
// the time parked for client tool results; ttftMs is planning to the first
// step; tps = outputTokens per second of generation. Backend is
// {flavorId: "scripted", accelerator: "cpu", cpuFallback: false}.
//
// # Model mode
//
// The engine implements assistant.ModelChatter: a chat request naming
// "<product>-model" is answered from the directive lines of the LAST user
// message (other lines and other directives are ignored):
//
//	#!answer <text>               the answer text (streamed in word pieces)
//	#!tool <name> <json object>   a tool call; several lines: parallel calls, in order
//	#!reason <text>               reasoning text, sent before the answer
//	#!sleep <ms>                  wait before answering (the call's context cuts it short)
//	#!fail <ERROR_CODE>           fail the call with that code (assistant.ModelError)
//
// When the conversation ends with tool messages (the caller answered the
// calls), no calls are made: the answer is the #!answer text, else "Tool
// results: " and the contents of the tool messages after the last assistant
// message joined with "; ". Without directives the answer is "Echo: " and
// the last user message. Tool call ids are "call_<turn>_<n>", turn counting
// the assistant messages of the history plus one, n the call's position
// from 1; each call streams as a head (id, name) and its arguments in two
// pieces. finish_reason is tool_calls with calls, else stop. Usage: prompt
// tokens are a quarter of the characters of the messages and tools,
// completion tokens the pieces sent. A request whose prompt tokens exceed
// the context size (see Models) fails with CONTEXT_LIMIT_EXCEEDED; an
// active model that cannot load fails with MODEL_LOAD_FAILED. Nothing is
// kept between calls.
//
// # Models
//
// The catalog (Config.Catalog, DefaultCatalog, or a --models file through
// LoadCatalogFile) reports loading, with no models, until
// Config.CatalogLoadDelay has passed since New. Selected marks the active
// model: the application's default (the catalog's selected entry), or the
// model activated last. ActivateModel switches the active model ("" = back
// to the default) and tears the warm worker down when it changes. A run
// whose active model is missing, not downloaded or not available for the
// device fails with MODEL_LOAD_FAILED; tool capability is not checked
// here (the server refuses to select such a model). Runtime reports the
// active model, whether a worker is warm, the backend, and a context size
// derived from the machine's RAM: 1024 tokens per GiB, clamped to
// [4096, 131072].
package scripted
