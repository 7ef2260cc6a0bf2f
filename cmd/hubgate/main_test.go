package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/testutil"
)

// binary is the hubgate binary built once for the acceptance tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hubgate-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "hubgate")
	if err := buildHubgate(binary, false); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildHubgate builds the hubgate binary at dst the way README's install
// command does: CGO_ENABLED=0 (a static binary: Go's own DNS resolver and
// user lookup, no libc mapped into the daemon) and -trimpath. With cgo it
// builds the same way with CGO_ENABLED=1 (go build's default where a C
// compiler is installed).
func buildHubgate(dst string, cgo bool) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", dst, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if cgo {
		cmd.Env[len(cmd.Env)-1] = "CGO_ENABLED=1"
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build hubgate (cgo %v): %v\n%s", cgo, err, out)
	}
	return nil
}

const envKey = "env-key-0123456789abcdefghijklmnopqrstu"

// env is a clean environment for the binary: temp config and workspace
// dirs, no inherited hubgate settings, plus extra.
func env(t *testing.T, extra ...string) []string {
	t.Helper()
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HUBGATE_") && !strings.HasPrefix(kv, "HUBGATE_TEST_KEYRING") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "XDG_CONFIG_HOME="+t.TempDir())
	return append(out, extra...)
}

// result is a finished command.
type result struct {
	code           int
	stdout, stderr string
}

// runCmd runs the command line to its end, in this process (runInProc)
// unless environ needs a process of its own (needsOwnProcess: then the
// binary); one still running after 60 s is a hang and fails the test.
func runCmd(t *testing.T, environ []string, stdin string, args ...string) result {
	t.Helper()
	return runCmdWithin(t, 60*time.Second, environ, stdin, args...)
}

// runCmdWithin runs the binary under a context deadline: a command that
// has not exited when within has passed is killed and fails the test,
// naming the deadline (a hang is the failure; no duration is measured and
// compared afterwards).
func runCmdWithin(t *testing.T, within time.Duration, environ []string, stdin string, args ...string) result {
	t.Helper()
	if !needsOwnProcess(environ) {
		return runInProc(t, within, environ, stdin, args...)
	}
	return runBinaryWithin(t, within, environ, stdin, args...)
}

// runBinaryWithin runs the binary to its end, as runCmdWithin does.
func runBinaryWithin(t *testing.T, within time.Duration, environ []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = environ
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("hubgate %s did not exit within %s (killed)\nstdout: %s\nstderr: %s", strings.Join(args, " "), within, out.String(), errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return result{code, out.String(), errb.String()}
}

// serveProc is a running `hubgate automate serve`.
type serveProc struct {
	*bgProc
	t   *testing.T
	url string
}

// startServe starts serve in this process (startCommand: stopped at the
// test's end) and waits for the endpoint line on stdout.
func startServe(t *testing.T, environ []string, args ...string) *serveProc {
	t.Helper()
	return startServeWith(t, "", nil, environ, args...)
}

// startServeBinary is startServe as the binary, for what only a process
// shows: main's own signal handling, its memory, its process group.
func startServeBinary(t *testing.T, environ []string, args ...string) *serveProc {
	t.Helper()
	return startServeWith(t, binary, nil, environ, args...)
}

// startServeWith is startServe with startCommand's bin and attr.
func startServeWith(t *testing.T, bin string, attr *syscall.SysProcAttr, environ []string, args ...string) *serveProc {
	t.Helper()
	p := startCommand(t, environ, bin, attr, append([]string{"automate", "serve"}, args...)...)
	return &serveProc{bgProc: p, t: t, url: p.firstLine(t)}
}

// port is the port serve listens on (from its endpoint line): a test that
// gives it to a daemon (automate.port) lets serve choose a free one.
func (s *serveProc) port() int {
	s.t.Helper()
	u, err := url.Parse(s.url)
	if err != nil {
		s.t.Fatalf("endpoint %q: %v", s.url, err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		s.t.Fatalf("endpoint %q: %v", s.url, err)
	}
	return p
}

// stop sends sig and returns the exit code.
func (s *serveProc) stop(sig syscall.Signal) int {
	s.t.Helper()
	return s.stopWith(s.t, sig, 20*time.Second)
}

func get(t *testing.T, url, key string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestHelp(t *testing.T) {
	r := runCmd(t, env(t), "", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "automate") {
		t.Errorf("--help: %d %q", r.code, r.stdout)
	}
	r = runCmd(t, env(t), "", "automate", "serve", "--help")
	for _, want := range []string{"--port", "--workspace", "--tool-wait", "--models", "HUBGATE_AUTOMATE_KEY", "never"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
	if r := runCmd(t, env(t), "", "version"); r.code != 0 || strings.TrimSpace(r.stdout) == "" {
		t.Errorf("version: %+v", r)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"automate", "serve", "--no-such-flag"},
		{"automate", "serve", "--port", "70000"},
		{"automate", "serve", "--port", "x"},
		{"automate", "serve", "extra-arg"},
		{"no-such-command"},
	} {
		r := runCmd(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey), "", args...)
		if r.code != ExitUsage || !strings.HasPrefix(r.stderr, "hubgate: ") {
			t.Errorf("%v: exit %d stderr %q", args, r.code, r.stderr)
		}
	}
}

func TestServeWithKeyFromEnvironment(t *testing.T) {
	ws := t.TempDir()
	s := startServe(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey), "--port", "0", "--workspace", ws, "--tool-wait", "5s")
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") {
		t.Fatalf("endpoint %q", s.url)
	}
	code, body := get(t, s.url+"/health", envKey)
	var h automate.Health
	json.Unmarshal(body, &h)
	if code != 200 || h.Service != "service-agent" || h.Workspace != ws {
		t.Fatalf("health: %d %s", code, body)
	}
	if code, _ := get(t, s.url+"/health", "wrong-key-wrong-key-wrong-key"); code != 401 {
		t.Errorf("wrong key: %d", code)
	}
	if strings.Contains(s.Stderr(), envKey) {
		t.Error("the key reached the log")
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM exit %d; stderr %s", code, s.Stderr())
	}
}

// The binary: main turns SIGINT into the end of serve's context
// (signal.NotifyContext), which only a real process's signal shows.
func TestServeStopsCleanlyOnSIGINTDuringARun(t *testing.T) {
	s := startServeBinary(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey), "--port", "0", "--workspace", t.TempDir())
	answered := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", s.url+"/v1/runs", strings.NewReader(`{"prompt":"long\n#!sleep 60000"}`))
		req.Header.Set("Authorization", "Bearer "+envKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- -1
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	// /health answers only when asked: no event.
	testutil.WaitFor(t, "the run to start (health busy)", func() bool {
		_, body := get(t, s.url+"/health", envKey)
		var h automate.Health
		json.Unmarshal(body, &h)
		return h.Busy
	})
	if code := s.stop(syscall.SIGINT); code != 0 {
		t.Errorf("SIGINT exit %d; stderr %s", code, s.Stderr())
	}
	// The blocked request was answered (the run ended) rather than hanging.
	select {
	case st := <-answered:
		if st != 500 && st != -1 {
			t.Errorf("in-flight run answered %d", st)
		}
	case <-time.After(10 * time.Second):
		t.Error("the in-flight request was never answered")
	}
}

func TestServeRefusesABadKeyFromEnvironment(t *testing.T) {
	short := "short-key-123"
	r := runCmd(t, env(t, "HUBGATE_AUTOMATE_KEY="+short), "", "automate", "serve", "--port", "0")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "HUBGATE_AUTOMATE_KEY") || !strings.Contains(r.stderr, "at least 24") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, short) {
		t.Error("the rejected key was echoed")
	}
}

// With 'secrets: keyring' and no D-Bus at all, serve refuses and says why
// (without the setting it keeps the key in the secrets file: see
// headless_e2e_test.go).
func TestServeWithoutAnyKeySourceRefusesAndSaysWhy(t *testing.T) {
	requireNoUserBus(t)
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgPath, []byte("secrets: keyring\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, noDBus(t, env(t)), "", "--config", cfgPath, "automate", "serve", "--port", "0")
	if r.code != ExitSecretStore || !strings.Contains(r.stderr, "HUBGATE_AUTOMATE_KEY") ||
		!strings.Contains(r.stderr, "This server cannot be enabled because secure operating-system storage is unavailable") ||
		!strings.Contains(r.stderr, "DBUS_SESSION_BUS_ADDRESS is unset") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("printed an endpoint: %q", r.stdout)
	}
}

func TestServeWithEphemeralKey(t *testing.T) {
	s := startServe(t, env(t), "--port", "0", "--ephemeral-key", "--workspace", t.TempDir())
	// In this process serve wrote the key line before the endpoint line
	// (startServe's event): it is on stderr now.
	var key string
	for _, line := range strings.Split(s.Stderr(), "\n") {
		if k, ok := strings.CutPrefix(line, "hubgate: access key for this process only: "); ok {
			key = k
		}
	}
	if len(key) != 43 {
		t.Fatalf("no ephemeral key on stderr: %q", s.Stderr())
	}
	if code, _ := get(t, s.url+"/health", key); code != 200 {
		t.Errorf("health with the ephemeral key: %d", code)
	}
	s.stop(syscall.SIGTERM)
}

func TestServeConfigErrorsExit3(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte("automate:\n  tool_wait: -5s\n"), 0o600)
	r := runCmd(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey), "", "--config", cfg, "automate", "serve", "--port", "0")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "automate.tool_wait") {
		t.Errorf("bad config: exit %d stderr %q", r.code, r.stderr)
	}
	os.WriteFile(cfg, []byte("automate:\n  no_such_key: 1\n"), 0o600)
	r = runCmd(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey), "", "--config", cfg, "automate", "serve", "--port", "0")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "no_such_key") {
		t.Errorf("unknown key: exit %d stderr %q", r.code, r.stderr)
	}
	r = runCmd(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey), "", "--config", filepath.Join(dir, "missing.yaml"), "automate", "serve", "--port", "0")
	if r.code != ExitConfig && r.code != ExitError || !strings.Contains(r.stderr, "missing.yaml") {
		t.Errorf("missing config: exit %d stderr %q", r.code, r.stderr)
	}
	models := filepath.Join(dir, "models.json")
	os.WriteFile(models, []byte(`[{"name":""}]`), 0o600)
	r = runCmd(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey), "", "automate", "serve", "--port", "0", "--models", models)
	if r.code != ExitConfig || !strings.Contains(r.stderr, "automate.models_file") {
		t.Errorf("bad models file: exit %d stderr %q", r.code, r.stderr)
	}
}

func TestServeWithModelsFileAndLaunchSelection(t *testing.T) {
	models := filepath.Join(t.TempDir(), "models.json")
	os.WriteFile(models, []byte(`[
		{"name":"tiny-a","family":"tiny","sizeCode":"S","supportsTools":true,"availableForDevice":true,"downloaded":true,"selected":true},
		{"name":"tiny-b","family":"tiny","sizeCode":"M","supportsTools":true,"availableForDevice":true,"downloaded":true}
	]`), 0o600)
	s := startServe(t, env(t, "HUBGATE_AUTOMATE_KEY="+envKey), "--port", "0", "--workspace", t.TempDir(), "--models", models, "--size", "m")
	var cat automate.CatalogResponse
	_, body := get(t, s.url+"/v1/automate/models", envKey)
	json.Unmarshal(body, &cat)
	if len(cat.Data) != 2 || cat.Data[0].Name != "tiny-a" {
		t.Fatalf("catalog %s", body)
	}
	// /health answers only when asked: no event.
	testutil.Until(t, "the launch selection (tiny-b)", testutil.NoEvent, func() bool {
		var h automate.Health
		_, body = get(t, s.url+"/health", envKey)
		json.Unmarshal(body, &h)
		return h.ModelName != nil && *h.ModelName == "tiny-b"
	}, func() string { return "health: " + string(body) })
	s.stop(syscall.SIGTERM)
}

// The keyring tests run inside .ci/with-keyring (a private Secret Service).
func requireKeyring(t *testing.T) {
	if os.Getenv("HUBGATE_TEST_KEYRING") == "1" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI must run the tests inside .ci/with-keyring")
	}
	t.Skip("no private Secret Service; run under .ci/with-keyring")
}

func TestAutomateKeyAndRotationWithTheKeyring(t *testing.T) {
	requireKeyring(t)
	e := env(t)
	first := runCmd(t, e, "", "automate", "key")
	if first.code != 0 || len(strings.TrimSpace(first.stdout)) != 43 {
		t.Fatalf("automate key: %+v", first)
	}
	key := strings.TrimSpace(first.stdout)
	if again := runCmd(t, e, "", "automate", "key"); strings.TrimSpace(again.stdout) != key {
		t.Fatal("the stored key changed between reads")
	}
	out, err := exec.Command("secret-tool", "lookup", "service", "hubgate", "username", "automate-access-key").Output()
	if err != nil || strings.TrimSpace(string(out)) != key {
		t.Fatalf("the key is not in the Secret Service: %v", err)
	}

	s := startServe(t, e, "--port", "0", "--workspace", t.TempDir())
	if code, _ := get(t, s.url+"/health", key); code != 200 {
		t.Fatalf("serve did not use the stored key: %d", code)
	}
	if strings.Contains(s.Stderr(), key) {
		t.Error("the key reached the log")
	}
	rotated := runCmd(t, e, "", "automate", "key", "--rotate")
	newKey := strings.TrimSpace(rotated.stdout)
	if rotated.code != 0 || len(newKey) != 43 || newKey == key {
		t.Fatalf("rotate: %+v", rotated)
	}
	s.signal(syscall.SIGHUP)
	testutil.Until(t, "the rotated key to be taken (SIGHUP)", testutil.NoEvent, func() bool { code, _ := get(t, s.url+"/health", newKey); return code == 200 },
		func() string { return "stderr: " + s.Stderr() })
	if code, _ := get(t, s.url+"/health", key); code != 401 {
		t.Errorf("the old key still works after rotation: %d", code)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit %d", code)
	}
}
