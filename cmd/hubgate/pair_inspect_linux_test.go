package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testenv"
)

// `pair` is as uninspectable by its children as the daemon: the browser
// it starts finds no HUBGATE_CLIENT_SECRET in its own environment and
// cannot read /proc/<pair>/environ. pair runs as nobodyID when the test
// runs as root (root could read anything), with a Secret Service of its
// own (.ci/with-keyring run as that user).
func TestPairsBrowserCannotReadItsEnvironment(t *testing.T) {
	requireCurl(t)
	testenv.RequireProgram(t, "dbus-run-session")
	testenv.RequireProgram(t, "gnome-keyring-daemon")
	const secret = "pair-client-secret-5f1c9e0b7a2d4c68"
	_, apiURL := startMock(t, mockhub.Config{ClientSecret: secret}, nil)
	bin := sharedBinary(t)
	root := t.TempDir()
	home, cfg, marks := filepath.Join(root, "home"), filepath.Join(root, "config"), filepath.Join(root, "marks")
	// with-keyring's runtime dir (the control socket's default) lives
	// under TMPDIR: short, as a socket path must be.
	tmp, err := os.MkdirTemp("", "hg-pair-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	for _, d := range []string{home, cfg, marks} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	withKeyring := filepath.Join(root, "with-keyring")
	raw, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), ".ci", "with-keyring"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(withKeyring, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	// The browser: what it can read of its parent and of itself, then
	// the sign-in, as a browser would.
	browser := filepath.Join(root, "browser.sh")
	script := "#!/bin/sh\ntr '\\0' ' ' < /proc/$PPID/cmdline > " + marks + "/parent\nenv > " + marks + "/own-env\n" +
		readParentScript(marks) + "\nexec curl -fsSL \"$1\" > /dev/null\n"
	if err := os.WriteFile(browser, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	giveToNobody(t, root, tmp)

	cmd := exec.Command(withKeyring, bin, "pair", "--json")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, "XDG_CONFIG_HOME=" + cfg,
		"HUBGATE_API_URL=" + apiURL, "HUBGATE_CLIENT_ID=" + mockhub.DefaultClientID, "HUBGATE_DEVICE_TYPE=" + mockhub.DefaultDeviceTypeID,
		"BROWSER=" + browser, EnvClientSecret + "=" + secret}
	cmd.SysProcAttr = nobodyAttr()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pair under its own keyring: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"deviceId"`) {
		t.Fatalf("pair did not pair: %s\n%s", stdout.String(), stderr.String())
	}
	// The browser's parent is pair itself.
	parent, _ := os.ReadFile(filepath.Join(marks, "parent"))
	if !strings.HasPrefix(string(parent), bin+" pair") {
		t.Fatalf("the browser's parent is %q, not hubgate pair", parent)
	}
	ppid, err := os.ReadFile(filepath.Join(marks, "ppid"))
	if err != nil {
		t.Fatalf("the browser did not run: %v", err)
	}
	pairPID, err := strconv.Atoi(strings.TrimSpace(string(ppid)))
	if err != nil {
		t.Fatal(err)
	}
	checkNoRead(t, marks, pairPID, secret)
	own, _ := os.ReadFile(filepath.Join(marks, "own-env"))
	if strings.Contains(string(own), secret) || strings.Contains(string(own), EnvClientSecret) {
		t.Error("the browser's own environment holds the client secret")
	}
	if !strings.Contains(string(own), "HUBGATE_API_URL=") {
		t.Error("the browser's environment is empty: the check proves nothing")
	}
}
