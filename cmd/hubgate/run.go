package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/daemon"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub"
	"github.com/hubgate/hubgate/internal/proc"
)

// EnvDeviceToken supplies the hub device token for headless use; when set
// it wins over the secret store.
const EnvDeviceToken = "HUBGATE_DEVICE_TOKEN"

// EnvDeviceID names the device of EnvDeviceToken, so that run needs no
// pairing on this machine (no state file): the api url and device type
// then come from the configuration (remote.api_url, remote.device_type_id,
// or their HUBGATE_ variables). When set it wins over the state file.
const EnvDeviceID = "HUBGATE_DEVICE_ID"

// errNotPaired: `run` needs a paired device.
var errNotPaired = errors.New("no paired device: run 'hubgate pair' first")

// runOptions are `run`'s options: what the daemon's start reads of the
// world, each replaceable by a test.
type runOptions struct {
	// LoadConfig loads and validates the configuration (again at each
	// SIGHUP).
	LoadConfig func(overrides []configs.Override) (*configs.Config, error)
	Logger     func(cfg *configs.Config) *slog.Logger
	// DenyInspection makes the process non-dumpable; nil: nothing.
	DenyInspection func(log *slog.Logger)
	// Inputs resolves the paired device, its token source, the access key
	// and the co-hosted engine (app.daemonInputs).
	Inputs func(ctx context.Context, cfg *configs.Config, log *slog.Logger) (daemonParams, *pairing.Follower, error)
	// Signals subscribes to the process's signals (Process.Signals):
	// SIGINT and SIGTERM stop the daemon, SIGHUP reloads it.
	Signals func(c chan<- os.Signal, sigs ...os.Signal) (stop func())
}

func newRunCommand(a *app) *cobra.Command { return newCmdRun(a, nil) }

// newCmdRun builds run; runF (nil: runDaemon) gets the options.
func newCmdRun(a *app, runF func(context.Context, *runOptions) error) *cobra.Command {
	o := &runOptions{LoadConfig: a.loadConfig, Logger: a.logger, DenyInspection: denyInspection, Inputs: a.daemonInputs, Signals: a.signals}
	return &cobra.Command{
		Use: "run",
		Example: `  hubgate run                      # the daemon in the foreground; Ctrl-C stops it
  hubgate run --log-level debug    # with every hub frame and decision in the log
  systemctl --user reload hubgate  # re-read the rules of the installed service (SIGHUP)`,
		Short: "Run the daemon: hold the hub connection and turn commands into runs",
		Long: `Run the daemon in the foreground with structured logs on stderr.

It connects the paired device to its hub, serves the Automate server in this
process (automate.target: cohosted, the default) or finds the desktop
application's (external), and maps each command the hub delivers onto a run by
the routing rules of the bridge section. Every command and run is journaled.
SIGINT or SIGTERM stop it cleanly: DeviceStoppedListening is sent, the current
run is cancelled or left (bridge.on_shutdown), the journal is closed; it says
how long it waits for the run in flight, and a second SIGINT stops it at once
(the run is terminated). SIGHUP re-reads the configuration file: the routing
rules and command tools change for the next commands, without dropping the hub
connection or the run in flight; a file that does not load is refused with the
reason, and the running configuration stays. Only one daemon runs per user (per
control socket): a second one exits at once, naming the first one's PID.

Secrets come from the OS secret store, or where none can be reached from the
private file $XDG_CONFIG_HOME/hubgate/secrets.json (plain text, mode 0600; the
setting 'secrets: auto | keyring | file' chooses, see 'hubgate secrets').
HUBGATE_DEVICE_TOKEN and HUBGATE_AUTOMATE_KEY override them for headless use;
with HUBGATE_DEVICE_ID beside HUBGATE_DEVICE_TOKEN, run needs no pairing on
this machine (the api url and device type come from the configuration). When
the hub identifies the device token as another device than the paired one
(VerifySelf), run stops and exits 11: pair again.

The daemon runs its Go code on one thread at a time (GOMAXPROCS=1): its work is
waiting on sockets. The GOMAXPROCS environment variable overrides that.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runDaemon, o) },
	}
}

// runDaemon runs the daemon until ctx ends, a signal stops it or its hub
// stops.
func runDaemon(ctx context.Context, o *runOptions) error {
	cfg, err := o.LoadConfig(nil)
	if err != nil {
		return err
	}
	log := o.Logger(cfg)
	if o.DenyInspection != nil {
		o.DenyInspection(log)
	}
	// One daemon per user, checked before anything else: a second run says
	// so (exit 5), whatever the keyring or the engine's upstream would
	// have said. The daemon releases it at Close.
	lock, err := daemon.Lock(cfg.Bridge.ControlSocket)
	if err != nil {
		return alreadyRunning(err)
	}
	handed := false // to the daemon, which releases it at Close
	defer func() {
		if !handed {
			lock.Release()
		}
	}()
	p, follow, err := o.Inputs(ctx, cfg, log)
	if err != nil {
		return err
	}
	if p.engine != nil {
		defer p.engine.Close()
	}
	opts, err := daemonOptions(cfg, p, log)
	if err != nil {
		return err
	}
	if follow != nil { // else HUBGATE_DEVICE_ID: the device stays the environment's
		opts.Pairing = rereadPairing(follow)
	}
	opts.Lock = lock
	d, err := daemon.New(opts)
	if err != nil {
		return err
	}
	handed = true
	reload := func() { cfg = reloadDaemon(o.LoadConfig, d, cfg, p, log) }
	if hint := opts.Rules.NoRunHint(cfg.File()); hint != "" {
		log.Warn(hint)
	}
	sigs := make(chan os.Signal, 4)
	if o.Signals != nil {
		defer o.Signals(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)()
	}
	if err := daemon.Supervise(ctx, d, sigs, reload, log); err != nil {
		return alreadyRunning(err)
	}
	return d.WrongDevice()
}

// daemonInputs resolves what the daemon needs beyond the configuration:
// the paired device (the state file), its token source, the Automate
// access key and the co-hosted engine (the caller closes it).
func (a *app) daemonInputs(ctx context.Context, cfg *configs.Config, log *slog.Logger) (daemonParams, *pairing.Follower, error) {
	state, envDevice, err := a.pairedDevice(cfg)
	if err != nil {
		return daemonParams{}, nil, err
	}
	store := a.secretStore(cfg, log, func(l string) { log.Warn(l) })
	key, _, err := configs.AutomateKey(ctx, store, a.getenv)
	if err != nil {
		return daemonParams{}, nil, fmt.Errorf("the Automate access key: %w", err)
	}
	engine, err := cohostedEngine(cfg, store, a.getenv, log)
	if err != nil {
		return daemonParams{}, nil, err
	}
	var follow *pairing.Follower
	if !envDevice {
		path, err := a.statePath()
		if err != nil {
			return daemonParams{}, nil, err
		}
		follow = pairing.NewFollower(store, path, state.DeviceID)
	}
	return daemonParams{deviceID: state.DeviceID, deviceTypeID: state.DeviceTypeID, apiURL: state.APIURL,
		deviceToken: a.deviceToken(follow), automateKey: key, engine: engine}, follow, nil
}

// pairedDevice is the device run connects: HUBGATE_DEVICE_ID's (with
// HUBGATE_DEVICE_TOKEN, and the configuration's api url and device type;
// envDevice true), else the state file's.
func (a *app) pairedDevice(cfg *configs.Config) (st *pairing.State, envDevice bool, err error) {
	id, tok := a.getenv(EnvDeviceID), a.getenv(EnvDeviceToken)
	if id != "" {
		switch {
		case tok == "":
			return nil, false, &configError{fmt.Errorf("%s is set without %s: set both to run without a pairing on this machine", EnvDeviceID, EnvDeviceToken)}
		case cfg.Remote.APIURL == "":
			return nil, false, &configError{fmt.Errorf("%s is set, but no api url is configured: set HUBGATE_API_URL or remote.api_url", EnvDeviceID)}
		}
		return &pairing.State{DeviceID: id, APIURL: cfg.Remote.APIURL, DeviceTypeID: cfg.Remote.DeviceTypeID}, true, nil
	}
	path, err := a.statePath()
	if err != nil {
		return nil, false, err
	}
	st, err = pairing.LoadState(path)
	if errors.Is(err, pairing.ErrNoState) {
		if tok != "" {
			return nil, false, fmt.Errorf("%w (or set %s beside %s)", errNotPaired, EnvDeviceID, EnvDeviceToken)
		}
		return nil, false, errNotPaired
	}
	return st, false, err
}

// alreadyRunning says what to do about another daemon holding the
// instance lock; other errors pass unchanged.
func alreadyRunning(err error) error {
	if errors.Is(err, control.ErrAlreadyRunning) {
		return fmt.Errorf("%w; hubgate runs once per user: stop that one first ('hubgate service status' if it runs as a service), or give this one another bridge.control_socket", err)
	}
	return err
}

// reloadDaemon loads the configuration again (load) and applies it to d:
// it returns the new configuration, or cur when the new file was refused.
func reloadDaemon(load func([]configs.Override) (*configs.Config, error), d *daemon.Daemon, cur *configs.Config, p daemonParams, log *slog.Logger) *configs.Config {
	refused := func(err error) *configs.Config {
		d.ReportReload(cur.File(), nil, nil, err)
		return cur
	}
	cfg, err := load(nil)
	if err != nil {
		return refused(err)
	}
	opts, err := daemonOptions(cfg, p, log)
	if err != nil {
		return refused(err)
	}
	changed, restart, err := d.Reload(opts)
	if err != nil {
		return refused(err)
	}
	restart = append(restart, outsideDaemonOptions(configs.Changed(cur, cfg))...)
	d.ReportReload(cfg.File(), changed, restart, nil)
	if hint := opts.Rules.NoRunHint(cfg.File()); hint != "" {
		log.Warn(hint)
	}
	return cfg
}

// outsideDaemonOptions are the changed settings (configs.Changed) that
// the daemon's options do not carry and that apply only after a restart:
// the co-hosted engine (automate.engine, models_file, openai.*), the
// logger (log.*) and the secret store (secrets: opened once at start).
// The remote section is read by `hubgate pair`, not by
// the daemon (it runs with the pairing's API URL): not named.
func outsideDaemonOptions(changed []string) []string {
	var out []string
	for _, path := range changed {
		if strings.HasPrefix(path, "log.") || path == "automate.engine" || path == "automate.models_file" ||
			strings.HasPrefix(path, "automate.openai.") || path == "secrets" {
			out = append(out, path)
		}
	}
	return out
}

// denyInspection keeps the daemon's and the Automate server's secrets
// (the access key, the device token: in their environment and memory) from
// the commands of their runs, which run as the same user: see
// proc.DenyInspection for the trade-off (no core dumps).
func denyInspection(log *slog.Logger) {
	if err := proc.DenyInspection(); err != nil {
		log.Warn("could not make this process non-dumpable; a run's command may read its environment", "err", err)
	}
}

// isDaemon says whether args run the daemon (`hubgate [flags] run`).
func isDaemon(args []string) bool {
	_, ok := daemonTree(&app{getenv: os.Getenv}, args)
	return ok
}

// commandTree is the command tree Run runs args with: for the daemon
// the root with only `run` beneath it (the daemon builds no command it
// cannot run: what it allocates and runs at start stays in its idle
// memory), else the whole tree.
func commandTree(a *app, args []string) *cobra.Command {
	if root, ok := daemonTree(a, args); ok {
		return root
	}
	return newRootCommand(a)
}

// daemonTree is the root with the global flags and only `run` beneath
// it, and whether args select run in it (cobra finds any other command
// unknown there).
func daemonTree(a *app, args []string) (*cobra.Command, bool) {
	root := newBareRoot(a)
	run := newRunCommand(a)
	root.AddCommand(run)
	c, _, err := root.Find(args)
	return root, err == nil && c == run
}

// useOneProc gives the daemon one P unless GOMAXPROCS is set. Its work is
// I/O: the hub socket, the journal's small writes, the POST to an Automate
// server whose engine waits on a model server. With one P a hub event goes
// from goroutine to goroutine (hub reader, dispatcher, bridge, runner, HTTP
// client) on one thread, where with two each hop may also wake an idle
// thread: BenchmarkHubPushToRunRequest shows the gain (figures in
// docs/performance.md). main calls it before anything else: set later it
// costs more idle memory.
func useOneProc() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// deviceToken is the device token of the followed device
// (pairing.Follower), or EnvDeviceToken's when set (always, when follow
// is nil: HUBGATE_DEVICE_ID).
func (a *app) deviceToken(follow *pairing.Follower) hub.TokenSource {
	return func(ctx context.Context) (string, error) {
		if v := a.getenv(EnvDeviceToken); v != "" || follow == nil {
			if v == "" {
				return "", fmt.Errorf("%s is empty: it must hold the device token of %s", EnvDeviceToken, EnvDeviceID)
			}
			return v, nil
		}
		tok, err := follow.DeviceToken(ctx)
		if err != nil {
			return "", fmt.Errorf("%w (set %s to run without the secret store)", err, EnvDeviceToken)
		}
		return tok, nil
	}
}

// rereadPairing is daemon.Options.Pairing: the paired device as the state
// file now says; none is daemon.ErrUnpaired.
func rereadPairing(follow *pairing.Follower) func(context.Context) (string, string, error) {
	return func(ctx context.Context) (string, string, error) {
		id, apiURL, err := follow.Read(ctx)
		if errors.Is(err, pairing.ErrNoState) {
			err = fmt.Errorf("%w: %w", daemon.ErrUnpaired, err)
		}
		return id, apiURL, err
	}
}
