package toolkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Built-in tool names.
const (
	ToolWriteFile  = "write_file"
	ToolReadFile   = "read_file"
	ToolListDir    = "list_dir"
	ToolDeletePath = "delete_path"
	ToolMovePath   = "move_path"
	ToolRunCommand = "run_command"
)

// Defaults of Config.
const (
	DefaultMaxReadBytes   = 1 << 20  // read_file limit
	DefaultMaxOutputBytes = 64 << 10 // run_command output kept
	summaryPreview        = 200      // characters of content quoted in a summary
	maxListedEntries      = 1000     // entries list_dir reports
)

// ErrUnknownTool is returned by Call for a name that is not a built-in tool.
var ErrUnknownTool = errors.New("unknown built-in tool")

// ErrFileTooLarge is wrapped by the error of read_file for a file above the
// read limit.
var ErrFileTooLarge = errors.New("file too large to read")

// ErrExists is wrapped by the error of move_path when the destination
// already exists (move_path never replaces anything).
var ErrExists = errors.New("destination already exists")

// ArgsError reports tool arguments that cannot be used.
type ArgsError struct {
	Tool    string
	Message string
}

func (e *ArgsError) Error() string { return e.Tool + ": invalid arguments: " + e.Message }

// Config configures a Toolbox for one run.
type Config struct {
	// Workspace is the absolute workspace folder; relative paths resolve
	// under it and run_command runs in it when Confine is "". Required for
	// relative paths.
	Workspace string
	// Confine, when not "", is the folder every file tool must stay inside
	// and run_command's working directory. "" allows any absolute path.
	Confine string
	// MaxReadBytes limits read_file. Zero: DefaultMaxReadBytes (1 MiB).
	MaxReadBytes int64
	// MaxOutputBytes limits the run_command output kept. Zero:
	// DefaultMaxOutputBytes (64 KiB).
	MaxOutputBytes int
	// Env is run_command's environment. Nil: proc.RunEnviron(nil) (this
	// process's environment without hubgate's secrets and the D-Bus
	// session bus).
	Env []string
	// Logger receives debug lines. Nil: slog.Default().
	Logger *slog.Logger
}

// Toolbox runs the built-in tools for one run.
type Toolbox struct {
	cfg Config
	log *slog.Logger
}

// New returns a Toolbox for cfg.
func New(cfg Config) *Toolbox {
	if cfg.MaxReadBytes <= 0 {
		cfg.MaxReadBytes = DefaultMaxReadBytes
	}
	if cfg.MaxOutputBytes <= 0 {
		cfg.MaxOutputBytes = DefaultMaxOutputBytes
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Toolbox{cfg: cfg, log: log}
}

// Outcome is what a tool call produced.
type Outcome struct {
	// Summary is a short text for a step's resultSummary and the model.
	Summary string
	// Path is the resolved absolute path the tool acted on ("" for
	// run_command); for move_path the destination.
	Path  string
	IsDir bool
	// Produced is true when Path was created or edited (write_file,
	// move_path): the step's producedFilePath.
	Produced bool
	// Content is the full text: the content written or read, the listing,
	// the command output.
	Content string
	// ExitCode is run_command's exit status (-1 when killed by a signal).
	ExitCode int
	// Truncated is true when run_command output beyond the limit was dropped.
	Truncated bool
}

// Definition describes a built-in tool for a model.
type Definition struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON Schema of the arguments object
	Destructive bool            // pauses for review (assistant.DestructiveTools)
}

// Definitions lists the built-in tools.
func Definitions() []Definition {
	obj := func(props string, required ...string) json.RawMessage {
		req, _ := json.Marshal(required)
		if len(required) == 0 {
			req = []byte("[]")
		}
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `}`)
	}
	path := `"path":{"type":"string","description":"file path; relative paths are under the workspace"}`
	return []Definition{
		{ToolWriteFile, "Write a text file (replacing it), creating missing parent folders.", obj(path+`,"content":{"type":"string","description":"the full text of the file"}`, "path", "content"), false},
		{ToolReadFile, "Read a text file (at most 1 MiB).", obj(path, "path"), false},
		{ToolListDir, "List the entries of a folder (the workspace when path is empty); folders end with /.", obj(path), false},
		{ToolDeletePath, "Delete a file or a folder with everything in it.", obj(path, "path"), true},
		{ToolMovePath, "Move or rename a file or folder; the destination must not exist.", obj(`"from":{"type":"string"},"to":{"type":"string"}`, "from", "to"), true},
		{ToolRunCommand, "Run a shell command (sh -c) in the workspace and return its exit code and output.", obj(`"command":{"type":"string"}`, "command"), true},
	}
}

// IsBuiltin reports whether name is a built-in tool of this package.
func IsBuiltin(name string) bool {
	switch name {
	case ToolWriteFile, ToolReadFile, ToolListDir, ToolDeletePath, ToolMovePath, ToolRunCommand:
		return true
	}
	return false
}

// Call runs the built-in tool name with a JSON object of arguments (nil or
// empty means {}). It does not apply the destructive-tool policy: callers
// review first. On error the Outcome may still carry what is known (for
// run_command the output and exit code).
func (t *Toolbox) Call(ctx context.Context, name string, args json.RawMessage) (Outcome, error) {
	var a struct {
		Path    *string `json:"path"`
		Content *string `json:"content"`
		From    *string `json:"from"`
		To      *string `json:"to"`
		Command *string `json:"command"`
	}
	if !IsBuiltin(name) {
		return Outcome{}, fmt.Errorf("%w: %q", ErrUnknownTool, name)
	}
	if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if trimmed[0] != '{' {
			return Outcome{}, &ArgsError{Tool: name, Message: "arguments must be a JSON object"}
		}
		if err := json.Unmarshal(trimmed, &a); err != nil {
			return Outcome{}, &ArgsError{Tool: name, Message: err.Error()}
		}
	}
	need := func(field string, v *string) (string, error) {
		if v == nil || *v == "" {
			return "", &ArgsError{Tool: name, Message: field + " is required"}
		}
		return *v, nil
	}
	switch name {
	case ToolWriteFile:
		p, err := need("path", a.Path)
		if err != nil {
			return Outcome{}, err
		}
		content := ""
		if a.Content != nil {
			content = *a.Content
		}
		return t.WriteFile(p, content)
	case ToolReadFile:
		p, err := need("path", a.Path)
		if err != nil {
			return Outcome{}, err
		}
		return t.ReadFile(p)
	case ToolListDir:
		p := ""
		if a.Path != nil {
			p = *a.Path
		}
		return t.ListDir(p)
	case ToolDeletePath:
		p, err := need("path", a.Path)
		if err != nil {
			return Outcome{}, err
		}
		return t.DeletePath(p)
	case ToolMovePath:
		from, err := need("from", a.From)
		if err != nil {
			return Outcome{}, err
		}
		to, err := need("to", a.To)
		if err != nil {
			return Outcome{}, err
		}
		return t.MovePath(from, to)
	default: // ToolRunCommand
		c, err := need("command", a.Command)
		if err != nil {
			return Outcome{}, err
		}
		return t.RunCommand(ctx, c)
	}
}

// ops does the file work on resolved absolute paths: through an os.Root at
// the confinement root when confined, directly otherwise.
type ops struct {
	root     *os.Root
	rootPath string
}

// resolveOps resolves path with resolve (Resolve, or ResolveEntry for a
// tool acting on the entry itself) and opens the ops for the call
// (creating the confinement root first when create is set); the caller
// closes them.
func (t *Toolbox) resolveOps(resolve func(workspace, confine, path string) (string, error), path string, create bool) (string, *ops, error) {
	abs, err := resolve(t.cfg.Workspace, t.cfg.Confine, path)
	if err != nil {
		return "", nil, err
	}
	o, err := t.ops(create)
	if err != nil {
		return "", nil, err
	}
	return abs, o, nil
}

// openResolved resolves path and opens it for tool (read_file, list_dir);
// done closes the file, then the ops.
func (t *Toolbox) openResolved(tool, path string) (abs string, f *os.File, done func(), err error) {
	abs, o, err := t.resolveOps(Resolve, path, false)
	if err != nil {
		return "", nil, nil, err
	}
	f, err = o.open(abs)
	if err != nil {
		o.close()
		return "", nil, nil, fmt.Errorf("%s %s: %w", tool, abs, err)
	}
	return abs, f, func() { f.Close(); o.close() }, nil
}

func (t *Toolbox) ops(create bool) (*ops, error) {
	if t.cfg.Confine == "" {
		return &ops{}, nil
	}
	rootPath, err := resolveRoot(t.cfg.Confine)
	if err != nil {
		return nil, err
	}
	if create {
		if err := os.MkdirAll(rootPath, 0o755); err != nil {
			return nil, fmt.Errorf("create workspace: %w", err)
		}
	}
	root, err := os.OpenRoot(rootPath)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	return &ops{root: root, rootPath: rootPath}, nil
}

func (o *ops) close() {
	if o.root != nil {
		o.root.Close()
	}
}

// name maps a resolved absolute path to the name ops uses.
func (o *ops) name(abs string) string {
	if o.root == nil {
		return abs
	}
	rel, err := filepath.Rel(o.rootPath, abs)
	if err != nil {
		return abs // os.Root rejects it
	}
	return rel
}

func (o *ops) mkdirAll(abs string) error {
	if o.root == nil {
		return os.MkdirAll(abs, 0o755)
	}
	if n := o.name(abs); n != "." {
		return o.root.MkdirAll(n, 0o755)
	}
	return nil
}

func (o *ops) writeFile(abs string, data []byte) error {
	if o.root == nil {
		return os.WriteFile(abs, data, 0o644)
	}
	return o.root.WriteFile(o.name(abs), data, 0o644)
}

func (o *ops) open(abs string) (*os.File, error) {
	if o.root == nil {
		return os.Open(abs)
	}
	return o.root.Open(o.name(abs))
}

func (o *ops) lstat(abs string) (fs.FileInfo, error) {
	if o.root == nil {
		return os.Lstat(abs)
	}
	return o.root.Lstat(o.name(abs))
}

func (o *ops) removeAll(abs string) error {
	if o.root == nil {
		return os.RemoveAll(abs)
	}
	return o.root.RemoveAll(o.name(abs))
}

func (o *ops) rename(from, to string) error {
	if o.root == nil {
		return os.Rename(from, to)
	}
	return o.root.Rename(o.name(from), o.name(to))
}

// WriteFile writes content to path (replacing the file), creating missing
// parent folders.
func (t *Toolbox) WriteFile(path, content string) (Outcome, error) {
	abs, o, err := t.resolveOps(Resolve, path, true)
	if err != nil {
		return Outcome{}, err
	}
	defer o.close()
	if err := o.mkdirAll(filepath.Dir(abs)); err != nil {
		return Outcome{}, fmt.Errorf("write_file %s: %w", abs, err)
	}
	if err := o.writeFile(abs, []byte(content)); err != nil {
		return Outcome{}, fmt.Errorf("write_file %s: %w", abs, err)
	}
	t.log.Debug("toolkit: wrote file", "path", abs, "bytes", len(content))
	return Outcome{
		Summary:  fmt.Sprintf("Wrote %d bytes to %s", len(content), abs),
		Path:     abs,
		Produced: true,
		Content:  content,
	}, nil
}

// ReadFile reads the text file at path, at most Config.MaxReadBytes.
func (t *Toolbox) ReadFile(path string) (Outcome, error) {
	abs, f, done, err := t.openResolved(ToolReadFile, path)
	if err != nil {
		return Outcome{}, err
	}
	defer done()
	fi, err := f.Stat()
	if err != nil {
		return Outcome{}, fmt.Errorf("read_file %s: %w", abs, err)
	}
	if fi.IsDir() {
		return Outcome{}, fmt.Errorf("read_file %s: is a folder (use list_dir)", abs)
	}
	limit := t.cfg.MaxReadBytes
	if fi.Size() > limit {
		return Outcome{}, fmt.Errorf("read_file %s: %w: %d bytes, the limit is %d", abs, ErrFileTooLarge, fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return Outcome{}, fmt.Errorf("read_file %s: %w", abs, err)
	}
	if int64(len(data)) > limit {
		return Outcome{}, fmt.Errorf("read_file %s: %w: more than %d bytes", abs, ErrFileTooLarge, limit)
	}
	return Outcome{
		Summary: fmt.Sprintf("Read %d bytes from %s: %s", len(data), abs, Preview(string(data), summaryPreview)),
		Path:    abs,
		Content: string(data),
	}, nil
}

// ListDir lists the folder at path (the workspace when path is "").
func (t *Toolbox) ListDir(path string) (Outcome, error) {
	abs, f, done, err := t.openResolved(ToolListDir, path)
	if err != nil {
		return Outcome{}, err
	}
	defer done()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return Outcome{}, fmt.Errorf("list_dir %s: %w", abs, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	slices.Sort(names)
	shown := names
	if len(shown) > maxListedEntries {
		shown = shown[:maxListedEntries]
	}
	content := strings.Join(shown, "\n")
	if len(names) > len(shown) {
		content += fmt.Sprintf("\n... (%d more)", len(names)-len(shown))
	}
	return Outcome{
		Summary: fmt.Sprintf("%d entries in %s: %s", len(names), abs, Preview(strings.Join(shown, ", "), summaryPreview)),
		Path:    abs,
		IsDir:   true,
		Content: content,
	}, nil
}

// DeletePath deletes the file, link or folder (recursively) at path.
func (t *Toolbox) DeletePath(path string) (Outcome, error) {
	abs, o, err := t.resolveOps(ResolveEntry, path, false)
	if err != nil {
		return Outcome{}, err
	}
	defer o.close()
	fi, err := o.lstat(abs)
	if err != nil {
		return Outcome{}, fmt.Errorf("delete_path %s: %w", abs, err)
	}
	if err := o.removeAll(abs); err != nil {
		return Outcome{}, fmt.Errorf("delete_path %s: %w", abs, err)
	}
	kind := "file"
	switch {
	case fi.IsDir():
		kind = "folder"
	case fi.Mode()&fs.ModeSymlink != 0:
		kind = "link"
	}
	t.log.Debug("toolkit: deleted", "path", abs, "kind", kind)
	return Outcome{Summary: fmt.Sprintf("Deleted %s %s", kind, abs), Path: abs, IsDir: fi.IsDir()}, nil
}

// MovePath moves the entry at from to to, creating to's parent folders. It
// never replaces an existing destination (ErrExists).
func (t *Toolbox) MovePath(from, to string) (Outcome, error) {
	src, err := ResolveEntry(t.cfg.Workspace, t.cfg.Confine, from)
	if err != nil {
		return Outcome{}, err
	}
	dst, o, err := t.resolveOps(ResolveEntry, to, false)
	if err != nil {
		return Outcome{}, err
	}
	defer o.close()
	fi, err := o.lstat(src)
	if err != nil {
		return Outcome{}, fmt.Errorf("move_path %s: %w", src, err)
	}
	if _, err := o.lstat(dst); err == nil {
		return Outcome{}, fmt.Errorf("move_path %s: %w", dst, ErrExists)
	}
	if err := o.mkdirAll(filepath.Dir(dst)); err != nil {
		return Outcome{}, fmt.Errorf("move_path %s: %w", dst, err)
	}
	if err := o.rename(src, dst); err != nil {
		return Outcome{}, fmt.Errorf("move_path %s -> %s: %w", src, dst, err)
	}
	return Outcome{
		Summary:  fmt.Sprintf("Moved %s to %s", src, dst),
		Path:     dst,
		IsDir:    fi.IsDir(),
		Produced: true,
	}, nil
}

// Preview shortens s to at most n runes on one line for a summary.
func Preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
