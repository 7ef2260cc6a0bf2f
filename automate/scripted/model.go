package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
)

var _ assistant.ModelChatter = (*Engine)(nil)

// modelMessage is the part of a caller's message model mode reads.
type modelMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text is the message content: a string, or the text parts of an array.
func (m modelMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// modelScript is what the last user message asks of model mode.
type modelScript struct {
	answer    *string
	reasoning string
	calls     []modelCall
	sleep     time.Duration
	fail      string
}

type modelCall struct {
	name string
	args string
}

// parseModelScript reads the model-mode directives of text (see
// docs/scripted.md); other lines are ignored, as are unknown directives.
func parseModelScript(text string) (modelScript, error) {
	var s modelScript
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "#!")
		if !ok {
			continue
		}
		name, arg, _ := strings.Cut(rest, " ")
		arg = strings.TrimSpace(arg)
		switch name {
		case "answer":
			a := arg
			s.answer = &a
		case "reason":
			s.reasoning = arg
		case "tool":
			tool, args, _ := strings.Cut(arg, " ")
			args = strings.TrimSpace(args)
			if args == "" {
				args = "{}"
			}
			if tool == "" || !json.Valid([]byte(args)) {
				return s, fmt.Errorf("line %d: #!tool needs a name and JSON arguments", i+1)
			}
			s.calls = append(s.calls, modelCall{name: tool, args: args})
		case "sleep":
			ms, err := strconv.Atoi(arg)
			if err != nil || ms < 0 || ms > 86400000 {
				return s, fmt.Errorf("line %d: #!sleep needs milliseconds (0..86400000)", i+1)
			}
			s.sleep = time.Duration(ms) * time.Millisecond
		case "fail":
			s.fail = arg
		}
	}
	return s, nil
}

// ModelChat implements assistant.ModelChatter deterministically (see
// docs/scripted.md, Model mode).
func (e *Engine) ModelChat(ctx context.Context, req *assistant.ModelRequest, out assistant.ModelSink) (*assistant.ModelResult, error) {
	msgs := make([]modelMessage, len(req.Messages))
	chars := 0
	for i, raw := range req.Messages {
		if err := json.Unmarshal(raw, &msgs[i]); err != nil {
			return nil, &assistant.ModelError{Code: automate.ErrorExecutionFailed, Message: fmt.Sprintf("messages[%d] is not a message", i), Err: err}
		}
		chars += len(raw)
	}
	for _, t := range req.Tools {
		chars += len(t)
	}
	e.mu.Lock()
	active := e.active
	e.mu.Unlock()
	if p := e.loadable(active); p != "" {
		return nil, &assistant.ModelError{Code: automate.ErrorModelLoadFailed, Message: p}
	}
	if tokens := chars / 4; tokens > e.contextSize {
		return nil, &assistant.ModelError{Code: automate.ErrorContextLimitExceeded,
			Message: fmt.Sprintf("The conversation does not fit the model's context: about %d tokens for a context of %d tokens.", tokens, e.contextSize)}
	}

	// The directives of the last user message; the calls it asks for only
	// while the conversation ends with that message.
	lastUser, lastAssistant := -1, -1
	for i, m := range msgs {
		switch m.Role {
		case "user":
			lastUser = i
		case "assistant":
			lastAssistant = i
		}
	}
	var script modelScript
	userText := ""
	if lastUser >= 0 {
		userText = msgs[lastUser].text()
		var err error
		if script, err = parseModelScript(userText); err != nil {
			return nil, &assistant.ModelError{Code: automate.ErrorExecutionFailed, Message: "The script cannot be read: " + err.Error()}
		}
	}
	if script.sleep > 0 {
		t := time.NewTimer(script.sleep)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	if script.fail != "" {
		return nil, &assistant.ModelError{Code: script.fail, Message: "Failed: " + script.fail}
	}
	if err := out.Begin(); err != nil {
		return nil, err
	}
	if script.reasoning != "" {
		if err := out.Reasoning(script.reasoning); err != nil {
			return nil, err
		}
	}

	var answer string
	calls := script.calls
	endsWithTools := len(msgs) > 0 && msgs[len(msgs)-1].Role == "tool"
	switch {
	case endsWithTools:
		calls = nil
		if script.answer != nil {
			answer = *script.answer
		} else {
			var results []string
			for _, m := range msgs[lastAssistant+1:] {
				if m.Role == "tool" {
					results = append(results, m.text())
				}
			}
			answer = "Tool results: " + strings.Join(results, "; ")
		}
	case script.answer != nil:
		answer = *script.answer
	case len(calls) == 0:
		answer = "Echo: " + strings.TrimSpace(userText)
	}
	outTok := 0
	for _, w := range wordsKeepingSpace(answer) {
		if err := out.Content(w); err != nil {
			return nil, err
		}
		outTok++
	}
	// Call ids count the assistant turns, so that they stay unique across
	// the caller's loop.
	turn := 1
	for _, m := range msgs {
		if m.Role == "assistant" {
			turn++
		}
	}
	for i, c := range calls {
		id := fmt.Sprintf("call_%d_%d", turn, i+1)
		half := len(c.args) / 2
		for _, d := range []assistant.ToolCallDelta{
			{Index: i, ID: id, Name: c.name},
			{Index: i, Arguments: c.args[:half]},
			{Index: i, Arguments: c.args[half:]},
		} {
			if err := out.ToolCall(d); err != nil {
				return nil, err
			}
		}
		outTok++
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	in := chars / 4
	return &assistant.ModelResult{FinishReason: finish,
		Usage: &automate.ChatUsage{PromptTokens: in, CompletionTokens: outTok, TotalTokens: in + outTok}}, nil
}

// wordsKeepingSpace cuts s into pieces that each end after a space, so
// that the pieces joined give s back.
func wordsKeepingSpace(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}
