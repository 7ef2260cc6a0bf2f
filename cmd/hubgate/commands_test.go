package main

// The commands of this package as gh tests its own, in-process: (a)
// newCmdX with a runF that captures the options, to see what the flags
// and arguments became and which usage errors stop before any run; (b)
// runX called directly with buffers for the streams, a fixed clock and
// fake dependencies (a memory secret store, a fake service manager
// program, a fake daemon answer). The end-to-end tests that start the
// binary keep what only a process shows.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/cmd/hubgate/internal/controlcli"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/configs/service"
)

// testIO are a command's streams as buffers.
type testIO struct{ in, out, err bytes.Buffer }

func (b *testIO) stdio() Stdio { return Stdio{In: &b.in, Out: &b.out, Err: &b.err} }

// parseCmd runs cmd with args, its runF having been set to keep the
// options in *got; it returns the error.
func parseCmd(t *testing.T, cmd *cobra.Command, args ...string) error {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetFlagErrorFunc(flagError)
	return cmd.Execute()
}

// testApp is an app whose environment is vars only.
func testApp(vars map[string]string) *app {
	return &app{getenv: func(k string) string { return vars[k] }}
}

// loadTestConfig loads yaml as the config file, in a private config
// directory, with overrides.
func loadTestConfig(t *testing.T, yaml string, overrides ...configs.Override) *configs.Config {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load(configs.LoadOptions{Path: path, Env: func(string) string { return "" }, Overrides: overrides,
		UserConfigDir: func() (string, error) { return dir, nil }, HomeDir: func() (string, error) { return dir, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func failLoad(t *testing.T) func() (*configs.Config, error) {
	return func() (*configs.Config, error) {
		t.Error("the configuration was loaded")
		return nil, errors.New("not loaded")
	}
}

func TestFlagsBecomeTheCommandsOptions(t *testing.T) {
	a := testApp(nil)

	var ci *configInitOptions
	if err := parseCmd(t, newCmdConfigInit(a, func(_ context.Context, o *configInitOptions) error { ci = o; return nil }), "--force"); err != nil || ci == nil || !ci.Force || ci.ConfigFile == nil {
		t.Fatalf("config init --force: %+v %v", ci, err)
	}

	var rt *rulesTestOptions
	newRT := func() *cobra.Command {
		rt = nil
		return newCmdRulesTest(a, func(_ context.Context, o *rulesTestOptions) error { rt = o; return nil })
	}
	err := parseCmd(t, newRT(), "--macro", "m.json", "--event", `{"a":1}`, "--event", `{"b":2}`, "--profile", "-", "--json", "water the plants")
	if err != nil || rt == nil || rt.Command != "water the plants" || rt.MacroFile != "m.json" || rt.ProfileFile != "-" || !rt.JSON ||
		len(rt.Events) != 2 || rt.Events[1] != `{"b":2}` || rt.DeviceTypeSet {
		t.Fatalf("rules test: %+v %v", rt, err)
	}
	if err := parseCmd(t, newRT(), "--device-type", "", "x"); err != nil || rt == nil || !rt.DeviceTypeSet || rt.DeviceType != "" {
		t.Fatalf("rules test --device-type '': %+v %v", rt, err)
	}
	for _, args := range [][]string{{}, {"a", "b"}} {
		if err := parseCmd(t, newRT(), args...); exitCode(err) != ExitUsage || rt != nil {
			t.Errorf("rules test %q: %v (exit %d), ran %v", args, err, exitCode(err), rt != nil)
		}
	}

	var ml *mcpLoginOptions
	mcp := newCmdMcp(a, func(_ context.Context, o *mcpLoginOptions) error { ml = o; return nil })
	if err := parseCmd(t, mcp, "login", "--no-browser", "github"); err != nil || ml == nil || ml.Server != "github" || !ml.NoBrowser {
		t.Fatalf("mcp login: %+v %v", ml, err)
	}
	ml = nil
	if err := parseCmd(t, newCmdMcp(a, func(_ context.Context, o *mcpLoginOptions) error { ml = o; return nil }), "login"); exitCode(err) != ExitUsage || ml != nil {
		t.Errorf("mcp login without a server: %v", err)
	}

	var so *serveOptions
	newServe := func() *cobra.Command {
		so = nil
		return newCmdServe(a, func(_ context.Context, o *serveOptions) error { so = o; return nil })
	}
	if err := parseCmd(t, newServe(), "--port", "0", "--assistant", "openai", "--model", "qwen3:8b", "--ephemeral-key"); err != nil || so == nil {
		t.Fatalf("automate serve: %v", err)
	}
	if !so.PortSet || so.Flags.port != 0 || !so.Flags.ephemeralKey || so.UpstreamSet || so.ModelsSet {
		t.Errorf("serve options %+v", so)
	}
	want := map[string]string{"automate.engine": "openai", "automate.openai.model": "qwen3:8b"}
	if len(so.Overrides) != len(want) {
		t.Errorf("overrides %+v, want %v (--port 0 is none)", so.Overrides, want)
	}
	for _, ov := range so.Overrides {
		if want[ov.Path] != ov.Value || !strings.HasPrefix(ov.Origin, "flag --") {
			t.Errorf("override %+v", ov)
		}
	}
	if err := parseCmd(t, newServe(), "--port", "70000"); exitCode(err) != ExitUsage || so != nil || !strings.Contains(err.Error(), "--port must be between 0 and 65535") {
		t.Errorf("--port 70000: %v", err)
	}

	var ko *keyOptions
	if err := parseCmd(t, newCmdKey(a, func(_ context.Context, o *keyOptions) error { ko = o; return nil }), "--rotate"); err != nil || ko == nil || !ko.Rotate {
		t.Fatalf("automate key --rotate: %+v %v", ko, err)
	}

	var uo *unpairOptions
	if err := parseCmd(t, newCmdUnpair(a, func(_ context.Context, o *unpairOptions) error { uo = o; return nil }), "--keep-client-secret"); err != nil || uo == nil || !uo.KeepClientSecret {
		t.Fatalf("unpair: %+v %v", uo, err)
	}

	var sm *secretsMigrateOptions
	if err := parseCmd(t, newCmdSecrets(a, func(_ context.Context, o *secretsMigrateOptions) error { sm = o; return nil }), "migrate"); err != nil || sm == nil {
		t.Fatalf("secrets migrate: %v", err)
	}

	var vo *versionOptions
	if err := parseCmd(t, newCmdVersion(a, func(_ context.Context, o *versionOptions) error { vo = o; return nil }), "extra"); exitCode(err) != ExitUsage || vo != nil {
		t.Errorf("version extra: %v", err)
	}
	if err := parseCmd(t, newCmdConfigPath(a, nil), "--nope"); exitCode(err) != ExitUsage {
		t.Errorf("an unknown flag: %v", err)
	}
}

func TestRunVersionAndConfigCommands(t *testing.T) {
	ctx := context.Background()
	var b testIO
	if err := runVersion(ctx, &versionOptions{IO: b.stdio(), Version: "hubgate 1.2.3 (abc)"}); err != nil || b.out.String() != "hubgate 1.2.3 (abc)\n" {
		t.Fatalf("version: %q %v", b.out.String(), err)
	}

	path := filepath.Join(t.TempDir(), "sub", "config.yaml")
	file := func() (string, error) { return path, nil }
	b = testIO{}
	if err := runConfigPath(ctx, &configPathOptions{IO: b.stdio(), ConfigFile: file}); err != nil || b.out.String() != path+"\n" || !strings.Contains(b.err.String(), "it does not exist yet") {
		t.Fatalf("config path of a missing file: %q %q %v", b.out.String(), b.err.String(), err)
	}
	b = testIO{}
	if err := runConfigInit(ctx, &configInitOptions{IO: b.stdio(), ConfigFile: file}); err != nil || b.out.String() != "wrote "+path+"\n" || !strings.HasPrefix(b.err.String(), "Next: 'hubgate config check'") {
		t.Fatalf("config init: %q %q %v", b.out.String(), b.err.String(), err)
	}
	err := runConfigInit(ctx, &configInitOptions{IO: b.stdio(), ConfigFile: file})
	if !errors.Is(err, configs.ErrConfigExists) || exitCode(err) != ExitUsage {
		t.Fatalf("config init over a file: %v (exit %d)", err, exitCode(err))
	}
	if err := runConfigInit(ctx, &configInitOptions{IO: b.stdio(), ConfigFile: file, Force: true}); err != nil {
		t.Fatalf("config init --force: %v", err)
	}
	if _, err := os.Stat(path + ".bak"); err != nil {
		t.Errorf("--force kept no .bak: %v", err)
	}
	b = testIO{}
	if err := runConfigPath(ctx, &configPathOptions{IO: b.stdio(), ConfigFile: file}); err != nil || b.err.Len() != 0 {
		t.Errorf("config path of a file that exists: %q %v", b.err.String(), err)
	}

	b = testIO{}
	if err := runConfigDefaults(ctx, &configDefaultsOptions{IO: b.stdio()}); err != nil || !bytes.Equal(b.out.Bytes(), configs.DefaultsYAML()) {
		t.Fatalf("config defaults: %v", err)
	}

	starter, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := loadTestConfig(t, string(starter))
	b = testIO{}
	err = runConfigCheck(ctx, &configCheckOptions{IO: b.stdio(), LoadConfig: func() (*configs.Config, error) { return cfg, nil }})
	if err != nil || !strings.HasPrefix(b.out.String(), cfg.File()+": valid\n") {
		t.Fatalf("config check: %q %v", b.out.String(), err)
	}
	bad := &configError{errors.New("config.yaml: bridge.rules[0]: no match")}
	if err := runConfigCheck(ctx, &configCheckOptions{IO: b.stdio(), LoadConfig: func() (*configs.Config, error) { return nil, bad }}); exitCode(err) != ExitConfig {
		t.Errorf("config check of an invalid file: %v (exit %d)", err, exitCode(err))
	}
}

// rules test asks the paired device's type only without --device-type,
// and takes the command's receipt from the clock.
func TestRunRulesTest(t *testing.T) {
	cfg := loadTestConfig(t, "bridge:\n  unmatched:\n    action: run\n")
	load := func() (*configs.Config, error) { return cfg, nil }
	asked := 0
	paired := func() string { asked++; return "dt-1" }
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	var b testIO
	o := &rulesTestOptions{IO: b.stdio(), LoadConfig: load, PairedDeviceType: paired, Now: func() time.Time { return now },
		Command: "water the plants", JSON: true}
	if err := runRulesTest(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var res rulesTestResult
	if err := json.Unmarshal(b.out.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, b.out.String())
	}
	if res.Action != "run" || asked != 1 || !strings.Contains(b.out.String(), "water the plants") {
		t.Errorf("action %q, device type asked %d times:\n%s", res.Action, asked, b.out.String())
	}
	b = testIO{}
	o = &rulesTestOptions{IO: b.stdio(), LoadConfig: load, PairedDeviceType: paired, Now: func() time.Time { return now },
		Command: "x", DeviceTypeSet: true, Events: []string{"not json"}}
	if err := runRulesTest(context.Background(), o); exitCode(err) != ExitUsage || asked != 1 {
		t.Errorf("a bad --event: %v (exit %d); device type asked %d times", err, exitCode(err), asked)
	}
}

// fakeSystemctl is a service manager whose program only records its
// arguments; the unit goes into a private directory.
func fakeSystemctl(t *testing.T, calls *[]string) func() (*service.Manager, error) {
	dir := t.TempDir()
	return func() (*service.Manager, error) {
		return service.New(service.Config{GOOS: "linux", UserConfigDir: func() (string, error) { return dir, nil },
			LookPath: func(string) (string, error) { return "/usr/bin/systemctl", nil },
			Run: func(_ context.Context, prog string, args ...string) (string, error) {
				*calls = append(*calls, strings.Join(args, " "))
				if len(args) > 1 && args[1] == "is-active" {
					return "inactive", errors.New("exit status 3")
				}
				return "", nil
			}})
	}
}

func TestRunServiceInstallStatusUninstall(t *testing.T) {
	ctx := context.Background()
	var calls []string
	m := fakeSystemctl(t, &calls)

	var b testIO
	err := runServiceStatus(ctx, &serviceOptions{IO: b.stdio(), Manager: m})
	if exitCode(err) != ExitNotRunning || !strings.HasPrefix(b.out.String(), "not installed (") {
		t.Fatalf("status before install: %v %q", err, b.out.String())
	}
	var q *quietError
	if !errors.As(err, &q) {
		t.Errorf("status told its story, yet the error is not quiet: %v", err)
	}

	b = testIO{}
	o := &serviceInstallOptions{IO: b.stdio(), Manager: m, Executable: func() (string, error) { return "/opt/hubgate/hubgate", nil },
		ConfigPath: "/etc/hubgate.yaml", NoStart: true}
	if err := runServiceInstall(ctx, o); err != nil {
		t.Fatal(err)
	}
	mgr, _ := m()
	unit, err := os.ReadFile(mgr.File())
	if err != nil || !strings.Contains(string(unit), "/opt/hubgate/hubgate") || !strings.Contains(string(unit), "/etc/hubgate.yaml") {
		t.Fatalf("the unit does not run this binary with --config: %v\n%s", err, unit)
	}
	if !strings.Contains(b.out.String(), "enabled; it starts at your next login") || strings.Contains(strings.Join(calls, ";"), "--now") {
		t.Errorf("--no-start: %q, calls %q", b.out.String(), calls)
	}

	b = testIO{}
	if err := runServiceUninstall(ctx, &serviceOptions{IO: b.stdio(), Manager: m}); err != nil || !strings.HasPrefix(b.out.String(), "stopped, disabled and removed ") {
		t.Fatalf("uninstall: %v %q", err, b.out.String())
	}
	b = testIO{}
	if err := runServiceUninstall(ctx, &serviceOptions{IO: b.stdio(), Manager: m}); err != nil || !strings.HasPrefix(b.out.String(), "not installed (") {
		t.Fatalf("uninstall again: %v %q", err, b.out.String())
	}

	exeErr := errors.New("no /proc")
	err = runServiceInstall(ctx, &serviceInstallOptions{IO: b.stdio(), Manager: m, Executable: func() (string, error) { return "", exeErr }})
	if !errors.Is(err, exeErr) || !strings.Contains(err.Error(), "find this binary's path") {
		t.Errorf("no executable path: %v", err)
	}
}

func TestRunKeyPrintsThenRotates(t *testing.T) {
	ctx := context.Background()
	store := configs.NewMemoryStore()
	o := func(b *testIO, rotate bool) *keyOptions {
		return &keyOptions{IO: b.stdio(), LoadConfig: func() (*configs.Config, error) { return nil, errors.New("broken") },
			SecretStore: func(*configs.Config) configs.SecretStore { return store }, Rotate: rotate}
	}
	var first, again, rotated testIO
	for _, run := range []struct {
		b      *testIO
		rotate bool
	}{{&first, false}, {&again, false}, {&rotated, true}} {
		if err := runKey(ctx, o(run.b, run.rotate)); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := store.Get(ctx, configs.AccountAutomateAccessKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.out.String()) < 25 || first.out.String() != again.out.String() {
		t.Errorf("the key is not kept: %q then %q", first.out.String(), again.out.String())
	}
	if rotated.out.String() == first.out.String() || rotated.out.String() != stored+"\n" {
		t.Errorf("--rotate printed %q; the store holds %q; the old key was %q", rotated.out.String(), stored, first.out.String())
	}
}

func TestRunSecretsMigrate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "secrets.json")
	to := configs.NewMemoryStore()
	o := func(b *testIO, cfg *configs.Config) *secretsMigrateOptions {
		return &secretsMigrateOptions{IO: b.stdio(), LoadConfig: func() (*configs.Config, error) { return cfg, nil },
			Logger: (&app{stdio: b.stdio()}).logger, SecretsPath: func() (string, error) { return path, nil },
			OpenKeyring: func(context.Context, string, *slog.Logger) (configs.SecretStore, error) { return to, nil }}
	}
	var b testIO
	if err := runSecretsMigrate(ctx, o(&b, loadTestConfig(t, "secrets: file\n"))); exitCode(err) != ExitConfig || !strings.Contains(err.Error(), "'secrets: file'") {
		t.Fatalf("secrets: file: %v", err)
	}
	cfg := loadTestConfig(t, "")
	b = testIO{}
	if err := runSecretsMigrate(ctx, o(&b, cfg)); err != nil || b.err.String() != "hubgate: nothing to migrate: there is no secrets file at "+path+"\n" {
		t.Fatalf("no file: %v %q", err, b.err.String())
	}
	if err := configs.NewFileStore(path).Set(ctx, configs.AccountDeviceToken, "tok-1"); err != nil {
		t.Fatal(err)
	}
	b = testIO{}
	if err := runSecretsMigrate(ctx, o(&b, cfg)); err != nil {
		t.Fatal(err)
	}
	if v, err := to.Get(ctx, configs.AccountDeviceToken); err != nil || v != "tok-1" {
		t.Errorf("the token did not move: %q %v", v, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file is still there: %v", err)
	}
	if !strings.Contains(b.err.String(), "hubgate: moved 1 secrets (device-token) into the OS secret store and removed "+path) ||
		strings.Contains(b.err.String(), "tok-1") {
		t.Errorf("stderr:\n%s", b.err.String())
	}
}

func TestRunMcpLoginOfAnUnknownServerIsAUsageError(t *testing.T) {
	var b testIO
	cfg := loadTestConfig(t, "")
	o := &mcpLoginOptions{IO: b.stdio(), Getenv: func(string) string { return "" }, LoadConfig: func() (*configs.Config, error) { return cfg, nil },
		Logger: (&app{stdio: b.stdio()}).logger, SecretStore: func(*configs.Config, *slog.Logger) configs.SecretStore { return configs.NewMemoryStore() },
		StartBrowser: func([]string) error { t.Error("a browser was started"); return nil }, Server: "github"}
	err := runMcpLogin(context.Background(), o)
	if exitCode(err) != ExitUsage || !strings.Contains(err.Error(), `no MCP server named "github" (none are configured)`) {
		t.Fatalf("%v (exit %d)", err, exitCode(err))
	}
}

// unpair removes the local secrets and says last what the running daemon
// did (here: none runs).
func TestRunUnpairTellsTheDaemon(t *testing.T) {
	ctx := context.Background()
	store := configs.NewMemoryStore()
	if err := store.Set(ctx, configs.AccountDeviceToken, "tok"); err != nil {
		t.Fatal(err)
	}
	var b testIO
	told := 0
	o := &unpairOptions{IO: b.stdio(), LoadConfig: func() (*configs.Config, error) { return nil, errors.New("broken") },
		Env: func(*configs.Config) pairEnv {
			return pairEnv{stdio: b.stdio(), store: store, statePath: filepath.Join(t.TempDir(), "state.json"), now: time.Now}
		},
		TellDaemon: func(context.Context) controlcli.DaemonAnswer { told++; return controlcli.DaemonAnswer{} }}
	if err := runUnpairCommand(ctx, o); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(ctx, configs.AccountDeviceToken); !errors.Is(err, configs.ErrSecretNotFound) {
		t.Errorf("the device token is still stored: %v", err)
	}
	if told != 1 || !strings.HasSuffix(b.err.String(), "hubgate: no daemon is running\n") {
		t.Errorf("told %d times; stderr:\n%s", told, b.err.String())
	}
}

// pair refuses contradicting flags and a bad timeout before it loads
// anything.
func TestRunPairUsageErrorsComeFirst(t *testing.T) {
	for _, f := range []pairFlags{{reuse: true, replace: true, timeout: time.Minute}, {timeout: 0}} {
		o := &pairOptions{LoadConfig: func([]configs.Override) (*configs.Config, error) { return failLoad(t)() }, Flags: f}
		if err := runPairCommand(context.Background(), o); exitCode(err) != ExitUsage {
			t.Errorf("%+v: %v", f, err)
		}
	}
}

// serve refuses --upstream for the scripted engine after loading the
// configuration, and serves with an ephemeral key until its context
// ends: the URL on stdout, the key once on stderr.
func TestRunServe(t *testing.T) {
	dir := t.TempDir()
	load := func(ov []configs.Override) (*configs.Config, error) {
		ov = append(ov, configs.Override{Path: "automate.workspace", Value: filepath.Join(dir, "ws"), Origin: "test"},
			configs.Override{Path: "bridge.journal", Value: filepath.Join(dir, "journal.db"), Origin: "test"})
		return loadTestConfig(t, "", ov...), nil
	}
	var b testIO
	quiet := func(*configs.Config) *slog.Logger { return slog.New(slog.DiscardHandler) }
	o := &serveOptions{IO: b.stdio(), Getenv: func(string) string { return "" }, LoadConfig: load, Logger: quiet,
		SecretStore: func(*configs.Config, *slog.Logger) configs.SecretStore { return configs.NewMemoryStore() }, UpstreamSet: true}
	if err := runServe(context.Background(), o); exitCode(err) != ExitUsage || !strings.Contains(err.Error(), "--upstream applies to the openai engine") {
		t.Fatalf("--upstream with scripted: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	out := &lineWriter{lines: make(chan string, 4)}
	o = &serveOptions{IO: Stdio{Out: out, Err: &b.err}, Getenv: func(string) string { return "" }, LoadConfig: load, Logger: quiet,
		SecretStore: func(*configs.Config, *slog.Logger) configs.SecretStore { return configs.NewMemoryStore() },
		PortSet:     true, Flags: serveFlags{ephemeralKey: true}}
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, o) }()
	select {
	case url := <-out.lines:
		if !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Errorf("stdout %q, want the server's URL", url)
		}
	case err := <-done:
		t.Fatalf("serve ended: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve after its context ended: %v", err)
	}
	if !strings.HasPrefix(b.err.String(), "hubgate: access key for this process only: ") {
		t.Errorf("stderr %q", b.err.String())
	}
}

// lineWriter hands each line written to it to lines.
type lineWriter struct{ lines chan string }

func (w *lineWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.lines <- l
	}
	return len(p), nil
}
