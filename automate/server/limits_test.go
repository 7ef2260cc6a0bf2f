package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/server"
)

// sleeps is a script of n steps that do nothing (#!sleep 0).
func sleeps(n int) string {
	return strings.Repeat("#!sleep 0\n", n) + "#!answer done"
}

// stepEventBytes runs a script of n steps and returns the payload bytes of
// its workflow-steps events, after checking that every event carries one
// step and that the steps rebuilt from the events are the record's.
func stepEventBytes(t *testing.T, h *harness, n int) int {
	t.Helper()
	r, rec := h.run(map[string]any{"prompt": sleeps(n)})
	if r.status != 200 || rec.Status != automate.StatusCompleted {
		t.Fatalf("%d-step run: %d %s", n, r.status, brief(rec))
	}
	total, rebuilt := 0, map[int]automate.Step{}
	for _, ev := range rec.Events {
		if ev.Channel != automate.ChannelSteps {
			continue
		}
		total += len(ev.Payload)
		var st automate.Step
		if err := json.Unmarshal(ev.Payload, &st); err != nil {
			t.Fatalf("a step event is not one step: %v: %.200s", err, ev.Payload)
		}
		rebuilt[st.Index] = st
	}
	if len(rec.Steps) != n+1 || len(rebuilt) != len(rec.Steps) {
		t.Fatalf("%d-step run: record has %d steps, events rebuild %d", n, len(rec.Steps), len(rebuilt))
	}
	for _, st := range rec.Steps {
		got, _ := json.Marshal(rebuilt[st.Index])
		want, _ := json.Marshal(st)
		if string(got) != string(want) {
			t.Fatalf("step %d rebuilt from events %s, record has %s", st.Index, got, want)
		}
	}
	return total
}

// TestStepEventsAreLinear: the step events of a 2,000-step run carry one
// step each, rebuild the record's steps, and take about twice the bytes
// of a 1,000-step run's (a whole-list rebroadcast takes about four times).
func TestStepEventsAreLinear(t *testing.T) {
	h := newHarness(t)
	small := stepEventBytes(t, h, 1000)
	big := stepEventBytes(t, h, 2000)
	ratio := float64(big) / float64(small)
	t.Logf("step event bytes: 1,000 steps %d, 2,000 steps %d (ratio %.2f)", small, big, ratio)
	if ratio > 2.2 {
		t.Errorf("step events grow faster than the steps: 1,000 steps %d bytes, 2,000 steps %d bytes", small, big)
	}
	// Each event is one step of this script: a few hundred bytes at most.
	if perStep := big / (3 * 2001); perStep > 400 {
		t.Errorf("%d bytes per step event", perStep)
	}
}

// TestRunStepLimit: the step past MaxRunSteps fails the run with
// EXECUTION_FAILED and an answer naming the limit; the record keeps the
// steps up to the limit and the server takes the next run.
func TestRunStepLimit(t *testing.T) {
	h := newHarness(t, withServerConfig(func(c *server.Config) { c.MaxRunSteps = 5 }))
	r, rec := h.run(map[string]any{"prompt": sleeps(10)})
	if r.status != 500 || rec.Status != automate.StatusFailed || rec.ErrorCode != automate.ErrorExecutionFailed {
		t.Fatalf("over the step limit: %d %s", r.status, brief(rec))
	}
	if !strings.Contains(rec.Answer, "more than 5 steps") || len(rec.Steps) != 5 {
		t.Errorf("answer %q, %d steps", rec.Answer, len(rec.Steps))
	}
	if last := rec.Events[len(rec.Events)-1]; last.Channel != automate.ChannelResult {
		t.Errorf("last event %s, want %s", last.Channel, automate.ChannelResult)
	}
	if r, rec := h.run(map[string]any{"prompt": sleeps(3)}); r.status != 200 {
		t.Errorf("next run under the limit: %d %s", r.status, brief(rec))
	}
}

// TestRunEventBytesLimit: the event past MaxRunEventBytes is not kept and
// fails the run; without events the same run completes.
func TestRunEventBytesLimit(t *testing.T) {
	h := newHarness(t, withServerConfig(func(c *server.Config) { c.MaxRunEventBytes = 4096 }))
	r, rec := h.run(map[string]any{"prompt": sleeps(50)})
	if r.status != 500 || rec.Status != automate.StatusFailed || rec.ErrorCode != automate.ErrorExecutionFailed {
		t.Fatalf("over the event limit: %d %s", r.status, brief(rec))
	}
	if !strings.Contains(rec.Answer, "events exceeded 4096 bytes") {
		t.Errorf("answer %q", rec.Answer)
	}
	n := 0
	for _, ev := range rec.Events {
		if ev.Channel != automate.ChannelResult {
			n += len(ev.Payload)
		}
	}
	if n > 4096 {
		t.Errorf("%d event bytes kept over a limit of 4096", n)
	}
	r, rec = h.run(map[string]any{"prompt": sleeps(50), "include": map[string]any{"events": false}})
	if r.status != 200 || rec.Events != nil {
		t.Errorf("without events: %d %s, %d events", r.status, brief(rec), len(rec.Events))
	}
}
