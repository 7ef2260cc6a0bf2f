package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
)

// TemplateData is the data of a rule's templates (the dot).
type TemplateData struct {
	// Command is the command text as delivered.
	Command string
	// Macro is the command's macro after catalog completion; the zero
	// Macro when there is none (test with {{if .HasMacro}}).
	Macro    deviceapi.Macro
	HasMacro bool
	// Events is Macro.Events (nil when there is no macro).
	Events []deviceapi.MacroEvent
	// TypedText is the text of the macro's Type events (typedPhrase; the
	// older names text, value, typedText as fallbacks; see
	// deviceapi.MacroEvent.Text), concatenated in order without separator.
	TypedText string
	// CustomAction is the macro's first custom action (a
	// DeviceTypeCustomAction event): .CustomAction.ID, .DeviceTypeID,
	// .Content (additionalInputContent), .Toggle, .Release; all empty when
	// there is none. CustomActions lists every one, in order.
	CustomAction  deviceapi.CustomAction
	CustomActions []deviceapi.CustomAction
	// OutputSpeech is the outputSpeech of the macro's events, the non-empty
	// ones joined by a space.
	OutputSpeech string
	// Received is when the hub delivered the command; Seq its hub sequence
	// number.
	Received time.Time
	Seq      uint64
	// Rule is the rule's name (UnmatchedRuleName for the unmatched rule).
	Rule string
	// Groups are the submatches of command_regex (Groups[0] is the whole
	// command); nil when the rule has no command_regex. Named maps each
	// named group to its text (empty, never nil).
	Groups []string
	Named  map[string]string
}

var dataType = reflect.TypeFor[TemplateData]()

// funcs are the functions every template may call, besides text/template's
// built-ins. The subject comes last so that they read well in pipelines
// ({{.Command | lower}}, {{.Groups | join ", "}}).
var funcs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"lower":     strings.ToLower,
	"upper":     strings.ToUpper,
	"trim":      strings.TrimSpace,
	"join":      joinFunc,
	"split":     func(sep, s string) []string { return strings.Split(s, sep) },
	"replace":   func(old, new, s string) string { return strings.ReplaceAll(s, old, new) },
	"contains":  func(sub, s string) bool { return strings.Contains(s, sub) },
	"hasPrefix": func(prefix, s string) bool { return strings.HasPrefix(s, prefix) },
	"hasSuffix": func(suffix, s string) bool { return strings.HasSuffix(s, suffix) },
	"default":   defaultFunc,
}

func joinFunc(sep string, list any) (string, error) {
	v := reflect.ValueOf(list)
	if !v.IsValid() {
		return "", nil
	}
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return "", fmt.Errorf("join: want a list, got %T", list)
	}
	parts := make([]string, v.Len())
	for i := range parts {
		parts[i] = fmt.Sprint(v.Index(i).Interface())
	}
	return strings.Join(parts, sep), nil
}

// defaultFunc returns v unless it is empty (nil, "", 0, false, an empty
// list or map), else def.
func defaultFunc(def, v any) any {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return def
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array, reflect.String:
		if rv.Len() == 0 {
			return def
		}
		return v
	}
	if rv.IsZero() {
		return def
	}
	return v
}

// namedGroups are the keys .Named has in one rule's templates: the named
// groups of its command_regex (none without one).
type namedGroups struct {
	regex bool     // the rule has a command_regex
	names []string // its named groups, in order
}

// problem says why key is not a key of .Named, or "" when it is.
func (g *namedGroups) problem(key string) string {
	switch {
	case slices.Contains(g.names, key):
		return ""
	case !g.regex:
		return fmt.Sprintf(".Named has no key %q: the rule has no command_regex, so .Named is empty (it holds command_regex's named groups, (?P<name>...))", key)
	case len(g.names) == 0:
		return fmt.Sprintf(".Named has no key %q: match.command_regex has no named groups (name one with (?P<%s>...))", key, key)
	}
	return fmt.Sprintf(".Named has no key %q: the named groups of match.command_regex are %s", key, strings.Join(g.names, ", "))
}

// namedMap stands for TemplateData.Named while a template is checked, so
// that the checker knows which keys it has (the data keeps a plain map).
type namedMap map[string]string

var namedMapType = reflect.TypeFor[namedMap]()

// parseTemplate parses src as the template called name and checks it
// statically against root (the type of the dot; nil when unknown) and,
// when named is not nil, the keys of .Named (TemplateData.Named) against
// the rule's named groups. A map key that is missing when the template
// runs is an execution error (missingkey=error): a rendering never has a
// hole where a key was meant.
func parseTemplate(name, src string, root reflect.Type, named *namedGroups) (*template.Template, error) {
	t, err := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(src)
	if err != nil {
		return nil, err
	}
	calls := map[string][]string{} // template -> templates it invokes
	for _, tt := range t.Templates() {
		if tt.Tree == nil || tt.Root == nil {
			continue
		}
		c := &checker{tree: tt.Tree, named: named}
		if tt.Name() == name {
			c.root = root
		}
		c.list(tt.Root, c.root)
		if c.err != nil {
			return nil, c.err
		}
		calls[tt.Name()] = c.calls
	}
	if cyc := findCycle(calls); cyc != "" {
		return nil, fmt.Errorf("template: %s: template %q calls itself (recursion is not allowed in rule templates)", name, cyc)
	}
	return t, nil
}

// findCycle returns a template that (indirectly) invokes itself, or "".
func findCycle(calls map[string][]string) string {
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var visit func(n string) string
	visit = func(n string) string {
		switch state[n] {
		case visiting:
			return n
		case done:
			return ""
		}
		state[n] = visiting
		for _, m := range calls[n] {
			if c := visit(m); c != "" {
				return c
			}
		}
		state[n] = done
		return ""
	}
	names := make([]string, 0, len(calls))
	for n := range calls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if c := visit(n); c != "" {
			return c
		}
	}
	return ""
}

// checker finds, before any command arrives, field names the data does not
// have ({{.Comand}}) and ranges over numbers (which could spin for long);
// it collects the templates invoked so that recursion can be refused.
type checker struct {
	tree  *parse.Tree
	root  reflect.Type // type of $; nil when unknown
	named *namedGroups // the keys of .Named; nil when unknown
	calls []string     // names of the templates invoked
	err   error
}

func (c *checker) fail(n parse.Node, format string, args ...any) {
	if c.err == nil {
		loc, _ := c.tree.ErrorContext(n)
		c.err = fmt.Errorf("template: %s: %s", loc, fmt.Sprintf(format, args...))
	}
}

func (c *checker) list(l *parse.ListNode, dot reflect.Type) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		c.node(n, dot)
	}
}

func (c *checker) node(n parse.Node, dot reflect.Type) {
	if c.err != nil {
		return
	}
	switch n := n.(type) {
	case *parse.ActionNode:
		c.pipe(n.Pipe, dot)
	case *parse.IfNode:
		c.pipe(n.Pipe, dot)
		c.list(n.List, dot)
		c.list(n.ElseList, dot)
	case *parse.WithNode:
		inner := c.pipe(n.Pipe, dot)
		c.list(n.List, inner)
		c.list(n.ElseList, dot)
	case *parse.RangeNode:
		t := c.pipe(n.Pipe, dot)
		if isNumberLiteral(n.Pipe) || (t != nil && isInteger(t)) {
			c.fail(n, "range over a number is not allowed in rule templates")
			return
		}
		var elem reflect.Type
		if t != nil { // with or without declared variables, dot is the element
			switch deref(t).Kind() {
			case reflect.Slice, reflect.Array, reflect.Map:
				elem = deref(t).Elem()
			}
		}
		c.list(n.List, elem)
		c.list(n.ElseList, dot)
	case *parse.TemplateNode:
		c.calls = append(c.calls, n.Name)
		c.pipe(n.Pipe, dot)
	case *parse.ListNode:
		c.list(n, dot)
	}
}

// pipe checks the pipeline and returns its static type when it is one
// field chain (nil when unknown).
func (c *checker) pipe(p *parse.PipeNode, dot reflect.Type) reflect.Type {
	if p == nil {
		return nil
	}
	var last reflect.Type
	for i, cmd := range p.Cmds {
		var second reflect.Type
		for j, a := range cmd.Args {
			t := c.arg(a, dot)
			if i == len(p.Cmds)-1 && j == 0 && len(cmd.Args) == 1 {
				last = t
			}
			if j == 1 {
				second = t
			}
		}
		// index .Named "key": the key is known when it is a literal.
		if id, ok := cmd.Args[0].(*parse.IdentifierNode); ok && id.Ident == "index" && len(cmd.Args) >= 3 && second == namedMapType {
			if key, ok := cmd.Args[2].(*parse.StringNode); ok {
				c.namedKey(cmd, key.Text)
			}
		}
	}
	return last
}

// namedKey fails when key is not a key of .Named.
func (c *checker) namedKey(n parse.Node, key string) {
	if c.named != nil {
		if msg := c.named.problem(key); msg != "" {
			c.fail(n, "%s", msg)
		}
	}
}

func (c *checker) arg(a parse.Node, dot reflect.Type) reflect.Type {
	switch a := a.(type) {
	case *parse.FieldNode:
		if dot != nil {
			return c.chain(a, dot, a.Ident, dot == c.root)
		}
	case *parse.VariableNode:
		if a.Ident[0] == "$" && c.root != nil {
			if len(a.Ident) == 1 {
				return c.root
			}
			return c.chain(a, c.root, a.Ident[1:], true)
		}
	case *parse.DotNode:
		return dot
	case *parse.PipeNode:
		return c.pipe(a, dot)
	case *parse.ChainNode:
		c.arg(a.Node, dot)
	}
	return nil
}

// chain follows field (or method) names from type t; it returns the type
// reached, or nil once it is unknown (a map of any, an interface).
func (c *checker) chain(n parse.Node, t reflect.Type, idents []string, atRoot bool) reflect.Type {
	for i, id := range idents {
		if t == namedMapType {
			c.namedKey(n, id)
			if c.err != nil {
				return nil
			}
		}
		next, ok := lookup(t, id)
		if !ok {
			if atRoot && i == 0 && t == dataType {
				c.fail(n, "field %q is not in the template data (fields: %s)", id, strings.Join(fieldNames(dataType), ", "))
			} else {
				c.fail(n, "can't evaluate field %s in type %s", id, t)
			}
			return nil
		}
		if next == nil {
			return nil
		}
		if t == dataType && id == "Named" {
			next = namedMapType
		}
		t = next
	}
	return t
}

var errorType = reflect.TypeFor[error]()

// lookup resolves one name on type t the way text/template does: a method
// (of t or *t), else a struct field, else a map key.
func lookup(t reflect.Type, name string) (reflect.Type, bool) {
	if t.Kind() == reflect.Interface {
		return nil, true
	}
	mt := t
	if mt.Kind() != reflect.Pointer {
		mt = reflect.PointerTo(t)
	}
	if m, ok := mt.MethodByName(name); ok {
		// text/template calls methods of one result, or of a result and
		// an error.
		if n := m.Type.NumOut(); n == 0 || n > 2 || (n == 2 && m.Type.Out(1) != errorType) {
			return nil, false
		}
		if m.Type.Out(0) == errorType {
			return nil, true
		}
		return nonInterface(m.Type.Out(0)), true
	}
	t = deref(t)
	switch t.Kind() {
	case reflect.Struct:
		if f, ok := t.FieldByName(name); ok && f.IsExported() {
			return nonInterface(f.Type), true
		}
		return nil, false
	case reflect.Map:
		return nonInterface(t.Elem()), true
	case reflect.Interface:
		return nil, true
	}
	return nil, false
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func nonInterface(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Interface {
		return nil
	}
	return t
}

func isInteger(t reflect.Type) bool {
	switch deref(t).Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

func isNumberLiteral(p *parse.PipeNode) bool {
	if p == nil || len(p.Cmds) == 0 {
		return false
	}
	last := p.Cmds[len(p.Cmds)-1]
	if len(last.Args) == 0 {
		return false
	}
	_, ok := last.Args[0].(*parse.NumberNode)
	return ok
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() {
			names = append(names, f.Name)
		}
	}
	return names
}

// errTooLarge stops a template whose output passes MaxRenderedSize.
var errTooLarge = fmt.Errorf("the rendering is larger than %d bytes", MaxRenderedSize)

type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > MaxRenderedSize {
		return 0, errTooLarge
	}
	return b.Buffer.Write(p)
}

// execute runs t on data with the output limit.
func execute(t *template.Template, data any) (string, error) {
	var b limitedBuffer
	if err := t.Execute(&b, data); err != nil {
		if errors.Is(err, errTooLarge) {
			return "", errTooLarge
		}
		return "", err
	}
	return b.String(), nil
}
