package bridge_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/deviceapi"
)

const canceledRules = basicRules + `
  - name: pick
    match: {command: pick}
    ask: true
    run:
      prompt: "p\n#!tool ask_person {\"question\":\"Which colour?\",\"choices\":[\"red\",\"green\"]}\n#!answer you chose ${result}"
`

// A run someone stops, however they stop it, ends canceled: journaled so,
// counted under canceled and not failed, its finished event no failure,
// and the journal's note (and the finished line) says who stopped it and
// whether the stop was forced.
func TestAStoppedRunIsCanceledNotFailed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command string
		// waitQuestion: stop it while it waits for the person's answer.
		waitQuestion bool
		stop         func(e *env)
		note         string
	}{
		{name: "hubgate cancel", command: "slow one", stop: func(e *env) { cancelRun(e, context.Background(), false) },
			note: "stopped by hubgate cancel"},
		{name: "the status page", command: "slow one",
			stop: func(e *env) { cancelRun(e, bridge.WithCancelSource(context.Background(), "the status page"), false) },
			note: "stopped by the status page"},
		{name: "hubgate cancel --force", command: "r one", stop: func(e *env) { cancelRun(e, context.Background(), true) },
			note: "stopped by hubgate cancel --force (forced)"},
		{name: "a soft cancel then --force", command: "r one", stop: func(e *env) {
			cancelRun(e, context.Background(), false)
			cancelRun(e, context.Background(), true)
		}, note: "stopped by hubgate cancel; forced by hubgate cancel --force"},
		{name: "the cancel grace runs out", command: "r one", stop: func(e *env) { cancelRun(e, context.Background(), false) },
			note: "stopped by hubgate cancel; forced by the cancel grace (2s) running out"},
		{name: "a replace by the busy policy", command: "r one", stop: func(e *env) { e.hub.command("r two", nil) },
			note: "stopped by restart: command 2 replaces it; forced by the cancel grace (2s) running out"},
		{name: "StopOutputs", command: "slow one", stop: func(e *env) {
			e.hub.command("stop", &deviceapi.Macro{ID: "m-stop", Name: "Stop", Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventStopOutputs}}})
		}, note: "stopped by StopOutputs macro"},
		{name: "a cancel while the run waits for an answer", command: "pick", waitQuestion: true,
			stop: func(e *env) { cancelRun(e, context.Background(), false) }, note: "stopped by hubgate cancel"},
		{name: "a forced cancel while the run waits for an answer", command: "pick", waitQuestion: true,
			stop: func(e *env) { cancelRun(e, context.Background(), true) }, note: "stopped by hubgate cancel --force (forced)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, envOptions{rules: canceledRules})
				events := askEvents(t, e)
				e.hub.command(tc.command, nil)
				e.waitFor("the run", func(h []journal.Entry) bool { return len(h) == 1 && h[0].Run != journal.RunNone })
				if tc.waitQuestion {
					events.await(t, bridge.EventQuestion, 0)
				}
				tc.stop(e)
				h := e.waitFor("the run to end", func(h []journal.Entry) bool { return len(h) > 0 && !h[0].FinishedAt.IsZero() })
				if h[0].Status != automate.StatusCanceled || h[0].Decision != journal.DecisionStarted || h[0].Note != tc.note {
					t.Errorf("journal, want canceled with note %q:\n%s", tc.note, describe(h))
				}
				synctest.Wait()
				fin := kindOf(events.read(), bridge.EventFinished)
				if fin == nil || fin.Failed() || fin.Status != automate.StatusCanceled ||
					!strings.Contains(fin.Describe(), "run finished: canceled") || !strings.Contains(fin.Describe(), tc.note) {
					t.Errorf("finished event: %+v", fin)
				}
				st, err := e.bridge.Status(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				c := st.Counters
				if c.Canceled != 1 || c.Failed != 0 || c.Completed != 0 || c.Last["canceled"].Reason != tc.note {
					t.Errorf("counters: canceled %d, failed %d, completed %d, last %+v", c.Canceled, c.Failed, c.Completed, c.Last)
				}
				if len(st.Recent) != 1 || st.Recent[0].Outcome != "canceled" {
					t.Errorf("recent runs: %+v", st.Recent)
				}
			})
		})
	}
}

func cancelRun(e *env, ctx context.Context, force bool) {
	e.t.Helper()
	res, err := e.bridge.Cancel(ctx, force)
	if err != nil || !res.Stopped {
		e.t.Fatalf("cancel: %+v, %v", res, err)
	}
}
