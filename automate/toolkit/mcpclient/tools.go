package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
)

// Tool is one tool a server lists.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// maxListPages bounds tools/list pagination against a server that hands
// out cursors forever.
const maxListPages = 1000

// ListTools lists every tool of the server, following nextCursor.
func (s *Session) ListTools(ctx context.Context) ([]Tool, error) {
	var all []Tool
	cursor := ""
	for range maxListPages {
		params := struct {
			Cursor string `json:"cursor,omitempty"`
		}{cursor}
		var page struct {
			Tools      []Tool `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := s.call(ctx, "tools/list", params, &page, true); err != nil {
			return all, err
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" {
			return all, nil
		}
		cursor = page.NextCursor
	}
	return all, fmt.Errorf("tools/list: the server still had a next page after %d", maxListPages)
}

// CallResult is the result of tools/call.
type CallResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// Content is one content block of a result. Type is "text", "image",
// "audio", "resource" (embedded) or "resource_link"; the fields of the
// other kinds stay empty.
type Content struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`     // text
	Data     string            `json:"data,omitempty"`     // image, audio: base64
	MIMEType string            `json:"mimeType,omitempty"` // image, audio, resource_link
	URI      string            `json:"uri,omitempty"`      // resource_link
	Name     string            `json:"name,omitempty"`     // resource_link
	Resource *ResourceContents `json:"resource,omitempty"` // resource
}

// ResourceContents is an embedded resource: text or a base64 blob.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// CallTool calls tool name with arguments (marshalled as the arguments
// object; nil sends {}). A tool that ran and failed is a result with
// IsError; an error means the call got no result.
func (s *Session) CallTool(ctx context.Context, name string, arguments any) (*CallResult, error) {
	if arguments == nil {
		arguments = struct{}{}
	}
	params := struct {
		Name      string `json:"name"`
		Arguments any    `json:"arguments"`
	}{name, arguments}
	var res CallResult
	if err := s.call(ctx, "tools/call", params, &res, true); err != nil {
		return nil, err
	}
	return &res, nil
}
