package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
)

const stepRules = `
rules:
  - name: steps
    match: {command: steps}
    run:
      prompt: "three steps\n#!sleep 400\n#!sleep 400\n#!answer all done"
  - name: long
    match: {command: long}
    run:
      prompt: "long steps\n#!sleep 3000\n#!sleep 3000\n#!answer all done"
`

// stepTrace is the step events of es as "index:status" words.
func stepTrace(es []bridge.Event) []string {
	var out []string
	for _, e := range es {
		if e.Kind == bridge.EventStep {
			out = append(out, e.Step.Title+":"+e.Step.Status)
		}
	}
	return out
}

func TestStreamedRunPublishesItsStepsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: stepRules})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := e.bridge.Subscribe(ctx, bridge.SubscribeOptions{})
		e.hub.command("steps", nil)
		es := untilSettled(t, ch, 1)

		// Every step is published pending, then running, then success, in
		// the order the engine runs them, and all of them before the end.
		var steps []bridge.Event
		last := -1
		for i, ev := range es {
			if ev.Kind == bridge.EventStep {
				steps = append(steps, ev)
				last = i
			}
		}
		if len(steps) == 0 || es[len(es)-1].Kind != bridge.EventFinished || last > len(es)-2 {
			t.Fatalf("events: %s", kinds(es))
		}
		seen := map[int][]string{}
		var order []int
		for _, ev := range steps {
			s := ev.Step
			if len(seen[s.Index]) == 0 {
				order = append(order, s.Index)
			}
			seen[s.Index] = append(seen[s.Index], s.Status)
			if ev.CommandID != 1 || ev.Command != "steps" {
				t.Errorf("step event of %d %q", ev.CommandID, ev.Command)
			}
		}
		if len(order) != 3 || order[0] != 1 || order[1] != 2 || order[2] != 3 {
			t.Fatalf("step indexes in order of appearance: %v (trace %v)", order, stepTrace(es))
		}
		for _, idx := range order {
			got := strings.Join(seen[idx], " ")
			if got != "pending running success" {
				t.Errorf("step %d went %q, want pending running success", idx, got)
			}
		}
		// Step 2 starts running only after step 1 succeeded.
		pos := func(idx int, status string) int {
			for i, ev := range es {
				if ev.Kind == bridge.EventStep && ev.Step.Index == idx && ev.Step.Status == status {
					return i
				}
			}
			return -1
		}
		if pos(1, automate.StepSuccess) > pos(2, automate.StepRunning) {
			t.Errorf("step 2 ran before step 1 ended: %v", stepTrace(es))
		}
		if s := steps[0].Step; s.ToolName == "" || s.ArgsSummary == "" {
			t.Errorf("a step without its tool and arguments: %+v", s)
		}
		if !strings.HasPrefix(steps[len(steps)-1].Describe(), "[#1] step 3 success") {
			t.Errorf("text form: %q", steps[len(steps)-1].Describe())
		}
		var statuses []string
		for _, ev := range es {
			if ev.Kind == bridge.EventRunStatus {
				statuses = append(statuses, ev.Note)
			}
		}
		if len(statuses) == 0 {
			t.Errorf("no run status event: %s", kinds(es))
		}

		// Status keeps the finished run's steps, at their last state.
		st, err := e.bridge.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Recent) != 1 || st.Recent[0].CommandID != 1 || st.Recent[0].Outcome != "completed" || len(st.Recent[0].Steps) != 3 {
			t.Fatalf("recent runs: %+v", st.Recent)
		}
		for _, s := range st.Recent[0].Steps {
			if s.Status != automate.StepSuccess {
				t.Errorf("recent step %+v", s)
			}
		}
	})
}

// plainJSON makes the server answer plain JSON: the stream flag is taken
// off the run requests, as a server that does not know it ignores it.
func plainJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/runs") {
			b, _ := io.ReadAll(r.Body)
			var m map[string]json.RawMessage
			if json.Unmarshal(b, &m) == nil {
				delete(m, "stream")
				b, _ = json.Marshal(m)
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			r.ContentLength = int64(len(b))
		}
		next.ServeHTTP(w, r)
	})
}

func TestPlainJSONServerPublishesHealthStatuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: stepRules, wrapServer: plainJSON})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := e.bridge.Subscribe(ctx, bridge.SubscribeOptions{})
		e.hub.command("long", nil)
		es := untilSettled(t, ch, 1)
		if es[len(es)-1].Kind != bridge.EventFinished || es[len(es)-1].Status != automate.StatusCompleted {
			t.Fatalf("events: %s", kinds(es))
		}
		if tr := stepTrace(es); len(tr) != 0 {
			t.Errorf("a plain answer has no steps to report, got %v", tr)
		}
		// The client read /health every 2s of the 6 s run: the workflow
		// status of the busy server.
		var statuses []string
		for _, ev := range es {
			if ev.Kind == bridge.EventRunStatus {
				statuses = append(statuses, ev.Note)
				if ev.CommandID != 1 || !strings.HasPrefix(ev.Describe(), "[#1] run status: ") {
					t.Errorf("run status event %+v: %q", ev, ev.Describe())
				}
			}
		}
		if len(statuses) == 0 {
			t.Fatalf("no health-following status event: %s", kinds(es))
		}
	})
}

func TestCancelSourceReachesTheFinishedEventAndTheJournal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := e.bridge.Subscribe(ctx, bridge.SubscribeOptions{})
		e.hub.command("slow one", nil)
		for ev := next(t, ch); ev.Kind != bridge.EventStarted; ev = next(t, ch) {
		}
		res, err := e.bridge.Cancel(bridge.WithCancelSource(ctx, "the status page"), false)
		if err != nil || !res.Stopped || res.GraceMs != 2000 || res.ForceAt.IsZero() {
			t.Fatalf("cancel: %+v, %v", res, err)
		}
		again, err := e.bridge.Cancel(ctx, false)
		if err != nil || !again.Already || !again.ForceAt.Equal(res.ForceAt) || res.Already {
			t.Errorf("a second cancel: %+v (first %+v), %v", again, res, err)
		}
		es := untilSettled(t, ch, 1)
		fin := es[len(es)-1]
		if fin.Kind != bridge.EventFinished || fin.StoppedBy != "the status page" ||
			!strings.Contains(fin.Describe(), "(stopped by the status page)") {
			t.Fatalf("finished: %+v\n%s", fin, fin.Describe())
		}
		h := e.waitFor("the run", finished(1))
		if !strings.Contains(h[0].Note, "stopped by the status page") {
			t.Errorf("journal note %q", h[0].Note)
		}
	})
}

func TestALocalCommandIsRoutedAndJournaledAsLocal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{rules: basicRules})
		ctx := context.Background()
		if _, err := e.bridge.TryCommand(ctx, "  ", "a test"); err == nil {
			t.Error("an empty command was taken")
		}
		id, err := e.bridge.TryCommand(ctx, "hello", "a test")
		if err != nil || id != 1 {
			t.Fatalf("TryCommand: %d, %v", id, err)
		}
		id, err = e.bridge.TryCommand(ctx, "nothing matches this", "a test")
		if err != nil || id != 2 {
			t.Fatalf("TryCommand: %d, %v", id, err)
		}
		h := e.waitFor("both", finished(2))
		if h[0].Answer != "Hello from hubgate" || h[0].Note != "local command: tried on a test" ||
			h[1].Decision != "ignored" || h[1].Note != "no rule matches; local command: tried on a test" {
			t.Errorf("journal:\n%s", describe(h))
		}
		e.stop()
		if _, err := e.bridge.TryCommand(ctx, "hello", "a test"); !errors.Is(err, bridge.ErrNotRunning) {
			t.Errorf("after Run returned: %v", err)
		}
	})
}
