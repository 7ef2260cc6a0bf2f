// Package toolkit owns the built-in tools that every Automate engine shares
// (the scripted engine and the OpenAI-compatible upstream engine): the
// workspace-confined file tools, the destructive tools, and the sessions to
// a run's inline MCP servers.
//
// # Path confinement
//
// [Resolve] maps a tool's path argument to an absolute path: a relative path
// is taken under the workspace; with a confinement root (the run's Confine,
// see assistant.Task) the result must stay inside that root. Symlinks are
// resolved component by component, also for paths whose last components do
// not exist yet and through dangling links, so neither `..` nor a symlink
// (in the path, in a link target, or the workspace itself being a link) can
// escape; an escape yields a *[EscapeError]. Without a confinement root any
// absolute path is allowed (the contract's unrestricted default).
//
// Checking a path and then using it leaves a window in which a link could be
// swapped in. When confined, the tools therefore do the actual file work
// through an [os.Root] opened at the confinement root, which refuses at use
// time to follow anything out of it; Resolve is the check that produces the
// reported path and the typed error.
//
// delete_path and move_path act on the named entry itself: a symlink is
// removed or moved, never its target ([ResolveEntry] resolves the parent
// only). The other tools follow links (a write through a link inside the
// workspace that points inside it edits the target and reports the
// target's path).
//
// # Tools
//
// [Toolbox] runs the tools by name with JSON arguments ([Toolbox.Call]) and
// publishes their definitions ([Definitions]) for engines that let a model
// choose:
//
//	write_file  {path, content}  creates parent folders; reports the resolved path
//	read_file   {path}           at most Config.MaxReadBytes (1 MiB), else ErrFileTooLarge
//	list_dir    {path?}          the workspace when path is empty
//	delete_path {path}           destructive; folders are removed recursively
//	move_path   {from, to}       destructive; creates the destination's parent folders
//	run_command {command}        destructive; `sh -c` in the confinement root or the workspace
//
// The tool policy is not decided here: engines call
// assistant.Task.ReviewBuiltIn (the request's builtInTools, then the
// destructive-tool policy) before they call a tool.
//
// run_command cannot be confined: it is a shell. Confinement means its
// working directory only, which is why the contract says that
// allowDestructiveTools plus run_command grants arbitrary local command
// execution. The shell is started by internal/proc (the one way hubgate
// starts a child): its own process group and a scrubbed environment; when
// the call's context ends the whole group is killed, and when the shell
// exits any background process it left in its group is killed too, so
// nothing started by a call outlives it (nor, through Pdeathsig and the
// daemon's reaper, a hubgate killed with SIGKILL). Output (stdout and stderr interleaved) is kept up
// to Config.MaxOutputBytes; a non-zero exit status is an *[ExitError]
// (the Outcome is filled as well).
//
// [ContentChain] turns a run's built-in calls into the steps' content
// chaining ids (producedContentId g<index> or s<index>, consumedContentIds)
// and produced fields, the rule both engines share.
//
// # Inline MCP servers
//
// [ConnectMcp] opens one session per inline MCP server of a run, all
// concurrently under a connect timeout, with the official Go SDK: stdio
// servers through a command started by internal/proc in its own process
// group (environment: this process's without hubgate's secrets, plus the
// server's env), http through the streamable
// transport and sse through the legacy SSE transport, the caller's headers
// added by an http.RoundTripper on every request. A server that fails to
// connect or to list its tools is reported in [McpPool.Errors] and has no
// tools; the others work. Tools are exposed as mcp__<server>__<tool>, minus
// the server's disabledTools. [McpPool.Close] closes every session and then
// kills each stdio server's process group, so that a wrapper such as npx
// cannot leave the real server orphaned. The requireApproval policy is
// assistant.Task.ReviewMCP, applied by the engine.
package toolkit
