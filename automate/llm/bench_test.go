package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
)

// BenchmarkRunThroughServer measures the engine's own cost of a run with
// one tool turn (list_dir) and a closing message, through the Automate
// server over HTTP, against the fake upstream (streamed answers).
func BenchmarkRunThroughServer(b *testing.B) {
	up := newFakeUpstream(b, "ollama", qwen)
	h := newHarness(b, up.url(), func(o *harnessOpts) { o.noCheck = true })
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		up.script(reply{content: "Listing.", calls: []fakeCall{call("b1", "list_dir", map[string]any{})}, usage: usage(300, 10)}, reply{content: "done", usage: usage(320, 2)})
		r := h.do("POST", "/v1/runs", map[string]any{"prompt": "list", "include": map[string]bool{"events": false, "trace": false}})
		if r.status != 200 {
			b.Fatalf("%d %s", r.status, r.body)
		}
	}
}

// BenchmarkModelModeStream measures model mode side by side with the
// upstream itself: the same streamed request (a system prompt, a short
// history, one tool; an answer of text and one tool call in 11 chunks),
// sent by the same keep-alive client straight to the fake upstream
// ("direct") and through hubgate's server and engine as "service-model"
// ("hubgate"). ttfb-µs is the time from sending the request to the first
// byte of the streamed body, whole-µs to the end of the stream ([DONE]).
// What hubgate adds is the difference of the two lines.
func BenchmarkModelModeStream(b *testing.B) {
	up := newFakeUpstream(b, "ollama", qwen)
	h := newHarness(b, up.url(), func(o *harnessOpts) { o.noCheck = true })
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.Cleanup(client.CloseIdleConnections)
	msgs := []any{
		map[string]any{"role": "system", "content": "You are the support agent of a shop. Call lookup_order before you answer."},
		map[string]any{"role": "user", "content": "Where is order 4471?"},
		map[string]any{"role": "assistant", "content": "Let me check."},
		map[string]any{"role": "user", "content": "Please hurry."},
	}
	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "lookup_order",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}}}}
	answer := reply{content: "Order 4471 is held because SW-200 is backordered; I will check the date.",
		calls: []fakeCall{call("call_1", "lookup_order", map[string]any{"id": "4471"})}, usage: usage(80, 30)}

	for _, target := range []struct{ name, url, model, auth string }{
		{"direct", up.url() + "/v1/chat/completions", qwen.name, ""},
		{"hubgate", h.url + "/v1/chat/completions", modelID, "Bearer " + testKey},
	} {
		body, _ := json.Marshal(map[string]any{"model": target.model, "messages": msgs, "tools": tools,
			"stream": true, "stream_options": map[string]any{"include_usage": true}})
		b.Run(target.name, func(b *testing.B) {
			var ttfb, whole time.Duration
			buf := make([]byte, 32<<10)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				up.script(answer)
				req, _ := http.NewRequest("POST", target.url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if target.auth != "" {
					req.Header.Set("Authorization", target.auth)
				}
				b.StartTimer()
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, err := resp.Body.Read(buf)
				if n == 0 {
					b.Fatalf("%s: no body: %v", target.name, err)
				}
				first := time.Since(start)
				got := append([]byte(nil), buf[:n]...)
				for err == nil {
					n, err = resp.Body.Read(buf)
					got = append(got, buf[:n]...)
				}
				total := time.Since(start)
				resp.Body.Close()
				if resp.StatusCode != 200 || !bytes.HasSuffix(got, []byte("data: [DONE]\n\n")) {
					b.Fatalf("%s: %d %s", target.name, resp.StatusCode, got)
				}
				ttfb += first
				whole += total
			}
			b.ReportMetric(float64(ttfb.Microseconds())/float64(b.N), "ttfb-µs")
			b.ReportMetric(float64(whole.Microseconds())/float64(b.N), "whole-µs")
		})
	}
}

// BenchmarkModelModeAbortFreesSlot measures how soon the inference slot is
// free again after a model-mode caller aborts a streamed call the upstream
// is still holding open (it never answers): from the client's abort to the
// first /health that says busy false, polled back to back over a
// keep-alive connection. Target: under 100 ms (abort-to-free-ms).
func BenchmarkModelModeAbortFreesSlot(b *testing.B) {
	up := newFakeUpstream(b, "ollama", qwen)
	h := newHarness(b, up.url(), func(o *harnessOpts) { o.noCheck = true })
	b.Cleanup(h.eng.CloseIdleConnections)
	block := make(chan bool)
	b.Cleanup(func() { close(block) })
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.Cleanup(client.CloseIdleConnections)
	body, _ := json.Marshal(map[string]any{"model": modelID, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "take your time"}}})
	busy := func() bool {
		req, _ := http.NewRequest("GET", h.url+"/health", nil)
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var hl automate.Health
		if err := json.NewDecoder(resp.Body).Decode(&hl); err != nil {
			b.Fatal(err)
		}
		return hl.Busy
	}
	var total, worst time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		up.script(reply{content: "never", wait: block})
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", h.url+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testKey)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := client.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		up.waitRequests(i + 1) // the upstream holds the call
		if !busy() {
			b.Fatal("the model call does not hold the slot")
		}
		b.StartTimer()
		start := time.Now()
		cancel()
		for busy() {
		}
		d := time.Since(start)
		b.StopTimer()
		<-done
		total += d
		worst = max(worst, d)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "abort-to-free-ms")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
}
