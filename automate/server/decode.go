package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hubgate/hubgate/automate"
)

// maxTimeoutMs bounds timeoutMs (the spec shows no maximum): seven days,
// far beyond any run and far below a time.Duration overflow.
const maxTimeoutMs = 7 * 24 * 3600 * 1000

// readBody reads a request body of at most automate.MaxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, automate.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errBodyTooLarge
		}
		return nil, invalid("Could not read the request body")
	}
	return body, nil
}

// object is a decoded JSON object whose fields are checked one by one, so
// that each type error gets the contract's exact message.
type object map[string]json.RawMessage

// decodeObject parses a JSON object. An empty body is an empty object when
// allowEmpty holds.
func decodeObject(body []byte, allowEmpty bool) (object, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 && allowEmpty {
		return object{}, nil
	}
	if !json.Valid(trimmed) {
		return nil, errMalformedJSON
	}
	if trimmed[0] != '{' {
		return nil, invalid("Request body must be a JSON object")
	}
	var o object
	if err := json.Unmarshal(trimmed, &o); err != nil {
		return nil, errMalformedJSON
	}
	return o, nil
}

// has reports whether key is present and not null. A null optional field
// counts as omitted.
func (o object) has(key string) bool {
	v, ok := o[key]
	return ok && !isNull(v)
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func (o object) str(key, msg string) (string, bool, error) {
	if !o.has(key) {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(o[key], &s); err != nil {
		return "", true, invalid("%s", msg)
	}
	return s, true, nil
}

func (o object) boolean(key, msg string) (bool, error) {
	if !o.has(key) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(o[key], &b); err != nil {
		return false, invalid("%s", msg)
	}
	return b, nil
}

func (o object) strings(key, msg string) ([]string, error) {
	if !o.has(key) {
		return nil, nil
	}
	var ss []string
	if err := json.Unmarshal(o[key], &ss); err != nil {
		return nil, invalid("%s", msg)
	}
	return ss, nil
}

func (o object) stringMap(key, msg string) (map[string]string, error) {
	if !o.has(key) {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal(o[key], &m); err != nil {
		return nil, invalid("%s", msg)
	}
	return m, nil
}

func (o object) sub(key, msg string) (object, error) {
	if !o.has(key) {
		return nil, nil
	}
	raw := bytes.TrimSpace(o[key])
	if len(raw) == 0 || raw[0] != '{' {
		return nil, invalid("%s", msg)
	}
	var sub object
	if err := json.Unmarshal(raw, &sub); err != nil {
		return nil, invalid("%s", msg)
	}
	return sub, nil
}

func (o object) array(key, msg string) ([]json.RawMessage, bool, error) {
	if !o.has(key) {
		return nil, false, nil
	}
	var a []json.RawMessage
	if err := json.Unmarshal(o[key], &a); err != nil {
		return nil, true, invalid("%s", msg)
	}
	return a, true, nil
}

// timeout decodes a timeout in milliseconds named name (timeoutMs or
// timeout_ms). Fractions are truncated.
func (o object) timeout(key string) (int64, error) {
	if !o.has(key) {
		return automate.DefaultTimeoutMs, nil
	}
	var f float64
	if err := json.Unmarshal(o[key], &f); err != nil || math.IsNaN(f) {
		return 0, invalid("%s must be a number", key)
	}
	if f < automate.MinTimeoutMs {
		// The contract's text, on the chat route's timeout_ms too.
		return 0, invalid("timeoutMs must be at least %d", automate.MinTimeoutMs)
	}
	if f > maxTimeoutMs {
		return 0, invalid("%s must be at most %d", key, maxTimeoutMs)
	}
	return int64(f), nil
}

// include decodes the include switches; every omitted key is true.
func decodeInclude(o object, key string) (includes, error) {
	inc := includes{steps: true, trace: true, events: true}
	sub, err := o.sub(key, key+" must be an object")
	if err != nil || sub == nil {
		return inc, err
	}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"steps", &inc.steps}, {"trace", &inc.trace}, {"events", &inc.events}} {
		if !sub.has(f.name) {
			continue
		}
		v, err := sub.boolean(f.name, key+"."+f.name+" must be a boolean")
		if err != nil {
			return inc, err
		}
		*f.dst = v
	}
	return inc, nil
}

// includes are the include switches of a run.
type includes struct{ steps, trace, events bool }

// validateClientTool checks one client tool; field names the tool in
// messages (clientTools[i] or tools[i].function).
func validateClientTool(t automate.ClientTool, field string, requireDescription bool) error {
	if msg := automate.ClientToolNameProblem(t.Name); msg != "" {
		return invalid("%s.name %s", field, msg)
	}
	switch {
	case requireDescription && t.Description == "":
		return invalid("%s.description is required", field)
	case utf8.RuneCountInString(t.Description) > automate.MaxDescription:
		return invalid("%s.description must be at most %d characters", field, automate.MaxDescription)
	}
	if len(t.Parameters) > 0 && !isNull(t.Parameters) {
		if p := bytes.TrimSpace(t.Parameters); len(p) == 0 || p[0] != '{' {
			return invalid("%s.parameters must be a JSON Schema object", field)
		}
	}
	return nil
}

// decodeClientTools decodes and validates clientTools.
func decodeClientTools(o object) ([]automate.ClientTool, error) {
	arr, _, err := o.array("clientTools", "clientTools must be an array")
	if err != nil {
		return nil, err
	}
	if len(arr) > automate.MaxClientTools {
		return nil, invalid("clientTools must have at most %d entries", automate.MaxClientTools)
	}
	tools := make([]automate.ClientTool, 0, len(arr))
	seen := map[string]bool{}
	for i, raw := range arr {
		field := "clientTools[" + strconv.Itoa(i) + "]"
		e, err := decodeObject(raw, false)
		if err != nil {
			return nil, invalid("%s must be an object", field)
		}
		var t automate.ClientTool
		if t.Name, _, err = e.str("name", field+".name must be a string"); err != nil {
			return nil, err
		}
		if t.Description, _, err = e.str("description", field+".description must be a string"); err != nil {
			return nil, err
		}
		if e.has("parameters") {
			t.Parameters = e["parameters"]
		}
		if err := validateClientTool(t, field, true); err != nil {
			return nil, err
		}
		if seen[t.Name] {
			return nil, invalid("%s.name must be unique in the run", field)
		}
		seen[t.Name] = true
		tools = append(tools, t)
	}
	return tools, nil
}

// decodeMcpServers decodes and validates inline MCP servers; configured
// are the names of the user's configured servers.
func decodeMcpServers(o object, configured []string) ([]automate.InlineMcpServer, error) {
	arr, _, err := o.array("mcpServers", "mcpServers must be an array")
	if err != nil {
		return nil, err
	}
	if len(arr) > automate.MaxInlineMcpServers {
		return nil, invalid("mcpServers must have at most %d entries", automate.MaxInlineMcpServers)
	}
	servers := make([]automate.InlineMcpServer, 0, len(arr))
	seen := map[string]bool{}
	for i, raw := range arr {
		field := "mcpServers[" + strconv.Itoa(i) + "]"
		s, err := decodeMcpServer(raw, field)
		if err != nil {
			return nil, err
		}
		for _, c := range configured {
			if strings.EqualFold(c, s.Name) {
				return nil, invalid("%s.name collides with an MCP server already configured", field)
			}
		}
		if seen[s.Name] {
			return nil, invalid("%s.name: must be unique in the run", field)
		}
		seen[s.Name] = true
		servers = append(servers, s)
	}
	return servers, nil
}

func decodeMcpServer(raw json.RawMessage, field string) (automate.InlineMcpServer, error) {
	var s automate.InlineMcpServer
	e, err := decodeObject(raw, false)
	if err != nil {
		return s, invalid("%s must be an object", field)
	}
	str := func(key string) (string, error) {
		v, _, err := e.str(key, field+"."+key+": must be a string")
		return v, err
	}
	if s.Name, err = str("name"); err != nil {
		return s, err
	}
	if msg := automate.McpServerNameProblem(s.Name); msg != "" {
		return s, invalid("%s.name: %s", field, msg)
	}
	if s.Description, err = str("description"); err != nil {
		return s, err
	}
	if s.Description == "" {
		return s, invalid("%s.description: is required", field)
	}
	if utf8.RuneCountInString(s.Description) > automate.MaxDescription {
		return s, invalid("%s.description: must be at most %d characters", field, automate.MaxDescription)
	}
	if s.Transport, err = str("transport"); err != nil {
		return s, err
	}
	if s.URL, err = str("url"); err != nil {
		return s, err
	}
	if s.Command, err = str("command"); err != nil {
		return s, err
	}
	if s.Headers, err = e.stringMap("headers", field+".headers: must be an object of strings"); err != nil {
		return s, err
	}
	if s.Args, err = e.strings("args", field+".args: must be an array of strings"); err != nil {
		return s, err
	}
	if s.Env, err = e.stringMap("env", field+".env: must be an object of strings"); err != nil {
		return s, err
	}
	if s.RequireApproval, err = e.boolean("requireApproval", field+".requireApproval: must be a boolean"); err != nil {
		return s, err
	}
	if s.DisabledTools, err = e.strings("disabledTools", field+".disabledTools: must be an array of strings"); err != nil {
		return s, err
	}
	switch s.Transport {
	case "stdio":
		if s.Command == "" {
			return s, invalid("%s.command: is required for the stdio transport", field)
		}
		if s.URL != "" || s.Headers != nil {
			return s, invalid("%s.url: url and headers apply only to the http and sse transports", field)
		}
	case "http", "sse":
		u, err := url.Parse(s.URL)
		if s.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return s, invalid("%s.url: must be a valid http:// or https:// URL", field)
		}
		if s.Command != "" || s.Args != nil || s.Env != nil {
			return s, invalid("%s.command: command, args and env apply only to the stdio transport", field)
		}
	case "":
		return s, invalid("%s.transport: is required (stdio, http or sse)", field)
	default:
		return s, invalid("%s.transport: must be one of stdio, http, sse", field)
	}
	return s, nil
}

// decodeHITL decodes hitlAnswers: each value a string or an array of strings.
func decodeHITL(o object) (map[string]any, error) {
	sub, err := o.sub("hitlAnswers", "hitlAnswers must be an object")
	if err != nil || sub == nil {
		return nil, err
	}
	answers := make(map[string]any, len(sub))
	for k, raw := range sub {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			answers[k] = s
			continue
		}
		var ss []string
		if json.Unmarshal(raw, &ss) == nil && ss != nil {
			answers[k] = ss
			continue
		}
		return nil, invalid("hitlAnswers.%s must be a string or an array of strings", k)
	}
	return answers, nil
}
