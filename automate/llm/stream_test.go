package llm_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

// TestStreamedRunReportsStepsAsTheyHappen: a streamed run of the openai
// engine reports each tool call's step running, then done, before the
// record, and the record's steps are the last states reported.
func TestStreamedRunReportsStepsAsTheyHappen(t *testing.T) {
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url())
	up.script(
		reply{calls: []fakeCall{call("w1", "write_file", map[string]any{"path": "a.txt", "content": "1"})}},
		reply{calls: []fakeCall{call("r1", "read_file", map[string]any{"path": "a.txt"})}},
		reply{content: "read it"},
	)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections() // the harness checks that no connection outlives the test
	c, err := automate.NewClient(automate.ClientOptions{BaseURL: h.url, Key: testKey, Logger: quietLogger(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	var seen []automate.Step
	rec, err := c.RunProgress(context.Background(), automate.RunRequest{Prompt: "write and read"},
		automate.Progress{OnStep: func(st automate.Step) { seen = append(seen, st) }})
	if err != nil || rec.Status != automate.StatusCompleted || len(rec.Steps) != 2 {
		t.Fatalf("%+v %v", rec, err)
	}
	var got []string
	for _, st := range seen {
		got = append(got, st.ToolName+":"+st.Status)
	}
	want := []string{"write_file:running", "write_file:success", "read_file:running", "read_file:success"}
	if len(got) != len(want) {
		t.Fatalf("steps reported %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("steps reported %v, want %v", got, want)
		}
	}
	if seen[3].ResultSummary != rec.Steps[1].ResultSummary {
		t.Fatalf("last reported %+v, record %+v", seen[3], rec.Steps[1])
	}
}
