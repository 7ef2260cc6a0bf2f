// Package daemon owns the assembly of one running hubgate: the journal, the
// run target (the co-hosted Automate server, or a client of the desktop
// application's), the hub client of the paired device, the bridge between
// them and the control socket of `hubgate status`, `history` and `cancel`.
// `hubgate run`, `hubgate demo` and the tests build one with New and run it
// with Start and Close (or Run, which does both around a context).
//
// It takes plain values (the caller maps its configuration onto Options)
// and parses no flags. Start brings the parts up in dependency order and
// returns once every one of them listens; Close stops them in reverse: the
// bridge first (its current run cancelled or left per Options.Bridge.OnShutdown),
// then the control endpoint, the hub (DeviceStoppedListening), the Automate
// server and the journal.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/hub"
)

// Options are the inputs of one daemon: the paired device and its secrets,
// already resolved by the caller (`run` from the keyring and the state
// file, `demo` from memory), and the settings of each part as plain values.
type Options struct {
	// DeviceID is the paired User Device (required).
	DeviceID string
	// APIURL is the remote service's base URL; the hub is {APIURL}/device
	// (required).
	APIURL string
	// DeviceToken returns the device token; it is called on every
	// (re)connect, so a token replaced by a new pairing is picked up
	// (required).
	DeviceToken hub.TokenSource

	// Rules route commands onto runs. Zero: no rule, commands are ignored.
	Rules *rules.Set
	// JournalPath is the SQLite journal file (required).
	JournalPath string
	// JournalKeep prunes settled commands older than this. Zero: keep
	// everything.
	JournalKeep time.Duration
	// ControlSocket is the Unix socket of the control endpoint (required).
	ControlSocket string

	// Bridge are the bridge's run policies.
	Bridge BridgeOptions
	// Automate says where runs go.
	Automate AutomateOptions

	// Tools, when set, edits the bridge's options before the bridge is
	// made (demo replaces the tool executor to print notifications).
	// Zero: the bridge's defaults.
	Tools func(*bridge.Options)

	// Ready, when set, is told where the parts listen once Start has
	// brought them all up (Info says the same afterwards). Zero: not told.
	Ready func(Info)

	// HTTPClient carries the hub's negotiate and WebSocket upgrade. Zero: a
	// new client over http.DefaultTransport.
	HTTPClient *http.Client
	// Logger receives the structured logs of every part. Zero: discard.
	Logger *slog.Logger
	// Now is the clock of the bridge and the hub's state stamps. Zero:
	// time.Now.
	Now func() time.Time
}

// BridgeOptions are the bridge's run policies (bridge.Options).
type BridgeOptions struct {
	// CancelGrace: a soft cancel is escalated after this long. Zero: 10 s.
	CancelGrace time.Duration
	// StopListeningCancels: the hub's StopListening cancels the current run.
	StopListeningCancels bool
	// OnShutdown: the current run's fate at Close. Zero: cancel.
	OnShutdown bridge.ShutdownPolicy
}

// AutomateOptions say where runs go: the co-hosted Automate server (the
// zero value), or the desktop application's server found by discovery.
type AutomateOptions struct {
	// External uses the desktop application's server, found by port
	// discovery, instead of serving one in this process.
	External bool
	// Key is the Automate access key (required).
	Key string
	// Port of the co-hosted server: 0 the first free port of 4317..4328,
	// -1 any free port, otherwise that port.
	Port int
	// Assistant is the co-hosted server's engine (required unless
	// External). The daemon does not close it: the caller does, after
	// Close returned.
	Assistant assistant.Assistant
	// ConfiguredMcpServers are the names of the user's configured MCP
	// servers (server.Config). Zero: none.
	ConfiguredMcpServers []string
	// Workspace, WorkspaceRestriction and ToolWait are the co-hosted
	// server's (server.Config; zero values documented there).
	Workspace            string
	WorkspaceRestriction string
	ToolWait             time.Duration
	// AppVersion is reported by the co-hosted server. Zero: "dev".
	AppVersion string
}

// Info says where a started daemon's parts are.
type Info struct {
	// AutomateURL is the base URL runs go to.
	AutomateURL string
	// AutomateMode is control.ModeCohosted or control.ModeExternal.
	AutomateMode string
	// ControlSocket is the control endpoint's socket path.
	ControlSocket string
	// Bridge and Hub are the running parts, for in-process callers (demo,
	// tests) that follow the journal or the hub states.
	Bridge *bridge.Bridge
	Hub    *hub.Client
}

// Daemon is one assembled hubgate. New makes it; Start brings it up; Close
// stops it. It is not restartable.
type Daemon struct {
	o   Options
	log *slog.Logger

	mu      sync.Mutex
	started bool
	info    Info

	stops      []func() error // in the order Close calls them
	stopBridge context.CancelFunc
	bridgeDone chan struct{}
	bridgeErr  error

	closeOnce sync.Once
	closeErr  error
}

// New checks the options; it binds and opens nothing.
func New(o Options) (*Daemon, error) {
	var missing []string
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"DeviceID", o.DeviceID != ""},
		{"APIURL", o.APIURL != ""},
		{"DeviceToken", o.DeviceToken != nil},
		{"JournalPath", o.JournalPath != ""},
		{"ControlSocket", o.ControlSocket != ""},
		{"Automate.Key", o.Automate.Key != ""},
		{"Automate.Assistant", o.Automate.External || o.Automate.Assistant != nil},
	} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("daemon: missing options: %s", strings.Join(missing, ", "))
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Daemon{o: o, log: o.Logger, bridgeDone: make(chan struct{})}, nil
}

// Run starts the daemon and runs it until ctx ends or the bridge stops on
// its own, then closes it. It returns the bridge's error, else Close's.
func (d *Daemon) Run(ctx context.Context) error {
	if err := d.Start(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-d.bridgeDone:
	}
	return d.Close()
}

// Start brings the parts up: the journal, the run target, the hub client,
// the bridge and the control endpoint. It returns once all of them run;
// ctx bounds the start only (discovery of an external server). On an error
// everything already started is stopped again.
func (d *Daemon) Start(ctx context.Context) (err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started {
		return errors.New("daemon: already started")
	}
	d.started = true
	defer func() {
		if err != nil {
			close(d.bridgeDone)
			d.closeStops()
		}
	}()
	o, log := d.o, d.log

	j, err := journal.Open(o.JournalPath, journal.Options{Logger: log, Keep: o.JournalKeep})
	if err != nil {
		return fmt.Errorf("open the journal: %w", err)
	}
	d.pushStop(j.Close)

	target, client, err := d.startAutomate(ctx)
	if err != nil {
		return err
	}

	hc, err := hub.New(hub.Config{URL: strings.TrimRight(o.APIURL, "/") + "/device", DeviceID: o.DeviceID,
		TokenSource: o.DeviceToken, HTTPClient: o.HTTPClient, Logger: log, Now: o.Now, AutoListen: true})
	if err != nil {
		return err
	}
	bopts := bridge.Options{Hub: hc, Automate: client, Journal: j, Rules: o.Rules,
		CancelGrace: o.Bridge.CancelGrace, StopListeningCancels: o.Bridge.StopListeningCancels,
		OnShutdown: o.Bridge.OnShutdown, Target: target, DeviceID: o.DeviceID,
		Logger: log.With("component", "bridge"), Now: o.Now}
	if o.Tools != nil {
		o.Tools(&bopts)
	}
	b, err := bridge.New(bopts)
	if err != nil {
		return err
	}

	hubCtx, stopHub := context.WithCancel(context.WithoutCancel(ctx))
	hubDone := make(chan struct{})
	go func() {
		defer close(hubDone)
		if err := hc.Run(hubCtx); err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("hub client stopped", "err", err)
		}
	}()
	d.pushStop(func() error {
		stopHub()
		<-hubDone
		return nil
	})

	if err := d.startControl(ctx, b); err != nil {
		return err
	}

	bctx, stopBridge := context.WithCancel(context.WithoutCancel(ctx))
	d.stopBridge = stopBridge
	go func() {
		defer close(d.bridgeDone)
		d.bridgeErr = b.Run(bctx)
	}()

	log.Info("hubgate running", "device_id", o.DeviceID, "automate", target.Endpoint, "automate_mode", target.Mode,
		"journal", o.JournalPath, "control", o.ControlSocket, "gomaxprocs", runtime.GOMAXPROCS(0))
	d.info = Info{AutomateURL: target.Endpoint, AutomateMode: target.Mode, ControlSocket: o.ControlSocket, Bridge: b, Hub: hc}
	if o.Ready != nil {
		o.Ready(d.info)
	}
	return nil
}

// Info says where the parts listen; zero before Start returned.
func (d *Daemon) Info() Info {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.info
}

// Done is closed when the bridge stopped (after Close, or on its own when
// the hub's event stream ended).
func (d *Daemon) Done() <-chan struct{} { return d.bridgeDone }

// Close stops the bridge (its current run per Options.Bridge.OnShutdown),
// then the control endpoint, the hub client (DeviceStoppedListening), the
// Automate server and the journal. It returns the bridge's error, else the
// first error of a part; later calls return the same.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() {
		d.mu.Lock()
		started, stop := d.started, d.stopBridge
		d.mu.Unlock()
		if !started {
			return
		}
		var err error
		if stop != nil {
			stop()
			<-d.bridgeDone
			err = d.bridgeErr
		}
		if cerr := d.closeStops(); err == nil {
			err = cerr
		}
		d.closeErr = err
	})
	return d.closeErr
}

// pushStop records a part's stop; Close calls them newest first.
func (d *Daemon) pushStop(stop func() error) { d.stops = append(d.stops, stop) }

// closeStops stops the started parts newest first.
func (d *Daemon) closeStops() error {
	var first error
	for i := len(d.stops) - 1; i >= 0; i-- {
		if err := d.stops[i](); err != nil && first == nil {
			first = err
		}
	}
	d.stops = nil
	return first
}

// startAutomate brings up the run target: the co-hosted Automate server,
// or a client of the external one.
func (d *Daemon) startAutomate(ctx context.Context) (control.AutomateTarget, *automate.Client, error) {
	ao, log := d.o.Automate, d.log
	if ao.External {
		disc, err := automate.Discover(ctx, automate.DiscoverOptions{Key: ao.Key})
		if err != nil {
			return control.AutomateTarget{}, nil, fmt.Errorf("find the external Automate server: %w", err)
		}
		c, err := automate.NewClient(automate.ClientOptions{BaseURL: disc.BaseURL, Key: ao.Key, Logger: log.With("component", "automate-client")})
		if err != nil {
			return control.AutomateTarget{}, nil, err
		}
		return control.AutomateTarget{Mode: control.ModeExternal, Endpoint: disc.BaseURL}, c, nil
	}
	srv, err := server.New(server.Config{Key: ao.Key, Assistant: ao.Assistant, Workspace: ao.Workspace,
		WorkspaceRestriction: ao.WorkspaceRestriction, ToolWait: ao.ToolWait,
		ConfiguredMcpServers: ao.ConfiguredMcpServers, AppVersion: ao.AppVersion, Logger: log.With("component", "automate")})
	if err != nil {
		return control.AutomateTarget{}, nil, err
	}
	ln, moved, err := server.Listen(ao.Port)
	if err != nil {
		return control.AutomateTarget{}, nil, err
	}
	if moved {
		log.Warn("port 4317 is in use; the Automate server listens elsewhere", "addr", ln.Addr().String())
	}
	hs := server.NewHTTPServer(srv.Handler(), server.HTTPOptions{Logger: log})
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("automate server", "err", err)
		}
	}()
	d.pushStop(func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := srv.Close(sctx); err != nil {
			log.Warn("automate server close", "err", err)
		}
		if err := hs.Shutdown(sctx); err != nil {
			hs.Close()
		}
		return nil
	})
	endpoint := "http://" + ln.Addr().(*net.TCPAddr).String()
	c, err := automate.NewClient(automate.ClientOptions{BaseURL: endpoint, Key: ao.Key, Logger: log.With("component", "automate-client")})
	if err != nil {
		return control.AutomateTarget{}, nil, err
	}
	return control.AutomateTarget{Mode: control.ModeCohosted, Endpoint: endpoint}, c, nil
}

// startControl serves the control endpoint of `hubgate status`, `history`
// and `cancel` on a Unix socket only this user can reach.
func (d *Daemon) startControl(ctx context.Context, b *bridge.Bridge) error {
	log := d.log
	srv, err := control.Listen(control.Config{Path: d.o.ControlSocket, Handler: b, Logger: log.With("component", "control")})
	if err != nil {
		return fmt.Errorf("control endpoint: %w", err)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(sctx); err != nil {
			log.Warn("control endpoint", "err", err)
		}
	}()
	d.pushStop(func() error {
		cancel()
		<-done
		return nil
	})
	return nil
}
