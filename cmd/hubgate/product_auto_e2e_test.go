package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/configs"
)

// TestProductAutoFindsAnotherWord runs `hubgate automate serve --product
// acme` (as the desktop application of product acme would answer) and the
// daemon with automate.target external and automate.product auto: the
// daemon takes the acme server, `hubgate status` reports the word, and a
// command runs there (the client speaks acme's chat word). The daemon's
// discovery is pinned to serve's port (automate.port), so the test needs no
// free port in 4317..4328.
func TestProductAutoFindsAnotherWord(t *testing.T) {
	key := uniqueKey(t)
	srv := startServe(t, env(t, configs.EnvAutomateKey+"="+key), "--product", "acme", "--port", "0", "--workspace", t.TempDir())
	port := srv.port()
	defer srv.stop(syscall.SIGTERM)

	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{External: true, Port: port, Product: "auto", Key: key, Bridge: `rules:
  - name: all
    match: {command_glob: "*"}
    run: {prompt: "#!answer acme ran {{.Command}}"}
`})

	d := startListening(t, s)
	if st := d.status(); st.Automate.Product != "acme" || st.Automate.Endpoint != srv.url {
		t.Errorf("status --json automate: %+v", st.Automate)
	}
	want := fmt.Sprintf("automate   external %s (product acme)", srv.url)
	if r := runCmd(t, s.environ(), "", "--config", s.configPath, "status"); !strings.Contains(r.stdout, want) {
		t.Errorf("hubgate status (exit %d) lacks %q:\n%s%s", r.code, want, r.stdout, r.stderr)
	}

	h.push("water the plants", nil)
	if e := waitSettled(t, s, "water the plants"); e.Status != automate.StatusCompleted || e.Answer != "acme ran water the plants" {
		t.Errorf("the command on the acme server: %s", e2eDump([]journal.Entry{e}))
	}
	if code := d.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	// Its log is whole once it ended: its start named the acme server.
	if recs := d.logRecords("hubgate running"); len(recs) != 1 || recs[0]["automate"] != srv.url ||
		recs[0]["automate_mode"] != "external" || recs[0]["automate_product"] != "acme" {
		t.Errorf("the daemon did not take the acme server %s: %v", srv.url, recs)
	}
}
