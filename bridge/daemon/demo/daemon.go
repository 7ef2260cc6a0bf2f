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

// daemonOptions are the demo daemon's options, as values: the embedded
// demo rules, the journal and the control socket in the temp dir, the
// co-hosted Automate server with the scripted engine on any free port, no
// desktop notifications; every other option keeps its zero value, which
// is the configuration's default.
func (r *run) daemonOptions(m *mock, p *paired, set *rules.Set, key string) daemon.Options {
	return daemon.Options{
		DeviceID:     p.device.ID,
		Device:       p.device, // the REST device the pairing confirmed
		DeviceTypeID: m.srv.Config().DeviceTypeID,
		APIURL:       m.base,
		DeviceToken: func(ctx context.Context) (string, error) {
			return p.store.Get(ctx, pairing.AccountDeviceToken)
		},
		Rules:         set,
		JournalPath:   filepath.Join(r.dir, "journal.db"),
		ControlSocket: filepath.Join(r.dir, "control.sock"),
		Automate: daemon.AutomateOptions{Key: key, Port: -1,
			Assistant:  scripted.New(scripted.Config{Logger: r.log.With("component", "engine")}),
			Workspace:  filepath.Join(r.dir, "workspace"),
			AppVersion: r.o.Version},
		// The narrative shows every answer; desktop notifications stay
		// off. The status page runs, as with the defaults.
		Outputs: daemon.OutputOptions{Notify: rules.NotifyNone, StatusPage: true},
		Logger:  r.log,
		Now:     r.o.Now,
	}
}

// running is the demo's daemon while it runs.
type running struct {
	info daemon.Info
	done chan error // the daemon's Run result
	stop context.CancelFunc
}

// startDaemon starts the daemon and waits until it is up.
func (r *run) startDaemon(ctx context.Context, opts daemon.Options) (*running, error) {
	ready := make(chan daemon.Info, 1)
	opts.Ready = func(i daemon.Info) { ready <- i }
	d, err := daemon.New(opts)
	if err != nil {
		return nil, err
	}
	dctx, stop := context.WithCancel(ctx)
	rd := &running{done: make(chan error, 1), stop: stop}
	go func() { rd.done <- d.Run(dctx) }()
	select {
	case rd.info = <-ready:
		return rd, nil
	case derr := <-rd.done:
		stop()
		return nil, r.daemonEnded(ctx, derr)
	}
}

// daemonEnded turns an early end of the daemon into Run's result.
func (r *run) daemonEnded(ctx context.Context, derr error) error {
	if ctx.Err() != nil {
		return r.interrupted()
	}
	if derr == nil {
		derr = errors.New("it returned without being asked to stop")
	}
	return fmt.Errorf("demo: the daemon stopped: %w", derr)
}

// runDaemon runs the daemon, follows its event stream, pushes the sample
// command and, unless Once, stays up until ctx ends.
func (r *run) runDaemon(ctx context.Context, m *mock, p *paired) (err error) {
	key, err := configs.GenerateAccessKey()
	if err != nil {
		return err
	}
	set, err := rules.Demo()
	if err != nil {
		return err
	}
	r.say("daemon", nil, "3. starting the daemon in this process, as 'hubgate run' does")
	rd, err := r.startDaemon(ctx, r.daemonOptions(m, p, set, key))
	if err != nil {
		return err
	}
	f := newFollower(r)
	followed := make(chan struct{})
	defer func() {
		rd.stop()
		if derr := <-rd.done; derr != nil && !errors.Is(derr, context.Canceled) && err == nil {
			err = derr
		}
		<-followed
		r.say("daemon-stopped", nil, "stopped the daemon (DeviceStoppedListening sent, journal closed) and its Automate server")
	}()
	r.say("automate", map[string]any{"automateUrl": rd.info.AutomateURL},
		"   Automate server (scripted engine) at %s; its access key exists in this process only", rd.info.AutomateURL)
	journalPath := filepath.Join(r.dir, "journal.db")
	r.say("journal", map[string]any{"journal": journalPath}, "   journal: %s", journalPath)
	r.say("rules", map[string]any{"rules": ruleNames(set)}, "   routing rules (the embedded demo set): %s", strings.Join(ruleNames(set), ", "))

	// Every event of the daemon's life so far, then each new one.
	events := rd.info.Bridge.Subscribe(ctx, bridge.SubscribeOptions{History: bridge.DefaultEventHistory, Buffer: 4096})
	go func() {
		defer close(followed)
		f.follow(events)
	}()
	return r.drive(ctx, m, p, set, rd, f)
}

// drive waits for the device to listen, pushes the sample command, waits
// until it is settled and then, unless Once, until ctx ends.
func (r *run) drive(ctx context.Context, m *mock, p *paired, set *rules.Set, rd *running, f *follower) error {
	startCtx, cancel := context.WithTimeout(ctx, r.o.StartTimeout)
	defer cancel()
	select {
	case <-f.listening:
	case derr := <-rd.done:
		return r.daemonEnded(ctx, derr)
	case <-startCtx.Done():
		if ctx.Err() != nil {
			return r.interrupted()
		}
		return fmt.Errorf("demo: the device did not start listening within %s (hub: %s)", r.o.StartTimeout, rd.info.Hub.State())
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
	case derr := <-rd.done:
		return r.daemonEnded(ctx, derr)
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
	case derr := <-rd.done:
		return r.daemonEnded(ctx, derr)
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
