package toolkit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hubgate/hubgate/automate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Elicitation actions (the MCP ElicitResult's action).
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// McpElicitation is a server's elicitation/create request: a question for
// the person.
type McpElicitation struct {
	Server  string          // the server's name
	Message string          // what the server asks
	Mode    string          // "form" or "url"
	Schema  json.RawMessage // form: the JSON Schema of the answer (an object of flat properties)
	URL     string          // url: the page the person is to open
}

// McpElicitResult is the answer to an elicitation.
type McpElicitResult struct {
	Action  string         // ElicitAccept, ElicitDecline or ElicitCancel
	Content map[string]any // accept: the answer, matching the schema
}

// McpProgress is one progress notification of a tool call.
type McpProgress struct {
	Server, Tool string
	Message      string
	Progress     float64
	Total        float64 // 0: unknown
}

// String is the progress as a person reads it: "3/10 message".
func (p McpProgress) String() string {
	n := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		n += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		return n + " " + p.Message
	}
	return n
}

type progressKey struct{}

// WithMcpProgress returns a context whose McpPool.Call asks the server for
// progress notifications and hands each to f (on the session's reader:
// f must not block).
func WithMcpProgress(ctx context.Context, f func(McpProgress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// McpProgressFunc is the callback WithMcpProgress put in ctx, nil when
// none.
func McpProgressFunc(ctx context.Context) func(McpProgress) {
	f, _ := ctx.Value(progressKey{}).(func(McpProgress))
	return f
}

// progressToken numbers the progress tokens of the process's calls.
var progressToken atomic.Int64

// progressHandler hands a notification to the callback of its call.
func (p *McpPool) progressHandler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	key := fmt.Sprint(req.Params.ProgressToken)
	p.mu.Lock()
	f := p.progress[key]
	p.mu.Unlock()
	if f != nil {
		f(req.Params.Message, req.Params.Progress, req.Params.Total)
	}
}

// elicitHandler answers a server's elicitation through cfg.Elicit, one
// question at a time; without Elicit it declines at once.
func (c *mcpConn) elicitHandler(p *McpPool, cfg McpConfig) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		e := McpElicitation{Server: c.server.Name}
		if req != nil && req.Params != nil {
			e.Message, e.Mode, e.URL = req.Params.Message, req.Params.Mode, req.Params.URL
			if req.Params.RequestedSchema != nil {
				if b, err := json.Marshal(req.Params.RequestedSchema); err == nil {
					e.Schema = b
				}
			}
		}
		if e.Mode == "" {
			e.Mode = "form"
			if e.URL != "" {
				e.Mode = "url"
			}
		}
		if cfg.Elicit == nil {
			p.log.Info("toolkit: MCP elicitation declined: no person can be asked in this run", "server", c.server.Name)
			return &mcp.ElicitResult{Action: ElicitDecline}, nil
		}
		p.elicitMu.Lock()
		defer p.elicitMu.Unlock()
		res, err := cfg.Elicit(ctx, e)
		if err != nil {
			p.log.Info("toolkit: MCP elicitation cancelled", "server", c.server.Name, "err", err)
			return &mcp.ElicitResult{Action: ElicitCancel}, nil
		}
		if res.Action != ElicitAccept {
			res.Content = nil
		}
		p.log.Info("toolkit: MCP elicitation answered", "server", c.server.Name, "action", res.Action)
		return &mcp.ElicitResult{Action: res.Action, Content: res.Content}, nil
	}
}

// ElicitByAsking answers elicitations by asking the person through the
// run's ask_person client tool (automate.AskPersonToolName), the way the
// agent asks: ask parks the run with one ask_person call and returns its
// result (the caller, the bridge, asks the person by every way it has and
// answers, or says nobody did). ask nil: the run has no person to ask
// (ask_person not declared), and every elicitation is declined at once.
//
// The question names the server and, for a form, the fields to answer;
// an enum or boolean field offers its values as choices, plus "decline".
// The answer "decline" declines; a result saying nobody answered
// (automate.AskPersonNoAnswer) or an error cancels; any other answer is
// accepted: for a form of one field, the answer is that field's value
// (converted to its type); for several fields, a JSON object. An answer
// that does not fit the form declines. A url elicitation asks the person
// to open the URL and accepts once they answer.
func ElicitByAsking(ask func(ctx context.Context, args json.RawMessage) (automate.ToolResult, error)) func(context.Context, McpElicitation) (McpElicitResult, error) {
	if ask == nil {
		return nil
	}
	return func(ctx context.Context, e McpElicitation) (McpElicitResult, error) {
		form := parseForm(e.Schema)
		question, choices := elicitQuestion(e, form)
		args, err := json.Marshal(struct {
			Question string   `json:"question"`
			Choices  []string `json:"choices,omitempty"`
		}{question, choices})
		if err != nil {
			return McpElicitResult{}, err
		}
		res, err := ask(ctx, args)
		if err != nil {
			return McpElicitResult{}, err
		}
		if res.Error != "" {
			return McpElicitResult{}, fmt.Errorf("ask_person: %s", res.Error)
		}
		answer := strings.TrimSpace(res.ResultText())
		switch {
		case strings.HasPrefix(answer, automate.AskPersonNoAnswer) || answer == "":
			return McpElicitResult{Action: ElicitCancel}, nil
		case strings.EqualFold(answer, ElicitDecline):
			return McpElicitResult{Action: ElicitDecline}, nil
		case e.Mode == "url":
			return McpElicitResult{Action: ElicitAccept}, nil
		}
		content, ok := form.content(answer)
		if !ok {
			return McpElicitResult{Action: ElicitDecline}, nil
		}
		return McpElicitResult{Action: ElicitAccept, Content: content}, nil
	}
}

// formField is one property of an elicitation's schema.
type formField struct {
	name, typ, title string
	enum             []string
}

type elicitForm []formField

func parseForm(schema json.RawMessage) elicitForm {
	var s struct {
		Properties map[string]struct {
			Type  string   `json:"type"`
			Title string   `json:"title"`
			Enum  []string `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var f elicitForm
	for name, p := range s.Properties {
		f = append(f, formField{name: name, typ: p.Type, title: p.Title, enum: p.Enum})
	}
	slices.SortFunc(f, func(a, b formField) int { return strings.Compare(a.name, b.name) })
	return f
}

// elicitQuestion is the ask_person question (bounded as ask_person
// requires) and choices of e.
func elicitQuestion(e McpElicitation, form elicitForm) (string, []string) {
	q := "The MCP server " + e.Server + " asks: " + e.Message
	var choices []string
	switch {
	case e.Mode == "url":
		q += " (open " + e.URL + ", then answer done, or decline)"
	case len(form) == 1:
		f := form[0]
		switch {
		case len(f.enum) > 0:
			choices = append(slices.Clone(f.enum), ElicitDecline)
		case f.typ == "boolean":
			choices = []string{"yes", "no", ElicitDecline}
		}
	case len(form) > 1:
		var names []string
		for _, f := range form {
			names = append(names, f.name+" ("+f.typ+")")
		}
		q += " (answer with a JSON object of " + strings.Join(names, ", ") + ", or decline)"
	}
	if len(choices) > 10 || slices.ContainsFunc(choices, func(c string) bool { return len([]rune(c)) > 100 || strings.TrimSpace(c) == "" }) {
		choices = nil
	}
	if r := []rune(q); len(r) > 1000 {
		q = string(r[:999]) + "…"
	}
	return q, choices
}

// content is the accepted content of answer, and whether it fits the form.
func (f elicitForm) content(answer string) (map[string]any, bool) {
	switch len(f) {
	case 0:
		return map[string]any{}, true
	case 1:
		v, ok := f[0].value(answer)
		if !ok {
			return nil, false
		}
		return map[string]any{f[0].name: v}, true
	}
	var obj map[string]any
	if json.Unmarshal([]byte(answer), &obj) != nil || obj == nil {
		return nil, false
	}
	return obj, true
}

// value converts a spoken or typed answer to the field's type.
func (f formField) value(answer string) (any, bool) {
	if len(f.enum) > 0 {
		i := slices.IndexFunc(f.enum, func(e string) bool { return strings.EqualFold(e, answer) })
		if i < 0 {
			return nil, false
		}
		return f.enum[i], true
	}
	switch f.typ {
	case "boolean":
		switch strings.ToLower(answer) {
		case "yes", "y", "true", "ok", "sure":
			return true, true
		case "no", "n", "false":
			return false, true
		}
		return nil, false
	case "integer":
		n, err := strconv.ParseInt(answer, 10, 64)
		return n, err == nil
	case "number":
		n, err := strconv.ParseFloat(answer, 64)
		return n, err == nil
	}
	return answer, true
}
