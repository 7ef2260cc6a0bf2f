package demo

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/daemon"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// daemonOptions are the demo daemon's options: the caller's (Options.Daemon:
// `hubgate demo` passes the embedded defaults mapped as `hubgate run` maps
// its configuration, with the engine they name), and over them what is the
// demo's own, each named here: the paired device and its token from
// memory, the embedded demo rules, the journal, the control socket and the
// workspace in the temp dir, the co-hosted Automate server on any free
// port with a key of this process only, no desktop notification (the
// narrative shows every answer), the demo's logger and clock.
func (r *run) daemonOptions(m *mock, p *paired, set *rules.Set, key string) (daemon.Options, error) {
	var o daemon.Options
	if r.o.Daemon != nil {
		var err error
		if o, err = r.o.Daemon(r.dir); err != nil {
			return daemon.Options{}, fmt.Errorf("demo: the daemon's options: %w", err)
		}
	}
	o.DeviceID, o.Device = p.device.ID, p.device // the REST device the pairing confirmed
	o.DeviceTypeID = m.srv.Config().DeviceTypeID
	o.APIURL = m.base
	o.DeviceToken = func(ctx context.Context) (string, error) {
		return p.store.Get(ctx, pairing.AccountDeviceToken)
	}
	o.Pairing = nil // the pairing lives in memory: a reconnect keeps it
	o.Rules = set
	o.JournalPath = filepath.Join(r.dir, "journal.db")
	o.ControlSocket = filepath.Join(r.dir, "control.sock")
	o.Lock = nil
	o.Automate.External, o.Automate.Key, o.Automate.Port = false, key, -1
	o.Automate.Workspace = filepath.Join(r.dir, "workspace")
	o.Automate.AppVersion = r.o.Version
	if o.Automate.Assistant == nil {
		o.Automate.Assistant = scripted.New(scripted.Config{Logger: r.log.With("component", "engine")})
	}
	o.Outputs.Notify, o.Outputs.ProgressAfter = rules.NotifyNone, 0
	o.Ready = nil
	o.Logger, o.Now = r.log, r.o.Now
	return o, nil
}

// startDaemon makes the daemon and starts it, as `hubgate run` does
// (daemon.Supervise: New, then Start, which returns once every part runs).
func (r *run) startDaemon(ctx context.Context, opts daemon.Options) (*daemon.Daemon, error) {
	d, err := daemon.New(opts)
	if err != nil {
		return nil, err
	}
	if err := d.Start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, r.interrupted()
		}
		return nil, fmt.Errorf("demo: start the daemon: %w", err)
	}
	return d, nil
}

// daemonEnded turns an early end of the daemon (its bridge stopped on its
// own: d.Done) into Run's result.
func (r *run) daemonEnded(ctx context.Context, d *daemon.Daemon) error {
	if ctx.Err() != nil {
		return r.interrupted()
	}
	derr := d.Close()
	if derr == nil {
		derr = errors.New("it returned without being asked to stop")
	}
	return fmt.Errorf("demo: the daemon stopped: %w", derr)
}

// runDaemon runs the daemon, follows its event stream, pushes the sample
// command and, unless Once, stays up until ctx ends.
func (r *run) runDaemon(ctx context.Context, m *mock, p *paired) (err error) {
	// The access key as `hubgate run` gets it (configs.AutomateKey), from
	// the demo's memory store, where it is made on first use; no
	// HUBGATE_AUTOMATE_KEY is read.
	key, _, err := configs.AutomateKey(ctx, p.store, func(string) string { return "" })
	if err != nil {
		return fmt.Errorf("demo: the Automate access key: %w", err)
	}
	set, err := rules.Demo()
	if err != nil {
		return err
	}
	opts, err := r.daemonOptions(m, p, set, key)
	if err != nil {
		return err
	}
	r.say("daemon", nil, "3. starting the daemon in this process, as 'hubgate run' does")
	d, err := r.startDaemon(ctx, opts)
	if err != nil {
		return err
	}
	info := d.Info()
	f := newFollower(r)
	followed := make(chan struct{})
	defer func() {
		if derr := d.Close(); derr != nil && !errors.Is(derr, context.Canceled) && err == nil {
			err = derr
		}
		<-followed
		r.say("daemon-stopped", nil, "stopped the daemon (DeviceStoppedListening sent, journal closed) and its Automate server")
	}()
	r.say("automate", map[string]any{"automateUrl": info.AutomateURL},
		"   Automate server (scripted engine) at %s; its access key exists in this process only", info.AutomateURL)
	r.say("journal", map[string]any{"journal": opts.JournalPath}, "   journal: %s", opts.JournalPath)
	r.say("rules", map[string]any{"rules": ruleNames(set)}, "   routing rules (the embedded demo set): %s", strings.Join(ruleNames(set), ", "))

	// Every event of the daemon's life so far, then each new one.
	events := info.Bridge.Subscribe(ctx, bridge.SubscribeOptions{History: bridge.DefaultEventHistory, Buffer: 4096})
	go func() {
		defer close(followed)
		f.follow(events)
	}()
	return r.drive(ctx, m, p, set, d, f)
}

// drive waits for the device to listen, pushes the sample command, waits
// until it is settled and then, unless Once, until ctx ends.
func (r *run) drive(ctx context.Context, m *mock, p *paired, set *rules.Set, d *daemon.Daemon, f *follower) error {
	startCtx, cancel := context.WithTimeout(ctx, r.o.StartTimeout)
	defer cancel()
	select {
	case <-f.listening:
	case <-d.Done():
		return r.daemonEnded(ctx, d)
	case <-startCtx.Done():
		if ctx.Err() != nil {
			return r.interrupted()
		}
		return fmt.Errorf("demo: the device did not start listening within %s (hub: %s)", r.o.StartTimeout, d.Info().Hub.State())
	}
	if err := waitListening(startCtx, m.srv, p.device.ID); err != nil {
		if ctx.Err() != nil {
			return r.interrupted()
		}
		return fmt.Errorf("demo: the mock did not see device %s listening within %s: %w", p.device.ID, r.o.StartTimeout, err)
	}
	r.say("listening", map[string]any{"deviceId": p.device.ID},
		"   the mock sees device %s connected, verified and listening", p.device.ID)

	// 4. The sample command, followed through the bridge's event stream.
	r.say("push", map[string]any{"command": r.o.Command},
		"4. pushing DeviceCommand %q through the mock hub, as the app does when you press a button", r.o.Command)
	if err := m.srv.PushCommand(p.device.ID, r.o.Command, nil); err != nil {
		return fmt.Errorf("demo: push the sample command: %w", err)
	}
	var first outcome
	select {
	case first = <-f.first:
	case <-d.Done():
		return r.daemonEnded(ctx, d)
	case <-ctx.Done():
		return r.interrupted()
	}
	if r.o.Once {
		if first.Status == automate.StatusCompleted {
			return nil
		}
		return &RunError{CommandID: first.ID, Decision: first.Decision, Status: first.Status,
			ErrorCode: first.ErrorCode, Reason: first.Reason}
	}

	// 5. Stay up.
	r.hint(m.base, p.device.ID, set)
	select {
	case <-ctx.Done():
		r.say("stopping", nil, "stopping")
		return nil
	case <-d.Done():
		return r.daemonEnded(ctx, d)
	}
}

// waitListening waits until the mock sees the device connected, verified
// and listening, woken by each event of the mock's journal.
func waitListening(ctx context.Context, srv *mockhub.Server, id string) error {
	listening := func() bool {
		d, ok := srv.Device(id)
		return ok && d.IsConnected && d.IsVerified && d.IsListening
	}
	if listening() {
		return nil
	}
	_, err := srv.WaitEvent(ctx, 0, func(mockhub.Event) bool { return listening() })
	return err
}

// ruleNames are the names of the rules of set, and the unmatched action.
func ruleNames(set *rules.Set) []string {
	var names []string
	for _, r := range set.Rules() {
		names = append(names, r.Name())
	}
	if _, ok := set.Unmatched(rules.Command{}); ok {
		names = append(names, "anything else: run as the prompt")
	}
	return names
}
