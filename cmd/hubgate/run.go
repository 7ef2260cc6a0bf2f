package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/bridge/daemon"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/hub"
)

// EnvDeviceToken supplies the hub device token for headless use; when set
// it wins over the keyring.
const EnvDeviceToken = "HUBGATE_DEVICE_TOKEN"

// errNotPaired: `run` needs a paired device.
var errNotPaired = errors.New("no paired device: run 'hubgate pair' first")

func newRunCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "Run the daemon: hold the hub connection and turn commands into runs",
		Long: `Run the daemon in the foreground with structured logs on stderr.

It connects the paired device to its hub, serves the Automate server in this
process (automate.target: cohosted, the default) or finds the desktop
application's (external), and maps each command the hub delivers onto a run by
the routing rules of the bridge section. Every command and run is journaled.
SIGINT or SIGTERM stop it cleanly: DeviceStoppedListening is sent, the current
run is cancelled or left (bridge.on_shutdown), the journal is closed.

Secrets come from the OS secret store; HUBGATE_DEVICE_TOKEN and
HUBGATE_AUTOMATE_KEY override it for headless use.

The daemon runs its Go code on one thread at a time (GOMAXPROCS=1): its work is
waiting on sockets. The GOMAXPROCS environment variable overrides that.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig(nil)
			if err != nil {
				return err
			}
			log := a.logger(cfg)
			state, err := configs.LoadState("")
			if errors.Is(err, configs.ErrNoState) {
				return errNotPaired
			}
			if err != nil {
				return err
			}
			store := configs.NewKeyring(configs.KeyringOptions{Logger: log})
			key, _, err := configs.AutomateKey(cmd.Context(), store, a.getenv)
			if err != nil {
				return fmt.Errorf("the Automate access key: %w", err)
			}
			engine, err := cohostedEngine(cfg, a.getenv, log)
			if err != nil {
				return err
			}
			if engine != nil {
				defer engine.close()
			}
			opts, err := daemonOptions(cfg, daemonParams{deviceID: state.DeviceID, apiURL: state.APIURL,
				deviceToken: a.deviceToken(store), automateKey: key, engine: engine}, log)
			if err != nil {
				return err
			}
			d, err := daemon.New(opts)
			if err != nil {
				return err
			}
			return d.Run(cmd.Context())
		},
	}
}

// isDaemon says whether args run the daemon (`hubgate [flags] run`).
func isDaemon(args []string) bool {
	c, _, err := newRootCommand(&app{getenv: os.Getenv}).Find(args)
	return err == nil && c.Name() == "run"
}

// useOneProc gives the daemon one P unless GOMAXPROCS is set. Its work is
// I/O: the hub socket, the journal's small writes, the POST to an Automate
// server whose engine waits on a model server. With one P a hub event goes
// from goroutine to goroutine (hub reader, dispatcher, bridge, runner, HTTP
// client) on one thread, where with two each hop may also wake an idle
// thread. Measured on 2 vCPUs (BenchmarkHubPushToRunRequest): push-to-POST
// p50 0.49-0.50 -> 0.40-0.47 ms, p99 1.2-1.4 -> 0.85-1.2 ms. main calls it
// before anything else: set later it costs more idle memory (+0.4 MB
// measured with the call in `run` itself, against +0.2 MB here).
func useOneProc() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// deviceToken reads the device token on every (re)connect, so that a token
// replaced by `hubgate pair --reuse` is picked up without a restart.
func (a *app) deviceToken(store configs.SecretStore) hub.TokenSource {
	return func(ctx context.Context) (string, error) {
		if v := a.getenv(EnvDeviceToken); v != "" {
			return v, nil
		}
		tok, err := store.Get(ctx, configs.AccountDeviceToken)
		if err != nil {
			return "", fmt.Errorf("read the device token (set %s to run without the secret store): %w", EnvDeviceToken, err)
		}
		return tok, nil
	}
}
