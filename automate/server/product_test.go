package server_test

import (
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
)

// TestProductWord: with Product "acme" the server answers as the desktop
// application does under its own name: /health service, /v1/models ids and
// owner, the chat extension object and the record of a chat answer.
func TestProductWord(t *testing.T) {
	h := newHarness(t, withServerConfig(func(c *server.Config) { c.Product = "acme" }))
	if got := h.health().Service; got != "acme-agent" {
		t.Fatalf("health service %q", got)
	}
	var list automate.ModelList
	h.do("GET", "/v1/models", nil).json(t, &list)
	if len(list.Data) == 0 || list.Data[0] != (automate.ModelEntry{ID: "acme-agent", Object: "model", OwnedBy: "acme", Mode: "assistant"}) {
		t.Fatalf("models %+v", list.Data)
	}
	for _, m := range list.Data {
		if m.OwnedBy != "acme" || !strings.HasPrefix(m.ID, "acme-") {
			t.Errorf("entry %+v is not acme's", m)
		}
	}

	r := h.do("POST", "/v1/chat/completions", map[string]any{
		"model":    "acme-agent",
		"messages": []any{map[string]any{"role": "user", "content": "#!answer The total is 42. FINAL ANSWER: 42"}},
		"acme":     map[string]any{"answerContract": "End with FINAL ANSWER: <n>", "include": map[string]bool{"events": false}},
	})
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	raw := r.raw(t)
	if _, ok := raw["service"]; ok {
		t.Error("the record went under \"service\" too")
	}
	rec, ok := raw["acme"].(map[string]any)
	if !ok || rec["schemaVersion"] != float64(1) || rec["finalAnswer"] != "42" {
		t.Fatalf("acme record %v", raw["acme"])
	}
	if _, ok := rec["events"]; ok {
		t.Error("include.events false under the acme key was not applied")
	}
	if raw["model"] != "acme-agent" {
		t.Errorf("model %v", raw["model"])
	}
	var comp automate.ChatCompletion
	r.json(t, &comp)
	if comp.Text() != "42" {
		t.Errorf("content %q: the answer contract under \"acme\" was not applied", comp.Text())
	}

	// The spec's neutral word is just a field like any other for acme.
	r = h.do("POST", "/v1/chat/completions", map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "hi"}},
		"acme":     "not an object",
	})
	r.envelope(t, 400, automate.ErrTypeInvalidRequest, "acme must be an object")
}

func TestProductWordIsValidated(t *testing.T) {
	_, err := server.New(server.Config{Key: testKey, Workspace: t.TempDir(), Product: "Acme Corp", Assistant: scripted.New(scripted.Config{})})
	if err == nil || !strings.Contains(err.Error(), "product word") {
		t.Fatalf("err %v", err)
	}
}
