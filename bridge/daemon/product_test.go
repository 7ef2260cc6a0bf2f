package daemon

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

// TestCohostedServerSpeaksTheProductWord: AutomateOptions.Product reaches
// the co-hosted server (and its client: a command still becomes a run).
func TestCohostedServerSpeaksTheProductWord(t *testing.T) {
	f := newFixture(t)
	f.opts.Automate.Product = "acme"
	d := f.start(t)
	req, _ := http.NewRequest("GET", d.Info().AutomateURL+"/health", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h automate.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || h.Service != "acme-agent" {
		t.Fatalf("health service %q (%v)", h.Service, err)
	}
}
