package statuspage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/statuspage"
	"github.com/hubgate/hubgate/internal/testenv"
)

// controlRules: "steps ..." runs three steps, the last two held until the
// browser script creates their gate file, once the page showed them
// running; "slow ..." runs longer than the test.
const controlRules = `
rules:
  - name: steps
    match: {command_glob: "steps *"}
    run:
      prompt: "{{.Command}}\n#!write %[1]s/notes.txt the notes\n#!run while [ ! -e %[1]s/gate1 ]; do sleep 0.05; done; echo released one\n#!run while [ ! -e %[1]s/gate2 ]; do sleep 0.05; done; echo released two\n#!answer all steps done"
      allow_destructive_tools: true
      restrict_to_workspace: false   # the notes go to the test's folder
  - name: slow
    match: {command_glob: "slow *"}
    run:
      prompt: "{{.Command}}\n#!sleep 60000\n#!answer done {{.Command}}"
`

func TestStatusPageControlCenterInHeadlessChromium(t *testing.T) {
	gates := t.TempDir()
	// A grace longer than the test: the page's "force now" ends the run,
	// not the bridge's escalation.
	b, _, j := startBridgeWith(t, fmt.Sprintf(controlRules, gates), 5*time.Minute)
	page := servePage(t, b)
	shot := testenv.ArtifactPath(t, "statuspage-control-center.png")
	const stepsCommand, slowCommand = "steps of the inbox", "slow garden report"

	var result struct {
		Rules               []string   `json:"rules"`
		RulesTest           string     `json:"rulesTest"`
		TryResult           string     `json:"tryResult"`
		StepsWhileRunning1  []string   `json:"stepsWhileRunning1"`
		StepsWhileRunning2  []string   `json:"stepsWhileRunning2"`
		CurrentWhileRunning string     `json:"currentWhileRunning"`
		Recent              string     `json:"recent"`
		Countdown           []string   `json:"countdown"`
		ForceVisible        bool       `json:"forceVisible"`
		ForceResult         string     `json:"forceResult"`
		CurrentAfterForce   string     `json:"currentAfterForce"`
		History             [][]string `json:"history"`
		Events              []string   `json:"events"`
	}
	testenv.RunBrowserScript(t, "statuspage-steer-e2e.cjs", []string{"LOGIN_URL=" + page.NewLoginURL(), "SCREENSHOT=" + shot,
		"STEPS_COMMAND=" + stepsCommand, "SLOW_COMMAND=" + slowCommand, "GATES=" + gates}, nil, &result)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}

	if len(result.Rules) != 2 || !strings.Contains(result.Rules[0], `rule "steps"`) {
		t.Errorf("rules shown: %q", result.Rules)
	}
	if !strings.Contains(result.RulesTest, `command  "`+stepsCommand+`"`) || !strings.Contains(result.RulesTest, "rule     steps") ||
		!strings.Contains(result.RulesTest, "request  POST /v1/runs (not sent)") {
		t.Errorf("rules test shown:\n%s", result.RulesTest)
	}
	if !strings.HasPrefix(result.TryResult, "command #1 sent") {
		t.Errorf("try result %q", result.TryResult)
	}
	// While the run waited on step 2, step 1 (the file written) was done
	// with its tool, arguments, result and produced file on the page.
	s1 := strings.Join(result.StepsWhileRunning1, "\n")
	if len(result.StepsWhileRunning1) < 3 || !strings.HasPrefix(result.StepsWhileRunning1[0], "1:success:") ||
		!strings.HasPrefix(result.StepsWhileRunning1[1], "2:running:") || !strings.Contains(s1, "tool write_file") ||
		!strings.Contains(s1, "produced "+filepath.Join(gates, "notes.txt")) {
		t.Errorf("steps while step 2 ran:\n%s", s1)
	}
	if len(result.StepsWhileRunning2) < 3 || !strings.HasPrefix(result.StepsWhileRunning2[1], "2:success:") ||
		!strings.Contains(result.StepsWhileRunning2[1], "released one") || !strings.HasPrefix(result.StepsWhileRunning2[2], "3:running:") {
		t.Errorf("steps while step 3 ran:\n%s", strings.Join(result.StepsWhileRunning2, "\n"))
	}
	if !strings.Contains(result.Recent, "completed") || !strings.Contains(result.Recent, stepsCommand) || !strings.Contains(result.Recent, "released two") {
		t.Errorf("recent runs: %q", result.Recent)
	}
	// The cancel counted its grace down; "force now" stopped the run: a
	// canceled run, journaled as forced.
	if len(result.Countdown) != 2 || !strings.Contains(result.Countdown[0], "Cancel requested by the status page") || !result.ForceVisible {
		t.Errorf("countdown %q, force button visible %v", result.Countdown, result.ForceVisible)
	}
	if !strings.Contains(result.ForceResult, "force cancel sent for #2") || !strings.Contains(result.CurrentAfterForce, "Nothing runs") {
		t.Errorf("after force: %q / %q", result.ForceResult, result.CurrentAfterForce)
	}
	// History: dates on times; the local command and who stopped the run
	// in the note.
	var slowRow, stepsRow []string
	for _, r := range result.History {
		switch r[2] {
		case slowCommand:
			slowRow = r
		case stepsCommand:
			stepsRow = r
		}
	}
	if slowRow == nil || stepsRow == nil {
		t.Fatalf("history rows: %q", result.History)
	}
	if !strings.Contains(slowRow[5], "stopped by the status page (forced)") || !strings.Contains(slowRow[5], "local command: tried on the status page") {
		t.Errorf("the stopped run's note: %q", slowRow[5])
	}
	if y := fmt.Sprint(time.Now().Year()); !strings.Contains(slowRow[1], y) {
		t.Errorf("received time %q has no date", slowRow[1])
	}
	joined := strings.Join(result.Events, "\n")
	for _, want := range []string{"[#1] step 2 running", "[#1] step 3 success", "cancel requested (the status page)",
		"[#2] run finished: canceled", "(stopped by the status page (forced))"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the live events lack %q:\n%s", want, joined)
		}
	}
	h, err := j.History(context.Background(), journal.HistoryQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || !strings.Contains(h[1].Note, "local command: tried on the status page") || h[1].Answer != "all steps done" {
		t.Errorf("journal: %+v", h)
	}
}

// A command tried on the page needs the CSRF token, is routed by the
// rules and journaled as local; the rules test answers the CLI's text.
func TestTryACommandAndTheRulesTest(t *testing.T) {
	b, _, j := startBridge(t)
	page := servePage(t, b)
	cookie, csrf := newSession(t, page)
	origin := "http://" + page.Addr().String()
	events := b.Subscribe(t.Context(), bridge.SubscribeOptions{})

	if code, body := post(t, page, "/api/command", `{"text":"hello"}`, http.Header{"Cookie": {cookie}, "Origin": {origin}}); code != http.StatusForbidden {
		t.Fatalf("a command without the CSRF token: %d %q", code, body)
	}
	hdr := http.Header{"Cookie": {cookie}, "X-Hubgate-CSRF": {csrf}, "Origin": {origin}, "Content-Type": {"application/json"}}
	if code, body := post(t, page, "/api/command", `{"text":"   "}`, hdr); code != http.StatusBadRequest || !strings.Contains(body, "empty") {
		t.Errorf("an empty command: %d %q", code, body)
	}
	code, body := post(t, page, "/api/command", `{"text":"hello"}`, hdr)
	if code != http.StatusOK || !strings.Contains(body, `"commandId":1`) {
		t.Fatalf("try hello: %d %q", code, body)
	}
	for e := range events {
		if e.Kind == bridge.EventFinished {
			if e.CommandID != 1 || e.Answer != "Hello from the status page test" {
				t.Errorf("finished %+v", e)
			}
			break
		}
	}
	h, err := j.History(t.Context(), journal.HistoryQuery{Limit: 5})
	if err != nil || len(h) != 1 || h[0].Note != "local command: tried on the status page" || h[0].Session != 0 {
		t.Errorf("journal: %+v %v", h, err)
	}

	code, body = post(t, page, "/api/rules-test", `{"text":"slow walk"}`, hdr)
	var res statuspage.RulesTestResult
	if code != http.StatusOK || json.Unmarshal([]byte(body), &res) != nil {
		t.Fatalf("rules test: %d %q", code, body)
	}
	if res.Explanation.Rule != "slow" || res.Explanation.Action != "run" || !strings.HasPrefix(res.Text, "command  \"slow walk\"\nrule     slow\n") {
		t.Errorf("rules test: %+v\n%s", res.Explanation, res.Text)
	}
}
