package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/toolkit"
	"github.com/hubgate/hubgate/internal/lazyregexp"
)

// Tool names this package adds to the toolkit's built-ins.
const (
	ToolFetchURL         = assistant.ToolFetchURL
	ToolRequestUserInput = assistant.ToolRequestUserInput
)

// toolKind says who executes a tool.
type toolKind int

const (
	kindBuiltin toolKind = iota + 1 // automate/toolkit
	kindFetch                       // fetch_url
	kindAsk                         // request_user_input
	kindMCP                         // an inline or configured MCP server
	kindClient                      // the caller (parks the run)
)

// tool is one tool offered to the model in a run.
type tool struct {
	name        string // as exposed
	kind        toolKind
	description string
	params      json.RawMessage
	schema      *jsonschema.Resolved // nil: any JSON object
	schemaErr   error                // why the schema could not be compiled
	server      string               // MCP: the server's name
	mcpTool     string               // MCP: the bare tool name
}

// toolset is the tools of one run, in the order offered.
type toolset struct {
	list   []*tool
	byName map[string]*tool
}

func (ts *toolset) add(t *tool) {
	if ts.byName == nil {
		ts.byName = map[string]*tool{}
	}
	if old, ok := ts.byName[t.name]; ok {
		// A later declaration replaces an earlier one of the same name
		// (a client tool named like a built-in is the caller's).
		*old = *t
		return
	}
	ts.list = append(ts.list, t)
	ts.byName[t.name] = t
}

func (ts *toolset) specs() []toolSpec {
	out := make([]toolSpec, 0, len(ts.list))
	for _, t := range ts.list {
		out = append(out, toolSpec{Type: "function", Function: toolSpecFunc{Name: t.name, Description: t.description, Parameters: t.params}})
	}
	return out
}

// emptyObjectSchema is the parameters of a tool that takes no arguments.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// newTool builds a tool and compiles its schema.
func newTool(name string, kind toolKind, description string, params json.RawMessage) *tool {
	if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
		params = emptyObjectSchema
	}
	t := &tool{name: name, kind: kind, description: description, params: params}
	t.schema, t.schemaErr = compileSchema(params)
	return t
}

// compileSchema resolves a JSON Schema for validation (draft 2020-12 or
// draft-07; any other $schema is read as 2020-12). A schema that cannot be
// resolved (for example one with remote references) is not enforced.
func compileSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("schema is not a JSON Schema object: %w", err)
	}
	switch s.Schema {
	case "", "http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema",
		"https://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema":
	default:
		s.Schema = ""
	}
	if s.Schema == "http://json-schema.org/draft-07/schema" {
		s.Schema += "#"
	}
	return s.Resolve(nil)
}

// SchemaError is a tool call whose arguments the model got wrong.
type SchemaError struct {
	Tool    string
	Message string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("invalid arguments for %s: %s", e.Tool, e.Message)
}

// validateArgs checks a call's arguments: a JSON object ("" and null mean
// {}) that matches the tool's schema. It returns the arguments as a
// compact JSON object.
func (t *tool) validateArgs(raw string) (json.RawMessage, error) {
	trimmed := strings.TrimSpace(raw)
	if trimmed == "" || trimmed == "null" {
		trimmed = "{}"
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, &SchemaError{Tool: t.name, Message: "the arguments are not valid JSON (" + err.Error() + ")"}
	}
	if dec.More() {
		return nil, &SchemaError{Tool: t.name, Message: "the arguments hold more than one JSON value"}
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, &SchemaError{Tool: t.name, Message: "the arguments must be a JSON object"}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(trimmed)); err != nil {
		return nil, &SchemaError{Tool: t.name, Message: err.Error()}
	}
	if t.schema != nil {
		// The validator wants plain JSON values (float64 numbers).
		var plain map[string]any
		if err := json.Unmarshal(buf.Bytes(), &plain); err != nil {
			return nil, &SchemaError{Tool: t.name, Message: err.Error()}
		}
		if err := t.schema.Validate(plain); err != nil {
			return nil, &SchemaError{Tool: t.name, Message: clip(err.Error(), maxMessage)}
		}
	}
	return json.RawMessage(buf.Bytes()), nil
}

// builtinTools are the tools of every run: the toolkit's file and command
// tools, fetch_url and request_user_input.
func builtinTools() []*tool {
	var out []*tool
	for _, d := range toolkit.Definitions() {
		out = append(out, newTool(d.Name, kindBuiltin, d.Description, d.Parameters))
	}
	out = append(out,
		newTool(ToolFetchURL, kindFetch, "Fetch a web page or file over http(s) with GET and return its text (HTML reduced to text); the size and time are limited.",
			json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","description":"an absolute http:// or https:// URL"}},"required":["url"]}`)),
		newTool(ToolRequestUserInput, kindAsk, "Ask the person who started the task for missing information; each field has an id, and required fields must be answered.",
			json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","description":"the question"},"fields":{"type":"array","minItems":1,"items":{"type":"object","properties":{"id":{"type":"string"},"label":{"type":"string"},"required":{"type":"boolean"},"multi":{"type":"boolean","description":"several answers allowed"}},"required":["id"]}}},"required":["fields"]}`)),
	)
	return out
}

// mcpTools turns an MCP pool's tools into run tools.
func mcpTools(tools []toolkit.McpTool) []*tool {
	var out []*tool
	for _, mt := range tools {
		t := newTool(mt.Exposed, kindMCP, mt.Description, mt.InputSchema)
		t.server, t.mcpTool = mt.Server, mt.Name
		out = append(out, t)
	}
	return out
}

// clientTools turns the run's declared client tools into run tools.
func clientTools(decl []automate.ClientTool) []*tool {
	var out []*tool
	for _, c := range decl {
		out = append(out, newTool(c.Name, kindClient, c.Description, c.Parameters))
	}
	return out
}

// fetcher implements fetch_url.
type fetcher struct {
	hc       *http.Client
	maxBytes int64
}

// fetchResult is what fetch_url produced.
type fetchResult struct {
	summary string
	text    string // the text the model and the step get
}

var (
	scriptRE   = lazyregexp.New(`(?is)<(script|style|noscript|svg|head)\b.*?</(script|style|noscript|svg|head)\s*>`)
	tagRE      = lazyregexp.New(`(?s)<[^>]*>`)
	blankRunRE = lazyregexp.New(`\n[ \t\r\f]*\n(\s*\n)+`)
	spaceRunRE = lazyregexp.New(`[ \t\f\r]+`)
	breakRE    = lazyregexp.New(`(?i)<(br|/p|/div|/li|/h[1-6]|/tr|/title)\b[^>]*>`)
)

// htmlText reduces HTML to readable text.
func htmlText(s string) string {
	s = scriptRE.ReplaceAllString(s, " ")
	s = breakRE.ReplaceAllString(s, "\n")
	s = tagRE.ReplaceAllString(s, " ")
	s = strings.NewReplacer("&nbsp;", " ", "&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&apos;", "'").Replace(s)
	s = spaceRunRE.ReplaceAllString(s, " ")
	s = blankRunRE.ReplaceAllString(s, "\n\n")
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.TrimSpace(blankRunRE.ReplaceAllString(strings.Join(lines, "\n"), "\n\n"))
}

// ErrFetchURL is wrapped by fetch_url errors about the URL itself.
var ErrFetchURL = errors.New("fetch_url needs an absolute http or https URL")

// fetch GETs rawURL within ctx, reading at most maxBytes.
func (f *fetcher) fetch(ctx context.Context, rawURL string) (fetchResult, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fetchResult{}, fmt.Errorf("%w; got %q", ErrFetchURL, clip(rawURL, 200))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fetchResult{}, fmt.Errorf("fetch_url: %w", err)
	}
	req.Header.Set("User-Agent", "hubgate-automate/1 (fetch_url)")
	req.Header.Set("Accept", "text/html, text/plain, application/json, */*;q=0.5")
	resp, err := f.hc.Do(req)
	if err != nil {
		return fetchResult{}, fmt.Errorf("fetch_url %s: %w", u.Redacted(), scrubURL(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return fetchResult{}, fmt.Errorf("fetch_url %s: reading the body: %w", u.Redacted(), err)
	}
	truncated := int64(len(body)) > f.maxBytes
	if truncated {
		body = body[:f.maxBytes]
	}
	ct := resp.Header.Get("Content-Type")
	mt, params, _ := mime.ParseMediaType(ct)
	var text string
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		text = htmlText(string(body))
	case strings.HasPrefix(mt, "text/") || strings.Contains(mt, "json") || strings.Contains(mt, "xml") ||
		strings.Contains(mt, "javascript") || strings.Contains(mt, "yaml") || (mt == "" && utf8.Valid(body)):
		text = string(body)
	default:
		text = fmt.Sprintf("[%s content, %d bytes, not shown as text]", mt, len(body))
	}
	if cs := strings.ToLower(params["charset"]); cs != "" && cs != "utf-8" && cs != "us-ascii" && !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	note := ""
	if truncated {
		note = fmt.Sprintf(" (truncated at %d bytes)", f.maxBytes)
	}
	summary := fmt.Sprintf("HTTP %d %s, %d bytes%s from %s: %s", resp.StatusCode, mt, len(body), note, u.Redacted(), toolkit.Preview(text, 200))
	if resp.StatusCode >= 400 {
		return fetchResult{summary: summary, text: text}, fmt.Errorf("fetch_url %s: HTTP %d", u.Redacted(), resp.StatusCode)
	}
	return fetchResult{summary: summary, text: text + note}, nil
}

// clip shortens s to n runes (with an ellipsis).
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// forModel bounds a tool result the model sees.
func forModel(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + fmt.Sprintf("\n[... %d more characters not shown]", len(r)-n)
}
