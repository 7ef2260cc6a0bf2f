package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
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

// TestExternalAutoProductReportsTheWord: with External and Product auto,
// the daemon takes the desktop application's server of another word (a
// real server answering "acme-agent", pinned by Port), reports the word in
// Info and status, and a command still becomes a run there (the client
// speaks acme). The co-hosted server with auto answers the spec's word.
func TestExternalAutoProductReportsTheWord(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	srv, err := server.New(server.Config{Key: testKey, Product: "acme", Assistant: scripted.New(scripted.Config{Logger: quiet}),
		Workspace: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close(context.Background())
		ts.Close()
	})
	f := newFixture(t)
	f.opts.Automate = AutomateOptions{External: true, Key: testKey, Product: automate.ProductAuto,
		Port: ts.Listener.Addr().(*net.TCPAddr).Port}
	d := f.start(t)
	if info := d.Info(); info.AutomateURL != ts.URL || info.AutomateMode != bridge.ModeExternal || info.AutomateProduct != "acme" {
		t.Fatalf("info %+v, want external acme at %s", info, ts.URL)
	}
	st, err := control.Dial(f.opts.ControlSocket).Status(t.Context())
	if err != nil || st.Automate.Product != "acme" || st.Automate.Endpoint != ts.URL {
		t.Fatalf("status automate %+v (%v)", st.Automate, err)
	}
	waitListening(t, f, d, f.device)
	if err := f.mock.PushCommand(f.device, "water the plants", nil); err != nil {
		t.Fatal(err)
	}
	onEvents(t, d.Info().Bridge, "the run on the acme server", func() bool {
		es, err := d.Info().Bridge.History(t.Context(), 5)
		return err == nil && len(es) == 1 && es[0].Run == journal.RunFinished && es[0].Status == automate.StatusCompleted
	})

	co := newFixture(t)
	co.opts.Automate.Product = automate.ProductAuto
	if info := co.start(t).Info(); info.AutomateProduct != automate.DefaultProduct {
		t.Fatalf("co-hosted with auto: %+v", info)
	}
}
