package main

// `hubgate demo`: the main job on embedded defaults, in one process, with no
// set-up. It wires what `hubgate mock`, `hubgate pair` and `hubgate run` wire,
// but everything lives in this process and a temp dir it removes:
//
//  1. the mock remote service (hub/mockhub) on 127.0.0.1:<any port>;
//  2. pairing against it for real (OAuth authorization code with PKCE on a
//     loopback redirect, create the User Device, create its device token,
//     confirm it with a GET), the secrets kept in a configs.MemoryStore;
//  3. the daemon (bridge/daemon): the co-hosted Automate server with the scripted
//     engine on any free port, an Automate key made for this process, the
//     embedded demo rule set (bridge/rules demo.yaml), the journal and the
//     control socket in the temp dir, the hub client on the mock's hub;
//  4. once the device listens, a sample DeviceCommand pushed through the
//     mock; the narrative follows it through the journal.
//
// Choices where the issue is silent:
//   - Embedded defaults only: no config file and no HUBGATE_ environment
//     variable is read; --log-level and --log-format apply (logs go to
//     stderr, at warn unless --log-level says otherwise); --config is a usage
//     error rather than silently ignored.
//   - The "browser" of the sign-in is an in-process HTTP client that follows
//     the authorization page's redirect to the loopback callback (the mock
//     approves by itself). Nothing of the flow is printed but the endpoints:
//     the authorization address carries the state, the redirect the code.
//   - Secrets (the mock's client secret, the access and refresh tokens, the
//     device token, the Automate key) stay in memory; the narrative names
//     ids (device, token id), never a secret.
//   - The narrative (stdout) follows the bridge's event stream
//     (Bridge.Subscribe), which the bridge publishes once the journal has
//     each step: each command received, the rule and the decision, the run
//     started, parked for a client tool, the notify tool's messages,
//     finished with its status and answer; hub connection changes too.
//     Desktop notifications are off (bridge.notify: none): the narrative
//     shows every answer.
//   - --once exits after the first command is settled: 0 when its run
//     completed; otherwise (a failed or canceled run, a command not run, an
//     interruption) a *demoRunError, exit code ExitRunFailed.
//   - --json prints the narrative as JSON lines: {"time","event","message"}
//     plus the fields of the step (ids, status, answer, ...).
//   - --command replaces the sample command ("hello"), e.g. to see a rule
//     with a tool or a run that fails.
//   - A closed stdout (`hubgate demo | head`) stops the demo like a signal
//     (SIGPIPE is caught for that), with exit code 1: the temp dir is still
//     removed.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/daemon"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/localhttp"
	"github.com/hubgate/hubgate/oauth"
)

const (
	// demoStartTimeout bounds the sign-in and the wait for the device to
	// listen.
	demoStartTimeout = 60 * time.Second
	// demoDeviceName is the name of the User Device the demo creates.
	demoDeviceName = "hubgate demo"
)

// demoExamples are example commands of the embedded demo rules, by rule
// name, for the hint (a test checks that each routes to its rule).
var demoExamples = map[string]string{
	"hello":  "hello",
	"slow":   "slow report",
	"long":   "long analysis",
	"notify": "notify hi",
}

// errDemoStdout: the narrative could not be written (stdout closed); the
// demo stopped.
var errDemoStdout = errors.New("demo: stdout is closed; stopped")

// demoRunError: the first command of `demo --once` did not end in a
// completed run.
type demoRunError struct {
	CommandID int64
	Decision  journal.Decision
	Status    automate.RunStatus
	ErrorCode string
	Reason    string
}

func (e *demoRunError) Error() string {
	var what string
	switch {
	case e.Status != "":
		what = "the run ended " + string(e.Status)
		if e.ErrorCode != "" {
			what += " (" + e.ErrorCode + ")"
		}
	case e.Decision != "" && e.Decision != journal.DecisionStarted:
		what = "the command was " + string(e.Decision)
	default:
		what = "the run did not complete"
	}
	if e.Reason != "" {
		what += ": " + e.Reason
	}
	if e.CommandID > 0 {
		return fmt.Sprintf("demo: command #%d: %s", e.CommandID, what)
	}
	return "demo: " + what
}

type demoFlags struct {
	once    bool
	json    bool
	command string
}

func newDemoCommand(a *app) *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole job in this process: mock service, pairing, daemon, a sample command",
		Long: `Run the main job on embedded defaults, in one process, with no set-up:

  1. the mock remote service on 127.0.0.1 (any free port);
  2. pairing against it for real (OAuth sign-in with PKCE, the User Device,
     its device token), with every secret kept in memory only;
  3. the daemon: the co-hosted Automate server with the scripted engine, the
     demo routing rules, the journal, the hub connection;
  4. a sample DeviceCommand ("hello") pushed through the mock hub.

It prints each step and the run's answer on stdout, then stays up and says how
to push more commands with 'hubgate mock send'; each further run's answer is
printed as it finishes. Ctrl-C (SIGINT or SIGTERM) stops everything cleanly.
Nothing is kept: the journal and the workspace live in a temp dir that is
removed on exit; no config file, secret store or HUBGATE_ variable is used.
Logs go to stderr at warn level unless --log-level says otherwise.

--once exits after the first run: exit code 0 when it completed, 10 when it did
not (failed, canceled, not run).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runDemo(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.once, "once", false, "exit after the first run: 0 when it completed, 10 otherwise")
	fl.BoolVar(&f.json, "json", false, "print the narrative as JSON lines, one object per step")
	fl.StringVar(&f.command, "command", "hello", "the sample DeviceCommand pushed once the device listens")
	return cmd
}

// runDemo runs the demo until ctx ends (or, with --once, the first run).
// Everything it starts is stopped in reverse order: the daemon, the mock,
// then the temp dir is removed.
func (a *app) runDemo(ctx context.Context, f demoFlags) (err error) {
	if a.configPath != "" {
		return &usageError{errors.New("demo runs on embedded defaults and reads no config file; drop --config")}
	}
	if strings.TrimSpace(f.command) == "" {
		return &usageError{errors.New("--command must not be empty")}
	}
	dir, err := os.MkdirTemp("", "hubgate-demo-")
	if err != nil {
		return fmt.Errorf("demo: make a temp dir: %w", err)
	}
	// A closed stdout (`hubgate demo | head`) stops the demo cleanly
	// instead of killing it with SIGPIPE before it removed its temp dir.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	ctx, stopAll := context.WithCancelCause(ctx)
	defer stopAll(nil)
	n := &demoNarrator{w: a.stdio.Out, json: f.json, failed: func(werr error) {
		stopAll(fmt.Errorf("%w: %w", errDemoStdout, werr))
	}}
	defer func() {
		if c := context.Cause(ctx); errors.Is(c, errDemoStdout) {
			err = c
		}
	}()
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil {
			if err == nil {
				err = fmt.Errorf("demo: remove %s: %w", dir, rerr)
			}
			return
		}
		n.say("removed", map[string]any{"tempDir": dir}, "removed %s", dir)
	}()
	cfg, err := demoConfig(dir, a.logLevel, a.logFormat)
	if err != nil {
		return err
	}
	log := a.logger(cfg)
	n.say("start", map[string]any{"tempDir": dir},
		"hubgate demo: the main job in this one process; secrets stay in memory, files in %s (removed on exit)", dir)

	// 1. The mock remote service.
	mock, base, stopMock, err := startDemoMock(log)
	if err != nil {
		return err
	}
	defer func() {
		stopMock()
		n.say("mock-stopped", nil, "stopped the mock remote service")
	}()
	n.say("mock", map[string]any{"mockUrl": base},
		"1. mock remote service at %s (OAuth sign-in, device REST routes, SignalR hub at /device, admin API at /mock)", base)

	// 2. Pairing, secrets in memory.
	store := configs.NewMemoryStore()
	startCtx, cancelStart := context.WithTimeout(ctx, demoStartTimeout)
	dev, err := demoPair(startCtx, n, log, base, mock.Config(), store)
	cancelStart()
	if err != nil {
		if ctx.Err() != nil {
			return f.interrupted(0)
		}
		return err
	}

	// 3. The daemon.
	key, err := configs.GenerateAccessKey()
	if err != nil {
		return err
	}
	if err := store.Set(ctx, configs.AccountAutomateAccessKey, key); err != nil {
		return err
	}
	n.say("daemon", nil, "3. starting the daemon in this process, as 'hubgate run' does")
	engine, err := cohostedEngine(cfg, func(string) string { return "" }, log)
	if err != nil {
		return err
	}
	if engine != nil {
		defer engine.close()
	}
	daemonCtx, stopDaemon := context.WithCancel(ctx)
	readyCh := make(chan daemon.Info, 1)
	daemonDone := make(chan error, 1)
	var printers sync.WaitGroup
	first := make(chan demoOutcome, 1)
	fw := &demoFollower{n: n, first: first}
	opts, err := daemonOptions(cfg, daemonParams{
		deviceID: dev.ID,
		apiURL:   base,
		deviceToken: func(ctx context.Context) (string, error) {
			return store.Get(ctx, configs.AccountDeviceToken)
		},
		automateKey:  key,
		engine:       engine,
		automatePort: -1,
		deviceTypeID: mock.Config().DeviceTypeID,
	}, log)
	if err != nil {
		stopDaemon()
		return err
	}
	opts.Ready = func(i daemon.Info) { readyCh <- i }
	d, err := daemon.New(opts)
	if err != nil {
		stopDaemon()
		return err
	}
	go func() { daemonDone <- d.Run(daemonCtx) }()
	daemonRunning := true
	defer func() {
		stopDaemon()
		if daemonRunning {
			if derr := <-daemonDone; derr != nil && !errors.Is(derr, context.Canceled) && err == nil {
				err = derr
			}
		}
		printers.Wait()
		n.say("daemon-stopped", nil, "stopped the daemon (DeviceStoppedListening sent, journal closed) and its Automate server")
	}()
	// daemonEnded turns an early end of the daemon into the error to return.
	daemonEnded := func(derr error) error {
		daemonRunning = false
		if ctx.Err() != nil {
			return f.interrupted(0)
		}
		if derr == nil {
			derr = errors.New("it returned without being asked to stop")
		}
		return fmt.Errorf("demo: the daemon stopped: %w", derr)
	}

	var info daemon.Info
	select {
	case info = <-readyCh:
	case derr := <-daemonDone:
		return daemonEnded(derr)
	}
	set, err := cfg.Bridge.RuleSet()
	if err != nil {
		return err
	}
	n.say("automate", map[string]any{"automateUrl": info.AutomateURL},
		"   Automate server (scripted engine) at %s; its access key exists in this process only", info.AutomateURL)
	n.say("journal", map[string]any{"journal": cfg.Bridge.Journal}, "   journal: %s", cfg.Bridge.Journal)
	n.say("rules", map[string]any{"rules": demoRuleNames(set)}, "   routing rules (the embedded demo set): %s", strings.Join(demoRuleNames(set), ", "))

	// Hub states until listening, then in the background.
	states := info.Hub.Subscribe(daemonCtx)
	listenTimer := time.NewTimer(demoStartTimeout)
	defer listenTimer.Stop()
	var last hub.State
	for listening := false; !listening; {
		select {
		case st, ok := <-states:
			if !ok {
				return daemonEnded(<-daemonDone)
			}
			if st.Status != last.Status || st.Reason != last.Reason {
				n.say("hub", map[string]any{"hub": string(st.Status), "reason": st.Reason}, "   hub: %s", st)
			}
			last = st
			listening = st.Status == hub.StatusListening
		case derr := <-daemonDone:
			return daemonEnded(derr)
		case <-listenTimer.C:
			return fmt.Errorf("demo: the device did not start listening within %s (hub: %s)", demoStartTimeout, last)
		}
	}
	if err := demoWaitListening(ctx, mock, dev.ID, listenTimer.C); err != nil {
		if ctx.Err() != nil {
			return f.interrupted(0)
		}
		return err
	}
	n.say("listening", map[string]any{"deviceId": dev.ID},
		"   the mock sees device %s connected, verified and listening", dev.ID)
	printers.Add(1)
	go func() {
		defer printers.Done()
		for st := range states {
			if st.Status != last.Status || st.Reason != last.Reason {
				n.say("hub", map[string]any{"hub": string(st.Status), "reason": st.Reason}, "[hub] %s", st)
			}
			last = st
		}
	}()

	// 4. The sample command, followed through the bridge's event stream.
	events := info.Bridge.Subscribe(daemonCtx, bridge.SubscribeOptions{Buffer: 4096})
	printers.Add(1)
	go func() {
		defer printers.Done()
		fw.follow(events)
	}()
	n.say("push", map[string]any{"command": f.command},
		"4. pushing DeviceCommand %q through the mock hub, as the app does when you press a button", f.command)
	if err := mock.PushCommand(dev.ID, f.command, nil); err != nil {
		return fmt.Errorf("demo: push the sample command: %w", err)
	}
	var firstEntry demoOutcome
	select {
	case firstEntry = <-first:
	case derr := <-daemonDone:
		return daemonEnded(derr)
	case <-ctx.Done():
		return f.interrupted(0)
	}
	if f.once {
		if firstEntry.Status == automate.StatusCompleted {
			return nil
		}
		return &demoRunError{CommandID: firstEntry.ID, Decision: firstEntry.Decision, Status: firstEntry.Status,
			ErrorCode: firstEntry.ErrorCode, Reason: firstEntry.Reason}
	}

	// 5. Stay up.
	demoHint(n, demoInvocation(), base, dev.ID, dir, set)
	select {
	case <-ctx.Done():
		n.say("stopping", nil, "stopping")
		return nil
	case derr := <-daemonDone:
		return daemonEnded(derr)
	}
}

// interrupted is the result of a demo stopped by a signal before it was
// done: nothing wrong, unless --once still waited for its run.
func (f demoFlags) interrupted(id int64) error {
	if f.once {
		return &demoRunError{CommandID: id, Reason: "interrupted before the run finished"}
	}
	return nil
}

// demoConfig loads the embedded defaults with the demo rule set, the
// journal, the control socket and the workspace in dir, logs at warn; the
// log flags apply. No config file or environment variable is read (the
// file written to dir is the demo's own).
func demoConfig(dir, logLevel, logFormat string) (*configs.Config, error) {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var b strings.Builder
	b.WriteString("# hubgate demo: generated, removed on exit\n")
	b.WriteString("log:\n  level: warn\n")
	fmt.Fprintf(&b, "automate:\n  target: cohosted\n  engine: scripted\n  workspace: %s\n", q(filepath.Join(dir, "workspace")))
	b.WriteString("bridge:\n")
	for _, line := range strings.Split(string(rules.DemoYAML()), "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  journal: %s\n  control_socket: %s\n", q(filepath.Join(dir, "journal.db")), q(filepath.Join(dir, "control.sock")))
	// The narrative shows every answer; desktop notifications stay off.
	b.WriteString("  notify: none\n")
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return nil, fmt.Errorf("demo: write its configuration: %w", err)
	}
	var overrides []configs.Override
	if logLevel != "" {
		overrides = append(overrides, configs.Override{Path: "log.level", Value: logLevel, Origin: "flag --log-level"})
	}
	if logFormat != "" {
		overrides = append(overrides, configs.Override{Path: "log.format", Value: logFormat, Origin: "flag --log-format"})
	}
	return configs.Load(configs.LoadOptions{
		Path:          path,
		Env:           func(string) string { return "" },
		Overrides:     overrides,
		UserConfigDir: func() (string, error) { return dir, nil },
		HomeDir:       func() (string, error) { return dir, nil },
	})
}

// startDemoMock serves a mock remote service on 127.0.0.1:0.
func startDemoMock(log *slog.Logger) (*mockhub.Server, string, func(), error) {
	srv, err := mockhub.New(mockhub.Config{Logger: log.With("component", "mock")})
	if err != nil {
		return nil, "", nil, err
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, "", nil, fmt.Errorf("demo: mock: %w", err)
	}
	base := "http://" + ln.Addr().String()
	serving := localhttp.Serve(srv.NewHTTPServer(), ln)
	go func() {
		<-serving.Done()
		if err := serving.Err(); err != nil {
			log.Error("mock server", "err", err)
		}
	}()
	stop := func() {
		srv.Close()
		_ = serving.Stop(context.Background(), 10*time.Second)
	}
	return srv, base, stop, nil
}

// demoPair pairs a new User Device with the mock as `hubgate pair` does
// (package pairing), keeping the refresh token and the device token in
// store.
func demoPair(ctx context.Context, n *demoNarrator, log *slog.Logger, base string, mc mockhub.Config, store configs.SecretStore) (*deviceapi.UserDevice, error) {
	httpClient := &http.Client{Timeout: 30 * time.Second}
	n.say("pair", nil, "2. pairing, as 'hubgate pair' does, with every secret kept in memory")

	loginCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	browser := func(u string) error {
		go func() {
			// Follows the redirect to the loopback callback, like a browser.
			resp, err := httpClient.Get(u)
			if err != nil {
				var ue *url.Error
				if errors.As(err, &ue) {
					err = ue.Err // the URL carries the state or the code
				}
				cancel(fmt.Errorf("the in-process browser could not load the sign-in pages: %w", err))
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
		return nil
	}
	res, err := pairing.Pair(loginCtx, pairing.Options{
		OAuth: oauth.Config{APIURL: base, ClientID: mc.ClientID, // no secret, as the vendor's clients
			HTTPClient: httpClient, Logger: log.With("component", "oauth")},
		Login: oauth.LoginOptions{Out: io.Discard, OpenBrowser: browser,
			Getenv: func(string) string { return "" }, Timeout: demoStartTimeout},
		DeviceTypeID: mc.DeviceTypeID,
		DeviceName:   demoDeviceName,
		UserAgent:    "hubgate/" + version() + " (demo)",
		Progress: func(p pairing.Progress) {
			switch p.Step {
			case pairing.StepSignIn:
				n.say("sign-in", p.Fields, "   signing in at %s; an in-process client plays the browser and the mock approves", p.Fields["authUrl"])
			case pairing.StepSignedIn:
				n.say("signed-in", p.Fields, "   signed in: the code was exchanged at %s for an access and a refresh token (in memory)", p.Fields["tokenUrl"])
			case pairing.StepDevice:
				if _, ok := p.Fields["deviceId"]; ok {
					n.say("device", p.Fields, "   created User Device %s (%q, device type %s)", p.Fields["deviceId"], demoDeviceName, mc.DeviceTypeID)
				}
			case pairing.StepDeviceToken:
				n.say("device-token", p.Fields, "   created device token %s (the token itself stays in memory)", p.Fields["tokenId"])
			case pairing.StepConfirmed:
				n.say("confirmed", p.Fields, "   confirmed: GET /api/Device/userDevices/%s answers the device (not yet connected)", p.Fields["deviceId"])
			}
		},
	})
	if err != nil {
		if c := context.Cause(loginCtx); c != nil && ctx.Err() == nil {
			err = c
		}
		return nil, fmt.Errorf("demo: %w", err)
	}
	// Nothing is paired in the demo's memory store: the secrets take the
	// base account names; there is no state file to commit.
	if _, _, err := res.Commit(ctx, pairing.CommitOptions{
		Store: store, NotFound: configs.ErrSecretNotFound,
		RefreshTokenAccount: configs.AccountOAuthRefreshToken, DeviceTokenAccount: configs.AccountDeviceToken,
		Committed: pairing.SlotB, Save: func(string) error { return nil },
	}); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	return res.Device, nil
}

// demoWaitListening polls the mock until it sees the device listening.
func demoWaitListening(ctx context.Context, mock *mockhub.Server, id string, timeout <-chan time.Time) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if d, ok := mock.Device(id); ok && d.IsConnected && d.IsVerified && d.IsListening {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout:
			return fmt.Errorf("demo: the mock did not see device %s listening within %s", id, demoStartTimeout)
		case <-tick.C:
		}
	}
}

func demoRuleNames(set *rules.Set) []string {
	var names []string
	for _, r := range set.Rules() {
		names = append(names, r.Name())
	}
	if _, ok := set.Unmatched(rules.Command{}); ok {
		names = append(names, "anything else: run as the prompt")
	}
	return names
}

// demoInvocation is how the person runs hubgate: "go run ./cmd/hubgate"
// when this binary was built by go run, else "hubgate".
func demoInvocation() string {
	if exe, err := os.Executable(); err == nil && strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "go run ./cmd/hubgate"
	}
	return "hubgate"
}

// demoShellQuote quotes s for a POSIX shell when it needs it: in double
// quotes when nothing in it is special there, else in single quotes.
func demoShellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r))
	}) {
		return s
	}
	if !strings.ContainsAny(s, "\"$`\\!\n") {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// demoHint says how to push more commands, with the rules' commands.
func demoHint(n *demoNarrator, bin, base, deviceID, dir string, set *rules.Set) {
	send := fmt.Sprintf("%s mock send --url %s --device %s", bin, base, deviceID)
	example := demoExamples["notify"]
	n.say("hint", map[string]any{"mockUrl": base, "deviceId": deviceID, "send": send + " --command " + demoShellQuote(example)},
		"\nThe demo keeps running. Push more commands from another terminal; each run's answer is printed here:\n  %s --command %s",
		send, demoShellQuote(example))
	var lines []string
	for _, r := range set.Rules() {
		spec := r.Spec()
		desc := fmt.Sprintf("rule %q: %s", r.Name(), demoDescribeMatch(spec.Match))
		switch r.Busy() {
		case rules.BusyQueue:
			desc += fmt.Sprintf("; busy: queue (at most %d waiting)", r.QueueLimit())
		case rules.BusyRestart:
			desc += "; busy: restart (a new one cancels the run in flight)"
		}
		switch ex, ok := demoExamples[r.Name()]; {
		case ok:
			lines = append(lines, fmt.Sprintf("  --command %-16s %s", demoShellQuote(ex), desc))
		case spec.Match.EventType != "" || spec.Match.CustomAction != "":
			command, event := demoEventExample(spec.Match)
			what := fmt.Sprintf("a macro with a %s event", spec.Match.EventType)
			if spec.Match.CustomAction != "" {
				what = fmt.Sprintf("a custom action %q with its content", spec.Match.CustomAction)
			}
			lines = append(lines, fmt.Sprintf("  %s (%s):\n    %s --command %s --event %s", what, desc, send, command, demoShellQuote(event)))
		default:
			lines = append(lines, "  "+desc)
		}
	}
	if _, ok := set.Unmatched(rules.Command{Text: "x"}); ok {
		lines = append(lines, "  any other --command       runs with its text as the prompt (the scripted engine answers \"Done: <text>\")")
	}
	n.say("rules-hint", map[string]any{"rules": demoRuleNames(set)}, "Commands of the demo rules:\n%s", strings.Join(lines, "\n"))
	n.say("more-hint", nil, "Also: %s mock devices --url %s; %s mock stop-listening / start-listening --url %s --device %s\nCtrl-C stops the demo and removes %s.",
		bin, base, bin, base, deviceID, dir)
}

// demoEventExample is a command and the JSON of a macro event, as the
// real app sends them, that a rule matching on events routes, for `mock
// send --command C --event E`: a custom action with its content, a Type
// event with its phrase, or an event of the type.
func demoEventExample(m rules.MatchSpec) (command, event string) {
	switch {
	case m.CustomAction != "":
		b, _ := json.Marshal(deviceapi.MacroEvent{EventType: deviceapi.EventDeviceTypeCustomAction,
			DeviceTypeCustomActionID: &m.CustomAction, AdditionalInputContent: ptrTo("what is on my calendar")})
		return "ask", string(b)
	case deviceapi.SameEventType(m.EventType, deviceapi.EventType):
		return "typing", `{"eventType":"Type","typedPhrase":"hi there"}`
	}
	b, _ := json.Marshal(map[string]string{"eventType": m.EventType})
	return "typing", string(b)
}

func ptrTo[T any](v T) *T { return &v }

// demoDescribeMatch renders a rule's criteria.
func demoDescribeMatch(m rules.MatchSpec) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, fmt.Sprintf("%s %q", k, v))
		}
	}
	add("command", m.Command)
	add("command_glob", m.CommandGlob)
	add("command_regex", m.CommandRegex)
	add("macro_name", m.MacroName)
	add("macro_id", m.MacroID)
	add("event_type", m.EventType)
	add("custom_action", m.CustomAction)
	return strings.Join(parts, ", ")
}

// ---- the narrative -----------------------------------------------------------

// demoNarrator prints the demo's narrative on stdout, as text or JSON lines;
// it is safe for concurrent use.
type demoNarrator struct {
	mu   sync.Mutex
	w    io.Writer
	json bool
	now  func() time.Time // nil: time.Now
	// failed is called once with the first write error; later steps are
	// not written. Zero: write errors are ignored.
	failed func(error)
	broken bool
}

// say prints one step: the formatted message, or (JSON) an object with the
// event name, the message and fields.
func (n *demoNarrator) say(event string, fields map[string]any, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.broken {
		return
	}
	if !n.json {
		n.write([]byte(msg + "\n"))
		return
	}
	now := time.Now
	if n.now != nil {
		now = n.now
	}
	obj := map[string]any{}
	for k, v := range fields {
		obj[k] = v
	}
	obj["time"] = now().UTC().Format(time.RFC3339Nano)
	obj["event"] = event
	obj["message"] = strings.TrimSpace(msg)
	b, err := json.Marshal(obj)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"event": event, "message": strings.TrimSpace(msg)})
	}
	n.write(append(b, '\n'))
}

// write writes b, noting the first failure (n.mu is held).
func (n *demoNarrator) write(b []byte) {
	if _, err := n.w.Write(b); err != nil {
		n.broken = true
		if n.failed != nil {
			n.failed(err)
		}
	}
}

// demoOutcome is how the first command ended (for --once).
type demoOutcome struct {
	ID        int64
	Decision  journal.Decision
	Status    automate.RunStatus
	ErrorCode string
	Reason    string
}

// demoFollower prints the bridge's event stream (bridge.Subscribe), each
// step of each command as it happens. It is used from one goroutine.
type demoFollower struct {
	n *demoNarrator
	// first receives how the first command ended (a buffered channel: it
	// is sent once).
	first chan<- demoOutcome

	decisions map[int64]journal.Decision // the last decision printed per command
	firstID   int64                      // the first command seen; 0 before any
	settled   bool                       // the first command is settled (reported)
}

// follow prints events until the channel closes.
func (f *demoFollower) follow(events <-chan bridge.Event) {
	for e := range events {
		f.observe(e)
	}
}

// observe prints one event and reports the first command once settled.
func (f *demoFollower) observe(e bridge.Event) {
	if f.decisions == nil {
		f.decisions = map[int64]journal.Decision{}
	}
	if e.CommandID != 0 && f.firstID == 0 && e.Kind == control.EventReceived {
		f.firstID = e.CommandID
	}
	tag := fmt.Sprintf("[#%d]", e.CommandID)
	with := func(kv ...any) map[string]any {
		m := map[string]any{"commandId": e.CommandID, "command": e.Command}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	settled := false
	switch e.Kind {
	case control.EventReceived:
		macro := ""
		if e.MacroName != "" && e.MacroName != e.Command {
			macro = fmt.Sprintf(" (macro %q)", e.MacroName)
		}
		f.n.say("received", with("macroName", e.MacroName), "%s received DeviceCommand %q%s", tag, e.Command, macro)
	case control.EventDecided:
		prev := f.decisions[e.CommandID]
		f.decisions[e.CommandID] = e.Decision
		rule := "no rule matched"
		if e.Rule == rules.UnmatchedRuleName {
			rule = "no rule matched, the unmatched action"
		} else if e.Rule != "" {
			rule = fmt.Sprintf("rule %q matched", e.Rule)
		}
		what := string(e.Decision)
		if prev == journal.DecisionQueued && e.Decision == journal.DecisionStarted {
			what = "its turn came: started"
		}
		note := ""
		if e.Note != "" && e.Decision != journal.DecisionStarted {
			note = ": " + e.Note
		}
		f.n.say("decision", with("rule", e.Rule, "decision", string(e.Decision), "note", e.Note), "%s %s: %s%s", tag, rule, what, note)
		settled = e.Decision != journal.DecisionStarted && e.Decision != journal.DecisionQueued
	case control.EventStarted:
		task := ""
		if e.TaskID != "" {
			task = " (task " + e.TaskID + ")"
		}
		f.n.say("run-started", with("taskId", e.TaskID), "%s run started on the Automate server%s", tag, task)
	case control.EventParked:
		f.n.say("run-parked", with("requestId", e.RequestID), "%s run parked: it called a client tool that hubgate executes", tag)
	case control.EventNotify:
		fields := map[string]any{"message": e.Message, "level": e.Level}
		if e.CommandID != 0 {
			fields["commandId"] = e.CommandID
			f.n.say("notify", fields, "%s notify: %s", tag, e.Message)
		} else {
			f.n.say("notify", fields, "[notify] %s", e.Message)
		}
	case control.EventFinished:
		settled = true
		switch {
		case e.Status == "":
			f.n.say("run-failed", with("error", e.Error), "%s the run request failed: %s", tag, e.Error)
		default:
			code := ""
			if e.ErrorCode != "" {
				code = " (" + e.ErrorCode + ")"
			}
			f.n.say("run-finished", with("status", string(e.Status), "errorCode", e.ErrorCode, "durationMs", e.DurationMs, "requestId", e.RequestID),
				"%s run finished: %s%s in %s", tag, e.Status, code, demoMillis(e.DurationMs))
			if e.Answer != "" {
				f.n.say("answer", with("answer", e.Answer), "%s answer: %s", tag, demoIndent(e.Answer))
			}
			if e.FinalAnswer != nil && *e.FinalAnswer != e.Answer {
				f.n.say("final-answer", with("finalAnswer", *e.FinalAnswer), "%s final answer: %s", tag, demoIndent(*e.FinalAnswer))
			}
		}
	}
	if settled && e.CommandID == f.firstID && !f.settled {
		f.settled = true
		if f.first != nil {
			out := demoOutcome{ID: e.CommandID, Decision: f.decisions[e.CommandID], Status: e.Status, ErrorCode: e.ErrorCode, Reason: e.Error}
			if e.Kind == control.EventDecided {
				out.Reason = e.Note
			}
			f.first <- out
		}
	}
}

// demoMillis renders a duration in ms.
func demoMillis(ms int64) string {
	if ms < 1 {
		return "under 1 ms"
	}
	return fmt.Sprintf("%d ms", ms)
}

// demoIndent indents the continuation lines of a multi-line text.
func demoIndent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n      ")
}
