package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/internal/proc"
	"github.com/hubgate/hubgate/internal/testutil"
)

// startServeOn starts `hubgate automate serve` on port and returns it
// with its endpoint, once printed.
func startServeOn(t *testing.T, environ []string, port int, ws string) (*exec.Cmd, <-chan struct{}, string, *testutil.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(binary, "automate", "serve", "--port", strconv.Itoa(port), "--workspace", ws, "--log-format", "json", "--log-level", "info")
	cmd.Env = environ
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("serve printed no endpoint; stderr: %s", stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	return cmd, done, sc.Text(), stderr
}

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
	serve, done, url, _ := startServeOn(t, e, port, ws)

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

	if err := serve.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	// The shell, serve's direct child, dies with it (Pdeathsig).
	if !testutil.Eventually(e2eWait, func() bool { return !slices.Contains(proc.LiveMembers(pgid), pgid) }) {
		t.Errorf("the run's shell %d outlived the killed serve", pgid)
	}

	_, _, _, stderr := startServeOn(t, e, port, ws)
	// It reaped before it printed its endpoint: nothing of the group is left.
	if m := proc.LiveMembers(pgid); len(m) != 0 {
		t.Fatalf("processes %v of the killed serve's run survived the restart", m)
	}
	if !strings.Contains(stderr.String(), "killed a process group left by a previous run of hubgate") || !strings.Contains(stderr.String(), `"pgid":`+strconv.Itoa(pgid)) {
		t.Errorf("the restart did not say it killed group %d: %s", pgid, stderr.String())
	}
}
