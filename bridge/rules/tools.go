package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/hubgate/hubgate/automate"
)

// NotifyToolName is the built-in client tool that reports a message to the
// user.
const NotifyToolName = "notify"

// Notify levels.
const (
	NotifyInfo    = "info"
	NotifyWarning = "warning"
)

// MaxNotifyMessage is the longest notify message accepted, in characters.
const MaxNotifyMessage = 4000

var notifyParameters = json.RawMessage(`{"type":"object","properties":{` +
	`"message":{"type":"string","description":"The message to show to the user, one or two sentences."},` +
	`"level":{"type":"string","enum":["info","warning"],"description":"info (the default) or warning."}},` +
	`"required":["message"],"additionalProperties":false}`)

// NotifyTool is the definition of the built-in notify tool as sent in a
// run's clientTools.
func NotifyTool() automate.ClientTool {
	return automate.ClientTool{
		Name:        NotifyToolName,
		Description: "Report a short message to the user (shown by hubgate on this computer). Returns \"delivered\".",
		Parameters:  slices.Clone(notifyParameters),
	}
}

// Notification is a decoded notify call.
type Notification struct {
	Message string
	Level   string // NotifyInfo or NotifyWarning
}

// ParseNotify decodes and checks the arguments of a notify call: message is
// a non-blank string of at most MaxNotifyMessage characters, level is
// absent, info or warning. Its error text is meant for the agent.
func ParseNotify(arguments json.RawMessage) (Notification, error) {
	var args struct {
		Message *string `json:"message"`
		Level   *string `json:"level"`
	}
	if err := decodeArguments(arguments, &args); err != nil {
		return Notification{}, &ToolError{Tool: NotifyToolName, Err: fmt.Errorf("arguments must be an object {\"message\": string, \"level\"?: \"info\"|\"warning\"}: %v", err)}
	}
	n := Notification{Level: NotifyInfo}
	switch {
	case args.Message == nil || strings.TrimSpace(*args.Message) == "":
		return Notification{}, &ToolError{Tool: NotifyToolName, Err: errors.New("message is required")}
	case utf8.RuneCountInString(*args.Message) > MaxNotifyMessage:
		return Notification{}, &ToolError{Tool: NotifyToolName, Err: fmt.Errorf("message must be at most %d characters", MaxNotifyMessage)}
	}
	n.Message = *args.Message
	if args.Level != nil {
		if *args.Level != NotifyInfo && *args.Level != NotifyWarning {
			return Notification{}, &ToolError{Tool: NotifyToolName, Err: fmt.Errorf("level must be info or warning; got %q", *args.Level)}
		}
		n.Level = *args.Level
	}
	return n, nil
}

// decodeArguments decodes a built-in tool's call arguments into v,
// strictly (no unknown field); none at all are {}.
func decodeArguments(arguments json.RawMessage, v any) error {
	if len(bytes.TrimSpace(arguments)) == 0 {
		arguments = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(arguments))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// AskPersonToolName is the built-in client tool through which the agent
// asks the person a question (rules with ask: true).
const AskPersonToolName = automate.AskPersonToolName

// Limits of an ask_person call.
const (
	MaxQuestion = 1000 // characters of the question
	MaxChoices  = 10
	MaxChoice   = 100 // characters of one choice
)

var askParameters = json.RawMessage(`{"type":"object","properties":{` +
	`"question":{"type":"string","description":"The question for the person, one short sentence they can answer aloud."},` +
	`"choices":{"type":"array","items":{"type":"string"},"maxItems":10,"description":"Optional answers to offer; the person may still answer otherwise."}},` +
	`"required":["question"],"additionalProperties":false}`)

// AskPersonTool is the definition of the built-in ask_person tool as sent
// in a run's clientTools.
func AskPersonTool() automate.ClientTool {
	return automate.ClientTool{
		Name: AskPersonToolName,
		Description: "Ask the person a question when you need a fact only they know, and wait for the answer. " +
			"Returns their answer as text, or a sentence saying they did not answer in time.",
		Parameters: slices.Clone(askParameters),
	}
}

// WithAskTool is req as the bridge sends it for a run of r: with the
// ask_person tool declared when r offers it (Ask(askDefault), bridge.ask
// being askDefault) and req does not declare it already. full reports a
// rule that would offer it while its client tools already fill the
// request (automate.MaxClientTools): the run goes without it, as the
// server would refuse the whole request. The bridge and `rules test`
// (Explain) both build the request with it.
func (r *Rule) WithAskTool(req automate.RunRequest, askDefault bool) (_ automate.RunRequest, full bool) {
	if !r.Ask(askDefault) || slices.ContainsFunc(req.ClientTools, func(t automate.ClientTool) bool { return t.Name == AskPersonToolName }) {
		return req, false
	}
	if len(req.ClientTools) >= automate.MaxClientTools {
		return req, true
	}
	req.ClientTools = append(slices.Clone(req.ClientTools), AskPersonTool())
	return req, false
}

// Question is a decoded ask_person call.
type Question struct {
	Question string
	Choices  []string
}

// ParseAsk decodes and checks the arguments of an ask_person call: question
// is a non-blank string of at most MaxQuestion characters, choices at most
// MaxChoices non-blank strings of at most MaxChoice characters. Its error
// text is meant for the agent.
func ParseAsk(arguments json.RawMessage) (Question, error) {
	var args struct {
		Question *string  `json:"question"`
		Choices  []string `json:"choices"`
	}
	if err := decodeArguments(arguments, &args); err != nil {
		return Question{}, &ToolError{Tool: AskPersonToolName, Err: fmt.Errorf("arguments must be an object {\"question\": string, \"choices\"?: [string]}: %v", err)}
	}
	switch {
	case args.Question == nil || strings.TrimSpace(*args.Question) == "":
		return Question{}, &ToolError{Tool: AskPersonToolName, Err: errors.New("question is required")}
	case utf8.RuneCountInString(*args.Question) > MaxQuestion:
		return Question{}, &ToolError{Tool: AskPersonToolName, Err: fmt.Errorf("question must be at most %d characters", MaxQuestion)}
	case len(args.Choices) > MaxChoices:
		return Question{}, &ToolError{Tool: AskPersonToolName, Err: fmt.Errorf("at most %d choices", MaxChoices)}
	}
	for _, ch := range args.Choices {
		if strings.TrimSpace(ch) == "" || utf8.RuneCountInString(ch) > MaxChoice {
			return Question{}, &ToolError{Tool: AskPersonToolName, Err: fmt.Errorf("each choice must be a non-blank string of at most %d characters", MaxChoice)}
		}
	}
	return Question{Question: strings.TrimSpace(*args.Question), Choices: args.Choices}, nil
}

// commandTool is a compiled command tool.
type commandTool struct {
	spec    CommandToolSpec // defaults filled
	def     automate.ClientTool
	argv    []*template.Template // argv[1:]
	where   string
	invalid bool // has problems (reported); a rule naming it adds none
}

func (c *compiler) tool(t CommandToolSpec) *commandTool {
	before := len(c.problems)
	switch msg := automate.ClientToolNameProblem(t.Name); {
	case msg != "":
		c.add("name", "%s", msg)
	case t.Name == NotifyToolName:
		c.add("name", "notify is the built-in tool; choose another name")
	case t.Name == AskPersonToolName:
		c.add("name", "ask_person is the built-in tool of rules with ask: true; choose another name")
	}
	switch {
	case strings.TrimSpace(t.Description) == "":
		c.add("description", "is required (the agent reads it to decide when to call the tool)")
	case utf8.RuneCountInString(t.Description) > automate.MaxDescription:
		c.add("description", "must be at most %d characters", automate.MaxDescription)
	}
	var params json.RawMessage
	if t.Parameters != nil {
		b, err := json.Marshal(t.Parameters)
		if err != nil {
			c.add("parameters", "cannot be encoded as JSON: %v", err)
		} else {
			params = b
		}
		if typ, ok := t.Parameters["type"]; ok && typ != "object" {
			c.add("parameters.type", "must be \"object\" (a call's arguments are a JSON object); got %s", describe(typ))
		}
	}
	ct := &commandTool{spec: t}
	switch {
	case len(t.Argv) == 0:
		c.add("argv", "is required: the program and its arguments, one list element per argument (never a shell string)")
	case strings.TrimSpace(t.Argv[0]) == "":
		c.add("argv[0]", "is required (the program)")
	case strings.Contains(t.Argv[0], "{{"):
		c.add("argv[0]", "the program must be fixed text, not a template")
	case strings.ContainsRune(t.Argv[0], 0):
		c.add("argv[0]", "must not contain a NUL byte")
	}
	for i := 1; i < len(t.Argv); i++ {
		field := fmt.Sprintf("argv[%d]", i)
		tt, err := parseTemplate(field, t.Argv[i], nil, nil)
		if err != nil {
			c.add(field, "%s", err)
			continue
		}
		ct.argv = append(ct.argv, tt)
	}
	switch {
	case t.Timeout < 0 || t.Timeout > MaxToolTimeout:
		c.add("timeout", "must be a positive duration up to %s (0 means %s); got %s", MaxToolTimeout, DefaultToolTimeout, t.Timeout)
	case t.Timeout == 0:
		ct.spec.Timeout = DefaultToolTimeout
	}
	if t.Workdir != "" && !filepath.IsAbs(t.Workdir) {
		c.add("workdir", "must be an absolute path; got %q", t.Workdir)
	}
	switch {
	case t.MaxOutput < 0 || t.MaxOutput > MaxOutputLimit:
		c.add("max_output", "must be 1..%d bytes (0 means %d); got %d", MaxOutputLimit, DefaultMaxOutput, t.MaxOutput)
	case t.MaxOutput == 0:
		ct.spec.MaxOutput = DefaultMaxOutput
	}
	ct.spec.Argv = slices.Clone(t.Argv)
	ct.invalid = len(c.problems) > before
	ct.def = automate.ClientTool{Name: t.Name, Description: t.Description, Parameters: params}
	return ct
}

// CommandTool returns the spec of an ENABLED command tool, with defaults
// filled (Timeout, MaxOutput); false for a disabled or unknown name (and
// for notify, which is built in).
func (s *Set) CommandTool(name string) (CommandToolSpec, bool) {
	ct, ok := s.tools[name]
	if !ok || !ct.spec.Enabled {
		return CommandToolSpec{}, false
	}
	spec := ct.spec
	spec.Argv = slices.Clone(spec.Argv)
	return spec, true
}

// CommandToolNames lists the enabled command tools in declared order.
func (s *Set) CommandToolNames() []string {
	var names []string
	for _, n := range s.toolOrder {
		if s.tools[n].spec.Enabled {
			names = append(names, n)
		}
	}
	return names
}

// ToolArgv builds the argument vector of a call of the enabled command
// tool name: Argv[0] as written, then each template executed over the
// call's arguments (a JSON object; numbers keep their JSON text; absent or
// null arguments mean {}). A missing argument that a template uses is an
// error. Each element is exactly one argument; nothing is split or
// interpreted by a shell. Errors are *ToolError, meant for the agent.
func (s *Set) ToolArgv(name string, arguments json.RawMessage) ([]string, error) {
	ct, ok := s.tools[name]
	if !ok || !ct.spec.Enabled {
		return nil, &ToolError{Tool: name, Err: errors.New("no such enabled command tool")}
	}
	args := map[string]any{}
	if raw := bytes.TrimSpace(arguments); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil || args == nil {
			return nil, &ToolError{Tool: name, Err: errors.New("arguments must be a JSON object")}
		}
		if dec.More() {
			return nil, &ToolError{Tool: name, Err: errors.New("arguments must be one JSON object")}
		}
	}
	argv := []string{ct.spec.Argv[0]}
	for i, t := range ct.argv {
		out, err := execute(t, args)
		if err != nil {
			return nil, &ToolError{Tool: name, Err: fmt.Errorf("argv[%d]: %v", i+1, err)}
		}
		if strings.ContainsRune(out, 0) {
			return nil, &ToolError{Tool: name, Err: fmt.Errorf("argv[%d]: an argument must not contain a NUL byte", i+1)}
		}
		argv = append(argv, out)
	}
	return argv, nil
}
