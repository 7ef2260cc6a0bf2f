package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/internal/testutil"
)

// e2eNotifications owns org.freedesktop.Notifications on the session bus
// of .ci/with-keyring, which the daemon under test shares.
type e2eNotifications struct{ got chan [2]string }

func (f *e2eNotifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	f.got <- [2]string{summary, body}
	return 1, nil
}

func (f *e2eNotifications) GetCapabilities() ([]string, *dbus.Error) { return []string{"body"}, nil }

const answersRules = `rules:
  - name: hello
    match: {command: hello}
    run:
      prompt: "Say hello\n#!answer Hello, the kettle is on"
  - name: quiet
    match: {command: quiet}
    notify: none
    run:
      prompt: "q\n#!answer nobody is told"
`

// The daemon (the real binary) sends each answer to the desktop's
// notification service; without one it warns once and goes on.
func TestDaemonNotifiesAnswersOverDBus(t *testing.T) {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no D-Bus session bus: run the tests with -exec .ci/with-keyring")
		}
		t.Skip("no D-Bus session bus: run the tests with -exec .ci/with-keyring")
	}
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: answersRules})

	// First without a notification server: the daemon goes on.
	d := startListening(t, s)
	lines, _ := startWatch(t, s, "--history", "100") // history: no event is missed while it connects
	h.push("hello", nil)
	nextLine(t, lines, "the first run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished })
	h.push("hello", nil)
	fin := nextLine(t, lines, "the second run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished })
	if fin.event.Status != "completed" {
		t.Fatalf("second run %+v", fin.event)
	}
	// The notifier logs the second answer after the stream showed its end
	// (it reads its own subscription); a stop lets it show every event
	// already published: the log is whole once the daemon ended.
	if code := d.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
	if n := len(d.logRecords("desktop notifications are not available; notifications go to the log only")); n != 1 {
		t.Errorf("want one warning about the missing notification server, got %d; stderr:\n%s", n, d.Stderr())
	}
	if n := len(d.logRecords("notification")); n != 2 {
		t.Errorf("%d notifications in the log, want 2", n)
	}

	// Now with a receiver of the test's own on the same bus.
	srv := ownNotifications(t)
	startListening(t, s)
	lines, _ = startWatch(t, s, "--history", "100")
	h.push("quiet", nil) // notify: none: the first notification must be hello's
	nextLine(t, lines, "the quiet run's end", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished && e.Command == "quiet" })
	h.push("hello", nil)
	select {
	case n := <-srv.got:
		if n[0] != "hubgate · hello" || n[1] != "Hello, the kettle is on" {
			t.Fatalf("notification %q", n)
		}
	case <-time.After(e2eWait):
		t.Fatal("no notification reached the server")
	}
}

// `hubgate open` gives the browser a one-time login address with no
// secret in it (on Linux the code-free /login: the page serves only its
// owner's connections; no file a snap or Flatpak browser cannot read);
// following it yields a session cookie and the page; --print prints the
// token address and arms nothing; the page answers it and refuses a
// foreign Host; a browser that cannot start fails open (exit 1, a hint to
// --print) and withdraws the login.
func TestOpenTheStatusPage(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "rules: []\n"})
	if r := runCmd(t, s.environ(), "", "--config", s.configPath, "open", "--print"); r.code != ExitNotRunning {
		t.Fatalf("open without a daemon: exit %d %q", r.code, r.stderr)
	}
	startListening(t, s)
	r := runCmd(t, s.environ(), "", "--config", s.configPath, "open", "--print")
	u := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.Contains(u, "/?token=") {
		t.Fatalf("open --print: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<title>hubgate</title>") {
		t.Fatalf("the page: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", u, nil)
	req.Host = "rebound.example:" + strings.Split(strings.TrimPrefix(u, "http://127.0.0.1:"), "/")[0]
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign host: %v %v", resp, err)
	}

	// --print armed nothing: the code-free login is refused.
	origin := strings.SplitN(u, "/?", 2)[0]
	if resp, err := http.Get(origin + "/login"); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("/login after open --print: %v %v, want 403 (nothing armed)", resp, err)
	}
	// No browser can be started: open fails, says to use --print, and
	// leaves nothing armed.
	for _, browser := range []string{"/bin/false", "/nonexistent/browser"} {
		r = runCmd(t, append(s.environ(), "BROWSER="+browser), "", "--config", s.configPath, "open")
		if r.code != ExitError || !strings.Contains(r.stderr, "'hubgate open --print'") || strings.Contains(r.stdout, "opened") {
			t.Fatalf("open with BROWSER=%s: exit %d %q %q, want 1 and a hint to --print", browser, r.code, r.stdout, r.stderr)
		}
		if resp, err := http.Get(origin + "/login"); err != nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("/login after a failed open (BROWSER=%s): %v %v, want 403 (withdrawn)", browser, resp, err)
		}
	}

	// The "browser" records what it was given: a one-time login address
	// with no secret, not the long-lived token address.
	dir := t.TempDir()
	rec := filepath.Join(dir, "args")
	browser := filepath.Join(dir, "browser.sh")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s ' \"$@\" > "+rec+".tmp && mv "+rec+".tmp "+rec+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, append(s.environ(), "BROWSER="+browser), "", "--config", s.configPath, "open")
	if r.code != 0 || strings.Contains(r.stdout, u) {
		t.Fatalf("open: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	var arg string
	// The fake browser, a child, writes its argument to a file: no event.
	testutil.Until(t, "the browser to start", testutil.NoEvent, func() bool { b, _ := os.ReadFile(rec); arg = strings.TrimSpace(string(b)); return arg != "" })
	token := strings.SplitN(u, "token=", 2)[1]
	if runtime.GOOS == "linux" && arg != origin+"/login" {
		t.Fatalf("the browser's command line %q, want the code-free %s/login and nothing else", arg, origin)
	}
	if strings.Contains(arg, " ") || strings.Contains(arg, token) || strings.Contains(arg, "token") || !strings.HasPrefix(arg, origin+"/login") {
		t.Fatalf("the browser's command line %q, want one login address of %s and no token", arg, origin)
	}
	if !strings.Contains(r.stdout, "opened the status page ("+origin+"/login") {
		t.Errorf("open printed %q %q, want the login address", r.stdout, r.stderr)
	}

	// Following it, as a browser does, gives the page's cookie and the
	// page; the address then is the page's, without the code.
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browse := &http.Client{Jar: jar}
	resp, err = browse.Get(arg)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<title>hubgate</title>") || resp.Request.URL.String() != origin+"/" {
		t.Fatalf("following the login address: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	pageURL, _ := url.Parse(origin + "/")
	if cs := jar.Cookies(pageURL); len(cs) != 1 || cs[0].Value == "" || strings.Contains(cs[0].Value, token) {
		t.Fatalf("cookies after the login: %d, want one session cookie (not the token)", len(cs))
	}
	if resp, err := browse.Get(origin + "/api/state"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the page's state with the cookie: %v %v", resp, err)
	}
	// The login is spent.
	if resp, err := http.Get(arg); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the login address used again: %v %v", resp, err)
	}
}
