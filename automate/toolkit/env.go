package toolkit

import "github.com/hubgate/hubgate/internal/childenv"

// ChildEnviron is the environment a tool's child process (run_command, a
// stdio MCP server) starts from: this process's environment without
// hubgate's own secrets, which a command could otherwise print into a run
// record and which a third-party MCP server must never see. The one
// implementation is internal/childenv (the sign-in's browser uses it too).
func ChildEnviron() []string { return childenv.Environ() }
