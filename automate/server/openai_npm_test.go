package server_test

// The official `openai` npm client (testdata/npm, maxRetries 0) drives the
// real server through a full caller-executed tool loop, a 409 and a failed
// run: testdata/npm/openai-tool-loop.mjs does the client side and prints a
// JSON summary that this test checks. Base URL and key reach node through
// the environment only.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testenv"
)

type npmCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type npmSummary struct {
	Loop struct {
		Rounds        [][]npmCall `json:"rounds"`
		ToolCallIDs   []string    `json:"toolCallIds"`
		Results       []string    `json:"results"`
		FirstID       string      `json:"firstId"`
		FinalID       string      `json:"finalId"`
		FinalContent  string      `json:"finalContent"`
		FinishReason  string      `json:"finishReason"`
		ServiceStatus string      `json:"serviceStatus"`
		StepSummaries []string    `json:"stepSummaries"`
		Requests      int         `json:"requests"`
	} `json:"loop"`
	Conflict struct {
		Status                     int    `json:"status"`
		Type                       string `json:"type"`
		Message                    string `json:"message"`
		Requests                   int    `json:"requests"`
		RequestsWithDefaultRetries int    `json:"requestsWithDefaultRetries"`
	} `json:"conflict"`
	Failed struct {
		Status        int    `json:"status"`
		ServiceStatus string `json:"serviceStatus"`
		ErrorCode     string `json:"errorCode"`
		SchemaVersion int    `json:"schemaVersion"`
		Requests      int    `json:"requests"`
	} `json:"failed"`
	Errors []string `json:"errors"`
}

func TestOpenAINpmToolLoop(t *testing.T) {
	node := testenv.RequireNode(t)
	testenv.NpmBin(t, "openai/package.json")
	script := filepath.Join(testenv.ModuleRoot(t), testenv.NpmDir, "openai-tool-loop.mjs")
	h := newHarness(t)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+h.url+"/v1", "OPENAI_API_KEY="+h.key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if slices.Contains(cmd.Args, h.key) {
		t.Error("the key went on the command line")
	}
	var s npmSummary
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &s); err != nil {
		t.Fatalf("node: %v; stdout %q; stderr %s", runErr, stdout.String(), stderr.String())
	}
	if runErr != nil || len(s.Errors) != 0 {
		t.Fatalf("node: %v; script errors:\n  %s\nstderr %s", runErr, strings.Join(s.Errors, "\n  "), stderr.String())
	}

	// The loop, as the npm client saw it.
	l := s.Loop
	if len(l.Rounds) != 2 || len(l.Rounds[0]) != 1 || len(l.Rounds[1]) != 2 {
		t.Fatalf("rounds %+v", l.Rounds)
	}
	want := []npmCall{
		{Name: "get_weather", Arguments: `{"city":"Oslo"}`},
		{Name: "get_weather", Arguments: `{"city":"Bergen"}`},
		{Name: "get_time", Arguments: `{"tz":"Europe/Oslo"}`},
	}
	calls := slices.Concat(l.Rounds...)
	seen := map[string]bool{}
	for i, c := range calls {
		if c.Name != want[i].Name || c.Arguments != want[i].Arguments || c.ID == "" || seen[c.ID] || c.ID != l.ToolCallIDs[i] {
			t.Errorf("call %d = %+v, want %+v with a fresh id", i, c, want[i])
		}
		seen[c.ID] = true
	}
	if l.FinishReason != "stop" || l.FinalContent != "Walk at 09:30, it is mild." || l.ServiceStatus != "completed" ||
		l.FinalID != l.FirstID || !strings.HasPrefix(l.FinalID, "automate-run-") {
		t.Errorf("final: %+v", l)
	}
	// The node caller's results reached the run's steps.
	if len(l.Results) != 3 || len(l.StepSummaries) != 4 {
		t.Fatalf("results %q steps %q", l.Results, l.StepSummaries)
	}
	for i, r := range []string{"Oslo: 18C, light wind (node caller)", "Bergen: 18C, light wind (node caller)", "09:30 in Europe/Oslo (node caller)"} {
		if l.Results[i] != r || !strings.Contains(l.StepSummaries[i], r) {
			t.Errorf("step %d resultSummary %q, want %q", i+1, l.StepSummaries[i], r)
		}
	}
	if l.Requests != 3 {
		t.Errorf("tool loop requests %d, want 3", l.Requests)
	}

	c := s.Conflict
	if c.Status != 409 || c.Type != "conflict" || !strings.HasPrefix(c.Message, "The on-device assistant is already running or preparing (") ||
		c.Requests != 1 || c.RequestsWithDefaultRetries != 1 {
		t.Errorf("conflict: %+v", c)
	}
	f := s.Failed
	if f.Status != 500 || f.ServiceStatus != "failed" || f.ErrorCode != "EXECUTION_FAILED" || f.SchemaVersion != 1 || f.Requests != 1 {
		t.Errorf("failed run: %+v", f)
	}
	if hl := h.health(); hl.Busy || hl.AwaitingToolResults {
		t.Errorf("a run is left after the script: %+v", hl)
	}
}
