package llm_test

import "testing"

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
