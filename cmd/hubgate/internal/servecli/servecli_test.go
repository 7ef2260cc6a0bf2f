package servecli

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/internal/testutil"
)

// Serve with an ephemeral key on any free port: the key is said once on
// Err, the URL printed on Out once the server answers, /health takes the
// key and never reaches the log; the end of ctx stops it.
func TestServeWithAnEphemeralKey(t *testing.T) {
	dir := t.TempDir()
	override := func(path, value string) configs.Override {
		return configs.Override{Path: path, Value: filepath.Join(dir, value), Origin: "test"}
	}
	cfg, err := configs.Load(configs.LoadOptions{Env: func(string) string { return "" }, UserConfigDir: func() (string, error) { return dir, nil },
		Overrides: []configs.Override{override("automate.workspace", "ws"), override("bridge.journal", "data/journal.db")}})
	if err != nil {
		t.Fatal(err)
	}
	outR, outW := io.Pipe()
	var errOut, logs testutil.SyncBuffer
	hup := make(chan os.Signal, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Options{Config: cfg, AnyPort: true, EphemeralKey: true, Getenv: func(string) string { return "" },
			HUP: hup, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Out: outW, Err: &errOut})
		outW.Close()
	}()
	line := make([]byte, 256)
	n, err := outR.Read(line)
	if err != nil {
		t.Fatalf("no URL on Out: %v; err %s", err, errOut.String())
	}
	url := strings.TrimSpace(string(line[:n]))
	key, ok := strings.CutPrefix(strings.TrimSpace(errOut.String()), "hubgate: access key for this process only: ")
	if !ok || len(key) != 43 {
		t.Fatalf("the ephemeral key on Err: %q", errOut.String())
	}
	req, _ := http.NewRequest("GET", url+"/health", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/health with the ephemeral key: %d", resp.StatusCode)
	}
	if strings.Contains(logs.String(), key) {
		t.Error("the key reached the log")
	}
	cancel()
	go io.Copy(io.Discard, outR)
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
