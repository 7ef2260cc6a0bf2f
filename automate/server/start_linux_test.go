package server_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/internal/proc"
	"github.com/hubgate/hubgate/internal/testutil"
)

// The ledger: a server started with a LedgerDir records its runs'
// process groups in automate-<port>.children there while they live, and
// removes the file when it closes. A ledger that a killed server left for
// a port is reaped by the next Start on that port, before it serves: the
// groups recorded in it are killed. (A killed server is played by a copy
// of a live server's ledger: the group in it is alive, as a killed
// server's run children are.)
func TestStartKeepsTheLedgerAndReapsAKilledOnesGroups(t *testing.T) {
	first := startOptions(t, nil)
	first.Port, first.LedgerDir = -1, t.TempDir()
	r, err := server.Start(first)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	ledger := server.LedgerPath(first.LedgerDir, r.Addr().Port)
	if _, err := os.Stat(ledger); err != nil {
		t.Fatalf("no ledger at %s: %v", ledger, err)
	}

	pgidFile := filepath.Join(t.TempDir(), "pgid")
	prompt := fmt.Sprintf(`Sleep\n#!run echo $$ > %[1]s.tmp; mv %[1]s.tmp %[1]s; sleep 300 & sleep 300`, pgidFile)
	answer := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("POST", r.URL()+"/v1/runs", strings.NewReader(`{"prompt":"`+prompt+`","allowDestructiveTools":true}`))
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		answer <- err
	}()
	var pgid int
	// A process group is seen in /proc, which sends no event: a bounded poll.
	testutil.WaitFor(t, "the run's process group", func() bool {
		b, err := os.ReadFile(pgidFile)
		pgid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pgid > 0 && len(proc.LiveMembers(pgid)) >= 3
	})
	written, err := os.ReadFile(ledger)
	if err != nil || !strings.Contains(string(written), `"pgid":`+strconv.Itoa(pgid)) {
		t.Fatalf("the ledger does not record the run's group %d: %s %v", pgid, written, err)
	}

	// The next server on a port whose ledger records that live group.
	port, release := holdPorts(t, 1)
	second := startOptions(t, nil)
	second.Port, second.LedgerDir = port[0], t.TempDir()
	if err := os.WriteFile(server.LedgerPath(second.LedgerDir, port[0]), written, 0o600); err != nil {
		t.Fatal(err)
	}
	release(0)
	again, err := server.Start(second)
	if err != nil {
		t.Fatal(err)
	}
	if m := proc.LiveMembers(pgid); len(m) != 0 {
		t.Errorf("the recorded group %d survived the next Start on its port: %v", pgid, m)
	}
	closeRunning(t, again)
	<-answer

	if err := r.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := os.Stat(ledger); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the ledger outlived Close: %v", err)
	}
}
