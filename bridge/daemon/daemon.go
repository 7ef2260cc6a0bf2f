// Package daemon owns the assembly of one running hubgate: the instance
// lock, the journal, the run target (the co-hosted Automate server, or a
// client of the desktop application's), the hub client of the paired
// device, the bridge between them, the control socket, and what gets
// answers to the person (bridge/notify, bridge/statuspage). `hubgate run`,
// `hubgate demo` and the tests build one with New and run it with Start and
// Close (or Run). It takes plain values (the caller maps its configuration
// onto Options), parses no flags and handles no signals.
//
// Start and Close order, Reload, Reconnect, Force and the choices where the
// spec is silent: docs/daemon.md.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/notify"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/bridge/statuspage"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub"
	"github.com/hubgate/hubgate/internal/proc"
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
	// Device is a record of the paired device read before the hub
	// connects (the REST device a pairing confirmed): its current
	// profile's macros route commands until the hub's VerifySelf answer
	// (bridge.Options.Device). Zero: none; the catalogue comes from the
	// hub at every connect.
	Device *deviceapi.UserDevice
	// DeviceTypeID is the paired device's type (the pairing state's
	// device_type_id): the rules refuse custom actions meant for another
	// type (rules.Set.WithDeviceType), here and after a Reload. A
	// Reconnect to another device keeps it. Zero: not checked.
	DeviceTypeID string
	// JournalPath is the SQLite journal file (required).
	JournalPath string
	// JournalKeep prunes settled commands older than this. Zero: keep
	// everything.
	JournalKeep time.Duration
	// ControlSocket is the Unix socket of the control endpoint (required).
	ControlSocket string
	// Lock is the instance lock of ControlSocket, taken by the caller with
	// Lock before it read secrets or built anything, so that a second
	// daemon stops first of all; Start then uses it (and Close releases
	// it). Zero: Start takes it itself, first.
	Lock *control.InstanceLock

	// Bridge are the bridge's run policies.
	Bridge BridgeOptions
	// Automate says where runs go.
	Automate AutomateOptions
	// Outputs get answers to the person: notifications, speech, the
	// status page.
	Outputs OutputOptions

	// Pairing, when set, reads the paired device again for a reconnect
	// request (after `hubgate pair` or `unpair`): its id and API URL, or an
	// error matching ErrUnpaired when none is paired any more. Zero: a
	// reconnect keeps DeviceID and APIURL (and reads the token again).
	Pairing func(ctx context.Context) (deviceID, apiURL string, err error)

	// Ready, when set, is told where the parts listen once Start has
	// brought them all up (Info says the same afterwards). Zero: not told.
	Ready func(Info)

	// HubBackoff are the hub client's delays between connection attempts
	// (hub.Config.Backoff). Zero: the hub's defaults.
	HubBackoff hub.Backoff
	// HubMaxMessageSize is the largest hub message read
	// (hub.Config.MaxMessageSize; configs: hub.max_message_bytes). Zero:
	// the hub's default (16 MiB).
	HubMaxMessageSize int64

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
	// Listening: what StopListening does to later commands (Reload
	// changes it). Zero: bridge.ListenFollowVendor.
	Listening bridge.ListeningPolicy
	// Ask: rules that do not say offer ask_person. AskTimeout: how long a
	// question waits. Zero: off; bridge.DefaultAskTimeout.
	Ask        bool
	AskTimeout time.Duration
}

// AutomateOptions say where runs go: the co-hosted Automate server (the
// zero value), or the desktop application's server found by discovery.
type AutomateOptions struct {
	// External uses the desktop application's server, found by port
	// discovery, instead of serving one in this process.
	External bool
	// Key is the Automate access key (required).
	Key string
	// ChildEnvAllow: the variables the bridge's command tools keep
	// although proc.RunEnviron withholds them (automate.child_env.allow;
	// the co-hosted engine gets it from its own options). Zero: none.
	ChildEnvAllow []string
	// Port of the co-hosted server: 0 the first free port of 4317..4328,
	// -1 any free port, otherwise that port. With External, a port > 0 is
	// the only port discovery probes (the desktop application launched
	// with --port outside the window); otherwise it sweeps 4317..4328.
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
	// Product is the product word (server.Config.Product): the co-hosted
	// server answers with it, discovery of the external one looks for it.
	// Zero: automate.DefaultProduct. automate.ProductAuto: discovery takes
	// the external server of whatever word it names, and the co-hosted
	// server answers automate.DefaultProduct; status reports the word.
	Product string
}

// OutputOptions configure what gets answers to the person.
type OutputOptions struct {
	// Notify is the notify policy of rules that set none: one of
	// rules.NotifyPolicies. Zero: answers.
	Notify string
	// Desktop shows notifications. Zero: notify.DefaultDesktop() (the
	// freedesktop service on the session bus on Linux).
	Desktop notify.Desktop
	// SpeechCommand is the speech command's argv (notify.SpeakerOptions).
	// Zero: the platform's. Speech is set up only when a rule has speak.
	SpeechCommand []string
	// SpeechMaxChars: how much of an answer is spoken. Zero: 400.
	SpeechMaxChars int
	// ProgressAfter: a run longer than this gets a progress notification
	// (notify.Options.ProgressAfter). Zero: none.
	ProgressAfter time.Duration
	// StatusPage serves the status page on 127.0.0.1:StatusPagePort (0:
	// any free port). Zero: no status page.
	StatusPage     bool
	StatusPagePort int
}

// Info says where a started daemon's parts are.
type Info struct {
	// AutomateURL is the base URL runs go to.
	AutomateURL string
	// AutomateMode is bridge.ModeCohosted or bridge.ModeExternal.
	AutomateMode string
	// AutomateProduct is the Automate server's product word.
	AutomateProduct string
	// ControlSocket is the control endpoint's socket path.
	ControlSocket string
	// Bridge and Hub are the running parts, for in-process callers (demo,
	// tests) that follow the journal or the hub states.
	Bridge *bridge.Bridge
	Hub    *hub.Client
	// StatusPageURL opens the status page, token included ("" without
	// one): a secret of this user, given only over the control socket.
	StatusPageURL string
}

// Daemon is one assembled hubgate. New makes it; Start brings it up; Close
// stops it. It is not restartable.
type Daemon struct {
	o   Options
	log *slog.Logger

	mu      sync.Mutex
	started bool
	info    Info

	lock *control.InstanceLock
	hubs *hubSwitch
	// reconnectMu serializes Reconnect calls.
	reconnectMu sync.Mutex
	deviceID    string         // the device the hub client connects with (Reconnect changes it)
	stops       []func() error // Close calls them newest first
	stopBridge  context.CancelFunc
	bridgeDone  chan struct{}
	bridgeErr   error

	closeOnce sync.Once
	closeErr  error

	// The notifier (nil before Start): Reload gives it a new default
	// policy; speechErr says why answers cannot be spoken (nil: they can).
	notifier  *notify.Service
	speechErr error
	// ruleSet is the rule set in force, for the notifier's goroutine (d.mu is
	// held through Start and Reload).
	ruleSet atomic.Pointer[rules.Set]
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
	if o.Rules == nil {
		set, err := rules.Compile(nil, nil, rules.UnmatchedSpec{})
		if err != nil {
			return nil, err
		}
		o.Rules = set
	}
	return &Daemon{o: o, log: o.Logger, bridgeDone: make(chan struct{})}, nil
}

// Lock takes the instance lock of the control socket at controlSocket: one
// daemon per socket (per user, with the default socket). When another
// process holds it, the error matches control.ErrAlreadyRunning and names
// that process's PID (*control.AlreadyRunningError). A caller that takes
// it before it reads secrets or builds an engine hands it to New in
// Options.Lock, and releases it itself only when the daemon never
// started (Release is safe to call twice).
func Lock(controlSocket string) (*control.InstanceLock, error) {
	return control.Lock(controlSocket)
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

// Start brings the parts up: the instance lock of the control socket (a
// second daemon stops here, with an error matching
// control.ErrAlreadyRunning that names the running one's PID, before it
// binds a port), the journal, the run target, the hub client, the bridge
// and the control endpoint. It returns once all of them run;
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

	// One daemon per control socket, checked before anything is opened or
	// bound (or earlier, by the caller: Options.Lock); released last, once
	// everything else stopped.
	lock := o.Lock
	if lock == nil {
		if lock, err = Lock(o.ControlSocket); err != nil {
			return err
		}
	}
	d.lock = lock
	d.pushStop(lock.Release)

	// Run children that a previous life killed by SIGKILL left behind are
	// killed before the journal's recovery reports their runs interrupted
	// (internal/proc's reaper); this life's are recorded from now on.
	if stopTracking, _, err := proc.TrackGroups(o.JournalPath+".children", log); err != nil {
		log.Warn("child processes of runs are not tracked", "err", err)
	} else {
		d.pushStop(stopTracking)
	}

	j, err := journal.Open(o.JournalPath, journal.Options{Logger: log, Keep: o.JournalKeep})
	if err != nil {
		return fmt.Errorf("open the journal: %w", err)
	}
	d.pushStop(j.Close)

	target, client, err := d.startAutomate(ctx)
	if err != nil {
		return err
	}

	hc, err := d.newHub(o.DeviceID, o.APIURL)
	if err != nil {
		return err
	}
	d.hubs = newHubSwitch(log, hc)
	bopts := bridge.Options{Hub: d.hubs, Automate: client, Journal: j, Rules: o.Rules.WithDeviceType(o.DeviceTypeID),
		CancelGrace: o.Bridge.CancelGrace, StopListeningCancels: o.Bridge.StopListeningCancels,
		OnShutdown: o.Bridge.OnShutdown, Listening: o.Bridge.Listening, Ask: o.Bridge.Ask, AskTimeout: o.Bridge.AskTimeout,
		ChildEnvAllow: o.Automate.ChildEnvAllow, Target: target, DeviceID: o.DeviceID, Device: o.Device, Notify: o.Outputs.Notify, Logger: log.With("component", "bridge"), Now: o.Now}
	b, err := bridge.New(bopts)
	if err != nil {
		return err
	}

	d.hubs.run(hc)
	d.pushStop(func() error {
		d.hubs.stop()
		return nil
	})

	d.startNotify(b)
	page, err := d.startStatusPage(ctx, b)
	if err != nil {
		return err
	}
	if err := d.startControl(ctx, &backend{Bridge: b, d: d, page: page}); err != nil {
		return err
	}

	bctx, stopBridge := context.WithCancel(context.WithoutCancel(ctx))
	d.stopBridge = stopBridge
	go func() {
		defer close(d.bridgeDone)
		d.bridgeErr = b.Run(bctx)
	}()

	log.Info("hubgate running", "device_id", o.DeviceID, "automate", target.Endpoint, "automate_mode", target.Mode,
		"automate_product", target.Product, "journal", o.JournalPath, "control", o.ControlSocket, "gomaxprocs", runtime.GOMAXPROCS(0))
	d.info = Info{AutomateURL: target.Endpoint, AutomateMode: target.Mode, AutomateProduct: target.Product, ControlSocket: o.ControlSocket, Bridge: b, Hub: hc}
	if page != nil {
		d.info.StatusPageURL = page.URL()
		log.Info("status page", "addr", page.Addr().String(), "open", "hubgate open")
	}
	d.deviceID = o.DeviceID
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
// Automate server, the journal and the instance lock. It returns the bridge's error, else the
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
			d.announceStop(d.Info().Bridge)
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

// ErrUnpaired: Options.Pairing found no paired device.
var ErrUnpaired = errors.New("no device is paired")

func (d *Daemon) newHub(deviceID, apiURL string) (*hub.Client, error) {
	o := d.o
	return hub.New(hub.Config{URL: strings.TrimRight(apiURL, "/") + "/device", DeviceID: deviceID,
		TokenSource: o.DeviceToken, HTTPClient: o.HTTPClient, Logger: d.log, Now: o.Now, AutoListen: true, Backoff: o.HubBackoff,
		MaxMessageSize: o.HubMaxMessageSize})
}

// backend is the control endpoint's Backend: the bridge, with the
// daemon's reconnect and its current device.
type backend struct {
	*bridge.Bridge
	d    *Daemon
	page *statuspage.Server // nil without a status page
}

// The optional abilities the control endpoint and the status page look
// for at run time (a missing one answers 501): checked here, at build time.
var (
	_ control.Backend      = (*backend)(nil)
	_ control.Watcher      = (*backend)(nil)
	_ control.Reconnecter  = (*backend)(nil)
	_ control.Answerer     = (*backend)(nil)
	_ statuspage.Backend   = (*bridge.Bridge)(nil)
	_ statuspage.Answerer  = (*bridge.Bridge)(nil)
	_ statuspage.Commander = (*bridge.Bridge)(nil)
)

func (b *backend) Status(ctx context.Context) (bridge.Status, error) {
	st, err := b.Bridge.Status(ctx)
	if err == nil {
		b.d.mu.Lock()
		if b.d.deviceID != "" {
			st.DeviceID = b.d.deviceID
		}
		b.d.mu.Unlock()
	}
	return st, err
}

func (b *backend) Reconnect(ctx context.Context) (control.ReconnectResult, error) {
	return b.d.Reconnect(ctx)
}

// Reconnect replaces the hub client at once with one for the paired device
// as Options.Pairing reads it now (a new device, a new API URL, or the
// same device with a new token): the hub connection of a new pairing is
// up in a moment instead of at the old client's next retry. The bridge,
// its run in flight and its queue are not touched. When no device is
// paired any more, the hub client is stopped (DeviceStoppedListening) and
// the daemon stops, as if Close was called.
func (d *Daemon) Reconnect(ctx context.Context) (control.ReconnectResult, error) {
	d.reconnectMu.Lock()
	defer d.reconnectMu.Unlock()
	d.mu.Lock()
	running := d.hubs != nil && d.stopBridge != nil
	prev, stopBridge := d.deviceID, d.stopBridge
	d.mu.Unlock()
	if !running {
		return control.ReconnectResult{}, errors.New("daemon: not running")
	}
	id, apiURL := d.o.DeviceID, d.o.APIURL
	if d.o.Pairing != nil {
		var err error
		id, apiURL, err = d.o.Pairing(ctx)
		if errors.Is(err, ErrUnpaired) {
			d.log.Warn("reconnect: no device is paired any more; stopping", "previous_device_id", prev)
			stopBridge() // Done closes; the caller of Start closes the rest
			return control.ReconnectResult{PreviousDeviceID: prev,
				Message: "no device is paired any more: the daemon stops (DeviceStoppedListening is sent for " + prev + ")"}, nil
		}
		if err != nil {
			return control.ReconnectResult{}, fmt.Errorf("read the pairing: %w", err)
		}
	}
	hc, err := d.newHub(id, apiURL)
	if err != nil {
		return control.ReconnectResult{}, err
	}
	d.hubs.run(hc)
	d.mu.Lock()
	d.deviceID, d.info.Hub = id, hc
	d.mu.Unlock()
	msg := "reconnecting now with device " + id
	if id != prev {
		msg = fmt.Sprintf("reconnecting now with the new device %s (was %s)", id, prev)
	}
	d.log.Info("reconnect: "+msg, "device_id", id, "previous_device_id", prev)
	return control.ReconnectResult{Paired: true, DeviceID: id, PreviousDeviceID: prev, Message: msg}, nil
}

// Reload applies the parts of o that a running daemon can change without
// dropping the hub connection or the run in flight: the routing rules and
// command tools (Options.Rules), bridge.notify, bridge.listening and the
// run policies (bridge.ask, ask_timeout, cancel_grace,
// stop_listening_cancels, on_shutdown). It returns what changed, one line
// per change (each names its setting), and the settings that differ but
// apply only after a restart, by name; a setting that did not change is
// named in neither. The run in flight and queued commands keep the rules
// they matched; the run in flight keeps whether it was offered ask_person
// and what a shutdown does to it.
func (d *Daemon) Reload(o Options) (changed, needRestart []string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.info.Bridge == nil {
		return nil, nil, errors.New("daemon: not running")
	}
	b := d.info.Bridge
	if o.Rules == nil {
		set, err := rules.Compile(nil, nil, rules.UnmatchedSpec{})
		if err != nil {
			return nil, nil, err
		}
		o.Rules = set
	}
	old := d.o
	if old.Rules == nil {
		old.Rules, _ = rules.Compile(nil, nil, rules.UnmatchedSpec{})
	}
	ob, nb := old.Bridge, o.Bridge
	if policies(ob) != policies(nb) {
		// Checked before anything is applied: a refused reload changes
		// nothing.
		if err := b.SetRunPolicies(policies(nb)); err != nil {
			return nil, nil, err
		}
	}
	changed = diffRules(old.Rules, o.Rules)
	if len(changed) > 0 {
		b.SetRules(o.Rules.WithDeviceType(d.o.DeviceTypeID))
		d.o.Rules = o.Rules
		d.ruleSet.Store(o.Rules)
		if d.speechErr != nil {
			warnNoSpeech(d.log.With("component", "notify"), o.Rules, d.speechErr)
		}
	}
	if o.Outputs.Notify != old.Outputs.Notify && d.notifier != nil {
		d.notifier.SetDefault(o.Outputs.Notify)
		b.SetNotify(o.Outputs.Notify)
		d.o.Outputs.Notify = o.Outputs.Notify
	}
	if nb.Listening != ob.Listening {
		b.SetListening(nb.Listening)
	}
	d.o.Bridge = nb
	for _, c := range settingChanges(old, o) {
		if c.live {
			changed = append(changed, c.name+": "+c.from+" -> "+c.to)
		} else {
			needRestart = append(needRestart, c.name)
		}
	}
	return changed, needRestart, nil
}

// ChangedSettings names the settings (as the configuration file does:
// "bridge.ask_timeout") that differ between old and nu, apart from the
// rules (Reload describes those rule by rule): live, those Reload
// applies to a running daemon; restart, those that apply only after a
// restart.
func ChangedSettings(old, nu Options) (live, restart []string) {
	for _, c := range settingChanges(old, nu) {
		if c.live {
			live = append(live, c.name)
		} else {
			restart = append(restart, c.name)
		}
	}
	return live, restart
}

// settingChange is one setting that differs between two Options.
type settingChange struct {
	name     string
	live     bool   // Reload applies it
	from, to string // its values, for a live one
}

// settingChanges lists the settings other than the rules that differ
// between old and nu, in the order of the configuration file's keys.
func settingChanges(old, nu Options) []settingChange {
	var out []settingChange
	live := func(name string, differs bool, from, to any) {
		if differs {
			out = append(out, settingChange{name: name, live: true, from: fmt.Sprint(from), to: fmt.Sprint(to)})
		}
	}
	restart := func(name string, differs bool) {
		if differs {
			out = append(out, settingChange{name: name})
		}
	}
	ao, oa := nu.Automate, old.Automate
	restart("automate.port", ao.Port != oa.Port)
	restart("automate.workspace", ao.Workspace != oa.Workspace)
	restart("automate.workspace_restriction", ao.WorkspaceRestriction != oa.WorkspaceRestriction)
	restart("automate.tool_wait", ao.ToolWait != oa.ToolWait)
	restart("automate.target", ao.External != oa.External)
	restart("automate.product", ao.Product != oa.Product)
	restart("automate.child_env.allow", !slices.Equal(ao.ChildEnvAllow, oa.ChildEnvAllow))
	ob, nb := old.Bridge, nu.Bridge
	live("bridge.cancel_grace", nb.CancelGrace != ob.CancelGrace, durationName(ob.CancelGrace, bridge.DefaultCancelGrace),
		durationName(nb.CancelGrace, bridge.DefaultCancelGrace))
	live("bridge.stop_listening_cancels", nb.StopListeningCancels != ob.StopListeningCancels, ob.StopListeningCancels, nb.StopListeningCancels)
	live("bridge.listening", nb.Listening != ob.Listening, listeningName(ob.Listening), listeningName(nb.Listening))
	live("bridge.on_shutdown", nb.OnShutdown != ob.OnShutdown, shutdownName(ob.OnShutdown), shutdownName(nb.OnShutdown))
	restart("bridge.journal", nu.JournalPath != old.JournalPath)
	restart("bridge.journal_keep_days", nu.JournalKeep != old.JournalKeep)
	restart("bridge.control_socket", nu.ControlSocket != old.ControlSocket)
	restart("hub.max_message_bytes", nu.HubMaxMessageSize != old.HubMaxMessageSize)
	no, oo := nu.Outputs, old.Outputs
	live("bridge.notify", no.Notify != oo.Notify, orDefault(oo.Notify), orDefault(no.Notify))
	restart("bridge.progress_after", no.ProgressAfter != oo.ProgressAfter)
	live("bridge.ask", nb.Ask != ob.Ask, ob.Ask, nb.Ask)
	live("bridge.ask_timeout", nb.AskTimeout != ob.AskTimeout, durationName(ob.AskTimeout, bridge.DefaultAskTimeout),
		durationName(nb.AskTimeout, bridge.DefaultAskTimeout))
	restart("bridge.speech.command", !slices.Equal(no.SpeechCommand, oo.SpeechCommand))
	restart("bridge.speech.max_chars", no.SpeechMaxChars != oo.SpeechMaxChars)
	restart("bridge.status_page.enabled", no.StatusPage != oo.StatusPage)
	restart("bridge.status_page.port", no.StatusPagePort != oo.StatusPagePort)
	return out
}

// policies are the bridge's run policies of o.
func policies(o BridgeOptions) bridge.RunPolicies {
	return bridge.RunPolicies{CancelGrace: o.CancelGrace, StopListeningCancels: o.StopListeningCancels, OnShutdown: o.OnShutdown,
		Ask: o.Ask, AskTimeout: o.AskTimeout}
}

// durationName names a duration setting (0 is its default).
func durationName(v, def time.Duration) string {
	if v <= 0 {
		return def.String() + " (default)"
	}
	return v.String()
}

// shutdownName names a shutdown policy ("" is the default).
func shutdownName(p bridge.ShutdownPolicy) string {
	if p == "" {
		return string(bridge.ShutdownCancel) + " (default)"
	}
	return string(p)
}

// listeningName names a listening policy ("" is the default).
func listeningName(p bridge.ListeningPolicy) string {
	if p == "" {
		return string(bridge.ListenFollowVendor) + " (default)"
	}
	return string(p)
}

// orDefault names an empty notify policy.
func orDefault(policy string) string {
	if policy == "" {
		return "answers (default)"
	}
	return policy
}

// diffRules describes what differs between two rule sets: rules added,
// removed, changed or moved, the command tools and the unmatched action.
func diffRules(old, nu *rules.Set) []string {
	var out []string
	oldRules := map[string]*rules.Rule{}
	for _, r := range old.Rules() {
		oldRules[r.Name()] = r
	}
	seen := map[string]bool{}
	for i, r := range nu.Rules() {
		seen[r.Name()] = true
		o, ok := oldRules[r.Name()]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("rule %q added", r.Name()))
		case !reflect.DeepEqual(o.Spec(), r.Spec()):
			out = append(out, fmt.Sprintf("rule %q changed", r.Name()))
		case o.Index() != i:
			out = append(out, fmt.Sprintf("rule %q moved to position %d", r.Name(), i+1))
		}
	}
	for _, r := range old.Rules() {
		if !seen[r.Name()] {
			out = append(out, fmt.Sprintf("rule %q removed", r.Name()))
		}
	}
	if !slices.Equal(old.CommandToolNames(), nu.CommandToolNames()) {
		out = append(out, fmt.Sprintf("command tools: %v -> %v", old.CommandToolNames(), nu.CommandToolNames()))
	} else {
		for _, name := range nu.CommandToolNames() {
			a, _ := old.CommandTool(name)
			b, _ := nu.CommandTool(name)
			if !reflect.DeepEqual(a, b) {
				out = append(out, fmt.Sprintf("command tool %q changed", name))
			}
		}
	}
	ou, _ := old.Unmatched(rules.Command{})
	nuu, _ := nu.Unmatched(rules.Command{})
	if (ou == nil) != (nuu == nil) || ou != nil && !reflect.DeepEqual(ou.Spec(), nuu.Spec()) {
		out = append(out, "unmatched action changed")
	}
	return out
}

// Force makes a stop in progress quick: the current run is force-cancelled
// (its worker terminated) instead of waiting for a soft cancel. A second
// interrupt calls it.
func (d *Daemon) Force(ctx context.Context) {
	b := d.Info().Bridge
	if b == nil {
		return
	}
	if res, err := b.Cancel(bridge.WithCancelSource(ctx, "a second interrupt"), true); err == nil && res.Stopped {
		d.log.Warn("stopping now: the current run is terminated", "command_id", res.CommandID)
	}
}

// announceStop says what Close waits for.
func (d *Daemon) announceStop(b *bridge.Bridge) {
	st, err := b.Status(context.Background())
	if err != nil || st.Current == nil {
		d.log.Info("stopping")
		return
	}
	if d.o.Bridge.OnShutdown == bridge.ShutdownLeave {
		d.log.Info(fmt.Sprintf("stopping: leaving run #%d on the Automate server (bridge.on_shutdown: leave)", st.Current.CommandID),
			"command_id", st.Current.CommandID)
		return
	}
	grace := d.o.Bridge.CancelGrace
	if grace <= 0 {
		grace = bridge.DefaultCancelGrace
	}
	wait := grace + 5*time.Second // the bridge's shutdown bound
	d.log.Info(fmt.Sprintf("stopping: waiting up to %d s for run #%d to cancel (interrupt again to stop at once)", int(wait.Seconds()), st.Current.CommandID),
		"command_id", st.Current.CommandID, "wait", wait.String())
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
func (d *Daemon) startAutomate(ctx context.Context) (bridge.AutomateTarget, *automate.Client, error) {
	ao, log := d.o.Automate, d.log
	if ao.External {
		var ports []int // zero: the contract's window
		if ao.Port > 0 {
			ports = []int{ao.Port}
		}
		disc, err := automate.Discover(ctx, automate.DiscoverOptions{Key: ao.Key, Product: ao.Product, Ports: ports})
		if err != nil {
			return bridge.AutomateTarget{}, nil, fmt.Errorf("find the external Automate server: %w", err)
		}
		c, err := automate.NewClient(automate.ClientOptions{BaseURL: disc.BaseURL, Key: ao.Key, Product: disc.Product, Logger: log.With("component", "automate-client")})
		if err != nil {
			return bridge.AutomateTarget{}, nil, err
		}
		return bridge.AutomateTarget{Mode: bridge.ModeExternal, Endpoint: disc.BaseURL, Product: disc.Product}, c, nil
	}
	// The daemon's own ledger (Start) records the runs' process groups
	// with its other children: the server keeps none of its own.
	run, err := server.Start(server.StartOptions{Port: ao.Port, Config: server.Config{Key: ao.Key, Product: ao.Product,
		Assistant: ao.Assistant, Workspace: ao.Workspace, WorkspaceRestriction: ao.WorkspaceRestriction, ToolWait: ao.ToolWait,
		ConfiguredMcpServers: ao.ConfiguredMcpServers, AppVersion: ao.AppVersion, Logger: log.With("component", "automate")}})
	if err != nil {
		return bridge.AutomateTarget{}, nil, err
	}
	go func() {
		<-run.Done()
		if err := run.Err(); err != nil {
			log.Error("automate server", "err", err)
		}
	}()
	d.pushStop(func() error {
		if err := run.Close(context.Background()); err != nil {
			log.Warn("automate server close", "err", err)
		}
		return nil
	})
	endpoint, srv := run.URL(), run.Server()
	c, err := automate.NewClient(automate.ClientOptions{BaseURL: endpoint, Key: ao.Key, Product: srv.Product(), Logger: log.With("component", "automate-client")})
	if err != nil {
		return bridge.AutomateTarget{}, nil, err
	}
	return bridge.AutomateTarget{Mode: bridge.ModeCohosted, Endpoint: endpoint, Product: srv.Product()}, c, nil
}

// StatusPage answers `hubgate open` (control.StatusPager): a login is
// armed only when asked for.
func (b *backend) StatusPage(_ context.Context, login bool) (control.StatusPage, bool) {
	if b.page == nil {
		return control.StatusPage{}, false
	}
	p := control.StatusPage{URL: b.page.URL()}
	if login {
		p.LoginURL = b.page.NewLoginURL()
	}
	return p, true
}

// RevokeLogin withdraws a login `hubgate open` armed and no browser took
// (control.StatusPager).
func (b *backend) RevokeLogin(_ context.Context, loginURL string) bool {
	return b.page != nil && b.page.RevokeLoginURL(loginURL)
}

// startNotify follows the bridge's events with the notifier: desktop
// notifications, and speech when a rule asks for it. It never fails the
// start: without a speech command, rules that ask for speech get a
// warning.
func (d *Daemon) startNotify(b *bridge.Bridge) {
	o, log := d.o.Outputs, d.log.With("component", "notify")
	d.ruleSet.Store(d.o.Rules)
	// The speaker starts nothing until a rule's answer is spoken; it is
	// made whatever the rules say now, so that a reload may add speak.
	speaker, err := notify.NewSpeaker(notify.SpeakerOptions{Command: o.SpeechCommand, MaxChars: o.SpeechMaxChars, Logger: log})
	if err != nil {
		speaker = nil
		d.speechErr = err
		warnNoSpeech(log, d.o.Rules, err)
	}
	desktop := o.Desktop
	if desktop == nil {
		desktop = notify.DefaultDesktop()
	}
	progressAfter := o.ProgressAfter
	if progressAfter == 0 {
		progressAfter = -1 // none
	}
	svc := notify.New(notify.Options{Default: o.Notify, Desktop: desktop, Speaker: speaker, Logger: log, ProgressAfter: progressAfter,
		// The rules as they are now (Reload swaps them).
		Rule: func(name string) (string, bool) {
			set := d.ruleSet.Load()
			if set == nil {
				return "", false
			}
			r, ok := set.Rule(name)
			if !ok {
				return "", false
			}
			return r.Notify(), r.Speak()
		},
		SpeechOn: func() bool {
			set := d.ruleSet.Load()
			return set != nil && slices.ContainsFunc(set.Rules(), (*rules.Rule).Speak)
		}})
	d.notifier = svc // Start holds d.mu
	ctx, cancel := context.WithCancel(context.Background())
	events := b.Subscribe(ctx, bridge.SubscribeOptions{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.Run(ctx, events)
	}()
	d.pushStop(func() error {
		// The bridge stopped first and its stream ends after the events
		// already published: the notifier gets to show those (the last may
		// be why the daemon stops: a token of another device, shown and
		// spoken), within a desktop call's and the last words' bounds.
		select {
		case <-d.bridgeDone:
			select {
			case <-done:
			case <-time.After(notify.DefaultTimeout + notify.StopSpeechWait):
			}
		default: // a failed start: the bridge never ran
		}
		cancel()
		<-done
		if speaker != nil {
			speaker.Close()
		}
		if c, ok := desktop.(interface{ Close() error }); ok {
			c.Close()
		}
		return nil
	})
}

// warnNoSpeech says, once per rule set, that rules ask to speak answers
// that cannot be spoken.
func warnNoSpeech(log *slog.Logger, set *rules.Set, err error) {
	if set != nil && slices.ContainsFunc(set.Rules(), (*rules.Rule).Speak) {
		log.Warn("rules ask to speak answers, but speech is not available", "err", err)
	}
}

// startStatusPage serves the status page on 127.0.0.1, when enabled.
func (d *Daemon) startStatusPage(ctx context.Context, b *bridge.Bridge) (*statuspage.Server, error) {
	o := d.o.Outputs
	if !o.StatusPage {
		return nil, nil
	}
	log := d.log.With("component", "statuspage")
	page, err := statuspage.Listen(net.JoinHostPort("127.0.0.1", strconv.Itoa(o.StatusPagePort)), statuspage.Options{Backend: b, Logger: log})
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := page.Serve(sctx); err != nil {
			log.Warn("status page", "err", err)
		}
	}()
	d.pushStop(func() error {
		cancel()
		<-done
		return nil
	})
	return page, nil
}

// startControl serves the control endpoint of `hubgate status`, `history`,
// `cancel`, `watch`, `open` and the reconnect request on a Unix socket only
// this user can reach.
func (d *Daemon) startControl(ctx context.Context, b control.Backend) error {
	log := d.log
	srv, err := control.Listen(control.Config{Path: d.o.ControlSocket, Handler: b, Lock: d.lock, Logger: log.With("component", "control")})
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
