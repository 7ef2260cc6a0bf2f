package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/hub"
)

// daemonOptions are the inputs of one daemon: the configuration, the
// paired device and its secrets, already resolved by the caller (`run`
// from the keyring and the state file, `demo` from memory).
type daemonOptions struct {
	cfg         *configs.Config
	deviceID    string
	apiURL      string
	deviceToken hub.TokenSource
	automateKey string
	getenv      func(string) string // the engine's API key variable; zero: none set
	log         *slog.Logger
	// automatePort overrides cfg.Automate.Port for the co-hosted server
	// (-1: any free port). Zero: the configuration's.
	automatePort int
	// ready, when set, is told where the daemon's parts listen once it runs.
	ready func(daemonInfo)
	// tools, when set, replaces the bridge's tool executor (demo prints
	// notifications).
	tools func(*bridge.Options)
}

// daemonInfo says where a running daemon's parts are.
type daemonInfo struct {
	automateURL   string
	controlSocket string
	bridge        *bridge.Bridge
	hub           *hub.Client
}

// runDaemon runs the daemon until ctx ends: the Automate target (the
// co-hosted server, or the external one found by discovery), the journal,
// the hub client, the bridge and the control endpoint. It stops in the
// reverse order: the bridge first (its current run cancelled or left per
// bridge.on_shutdown), then the hub (DeviceStoppedListening), the server,
// the control endpoint and the journal.
func runDaemon(ctx context.Context, o daemonOptions) (err error) {
	cfg, log := o.cfg, o.log
	if o.getenv == nil {
		o.getenv = func(string) string { return "" }
	}
	set, err := cfg.Bridge.RuleSet()
	if err != nil {
		return err
	}
	j, err := journal.Open(cfg.Bridge.Journal, journal.Options{Logger: log, Keep: cfg.Bridge.JournalKeep()})
	if err != nil {
		return fmt.Errorf("open the journal: %w", err)
	}
	defer func() {
		if cerr := j.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()

	target, client, stopAutomate, err := startAutomate(ctx, o)
	if err != nil {
		return err
	}
	defer stopAutomate()

	hc, err := hub.New(hub.Config{URL: strings.TrimRight(o.apiURL, "/") + "/device", DeviceID: o.deviceID,
		TokenSource: o.deviceToken, Logger: log, AutoListen: true})
	if err != nil {
		return err
	}
	bopts := bridge.Options{Hub: hc, Automate: client, Journal: j, Rules: set,
		CancelGrace: cfg.Bridge.CancelGrace, StopListeningCancels: cfg.Bridge.StopListeningCancels,
		OnShutdown: bridge.ShutdownPolicy(cfg.Bridge.OnShutdown), Target: target, DeviceID: o.deviceID,
		Logger: log.With("component", "bridge")}
	if o.tools != nil {
		o.tools(&bopts)
	}
	b, err := bridge.New(bopts)
	if err != nil {
		return err
	}

	hubCtx, stopHub := context.WithCancel(context.WithoutCancel(ctx))
	hubDone := make(chan error, 1)
	go func() { hubDone <- hc.Run(hubCtx) }()
	defer func() {
		stopHub()
		<-hubDone
	}()

	stopControl, err := startControl(ctx, cfg.Bridge.ControlSocket, b, log)
	if err != nil {
		return err
	}
	defer stopControl()

	log.Info("hubgate running", "device_id", o.deviceID, "automate", target.Endpoint, "automate_mode", target.Mode,
		"journal", cfg.Bridge.Journal, "control", cfg.Bridge.ControlSocket, "gomaxprocs", runtime.GOMAXPROCS(0))
	if o.ready != nil {
		o.ready(daemonInfo{automateURL: target.Endpoint, controlSocket: cfg.Bridge.ControlSocket, bridge: b, hub: hc})
	}
	return b.Run(ctx)
}

// startAutomate brings up the run target: the co-hosted Automate server,
// or a client of the external one.
func startAutomate(ctx context.Context, o daemonOptions) (control.AutomateTarget, *automate.Client, func(), error) {
	cfg, log := o.cfg, o.log
	if cfg.Automate.Target == "external" {
		d, err := automate.Discover(ctx, automate.DiscoverOptions{Key: o.automateKey, Product: cfg.Automate.Product})
		if err != nil {
			return control.AutomateTarget{}, nil, nil, fmt.Errorf("find the external Automate server: %w", err)
		}
		c, err := automate.NewClient(automate.ClientOptions{BaseURL: d.BaseURL, Key: o.automateKey, Product: cfg.Automate.Product, Logger: log.With("component", "automate-client")})
		if err != nil {
			return control.AutomateTarget{}, nil, nil, err
		}
		return control.AutomateTarget{Mode: "external", Endpoint: d.BaseURL}, c, func() {}, nil
	}
	engine, err := buildAssistant(cfg, o.getenv, log)
	if err != nil {
		return control.AutomateTarget{}, nil, nil, err
	}
	srv, err := server.New(server.Config{Key: o.automateKey, Product: cfg.Automate.Product, Assistant: engine.engine, Workspace: cfg.Automate.Workspace,
		WorkspaceRestriction: cfg.Automate.WorkspaceRestriction, ToolWait: cfg.Automate.ToolWait,
		ConfiguredMcpServers: engine.mcpServers, AppVersion: version(), Logger: log.With("component", "automate")})
	if err != nil {
		engine.close()
		return control.AutomateTarget{}, nil, nil, err
	}
	port := cfg.Automate.Port
	if o.automatePort != 0 {
		port = o.automatePort
	}
	ln, moved, err := server.Listen(port)
	if err != nil {
		return control.AutomateTarget{}, nil, nil, err
	}
	if moved {
		log.Warn("port 4317 is in use; the Automate server listens elsewhere", "addr", ln.Addr().String())
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("automate server", "err", err)
		}
	}()
	endpoint := "http://" + ln.Addr().(*net.TCPAddr).String()
	c, err := automate.NewClient(automate.ClientOptions{BaseURL: endpoint, Key: o.automateKey, Product: cfg.Automate.Product, Logger: log.With("component", "automate-client")})
	if err != nil {
		hs.Close()
		return control.AutomateTarget{}, nil, nil, err
	}
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := srv.Close(sctx); err != nil {
			log.Warn("automate server close", "err", err)
		}
		if err := hs.Shutdown(sctx); err != nil {
			hs.Close()
		}
		engine.close()
	}
	return control.AutomateTarget{Mode: "cohosted", Endpoint: endpoint}, c, stop, nil
}

// startControl serves the control endpoint of `hubgate status`, `history`
// and `cancel` on a Unix socket only this user can reach.
func startControl(ctx context.Context, path string, b *bridge.Bridge, log *slog.Logger) (func(), error) {
	srv, err := control.Listen(control.Config{Path: path, Handler: b, Logger: log.With("component", "control")})
	if err != nil {
		return nil, fmt.Errorf("control endpoint: %w", err)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(sctx); err != nil {
			log.Warn("control endpoint", "err", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}, nil
}
