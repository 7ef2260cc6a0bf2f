package main

// Acceptance tests of the daemon's life with the real binary: config init,
// path and check, rules test, status exit codes, one daemon per user,
// signals (SIGHUP reload, SIGINT stop), the service unit, --version, and a
// new user's first hour from pair to a first answered command.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
	"github.com/hubgate/hubgate/internal/testenv"
)

func TestConfigInitPathAndCheck(t *testing.T) {
	e := env(t)
	want := filepath.Join(envValue(e, "XDG_CONFIG_HOME"), "hubgate", "config.yaml")
	r := runCmd(t, e, "", "config", "path")
	if r.code != 0 || strings.TrimSpace(r.stdout) != want || !strings.Contains(r.stderr, "does not exist yet") {
		t.Fatalf("config path: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, e, "", "config", "check")
	if r.code != 0 || !strings.Contains(r.stdout, "no file (defaults only): valid") || !strings.Contains(r.stdout, "0 rules") ||
		!strings.Contains(r.stderr, "every command will be ignored") || !strings.Contains(r.stderr, "hubgate config init") {
		t.Fatalf("config check without a file: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	r = runCmd(t, e, "", "config", "init")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "wrote "+want {
		t.Fatalf("config init: %d %q %q", r.code, r.stdout, r.stderr)
	}
	written, err := os.ReadFile(want)
	if err != nil || string(written) != string(configs.StarterYAML()) {
		t.Fatalf("the written file differs from the starter (%v)", err)
	}
	if fi, _ := os.Stat(want); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	r = runCmd(t, e, "", "config", "check")
	if r.code != 0 || !strings.Contains(r.stdout, want+": valid") || !strings.Contains(r.stdout, "3 rules, 0 command tools; unmatched commands are run as the prompt") || r.stderr != "" {
		t.Fatalf("config check of the starter: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// Never overwritten without --force.
	if err := os.WriteFile(want, []byte("log:\n  level: debug\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, e, "", "config", "init")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "the config file exists") || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("config init over a file: %d %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(want); string(b) != "log:\n  level: debug\n" {
		t.Fatalf("the file was changed: %q", b)
	}
	r = runCmd(t, e, "", "config", "init", "--force")
	if r.code != 0 {
		t.Fatalf("config init --force: %d %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(want + ".bak"); string(b) != "log:\n  level: debug\n" {
		t.Fatalf("the old file was not kept as .bak: %q", b)
	}

	// A broken file: exit 3 with the key and line.
	if err := os.WriteFile(want, []byte("bridge:\n  unmatched:\n    action: sometimes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, e, "", "config", "check")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "bridge.unmatched") {
		t.Fatalf("config check of a broken file: %d %q", r.code, r.stderr)
	}
	// --config names another file.
	other := filepath.Join(t.TempDir(), "other.yaml")
	r = runCmd(t, e, "", "--config", other, "config", "init")
	if r.code != 0 || !strings.Contains(r.stdout, other) {
		t.Fatalf("config init --config: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestRulesTest(t *testing.T) {
	e := env(t)
	if r := runCmd(t, e, "", "config", "init"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := runCmd(t, e, "", "rules", "test", "--json", "hey water the plants")
	var res rulesTestResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil {
		t.Fatalf("rules test: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if res.Action != "run" || res.Rule != "ask" || !res.Matched || res.Busy != "queue" || res.QueueMax != 3 ||
		res.Request == nil || res.Request.Prompt != "water the plants" || len(res.Request.ClientTools) != 1 || res.Request.ClientTools[0].Name != "notify" {
		t.Fatalf("rules test result: %+v", res)
	}
	r = runCmd(t, e, "", "rules", "test", "what is the weather")
	if r.code != 0 || !strings.Contains(r.stdout, "none matched: the unmatched action runs it") || !strings.Contains(r.stdout, `"prompt": "what is the weather"`) ||
		!strings.Contains(r.stdout, "(not sent)") {
		t.Fatalf("rules test (text): %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A macro from a file and from stdin.
	macro := filepath.Join(t.TempDir(), "macro.json")
	if err := os.WriteFile(macro, []byte(`{"id":"m1","name":"typing","commands":["typing"],"events":[{"eventType":"Type","typedPhrase":"buy milk"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, e, "", "rules", "test", "--json", "--macro", macro, "typing")
	res = rulesTestResult{}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || res.Rule != "typed-text" || res.Request == nil ||
		res.Request.Prompt != "buy milk" {
		t.Fatalf("rules test --macro: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// The starter's second app pattern: a custom action's content.
	r = runCmd(t, e, `{"id":"2","name":"Ask","commands":[],"events":[{"eventType":"DeviceTypeCustomAction","deviceTypeCustomActionId":"ask-agent","additionalInputContent":"summarise my inbox"}]}`,
		"rules", "test", "--json", "--macro", "-", "ask")
	res = rulesTestResult{}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || res.Rule != "custom-action" || res.Request == nil ||
		res.Request.Prompt != "summarise my inbox" {
		t.Fatalf("rules test of a custom action: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, e, `{"id":"s","name":"stop","events":[{"eventType":"StopOutputs"}]}`, "rules", "test", "--json", "--macro", "-", "stop")
	res = rulesTestResult{}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || res.Action != "cancel" || res.Request != nil {
		t.Fatalf("rules test of a StopOutputs macro: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := runCmd(t, e, "not json", "rules", "test", "--macro", "-", "x"); r.code != ExitConfig || !strings.Contains(r.stderr, "--macro") {
		t.Fatalf("a bad macro: %d %q", r.code, r.stderr)
	}
	if r := runCmd(t, e, "", "rules", "test"); r.code != ExitUsage {
		t.Fatalf("no command: %d %q", r.code, r.stderr)
	}
	// Ignored when nothing handles it.
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(cfg, []byte("bridge:\n  rules: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, e, "", "--config", cfg, "rules", "test", "--json", "anything")
	res = rulesTestResult{}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || res.Action != "ignore" {
		t.Fatalf("rules test with no rule: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestUnknownCommandSuggests(t *testing.T) {
	for args, want := range map[string]string{"stauts": `did you mean "status"?`, "config chek": `did you mean "check"?`, "servce": `did you mean "service"?`} {
		r := runCmd(t, env(t), "", strings.Fields(args)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("hubgate %s: %d %q, want %q", args, r.code, r.stderr, want)
		}
	}
}

func TestVersionNamesTheRevision(t *testing.T) {
	r := runCmd(t, env(t), "", "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "hubgate ") || !strings.Contains(r.stdout, "go1.") {
		t.Fatalf("--version: %d %q", r.code, r.stdout)
	}
	if r2 := runCmd(t, env(t), "", "version"); r2.stdout != r.stdout {
		t.Fatalf("version %q differs from --version %q", r2.stdout, r.stdout)
	}
	// A build from a git checkout names its revision and a dirty tree. (go
	// build stamps nothing in a linked worktree, whose .git is a file, so
	// the test builds a fresh clone of the committed HEAD, changed.)
	// Outside a checkout (a source tarball) it skips; CI builds from a
	// checkout, so there (CI=true) a missing git or checkout fails.
	git := testenv.RequireProgram(t, "git")
	top, err := exec.Command(git, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("not a git checkout (%v): the VCS stamp must be checked in CI (CI=true)", err)
		}
		t.Skipf("not a git checkout (%v): the VCS stamp cannot be checked", err)
	}
	src := filepath.Join(t.TempDir(), "src")
	if out, err := exec.Command(git, "clone", "--quiet", strings.TrimSpace(string(top)), src).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	head, err := exec.Command(git, "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(src, "README.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\nchanged\n")
	f.Close()
	bin := filepath.Join(t.TempDir(), "hubgate")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/hubgate")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	rev := strings.TrimSpace(string(head))
	// Go stamps a pseudo-version (v0.0.0-<time>-<rev>+dirty) from the VCS
	// too; either way the short version names the revision.
	short, _, _ := strings.Cut(strings.TrimPrefix(string(out), "hubgate "), " ")
	if !strings.Contains(short, rev[:12]) || !strings.Contains(short, "dirty") ||
		!strings.Contains(string(out), "(commit "+rev+", ") || !strings.Contains(string(out), "with uncommitted changes") {
		t.Fatalf("--version of a changed source build %q does not name revision %s and the change", out, rev)
	}
}

// ---- the daemon ------------------------------------------------------------

func TestStatusExitCodesAndJSON(t *testing.T) {
	h := startHub(t)
	// With obey, StopListening makes the daemon refuse commands: status
	// says so in its exit code (by default commands still run).
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "unmatched: {action: run}\nlistening: obey\n"})
	env := s.environ()
	status := func() (int, map[string]any, string) {
		r := runCmd(t, env, "", "--config", s.configPath, "status", "--json")
		var obj map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &obj); err != nil {
			t.Fatalf("status --json printed %q (%v); stderr %q", r.stdout, err, r.stderr)
		}
		return r.code, obj, r.stderr
	}
	code, obj, _ := status()
	if code != ExitNotRunning || obj["running"] != false || obj["exitCode"] != float64(ExitNotRunning) || !strings.Contains(obj["error"].(string), "not running") {
		t.Fatalf("status with no daemon: %d %v", code, obj)
	}
	d := startListening(t, s)
	if code, obj, _ := status(); code != ExitOK || obj["listening"] != true {
		t.Fatalf("status of a listening daemon: %d %v", code, obj)
	}
	h.pushListening(false)
	lines, _ := startWatch(t, s, "--history", "100") // history: the request may be past
	nextLine(t, lines, "the bridge seeing StopListening", func(e bridge.Event) bool {
		return e.Kind == bridge.EventListening && e.Listening != nil && !*e.Listening
	})
	if code, obj, _ := status(); code != ExitNotListening {
		t.Fatalf("status after StopListening: %d %v", code, obj)
	}
	r := runCmd(t, env, "", "--config", s.configPath, "status")
	if r.code != ExitNotListening || !strings.Contains(r.stdout, "listening  no: commands are refused; the hub asked to stop listening at ") ||
		!strings.Contains(r.stdout, "(bridge.listening: obey)") || r.stderr != "" {
		t.Fatalf("status (text) not listening: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// The hub drops the connection and refuses new ones: not connected.
	if st, body := h.admin("POST", "/mock/faults", map[string]any{"drop": true, "refuseFor": "1h"}, nil); st != 200 {
		t.Fatalf("faults: %d %s", st, body)
	}
	d.waitHubState("reconnecting")
	if code, obj, _ := status(); code != ExitNotConnected {
		t.Fatalf("status while the hub refuses: %d %v", code, obj)
	}
	if r := runCmd(t, env, "", "--config", s.configPath, "status"); r.code != ExitNotConnected || !strings.Contains(r.stdout, "reconnecting") {
		t.Fatalf("status (text) not connected: %d %q", r.code, r.stdout)
	}
	// The token is disabled and the hub answers again: it refuses the token.
	if st, body := h.admin("POST", "/mock/faults", map[string]any{"refuseFor": "0s"}, nil); st != 200 {
		t.Fatalf("faults: %d %s", st, body)
	}
	var dis mockhub.DisableResult
	if st, body := h.admin("POST", "/mock/tokens/"+h.device.Token.ID+"/disable", nil, &dis); st != 200 {
		t.Fatalf("disable: %d %s", st, body)
	}
	if !onDaemonEvents(s.socket, func() bool { c, _, _ := status(); return c == ExitNeedsRepair }) {
		code, obj, _ := status()
		t.Fatalf("status with a refused token: %d %v\n%s", code, obj, d.Stderr())
	}
	_, obj, _ = status()
	if hubObj, _ := obj["hub"].(map[string]any); hubObj["needsRepair"] != true {
		t.Fatalf("status: %v", obj)
	}
	if code := d.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("the daemon exited %d", code)
	}
}

// TestSecondRunExitsAtOnceAndBindsNothing: a second `hubgate run` on the
// same control socket is refused before it opens or binds anything: it
// names the first one's PID and exits 5.
//
// The test holds every port the second daemon would bind (its Automate
// port, a fixed port: the whole of its port window, and its status page's
// port) with listeners of its own, and gives it a journal of its own: a
// daemon that bound or opened anything before its instance check would
// fail on a taken port instead (exit 1, "bind ...: address already in
// use"), or leave its journal behind.
func TestSecondRunExitsAtOnceAndBindsNothing(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{})
	d := startListening(t, s)
	// No rule and unmatched commands ignored: run says how to fix it (it
	// logged that before it started, so before it listened).
	if stderr := d.Stderr(); !strings.Contains(stderr, "every command will be ignored") || !strings.Contains(stderr, "bridge.unmatched.action: run") {
		t.Errorf("run does not warn that no rule can match:\n%s", d.Stderr())
	}

	hold := func() int {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln.Addr().(*net.TCPAddr).Port
	}
	automatePort, pagePort := hold(), hold()
	dataDir := filepath.Join(t.TempDir(), "second-data")
	secondJournal := filepath.Join(dataDir, "journal.db")
	second := filepath.Join(t.TempDir(), "second.yaml")
	cfg := fmt.Sprintf("log:\n  level: info\n  format: json\nautomate:\n  target: cohosted\n  port: %d\n  workspace: %q\n"+
		"bridge:\n  journal: %q\n  control_socket: %q\n  status_page: {enabled: true, port: %d}\n",
		automatePort, s.workspace, secondJournal, s.socket, pagePort)
	if err := os.WriteFile(second, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, s.environ(), "", "--config", second, "run")
	if r.code != ExitUnavailable || !strings.Contains(r.stderr, "another hubgate daemon is running") ||
		!strings.Contains(r.stderr, "pid "+strconv.Itoa(d.pid())+" ") || !strings.Contains(r.stderr, "runs once per user") {
		t.Fatalf("second run: exit %d, want %d naming pid %d\n%s", r.code, ExitUnavailable, d.pid(), r.stderr)
	}
	for _, word := range []string{"bind", "address already in use", "port"} {
		if strings.Contains(r.stderr, word) {
			t.Errorf("the second run's refusal speaks of %q: it tried to bind before it checked for another daemon\n%s", word, r.stderr)
		}
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the second run created its journal's directory before it refused (%v)", err)
	}
	// The first one is untouched.
	if r := runCmd(t, s.environ(), "", "--config", s.configPath, "status"); r.code != 0 {
		t.Fatalf("status of the first daemon: %d %s", r.code, r.stderr)
	}
	d.stop(syscall.SIGTERM)
}

// rewriteBridge replaces the bridge section's rules part of the daemon's
// config file (the lines after control_socket).
func rewriteBridge(t *testing.T, s *daemonSetup, bridge string) {
	t.Helper()
	raw, err := os.ReadFile(s.configPath)
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := strings.Cut(string(raw), "  control_socket: ")
	if !ok {
		t.Fatalf("config file:\n%s", raw)
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteString("  control_socket: " + strconv.Quote(s.socket) + "\n")
	for _, line := range strings.Split(strings.TrimRight(bridge, "\n"), "\n") {
		b.WriteString("  " + line + "\n")
	}
	if err := os.WriteFile(s.configPath, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSIGHUPReloadsRulesWhileARunIsInFlight: a valid new file changes the
// rules for the next command, a broken one is refused with the reason and
// the running rules stay; the hub connection and the run in flight are
// untouched throughout (the daemon's status says so after each reload).
// The run lasts until the test cancels it.
func TestSIGHUPReloadsRulesWhileARunIsInFlight(t *testing.T) {
	h := startHub(t)
	// Ten minutes in one step, which the test ends with a force cancel.
	slow := `  - name: slow
    match: {command: slow}
    run:
      prompt: "slow\n#!sleep 600000\n#!answer slow done"
`
	s := newDaemonSetup(t, h, daemonConfig{Bridge: "rules:\n" + slow + "unmatched: {action: ignore}\n"})
	d := startListening(t, s)
	connects := h.countActions(d.since, "connected")
	h.push("slow", nil)
	es := waitJournalState(t, s, "the slow run started", func(es []journal.Entry) bool { return len(es) == 1 && es[0].Run == journal.RunRunning })
	slowID := es[0].ID
	before := d.status()
	if before.Current == nil || before.Current.CommandID != slowID || before.Hub.Status != "listening" {
		t.Fatalf("status with the slow run started: %+v", before)
	}
	// stillInFlight checks that the slow run is the current one, still
	// running, and the hub connection the one it was.
	stillInFlight := func(after string) {
		t.Helper()
		st := d.status()
		if st.Current == nil || st.Current.CommandID != slowID || st.Current.Status != bridge.RunRunning {
			t.Fatalf("after %s the slow run #%d is not in flight: current %+v\n%s", after, slowID, st.Current, e2eDump(journalEntries(t, s.journal)))
		}
		if st.Hub.Status != "listening" || !st.Hub.Since.Equal(before.Hub.Since) || !st.Listening {
			t.Fatalf("after %s the hub is %+v, was %+v", after, st.Hub, before.Hub)
		}
	}

	rewriteBridge(t, s, "rules:\n"+slow+`  - name: lights
    match: {command_regex: '(?i)lights (?P<state>on|off)'}
    busy: queue
    run: {prompt: "lights {{.Named.state}}"}
unmatched: {action: ignore}
`)
	d.signal(syscall.SIGHUP)
	if ev := d.waitEvent("the reload", func(e bridge.Event) bool { return e.Kind == bridge.EventReloaded }); !slices.Equal(ev.Changes, []string{`rule "lights" added`}) {
		t.Fatalf("the reload changed %q", ev.Changes)
	}
	stillInFlight("the valid reload")
	h.push("lights on", nil)

	// A broken file: refused, the old rules stay.
	rewriteBridge(t, s, "rules:\n  - name: broken\n    match: {command_regex: '(unclosed'}\n    run: {prompt: x}\n")
	d.signal(syscall.SIGHUP)
	if ev := d.waitEvent("the refusal", func(e bridge.Event) bool { return e.Kind == bridge.EventReloadRefused }); !strings.Contains(ev.Error, "bridge.rules[0].match.command_regex") {
		t.Errorf("the refusal does not say why: %+v", ev)
	}
	stillInFlight("the refused reload")
	h.push("lights off", nil)
	// Both wait behind the slow run, matched by the reloaded rule.
	if !onDaemonEvents(s.socket, func() bool { return len(d.status().Queue) == 2 }) {
		t.Fatalf("the lights commands are not queued: %+v\n%s", d.status(), e2eDump(journalEntries(t, s.journal)))
	}
	stillInFlight("the lights commands")

	// The test ends the slow run (the daemon's config file is the broken
	// one: the socket is named by the environment); the queued commands run.
	if r := runCmd(t, append(s.environ(), "HUBGATE_CONTROL_SOCKET="+s.socket), "", "cancel", "--force"); r.code != 0 {
		t.Fatalf("hubgate cancel --force: %d %s", r.code, r.stderr)
	}
	es = waitJournalState(t, s, "three settled commands", func(es []journal.Entry) bool {
		return len(es) == 3 && e2eSettled(es[0]) && e2eSettled(es[1]) && e2eSettled(es[2])
	})
	if es[0].ID != slowID || es[0].Status != automate.StatusCanceled || !strings.Contains(es[0].Note, "stopped by hubgate cancel --force (forced)") {
		t.Errorf("the run in flight during the reloads, stopped by the test's forced cancel:\n%s", e2eDump(es))
	}
	if es[1].Rule != "lights" || es[1].Answer != "Done: lights on" || es[2].Rule != "lights" || es[2].Answer != "Done: lights off" {
		t.Errorf("commands after the reloads:\n%s", e2eDump(es))
	}
	if n := h.countActions(d.since, "connected"); n != connects {
		t.Errorf("the hub connected %d times, %d before the reloads", n, connects)
	}
	if code := d.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d", code)
	}
	// Its log is whole now: it says what each reload did.
	if !strings.Contains(d.Stderr(), `SIGHUP: configuration reloaded: rule \"lights\" added`) {
		t.Errorf("no reload line:\n%s", d.Stderr())
	}
	if recs := d.logRecords("SIGHUP: the configuration was refused; the running one stays"); len(recs) != 1 ||
		!strings.Contains(fmt.Sprint(recs[0]["err"]), "bridge.rules[0].match.command_regex") {
		t.Errorf("the refusal's log records: %v", recs)
	}
}

// TestSIGINTSaysWhatItWaitsForAndASecondOneForces: the first SIGINT says
// how long it waits for which run; the second terminates the run and the
// daemon exits, after DeviceStoppedListening.
//
// No duration is measured: the run sleeps for an hour in one step (a soft
// cancel never lands) and the cancel grace is the longest allowed (10
// minutes), so a daemon that did not force the stop would still be
// waiting when the test's wait for its exit (e2eWait) gives up.
func TestSIGINTSaysWhatItWaitsForAndASecondOneForces(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: `rules:
  - name: long
    match: {command: long}
    run:
      prompt: "long\n#!sleep 3600000\n#!answer never"
cancel_grace: 10m
`})
	d := startListening(t, s)
	h.push("long", nil)
	es := waitJournalState(t, s, "the long run started", func(es []journal.Entry) bool { return len(es) == 1 && es[0].Run == journal.RunRunning })
	id := es[0].ID
	lines, _ := startWatch(t, s, "--history", "100") // history: no event is missed while it connects
	// Its first line (of the history) says it is connected: a SIGINT
	// before that could close the control socket before watch reached it.
	nextLine(t, lines, "watch's first line", func(bridge.Event) bool { return true })
	d.signal(syscall.SIGINT)
	// The first SIGINT was handled once the bridge's shutdown asks the run
	// to cancel (after the daemon said what it waits for).
	nextLine(t, lines, "the shutdown's cancel", func(e bridge.Event) bool {
		return e.Kind == bridge.EventCancelRequested && e.CommandID == id && e.Note == "shutdown"
	})
	if code := d.stop(syscall.SIGINT); code != 0 {
		t.Errorf("exit %d", code)
	}
	if want := "stopping: waiting up to 605 s for run #" + strconv.FormatInt(id, 10); !strings.Contains(d.Stderr(), want) {
		t.Errorf("no %q line:\n%s", want, d.Stderr())
	}
	if !strings.Contains(d.Stderr(), "second interrupt") {
		t.Errorf("no word of the second interrupt:\n%s", d.Stderr())
	}
	// A forced stop kills the worker (the co-hosted server ends the run
	// terminated); the journal keeps it canceled, stopped by the shutdown
	// and forced by the second interrupt.
	es = journalEntries(t, s.journal)
	if len(es) != 1 || es[0].Run != journal.RunFinished || es[0].Status != automate.StatusCanceled ||
		es[0].Note != "stopped by shutdown; forced by a second interrupt" {
		t.Errorf("the run after a forced stop, want finished %s and forced:\n%s", automate.StatusCanceled, e2eDump(es))
	}
	if h.countActions(d.since, "DeviceStoppedListening") != 1 {
		t.Errorf("no DeviceStoppedListening after a forced stop")
	}
}

// runProc is a `hubgate run` started with a given environment and no
// --config (the user's own files).
type runProc = bgProc

func startRunProc(t *testing.T, environ []string, args ...string) *runProc {
	t.Helper()
	return startCommand(t, environ, "", nil, args...)
}

// newUserSetup is a new user's machine for the acceptance tests that pair
// and run the real binary: the keyring and curl (the browser) required, no
// pairing secrets left over, a mock of the remote service, and the
// environment entries of private runtime and data dirs and of a co-hosted
// Automate port outside the discovery window that other test runs use.
func newUserSetup(t *testing.T) (*mockhub.Server, string, []string) {
	t.Helper()
	requireKeyring(t)
	requireCurl(t)
	clearPairSecrets(t)
	t.Cleanup(func() { clearPairSecrets(t) })
	m, apiURL := startMock(t, mockhub.Config{}, nil)
	// A short path: the control socket lives there (sun_path is short).
	runtimeDir, err := os.MkdirTemp("", "hg-rt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runtimeDir) })
	os.Chmod(runtimeDir, 0o700)
	return m, apiURL, []string{"XDG_RUNTIME_DIR=" + runtimeDir, "XDG_DATA_HOME=" + t.TempDir(),
		"HUBGATE_AUTOMATE_PORT=" + strconv.Itoa(freeLoopbackPort(t))}
}

// TestNewUserFromPairToAFirstAnsweredCommand is a new user's first hour,
// with no file edited by hand: pair against the mock, config init, run, a
// command from the app answered; then a re-pairing that the running daemon
// takes at once, and an unpairing that stops it.
func TestNewUserFromPairToAFirstAnsweredCommand(t *testing.T) {
	m, apiURL, private := newUserSetup(t)
	e := pairEnviron(t, apiURL, private...)

	r := runCmd(t, e, "", "pair", "--name", "first hour", "--timeout", "50s")
	if r.code != 0 {
		t.Fatalf("pair: %d\n%s", r.code, r.stderr)
	}
	first, err := pairing.LoadState(statePathOf(e))
	if err != nil {
		t.Fatal(err)
	}
	// Without a config file nothing would run: run says so.
	if r := runCmd(t, e, "", "config", "check"); !strings.Contains(r.stderr, "every command will be ignored") {
		t.Fatalf("config check before init: %q", r.stderr)
	}
	if r := runCmd(t, e, "", "config", "init"); r.code != 0 {
		t.Fatalf("config init: %d %s", r.code, r.stderr)
	}
	d := startRunProc(t, e, "run")
	mockhubtest.WaitEvent(t, m, 0, "the device listening", func(ev mockhub.Event) bool {
		return ev.Action == "DeviceStartedListening" && ev.DeviceID == first.DeviceID
	})
	if strings.Contains(d.Stderr(), "every command will be ignored") {
		t.Errorf("run warned about rules after config init:\n%s", d.Stderr())
	}
	entries := askOnce(t, e, m, first.DeviceID, d)
	if entries[0].Rule != "ask" || entries[0].Status != automate.StatusCompleted || entries[0].Answer != "Done: what is on my calendar" {
		t.Fatalf("the first command: %+v", entries[0])
	}

	// A re-pairing with a new device: the running daemon switches at once.
	r = runCmd(t, e, "", "pair", "--replace", "--name", "second", "--timeout", "50s")
	if r.code != 0 {
		t.Fatalf("pair --replace: %d\n%s", r.code, r.stderr)
	}
	second, _ := pairing.LoadState(statePathOf(e))
	want := "the running daemon (pid " + strconv.Itoa(d.pid()) + "): reconnecting now with the new device " + second.DeviceID
	if !strings.Contains(r.stderr, want) {
		t.Fatalf("pair does not say what the daemon did (%q):\n%s", want, r.stderr)
	}
	mockhubtest.WaitEvent(t, m, 0, "the new device listening", func(ev mockhub.Event) bool {
		return ev.Action == "DeviceStartedListening" && ev.DeviceID == second.DeviceID
	})
	if dev, _ := m.Device(first.DeviceID); dev.IsConnected {
		t.Errorf("the old device is still connected")
	}

	// unpair: the daemon stops and unpair says so.
	r = runCmd(t, e, "", "unpair")
	if r.code != 0 || !strings.Contains(r.stderr, "no device is paired any more: the daemon stops") {
		t.Fatalf("unpair: %d\n%s", r.code, r.stderr)
	}
	select {
	case <-d.done:
	case <-time.After(e2eWait):
		t.Fatalf("the daemon did not stop after unpair:\n%s", d.Stderr())
	}
	if code := d.exitCode(); code != 0 {
		t.Errorf("the daemon exited %d after unpair", code)
	}
	if dev, _ := m.Device(second.DeviceID); dev.IsConnected || dev.IsListening {
		t.Errorf("the device is still connected after unpair: %+v", dev)
	}
	if r := runCmd(t, e, "", "unpair"); !strings.Contains(r.stderr, "no daemon is running") {
		t.Errorf("a second unpair does not say no daemon runs: %q", r.stderr)
	}
}

// TestRunningDaemonTakesTheNewTokenOfPairReuse: `pair --reuse` keeps the
// device and gets a new device token; the running daemon is told over its
// control socket and reconnects at once with the new token. (The old token
// stays valid on the service, so nothing else would make the daemon
// switch.)
func TestRunningDaemonTakesTheNewTokenOfPairReuse(t *testing.T) {
	u := pairAndRun(t)
	m, e, first, d := u.mock, u.env, u.first, u.run
	// listeningWith waits for the device's DeviceStartedListening over a
	// connection made with the token.
	listeningWith := func(tokenID string, since int64) {
		t.Helper()
		mockhubtest.WaitEvent(t, m, since, "the device listening with token "+tokenID, func(ev mockhub.Event) bool {
			return ev.Action == "DeviceStartedListening" && ev.DeviceID == first.DeviceID && ev.TokenID == tokenID
		})
	}
	listeningWith(first.TokenID, 0)
	evs := m.Events(0)
	since := evs[len(evs)-1].Seq

	r := runCmd(t, e, "", "pair", "--reuse", "--timeout", "50s")
	if r.code != 0 {
		t.Fatalf("pair --reuse: %d\n%s", r.code, r.stderr)
	}
	second, err := pairing.LoadState(statePathOf(e))
	if err != nil || second.DeviceID != first.DeviceID || second.TokenID == "" || second.TokenID == first.TokenID {
		t.Fatalf("the state after pair --reuse: %+v (%v), before %+v", second, err, first)
	}
	want := "the running daemon (pid " + strconv.Itoa(d.pid()) + "): reconnecting now with device " + first.DeviceID
	if !strings.Contains(r.stderr, want) {
		t.Fatalf("pair --reuse does not say what the daemon did (%q):\n%s", want, r.stderr)
	}
	listeningWith(second.TokenID, since)
	mockhubtest.WaitEvent(t, m, since, "the old token's connection closed", func(ev mockhub.Event) bool {
		return ev.Action == "disconnected" && ev.TokenID == first.TokenID
	})
	// A command from the app is answered over the new connection.
	entries := askOnce(t, e, m, first.DeviceID, d)
	if entries[0].Status != automate.StatusCompleted || entries[0].Answer != "Done: what is on my calendar" {
		t.Fatalf("the command after pair --reuse: %+v", entries[0])
	}
	if code := d.stopWith(t, syscall.SIGTERM, e2eWait); code != 0 {
		t.Errorf("the daemon exited %d", code)
	}
}

// pairedUser is a new user's machine after `pair`, `config init` and
// `run` (the real binaries against the mock).
type pairedUser struct {
	mock   *mockhub.Server
	apiURL string
	env    []string
	first  *pairing.State // the pairing `pair` saved
	run    *runProc
}

func pairAndRun(t *testing.T) pairedUser {
	t.Helper()
	m, apiURL, private := newUserSetup(t)
	e := pairEnviron(t, apiURL, private...)
	if r := runCmd(t, e, "", "pair", "--name", "kept", "--timeout", "50s"); r.code != 0 {
		t.Fatalf("pair: %d\n%s", r.code, r.stderr)
	}
	first, err := pairing.LoadState(statePathOf(e))
	if err != nil {
		t.Fatal(err)
	}
	if r := runCmd(t, e, "", "config", "init"); r.code != 0 {
		t.Fatalf("config init: %d %s", r.code, r.stderr)
	}
	return pairedUser{mock: m, apiURL: apiURL, env: e, first: first, run: startRunProc(t, e, "run")}
}

// askOnce waits until status says listening, pushes the app's one
// command "hey what is on my calendar" to device and returns the history
// once it holds that command settled (it must be the journal's only one).
func askOnce(t *testing.T, e []string, m *mockhub.Server, device string, d *runProc) []journal.Entry {
	t.Helper()
	socket := defaultSocketOf(e)
	if !onDaemonEvents(socket, func() bool { return runCmd(t, e, "", "status").code == ExitOK }) {
		t.Fatalf("status never said listening:\n%s", d.Stderr())
	}
	if err := m.PushCommand(device, "hey what is on my calendar", nil); err != nil {
		t.Fatal(err)
	}
	var entries []journal.Entry
	if !onDaemonEvents(socket, func() bool {
		r := runCmd(t, e, "", "history", "--json")
		entries = nil
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &entries) == nil && len(entries) == 1 && entries[0].Status != ""
	}) {
		t.Fatalf("no settled command in the history: %+v\n%s", entries, d.Stderr())
	}
	return entries
}

// systemdAnalyze is systemd-analyze, or "" when it is not installed
// outside CI (in CI, scripts/test installs it and its absence fails).
func systemdAnalyze(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("systemd-analyze is missing in CI (scripts/test installs the systemd package): %v", err)
		}
		return ""
	}
	return p
}

func TestServiceInstallStatusUninstall(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fake := filepath.Join(dir, "systemctl")
	script := "#!/bin/sh\necho \"$*\" >> " + strconv.Quote(calls) + "\n" +
		"case \"$2\" in is-active) echo active;; is-enabled) echo enabled;; esac\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e := env(t, EnvSystemctl+"="+fake)
	cfg := filepath.Join(dir, "my config.yaml")
	unit := filepath.Join(envValue(e, "XDG_CONFIG_HOME"), "systemd", "user", "hubgate.service")

	// The binary: the unit names the installed program (os.Executable),
	// which in-process would be this test binary.
	r := runBinaryWithin(t, 60*time.Second, e, "", "--config", cfg, "service", "install")
	if r.code != 0 || !strings.Contains(r.stdout, "wrote "+unit) || !strings.Contains(r.stdout, "journalctl --user -u hubgate") {
		t.Fatalf("service install: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	body, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), "\nExecStart="+binary+` --config "`+cfg+`" run`+"\n") ||
		!strings.Contains(string(body), "ExecReload=/bin/kill -HUP $MAINPID") || !strings.Contains(string(body), "WantedBy=default.target") {
		t.Fatalf("unit file:\n%s", body)
	}
	got, _ := os.ReadFile(calls)
	if string(got) != "--user daemon-reload\n--user enable --now hubgate.service\n" {
		t.Fatalf("systemctl calls:\n%s", got)
	}
	if sa := systemdAnalyze(t); sa != "" {
		if out, err := exec.Command(sa, "verify", unit).CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Fatalf("systemd-analyze verify %s: %v\n%s", unit, err, out)
		}
		// The check can fail: a unit whose program is not absolute is refused.
		bad := filepath.Join(dir, "bad.service")
		os.WriteFile(bad, []byte(strings.Replace(string(body), "ExecStart="+binary, "ExecStart=no/such/hubgate", 1)), 0o644)
		if out, err := exec.Command(sa, "verify", bad).CombinedOutput(); err == nil {
			t.Fatalf("systemd-analyze verify accepted a broken unit:\n%s", out)
		}
	}

	r = runCmd(t, e, "", "service", "status")
	if r.code != 0 || !strings.Contains(r.stdout, "enabled: enabled, active: active") {
		t.Fatalf("service status: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	os.Remove(calls)
	r = runCmd(t, e, "", "service", "uninstall")
	if r.code != 0 || !strings.Contains(r.stdout, "removed "+unit) {
		t.Fatalf("service uninstall: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(unit); !os.IsNotExist(err) {
		t.Fatalf("the unit file is still there: %v", err)
	}
	got, _ = os.ReadFile(calls)
	if string(got) != "--user disable --now hubgate.service\n--user daemon-reload\n" {
		t.Fatalf("systemctl calls of uninstall:\n%s", got)
	}
	r = runCmd(t, e, "", "service", "status")
	if r.code != ExitNotRunning || !strings.Contains(r.stdout, "not installed") {
		t.Fatalf("service status after uninstall: %d %q", r.code, r.stdout)
	}

	// No systemctl at all: a clear error, nothing written.
	noPath := env(t, "PATH="+t.TempDir())
	r = runBinaryWithin(t, 60*time.Second, noPath, "", "service", "install")
	if r.code != ExitError || !strings.Contains(r.stderr, "systemctl is not installed") {
		t.Fatalf("service install without systemctl: %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(envValue(noPath, "XDG_CONFIG_HOME"), "systemd")); !os.IsNotExist(err) {
		t.Errorf("something was written without systemctl: %v", err)
	}
}
