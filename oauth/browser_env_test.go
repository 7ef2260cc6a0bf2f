package oauth

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/internal/testutil"
)

// TestBrowserGetsNoSecrets (issue 14, D3): the browser command of `pair`
// starts with hubgate's secrets removed from its environment. BROWSER is a
// script that dumps its environment into a file; no secret may be in it.
func TestBrowserGetsNoSecrets(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the BROWSER script is a POSIX shell script")
	}
	secrets := map[string]string{
		"HUBGATE_CLIENT_SECRET": "d3-client-secret-5f1c",
		"HUBGATE_DEVICE_TOKEN":  "d3-device-token-9a2e",
		"HUBGATE_AUTOMATE_KEY":  "d3-automate-key-77b0",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("HUBGATE_D3_PLAIN", "kept-value")
	dir := t.TempDir()
	dump := filepath.Join(dir, "env.txt")
	script := filepath.Join(dir, "browser.sh")
	body := "#!/bin/sh\nenv > '" + dump + ".tmp' && mv '" + dump + ".tmp' '" + dump + "'\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	c := &Client{log: slog.New(slog.DiscardHandler)}
	getenv := func(k string) string {
		if k == "BROWSER" {
			return script
		}
		return os.Getenv(k)
	}
	if err := c.openBrowser(getenv, "http://127.0.0.1:1/signin/authorize?x=1"); err != nil {
		t.Fatal(err)
	}
	var (
		got []byte
		err error
	)
	// The script renames its finished file into place (a ready file); the
	// browser is started, not waited for, so no event tells us: a bounded
	// poll.
	testutil.Until(t, "the browser script's environment in "+dump, testutil.NoEvent,
		func() bool { got, err = os.ReadFile(dump); return !errors.Is(err, fs.ErrNotExist) })
	if err != nil {
		t.Fatalf("the browser script's environment: %v", err)
	}
	env := string(got)
	if !strings.Contains(env, "HUBGATE_D3_PLAIN=kept-value") || !strings.Contains(env, "PATH=") {
		t.Fatalf("the browser's environment lost ordinary variables:\n%s", env)
	}
	for k, v := range secrets {
		if strings.Contains(env, v) || strings.Contains(env, k+"=") {
			t.Errorf("the browser command sees %s", k)
		}
	}
}
