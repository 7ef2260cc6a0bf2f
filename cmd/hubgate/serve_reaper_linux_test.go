package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/internal/proc"
)

// TestServeRunChildrenDieWithAKilledServe: as for the daemon
// (TestRunChildrenDieWithAKilledDaemon), a run_command child of
// `automate serve` and its own children must not outlive a serve killed
// with SIGKILL. The shell gets Pdeathsig; the sleep it started is killed
// by the next serve on that port (the reaper), before it serves.
func TestServeRunChildrenDieWithAKilledServe(t *testing.T) {
	dir := t.TempDir()
	ws, marks := filepath.Join(dir, "ws"), filepath.Join(dir, "marks")
	for _, d := range []string{ws, marks} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	pgidFile := filepath.Join(marks, "pgid")
	e := env(t, "HUBGATE_AUTOMATE_KEY="+envKey, "XDG_DATA_HOME="+filepath.Join(dir, "data"))
	port := freeLoopbackPort(t)
	serveArgs := []string{"--port", strconv.Itoa(port), "--workspace", ws, "--log-format", "json", "--log-level", "info"}
	serve := startServeBinary(t, e, serveArgs...)
	url := serve.url

	prompt := fmt.Sprintf(`Sleep\n#!run echo $$ > %[1]s.tmp; mv %[1]s.tmp %[1]s; sleep 300 & sleep 300`, pgidFile)
	go func() {
		// Never answered: the serve is killed during the run.
		req, _ := http.NewRequest("POST", url+"/v1/runs", strings.NewReader(`{"prompt":"`+prompt+`","allowDestructiveTools":true}`))
		req.Header.Set("Authorization", "Bearer "+envKey)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	pgid := waitRunGroup(t, pgidFile)

	killLeavingTheRun(t, serve.cmd, serve.done, pgid, "serve")

	again := startServeBinary(t, e, serveArgs...)
	// It reaped before it printed its endpoint: nothing of the group is left.
	if m := proc.LiveMembers(pgid); len(m) != 0 {
		t.Fatalf("processes %v of the killed serve's run survived the restart", m)
	}
	if stderr := again.Stderr(); !strings.Contains(stderr, "killed a process group left by a previous run of hubgate") || !strings.Contains(stderr, `"pgid":`+strconv.Itoa(pgid)) {
		t.Errorf("the restart did not say it killed group %d: %s", pgid, stderr)
	}
}
