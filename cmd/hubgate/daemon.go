package main

import (
	"log/slog"
	"path/filepath"

	"github.com/hubgate/hubgate/automate/engine"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/daemon"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/rulescli"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/servecli"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/hub"
)

// daemonParams are what `run` resolved before the daemon is
// assembled: the paired device and its secrets (from the keyring and the
// state file), and the co-hosted server's engine.
type daemonParams struct {
	deviceID    string
	apiURL      string
	deviceToken hub.TokenSource
	automateKey string
	// engine is the co-hosted server's engine; nil with automate.target
	// external.
	engine *engine.Engine
	// deviceTypeID is the paired device's type: custom actions for
	// another type are refused. Zero: not checked.
	deviceTypeID string
}

// daemonOptions maps the configuration and the resolved inputs onto the
// daemon's plain options.
func daemonOptions(cfg *configs.Config, p daemonParams, log *slog.Logger) (daemon.Options, error) {
	set, err := rulescli.Compile(cfg.Bridge)
	if err != nil {
		return daemon.Options{}, err
	}
	o := daemon.Options{
		DeviceID:      p.deviceID,
		DeviceTypeID:  p.deviceTypeID,
		APIURL:        p.apiURL,
		DeviceToken:   p.deviceToken,
		Rules:         set,
		JournalPath:   cfg.Bridge.Journal,
		JournalKeep:   cfg.Bridge.JournalKeep(),
		ControlSocket: cfg.Bridge.ControlSocket,
		Bridge: daemon.BridgeOptions{CancelGrace: cfg.Bridge.CancelGrace, StopListeningCancels: cfg.Bridge.StopListeningCancels,
			OnShutdown: bridge.ShutdownPolicy(cfg.Bridge.OnShutdown), Listening: bridge.ListeningPolicy(cfg.Bridge.Listening),
			Ask: cfg.Bridge.Ask, AskTimeout: cfg.Bridge.AskTimeout},
		Automate: daemon.AutomateOptions{External: cfg.Automate.Target == "external", Key: p.automateKey, Port: cfg.Automate.Port,
			Workspace: cfg.Automate.Workspace, WorkspaceRestriction: cfg.Automate.WorkspaceRestriction,
			ToolWait: cfg.Automate.ToolWait, AppVersion: version(), Product: cfg.Automate.Product,
			ChildEnvAllow: cfg.Automate.ChildEnv.Allow},
		Outputs: daemon.OutputOptions{Notify: cfg.Bridge.Notify, SpeechCommand: cfg.Bridge.Speech.Command,
			SpeechMaxChars: cfg.Bridge.Speech.MaxChars, ProgressAfter: cfg.Bridge.ProgressAfter, StatusPage: cfg.Bridge.StatusPage.Enabled,
			StatusPagePort: cfg.Bridge.StatusPage.Port},
		HubMaxMessageSize: int64(cfg.Hub.MaxMessageBytes),
		Logger:            log,
	}
	if p.engine != nil {
		o.Automate.Assistant, o.Automate.ConfiguredMcpServers = p.engine.Assistant, p.engine.McpServers
	}
	return o, nil
}

// cohostedEngine builds the co-hosted server's engine, or nil with
// automate.target external; the caller closes it after the daemon.
func cohostedEngine(cfg *configs.Config, store configs.SecretStore, getenv func(string) string, log *slog.Logger) (*engine.Engine, error) {
	if cfg.Automate.Target == "external" {
		return nil, nil
	}
	return servecli.Engine(cfg, store, getenv, log)
}

// demoDaemonOptions is demo.Options.Daemon: the embedded defaults (no
// config file, no HUBGATE_ variable: dir/home, in the demo's temp dir and
// never made, stands in for the user config dir and the home dir) mapped
// onto the daemon's options as `run` maps its configuration
// (daemonOptions), with the co-hosted engine they name (cohostedEngine:
// the scripted one). The demo sets its own options over them. closeEngine
// closes the engine the options hold, once the demo returned.
func demoDaemonOptions(log *slog.Logger) (options func(dir string) (daemon.Options, error), closeEngine func()) {
	var eng *engine.Engine
	noEnv := func(string) string { return "" }
	options = func(dir string) (daemon.Options, error) {
		inDir := func() (string, error) { return filepath.Join(dir, "home"), nil }
		cfg, err := configs.Load(configs.LoadOptions{Env: noEnv, UserConfigDir: inDir, HomeDir: inDir})
		if err != nil {
			return daemon.Options{}, err
		}
		if eng, err = cohostedEngine(cfg, nil, noEnv, log); err != nil {
			return daemon.Options{}, err
		}
		return daemonOptions(cfg, daemonParams{engine: eng}, log)
	}
	closeEngine = func() {
		if eng != nil {
			eng.Close()
		}
	}
	return options, closeEngine
}
