package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/hubgate/hubgate/automate/assistant"
)

// Directive names (the word after "#!").
const (
	dAnswer = "answer"
	dSleep  = "sleep"
	dTool   = "tool"
	dTools  = "tools"
	dAsk    = "ask"
	dWrite  = "write"
	dRead   = "read"
	dRun    = "run"
	dDelete = "delete"
	dMove   = "move"
	dMcp    = "mcp"
	dFail   = "fail"
	dRecall = "recall"
)

// maxSleep bounds #!sleep.
const maxSleep = 24 * time.Hour

// clientCall is one call of a #!tool or #!tools directive.
type clientCall struct {
	name string
	args json.RawMessage // a JSON object
	err  error           // this entry cannot be called
}

// directive is one parsed directive line. Err is a syntax error: its step
// fails with it and the run goes on.
type directive struct {
	line int    // 1-based line number in the prompt
	name string // without "#!"
	raw  string // the whole line, trimmed

	text   string          // #!answer text, #!run command, #!write content, #!fail code
	ms     int64           // #!sleep
	calls  []clientCall    // #!tool (one) and #!tools (each entry: one step)
	ask    json.RawMessage // #!ask question as written
	askReq assistant.UserInputRequest
	path   string          // #!write, #!read, #!delete, #!move source
	path2  string          // #!move destination
	server string          // #!mcp
	tool   string          // #!mcp
	args   json.RawMessage // #!mcp arguments (a JSON object)
	err    error
}

// steps is the number of steps the directive takes: one, or one per entry
// of a #!tools array.
func (d *directive) steps() int {
	if d.name == dTools && d.err == nil {
		return len(d.calls)
	}
	return 1
}

// script is a parsed prompt.
type script struct {
	directives []directive
	taskText   string // the non-directive lines joined with "\n", trimmed
	firstLine  string // the first non-blank non-directive line, trimmed
}

// errSyntax marks directive syntax errors.
var errSyntax = errors.New("directive syntax")

func syntaxErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errSyntax, fmt.Sprintf(format, args...))
}

// parseScript splits a prompt into directives and task text. It never
// fails: a malformed directive carries its error.
func parseScript(prompt string) script {
	var sc script
	var text []string
	for i, line := range strings.Split(prompt, "\n") {
		line = strings.TrimSuffix(line, "\r")
		trimmed := strings.TrimLeftFunc(line, unicode.IsSpace)
		if !strings.HasPrefix(trimmed, "#!") {
			text = append(text, line)
			if sc.firstLine == "" {
				sc.firstLine = strings.TrimSpace(line)
			}
			continue
		}
		sc.directives = append(sc.directives, parseDirective(i+1, trimmed))
	}
	sc.taskText = strings.TrimSpace(strings.Join(text, "\n"))
	return sc
}

func parseDirective(lineNo int, line string) directive {
	body := line[2:]
	name, rest := body, ""
	if i := strings.IndexAny(body, " \t"); i >= 0 {
		name, rest = body[:i], strings.TrimLeft(body[i:], " \t")
	}
	d := directive{line: lineNo, name: name, raw: strings.TrimSpace(line)}
	trimmedRest := strings.TrimSpace(rest)
	var err error
	switch name {
	case dAnswer:
		d.text = trimmedRest
	case dSleep:
		d.ms, err = strconv.ParseInt(trimmedRest, 10, 64)
		if err != nil || d.ms < 0 || d.ms > int64(maxSleep/time.Millisecond) {
			err = syntaxErr("#!sleep needs a number of milliseconds between 0 and %d, got %q", int64(maxSleep/time.Millisecond), trimmedRest)
		}
	case dTool:
		var toolName, args string
		toolName, args, err = nextToken(trimmedRest)
		if err == nil && toolName == "" {
			err = syntaxErr("#!tool needs a tool name")
		}
		if err == nil {
			var obj json.RawMessage
			obj, err = jsonObject("#!tool arguments", args)
			d.calls = []clientCall{{name: toolName, args: obj}}
		}
	case dTools:
		d.calls, err = parseCalls(trimmedRest)
	case dAsk:
		d.ask, err = jsonObject("#!ask question", trimmedRest)
		if err == nil {
			err = json.Unmarshal(d.ask, &d.askReq)
			if err == nil && len(d.askReq.Fields) == 0 {
				err = syntaxErr(`#!ask needs {"fields":[{"id":...}, ...]} with at least one field`)
			}
			for _, f := range d.askReq.Fields {
				if err == nil && f.ID == "" {
					err = syntaxErr("#!ask: every field needs an id")
				}
			}
			if err != nil && !errors.Is(err, errSyntax) {
				err = syntaxErr("#!ask question: %v", err)
			}
		}
	case dWrite:
		var content string
		d.path, content, err = nextToken(rest) // the text keeps its trailing blanks
		if err == nil && d.path == "" {
			err = syntaxErr("#!write needs a path")
		}
		if err == nil {
			d.text, err = textArg(content)
		}
	case dRead, dDelete:
		d.path, err = wholeArg(trimmedRest)
		if err == nil && d.path == "" {
			err = syntaxErr("#!%s needs a path", name)
		}
	case dRun:
		d.text = trimmedRest
		if d.text == "" {
			err = syntaxErr("#!run needs a command")
		}
	case dMove:
		var to string
		d.path, to, err = nextToken(trimmedRest)
		if err == nil {
			d.path2, err = wholeArg(to)
		}
		if err == nil && (d.path == "" || d.path2 == "") {
			err = syntaxErr("#!move needs a source and a destination path")
		}
	case dMcp:
		var rest2, args string
		d.server, rest2, err = nextToken(trimmedRest)
		if err == nil {
			d.tool, args, err = nextToken(rest2)
		}
		if err == nil && (d.server == "" || d.tool == "") {
			err = syntaxErr("#!mcp needs a server name and a tool name")
		}
		if err == nil {
			d.args, err = jsonObject("#!mcp arguments", args)
		}
	case dFail:
		d.text = trimmedRest
	case dRecall:
	default:
		err = syntaxErr("unknown directive #!%s", name)
	}
	d.err = err
	return d
}

// nextToken splits the first token off s: a JSON string when s starts with
// a double quote, else the text up to the first blank. rest is trimmed on
// the left.
func nextToken(s string) (tok, rest string, err error) {
	s = strings.TrimLeft(s, " \t")
	if strings.HasPrefix(s, `"`) {
		dec := json.NewDecoder(strings.NewReader(s))
		if err := dec.Decode(&tok); err != nil {
			return "", "", syntaxErr("bad quoted string: %v", err)
		}
		off := int(dec.InputOffset())
		return tok, strings.TrimLeft(s[off:], " \t"), nil
	}
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i], strings.TrimLeft(s[i:], " \t"), nil
	}
	return s, "", nil
}

// wholeArg is the rest of the line as one value: a JSON string when it is
// quoted (nothing may follow), else the trimmed text (blanks included).
func wholeArg(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	tok, rest, err := nextToken(s)
	if err != nil {
		return "", err
	}
	if rest != "" {
		return "", syntaxErr("unexpected text after the quoted path: %q", rest)
	}
	return tok, nil
}

// textArg is #!write's content: a JSON string when the text is exactly one
// (so "\n" can make lines), else the text as written.
func textArg(s string) (string, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, `"`) && strings.HasSuffix(t, `"`) && len(t) >= 2 {
		var out string
		if json.Unmarshal([]byte(t), &out) == nil {
			return out, nil
		}
	}
	return s, nil
}

// jsonObject checks that s is exactly one JSON object ("" means {}) and
// returns it compacted.
func jsonObject(what, s string) (json.RawMessage, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage(`{}`), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &obj); err != nil || obj == nil {
		if err == nil {
			err = errors.New("null is not an object")
		}
		return nil, syntaxErr("%s must be a JSON object: %v", what, err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return nil, syntaxErr("%s: %v", what, err)
	}
	return buf.Bytes(), nil
}

// parseCalls parses #!tools' array. An entry that cannot be called keeps
// its error (its step fails); a malformed array fails the directive.
func parseCalls(s string) ([]clientCall, error) {
	var entries []json.RawMessage
	if err := json.Unmarshal([]byte(s), &entries); err != nil {
		return nil, syntaxErr(`#!tools needs a JSON array of {"name":...,"arguments":{...}}: %v`, err)
	}
	if len(entries) == 0 {
		return nil, syntaxErr("#!tools needs at least one call")
	}
	calls := make([]clientCall, len(entries))
	for i, raw := range entries {
		var e struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			calls[i] = clientCall{err: syntaxErr("#!tools entry %d must be {\"name\":...,\"arguments\":{...}}: %v", i, err)}
			continue
		}
		calls[i].name = e.Name
		if e.Name == "" {
			calls[i].err = syntaxErr("#!tools entry %d has no name", i)
			continue
		}
		args := strings.TrimSpace(string(e.Arguments))
		if args == "null" {
			args = ""
		}
		calls[i].args, calls[i].err = jsonObject(fmt.Sprintf("#!tools entry %d arguments", i), args)
	}
	return calls, nil
}
