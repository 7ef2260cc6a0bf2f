package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
)

// ollamaFake is a minimal Ollama: its catalog endpoints, and chat
// completions that first ask for write_file and then close (or, with
// reply, what reply answers to the n-th chat request).
type ollamaFake struct {
	mu    sync.Mutex
	chats []map[string]any
	auth  []string
	reply func(req map[string]any, n int) (msg map[string]any, finish string)
}

func (f *ollamaFake) handler() http.Handler {
	mux := http.NewServeMux()
	write := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) { write(w, map[string]string{"version": "0.12.0"}) })
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		write(w, map[string]any{"models": []any{
			map[string]any{"name": "qwen3:8b", "size": 5_200_000_000, "details": map[string]any{"family": "qwen3", "parameter_size": "8.2B"}, "capabilities": []string{"completion", "tools"}},
			map[string]any{"name": "llama3.2:3b", "size": 2_000_000_000, "details": map[string]any{"family": "llama", "parameter_size": "3.2B"}, "capabilities": []string{"completion", "tools"}},
		}})
	})
	mux.HandleFunc("GET /api/ps", func(w http.ResponseWriter, r *http.Request) { write(w, map[string]any{"models": []any{}}) })
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		f.mu.Lock()
		f.chats = append(f.chats, req)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		n := len(f.chats)
		f.mu.Unlock()
		msg := map[string]any{"role": "assistant", "content": "Done, the note is written."}
		finish := "stop"
		switch {
		case f.reply != nil:
			msg, finish = f.reply(req, n)
		case n == 1:
			msg = map[string]any{"role": "assistant", "content": "I will write the note.", "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function", "function": map[string]any{"name": "write_file", "arguments": `{"path":"note.txt","content":"hello"}`}}}}
			finish = "tool_calls"
		}
		write(w, map[string]any{"id": "x", "object": "chat.completion", "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage": map[string]int{"prompt_tokens": 100, "completion_tokens": 10}})
	})
	return mux
}

func post(t *testing.T, url, key string, body any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, rb
}

// TestServeWithOpenAIEngine: --assistant openai --upstream URL --model NAME
// serves runs through the upstream; the config's API key variable and
// configured MCP server names are wired in.
func TestServeWithOpenAIEngine(t *testing.T) {
	fake := &ollamaFake{}
	up := httptest.NewServer(fake.handler())
	defer up.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(`automate:
  openai:
    api_key_env: MY_UPSTREAM_KEY
    conversation_store: `+filepath.Join(dir, "conv.json")+`
    mcp_servers:
      - {name: notes, description: My notes, transport: stdio, command: /bin/false}
`), 0o600)
	const upstreamKey = "upstream-secret-4f9a2b"
	ws := t.TempDir()
	s := startServe(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey, "MY_UPSTREAM_KEY="+upstreamKey), "--config", cfg,
		"--assistant", "openai", "--upstream", up.URL+"/v1", "--model", "qwen3:8b", "--port", "0", "--workspace", ws)

	code, body := post(t, s.url+"/v1/runs", envKey, map[string]any{"prompt": "write a note"})
	var rec automate.RunRecord
	json.Unmarshal(body, &rec)
	if code != 200 || rec.Status != automate.StatusCompleted || rec.Model != "qwen3:8b" || rec.Answer != "Done, the note is written." || len(rec.Steps) != 1 {
		t.Fatalf("run: %d %s\nstderr: %s", code, body, s.Stderr())
	}
	if b, err := os.ReadFile(filepath.Join(ws, "note.txt")); err != nil || string(b) != "hello" {
		t.Errorf("note: %q %v", b, err)
	}
	fake.mu.Lock()
	if len(fake.chats) != 2 || fake.chats[0]["model"] != "qwen3:8b" || fake.auth[0] != "Bearer "+upstreamKey {
		t.Errorf("upstream saw %d chats, model %v, auth %q", len(fake.chats), fake.chats[0]["model"], fake.auth[0])
	}
	fake.mu.Unlock()

	_, body = get(t, s.url+"/health", envKey)
	var h automate.Health
	json.Unmarshal(body, &h)
	if h.ModelName == nil || *h.ModelName != "qwen3:8b" || h.Backend == nil || h.Backend.FlavorID != "ollama" || h.AutomateModelSelection != nil {
		t.Errorf("health %s", body)
	}
	var cat automate.CatalogResponse
	_, body = get(t, s.url+"/v1/automate/models", envKey)
	json.Unmarshal(body, &cat)
	if cat.Catalog.Status != "ready" || len(cat.Data) != 2 || !cat.Data[1].Selected || cat.Data[1].Name != "qwen3:8b" {
		t.Errorf("catalog %s", body)
	}
	// The configured MCP server's name is taken.
	code, body = post(t, s.url+"/v1/runs", envKey, map[string]any{"prompt": "x",
		"mcpServers": []any{map[string]any{"name": "notes", "description": "d", "transport": "stdio", "command": "/bin/true"}}})
	if code != 400 || !strings.Contains(string(body), "collides with an MCP server already configured") {
		t.Errorf("inline name clash: %d %s", code, body)
	}
	if strings.Contains(s.Stderr(), upstreamKey) || strings.Contains(s.Stderr(), envKey) {
		t.Error("a key reached the log")
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit %d; stderr %s", code, s.Stderr())
	}
	if _, err := os.Stat(filepath.Join(dir, "conv.json")); err != nil {
		t.Errorf("conversation not stored: %v", err)
	}
}

// TestServeOpenAIUnreachableUpstream: the server starts (the catalog stays
// loading) and a run fails MODEL_LOAD_FAILED.
func TestServeOpenAIUnreachableUpstream(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	s := startServe(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey, "HUBGATE_AUTOMATE_ENGINE=openai", "HUBGATE_OPENAI_UPSTREAM="+url),
		"--port", "0", "--workspace", t.TempDir())
	_, body := get(t, s.url+"/v1/automate/models", envKey)
	if !strings.Contains(string(body), `"status":"loading"`) {
		t.Errorf("catalog %s", body)
	}
	code, body := post(t, s.url+"/v1/runs", envKey, map[string]any{"prompt": "hi"})
	var rec automate.RunRecord
	json.Unmarshal(body, &rec)
	if code != 500 || rec.ErrorCode != automate.ErrorModelLoadFailed {
		t.Errorf("run %d %s", code, body)
	}
	s.stop(syscall.SIGTERM)
}

func TestServeOpenAIFlagErrors(t *testing.T) {
	r := runCmd(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey), "", "automate", "serve", "--port", "0", "--upstream", "http://127.0.0.1:1")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--assistant openai") {
		t.Errorf("--upstream without openai: exit %d %q", r.code, r.stderr)
	}
	r = runCmd(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey), "", "automate", "serve", "--port", "0", "--assistant", "gpt")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "automate.engine") || !strings.Contains(r.stderr, "flag --assistant") {
		t.Errorf("bad engine: exit %d %q", r.code, r.stderr)
	}
	r = runCmd(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey), "", "automate", "serve", "--port", "0", "--assistant", "openai", "--upstream", "ftp://x")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "automate.openai.upstream") {
		t.Errorf("bad upstream: exit %d %q", r.code, r.stderr)
	}
	r = runCmd(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey), "", "automate", "serve", "--help")
	for _, want := range []string{"--assistant", "--upstream", "Ollama"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
