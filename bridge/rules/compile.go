package rules

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/deviceapi"
)

// Set is a compiled rule set. It is immutable and safe for concurrent use;
// WithCatalog and WithDeviceType return a new Set sharing the compiled rules.
type Set struct {
	rules     []*Rule
	byName    map[string]*Rule
	tools     map[string]*commandTool // every declared command tool
	toolOrder []string                // declared order
	unmatched *Rule                   // nil when unmatched commands are ignored
	cat       Catalog
	// deviceType is the paired device's type (WithDeviceType); "" when
	// custom actions are not checked.
	deviceType string
}

// Rule is one compiled rule (or the unmatched rule).
type Rule struct {
	name          string
	index         int // position in the rules list; -1 for the unmatched rule
	spec          Spec
	busy          BusyPolicy
	queueLimit    int
	maxAge        time.Duration
	runOnRecovery bool

	command            string
	glob, re           *regexp.Regexp
	macroName, macroID string
	eventType          string // the spec's spelling (deviceapi.CanonicalEventType)
	customAction       string
	hasMacroCriteria   bool
	run                *compiledRun
	clientTools        []automate.ClientTool
	answers            *regexp.Regexp // Spec.Answers, anchored; nil: any command
}

type compiledRun struct {
	prompt, taskID, awp, contract *template.Template
	timeoutMs                     int64
	thinking                      string
	restrict, destructive, cont   bool
	include                       *automate.Include
	skills, mcpIDs                []string
	mcp                           []automate.InlineMcpServer
	hitl                          []hitlTemplate // sorted by id
}

type hitlTemplate struct {
	id    string
	list  bool
	tmpls []*template.Template
}

// compiler collects the problems of one entry.
type compiler struct {
	problems []Problem
	section  string
	index    int
	name     string
	// named are the keys of .Named in the entry's templates; nil when
	// unknown (a command_regex that does not compile).
	named *namedGroups
}

func (c *compiler) at(section string, index int, name string) {
	c.section, c.index, c.name = section, index, name
}

func (c *compiler) add(field, format string, args ...any) {
	c.problems = append(c.problems, Problem{Section: c.section, Index: c.index, Name: c.name, Field: field, Message: fmt.Sprintf(format, args...)})
}

// Compile validates everything (every rule, every command tool, the
// unmatched action) and compiles the set. All problems come back at once
// as an *Error, in the order rules, command_tools, unmatched.
func Compile(specs []Spec, tools []CommandToolSpec, unmatched UnmatchedSpec) (*Set, error) {
	s := &Set{byName: map[string]*Rule{}, tools: map[string]*commandTool{}}

	tc := &compiler{}
	for i, t := range tools {
		tc.at(SectionCommandTools, i, t.Name)
		ct := tc.tool(t)
		if _, dup := s.tools[t.Name]; dup {
			tc.add("name", "duplicate command tool name (first declared at %s)", s.tools[t.Name].where)
			continue
		}
		ct.where = fmt.Sprintf("command_tools[%d]", i)
		s.tools[t.Name] = ct
		s.toolOrder = append(s.toolOrder, t.Name)
	}

	rc := &compiler{}
	firstAt := map[string]int{}
	for i, spec := range specs {
		rc.at(SectionRules, i, spec.Name)
		if msg := ruleNameRule(spec.Name); msg != "" {
			rc.add("name", "%s", msg)
		} else if j, dup := firstAt[spec.Name]; dup {
			rc.add("name", "duplicate rule name (first used by rules[%d])", j)
		} else {
			firstAt[spec.Name] = i
		}
		r := rc.rule(spec, s.tools)
		if r == nil {
			continue
		}
		r.index = i
		s.rules = append(s.rules, r)
		if _, ok := s.byName[r.name]; !ok {
			s.byName[r.name] = r
		}
	}

	uc := &compiler{}
	uc.at(SectionUnmatched, -1, "")
	s.unmatched = uc.unmatched(unmatched, s.tools)

	problems := append(append(rc.problems, tc.problems...), uc.problems...)
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return s, nil
}

// ruleNameRule returns the rule a rule name breaks, or "".
func ruleNameRule(name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return "is required"
	case !utf8.ValidString(name):
		return "must be valid UTF-8"
	case utf8.RuneCountInString(name) > MaxNameLength:
		return fmt.Sprintf("must be at most %d characters", MaxNameLength)
	case strings.TrimSpace(name) != name:
		return "must not start or end with a blank"
	case strings.ContainsFunc(name, unicode.IsControl):
		return "must not contain control characters"
	case name == UnmatchedRuleName:
		return "is reserved for the unmatched rule"
	}
	return ""
}

func (c *compiler) rule(spec Spec, tools map[string]*commandTool) *Rule {
	before := len(c.problems)
	r := &Rule{name: spec.Name, spec: spec}
	m := spec.Match
	if m.Command == "" && m.CommandGlob == "" && m.CommandRegex == "" && m.MacroName == "" && m.MacroID == "" && m.EventType == "" && m.CustomAction == "" {
		c.add("match", "needs at least one criterion (command, command_glob, command_regex, macro_name, macro_id, event_type or custom_action)")
	}
	r.command, r.macroName, r.macroID = m.Command, m.MacroName, m.MacroID
	r.eventType, r.customAction = deviceapi.CanonicalEventType(m.EventType), m.CustomAction
	r.hasMacroCriteria = m.MacroName != "" || m.MacroID != "" || m.EventType != "" || m.CustomAction != ""
	if m.CommandGlob != "" {
		re, err := compileGlob(m.CommandGlob)
		if err != nil {
			c.add("match.command_glob", "%s", err)
		}
		r.glob = re
	}
	if m.CommandRegex != "" {
		if _, err := regexp.Compile(m.CommandRegex); err != nil {
			c.add("match.command_regex", "%s", err)
		} else if re, err := regexp.Compile(`^(?:` + m.CommandRegex + `)$`); err != nil {
			c.add("match.command_regex", "%s", err)
		} else {
			r.re = re
		}
	}
	c.named = &namedGroups{regex: m.CommandRegex != ""}
	switch {
	case m.CommandRegex != "" && r.re == nil:
		c.named = nil
	case r.re != nil:
		for _, n := range r.re.SubexpNames() {
			if n != "" {
				c.named.names = append(c.named.names, n)
			}
		}
	}
	if m.EventType != "" && !deviceapi.KnownEventType(m.EventType) {
		c.add("match.event_type", "must be one of %s (or %s); got %q", strings.Join(deviceapi.MacroEventTypes, ", "), deviceapi.EventJoystickMove, m.EventType)
	}
	r.busy, r.queueLimit, r.maxAge = c.busy(spec.Busy, spec.QueueLimit, spec.MaxAge)
	r.runOnRecovery = spec.RunOnRecovery
	if spec.Notify != "" && !slices.Contains(NotifyPolicies, spec.Notify) {
		c.add("notify", "must be one of %s; got %q", strings.Join(NotifyPolicies, ", "), spec.Notify)
	}
	r.run, r.clientTools = c.runTemplate("run", spec.Run, false, tools)
	if spec.Answers != "" {
		_, err := regexp.Compile(spec.Answers) // its own error names the expression as written
		if err == nil {
			r.answers, err = regexp.Compile(`^(?:` + spec.Answers + `)$`)
		}
		if err != nil {
			c.add("answers", "is not a valid RE2 expression: %v", err)
		}
	}
	if len(c.problems) > before {
		return nil
	}
	r.spec.Busy, r.spec.QueueLimit, r.spec.MaxAge = r.busy, r.queueLimit, r.maxAge
	return r
}

// busy checks and defaults the busy policy fields.
func (c *compiler) busy(b BusyPolicy, limit int, maxAge time.Duration) (BusyPolicy, int, time.Duration) {
	if b == "" {
		b = BusySingle
	}
	if !slices.Contains(BusyPolicies, b) {
		c.add("busy", "must be one of single, queue, restart; got %q", string(b))
	}
	switch {
	case limit < 0 || limit > MaxQueueLimit:
		c.add("queue_limit", "must be 1..%d (0 means %d); got %d", MaxQueueLimit, DefaultQueueLimit, limit)
	case limit != 0 && b != BusyQueue:
		c.add("queue_limit", "applies only to busy: queue (this rule's policy is %s)", b)
	case limit == 0:
		limit = DefaultQueueLimit
	}
	switch {
	case maxAge < 0:
		c.add("max_age", "must be a positive duration (0 means %s); got %s", DefaultMaxAge, maxAge)
	case maxAge == 0:
		maxAge = DefaultMaxAge
	}
	return b, limit, maxAge
}

func (c *compiler) unmatched(u UnmatchedSpec, tools map[string]*commandTool) *Rule {
	before := len(c.problems)
	action := u.Action
	if action == "" {
		action = UnmatchedIgnore
	}
	if action != UnmatchedIgnore && action != UnmatchedRun {
		c.add("action", "must be ignore or run; got %q", u.Action)
	}
	r := &Rule{name: UnmatchedRuleName, index: -1}
	r.busy, r.queueLimit, r.maxAge = c.busy(u.Busy, u.QueueLimit, u.MaxAge)
	r.runOnRecovery = u.RunOnRecovery
	var t RunTemplate
	if u.Run != nil {
		t = *u.Run
	}
	c.named = &namedGroups{}
	r.run, r.clientTools = c.runTemplate("run", t, true, tools)
	r.spec = Spec{Name: UnmatchedRuleName, Busy: r.busy, QueueLimit: r.queueLimit, MaxAge: r.maxAge,
		RunOnRecovery: u.RunOnRecovery, Run: t}
	if r.spec.Run.Prompt == "" {
		r.spec.Run.Prompt = "{{.Command}}"
	}
	if len(c.problems) > before || action != UnmatchedRun {
		return nil
	}
	return r
}

// runTemplate validates and compiles a RunTemplate; field is its prefix
// ("run"). With defaultPrompt an empty prompt means {{.Command}}.
func (c *compiler) runTemplate(field string, t RunTemplate, defaultPrompt bool, tools map[string]*commandTool) (*compiledRun, []automate.ClientTool) {
	run := &compiledRun{timeoutMs: int64(t.TimeoutMs), thinking: t.ThinkingLevel, restrict: t.Confined(),
		destructive: t.AllowDestructiveTools, cont: t.Continuation}
	tmpl := func(name, src string) *template.Template {
		if src == "" {
			return nil
		}
		tt, err := parseTemplate(field+"."+name, src, dataType, c.named)
		if err != nil {
			c.add(field+"."+name, "%s", err)
			return nil
		}
		return tt
	}
	prompt := t.Prompt
	if prompt == "" && defaultPrompt {
		prompt = "{{.Command}}"
	}
	if strings.TrimSpace(prompt) == "" {
		c.add(field+".prompt", "is required (a template of the task text)")
	} else {
		run.prompt = tmpl("prompt", prompt)
	}
	run.taskID = tmpl("task_id", t.TaskID)
	run.awp = tmpl("additional_workflow_prompt", t.AdditionalWorkflowPrompt)
	run.contract = tmpl("answer_contract", t.AnswerContract)

	if t.TimeoutMs != 0 && t.TimeoutMs < automate.MinTimeoutMs {
		c.add(field+".timeout_ms", "must be 0 (the server default, %d) or at least %d; got %d",
			automate.DefaultTimeoutMs, automate.MinTimeoutMs, t.TimeoutMs)
	}
	if t.ThinkingLevel != "" && !automate.ValidThinkingLevel(t.ThinkingLevel) {
		c.add(field+".thinking_level", "must be one of %s (or empty for the user's setting); got %q",
			strings.Join(automate.ThinkingLevels, ", "), t.ThinkingLevel)
	}
	run.include = includeOf(t.Include)
	ids := func(name string, list []string) []string {
		for i, id := range list {
			if strings.TrimSpace(id) == "" {
				c.add(fmt.Sprintf("%s.%s[%d]", field, name, i), "must not be empty")
			}
		}
		return slices.Clone(list)
	}
	run.skills = ids("selected_skill_ids", t.SelectedSkillIDs)
	run.mcpIDs = ids("selected_mcp_server_ids", t.SelectedMcpServerIDs)

	if len(t.McpServers) > automate.MaxInlineMcpServers {
		c.add(field+".mcp_servers", "must have at most %d entries; got %d", automate.MaxInlineMcpServers, len(t.McpServers))
	}
	seenMcp := map[string]int{}
	for i, ms := range t.McpServers {
		f := fmt.Sprintf("%s.mcp_servers[%d]", field, i)
		s, ok := c.mcpServer(f, ms)
		if !ok {
			continue
		}
		if j, dup := seenMcp[s.Name]; dup {
			c.add(f+".name", "duplicate of mcp_servers[%d]; names must be unique in the run", j)
			continue
		}
		seenMcp[s.Name] = i
		run.mcp = append(run.mcp, s)
	}

	ids2 := make([]string, 0, len(t.HITLAnswers))
	for id := range t.HITLAnswers {
		ids2 = append(ids2, id)
	}
	slices.Sort(ids2)
	for _, id := range ids2 {
		f := field + ".hitl_answers." + id
		if strings.TrimSpace(id) == "" {
			c.add(field+".hitl_answers", "a field id must not be empty")
			continue
		}
		h := hitlTemplate{id: id}
		switch v := t.HITLAnswers[id].(type) {
		case string:
			h.tmpls = []*template.Template{c.hitlTemplate(f, v)}
		case []string:
			h.list = true
			for i, s := range v {
				h.tmpls = append(h.tmpls, c.hitlTemplate(fmt.Sprintf("%s[%d]", f, i), s))
			}
		case []any:
			h.list = true
			for i, e := range v {
				s, ok := e.(string)
				if !ok {
					c.add(fmt.Sprintf("%s[%d]", f, i), "must be a string; got %s (quote it)", describe(e))
					continue
				}
				h.tmpls = append(h.tmpls, c.hitlTemplate(fmt.Sprintf("%s[%d]", f, i), s))
			}
		default:
			c.add(f, "must be a string or a list of strings; got %s (quote it)", describe(v))
			continue
		}
		run.hitl = append(run.hitl, h)
	}

	var defs []automate.ClientTool
	if len(t.ClientTools) > automate.MaxClientTools {
		c.add(field+".client_tools", "must have at most %d entries; got %d", automate.MaxClientTools, len(t.ClientTools))
	}
	seenTool := map[string]int{}
	for i, name := range t.ClientTools {
		f := fmt.Sprintf("%s.client_tools[%d]", field, i)
		if j, dup := seenTool[name]; dup {
			c.add(f, "%q is listed twice (also client_tools[%d])", name, j)
			continue
		}
		seenTool[name] = i
		if name == NotifyToolName {
			defs = append(defs, NotifyTool())
			continue
		}
		ct, ok := tools[name]
		switch {
		case ok && ct.invalid:
			// its own problems are reported under command_tools
		case !ok:
			known := []string{NotifyToolName}
			for n, t := range tools {
				if t.spec.Enabled && !t.invalid {
					known = append(known, n)
				}
			}
			slices.Sort(known[1:])
			c.add(f, "unknown client tool %q; a rule can list notify and the enabled command tools (%s)", name, strings.Join(known, ", "))
		case !ct.spec.Enabled:
			c.add(f, "command tool %q is disabled (set enabled: true in its command_tools entry to allow it)", name)
		default:
			defs = append(defs, ct.def)
		}
	}
	return run, defs
}

func (c *compiler) hitlTemplate(field, src string) *template.Template {
	t, err := parseTemplate(field, src, dataType, c.named)
	if err != nil {
		c.add(field, "%s", err)
	}
	return t
}

// describe names the YAML/JSON type of a value in messages, without echoing
// long values.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case int, int64, uint64, float64, json.Number:
		return fmt.Sprint(v)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("a %T", v)
}

// includeOf is the include object a rule's runs send: every block is off
// unless the rule turns it on. The server's default is every block on, but
// hubgate reads none of them (the journal keeps the status and the
// answers), and they are large: events rebroadcast the whole step list on
// every update, so a run of a few hundred steps sends tens of MB, past the
// client's response limit.
func includeOf(inc *IncludeSpec) *automate.Include {
	on := func(b *bool) *bool {
		v := b != nil && *b
		return &v
	}
	if inc == nil {
		inc = &IncludeSpec{}
	}
	return &automate.Include{Steps: on(inc.Steps), Trace: on(inc.Trace), Events: on(inc.Events)}
}

func cloneBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}

// mcpServer validates one inline MCP server the way the Automate server
// does, with snake_case field names.
func (c *compiler) mcpServer(f string, m McpServerSpec) (automate.InlineMcpServer, bool) {
	before := len(c.problems)
	if msg := automate.McpServerNameProblem(m.Name); msg != "" {
		c.add(f+".name", "%s", msg)
	}
	switch {
	case m.Description == "":
		c.add(f+".description", "is required")
	case utf8.RuneCountInString(m.Description) > automate.MaxDescription:
		c.add(f+".description", "must be at most %d characters", automate.MaxDescription)
	}
	switch m.Transport {
	case "stdio":
		if m.Command == "" {
			c.add(f+".command", "is required for the stdio transport")
		}
		if m.URL != "" || m.Headers != nil {
			c.add(f+".url", "url and headers apply only to the http and sse transports")
		}
	case "http", "sse":
		u, err := url.Parse(m.URL)
		if m.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			c.add(f+".url", "must be a valid http:// or https:// URL")
		}
		if m.Command != "" || m.Args != nil || m.Env != nil {
			c.add(f+".command", "command, args and env apply only to the stdio transport")
		}
	case "":
		c.add(f+".transport", "is required (stdio, http or sse)")
	default:
		c.add(f+".transport", "must be one of stdio, http, sse; got %q", m.Transport)
	}
	for i, t := range m.DisabledTools {
		if t == "" {
			c.add(fmt.Sprintf("%s.disabled_tools[%d]", f, i), "must not be empty")
		}
	}
	if len(c.problems) > before {
		return automate.InlineMcpServer{}, false
	}
	return automate.InlineMcpServer{
		Name: m.Name, Description: m.Description, Transport: m.Transport, URL: m.URL,
		Headers: cloneMap(m.Headers), Command: m.Command, Args: slices.Clone(m.Args), Env: cloneMap(m.Env),
		RequireApproval: m.RequireApproval, DisabledTools: slices.Clone(m.DisabledTools),
	}, true
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func cloneMcp(list []automate.InlineMcpServer) []automate.InlineMcpServer {
	if list == nil {
		return nil
	}
	out := make([]automate.InlineMcpServer, len(list))
	for i, s := range list {
		s.Headers, s.Env = cloneMap(s.Headers), cloneMap(s.Env)
		s.Args, s.DisabledTools = slices.Clone(s.Args), slices.Clone(s.DisabledTools)
		out[i] = s
	}
	return out
}

// compileGlob translates a glob (see MatchSpec.CommandGlob) into an
// anchored regular expression.
func compileGlob(g string) (*regexp.Regexp, error) {
	if !utf8.ValidString(g) {
		return nil, fmt.Errorf("must be valid UTF-8")
	}
	var b strings.Builder
	b.WriteString(`(?s)^`)
	rs := []rune(g)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 >= len(rs) {
				return nil, fmt.Errorf("ends with a lone \\ (write \\\\ for a backslash)")
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case '[':
			j := i + 1
			var cls strings.Builder
			cls.WriteByte('[')
			if j < len(rs) && (rs[j] == '!' || rs[j] == '^') {
				cls.WriteByte('^')
				j++
			}
			first := true
			closed := false
			for ; j < len(rs); j++ {
				c := rs[j]
				if c == ']' && !first {
					closed = true
					break
				}
				first = false
				switch c {
				case '\\':
					if j+1 >= len(rs) {
						return nil, fmt.Errorf("ends with a lone \\ (write \\\\ for a backslash)")
					}
					j++
					cls.WriteString(classLiteral(rs[j]))
				case '-':
					cls.WriteByte('-')
				default:
					cls.WriteString(classLiteral(c))
				}
			}
			if !closed {
				return nil, fmt.Errorf("unterminated character class starting at position %d", i+1)
			}
			cls.WriteByte(']')
			b.WriteString(cls.String())
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		return nil, fmt.Errorf("%s", msg)
	}
	return re, nil
}

// classLiteral escapes one character for use inside a regexp class.
func classLiteral(r rune) string {
	switch r {
	case '\\', ']', '[', '^', '-':
		return `\` + string(r)
	}
	return string(r)
}
