package daemon

import (
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
)

// The bridge's event stream carries the hub's states across a reconnect:
// the first client's way to listening, then the new one's.
func TestEventStreamFollowsTheHubAcrossAReconnect(t *testing.T) {
	f := newFixture(t)
	dev2, tok2, err := f.mock.CreateDevice("", "second")
	if err != nil {
		t.Fatal(err)
	}
	repair := f.switchablePairing()
	d := f.start(t)
	events := d.Info().Bridge.Subscribe(t.Context(), bridge.SubscribeOptions{History: 100, Buffer: 1000})
	listening := func(what string) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case e := <-events:
				if e.Kind == control.EventHub && e.Hub.Status == "listening" {
					return
				}
			case <-deadline:
				t.Fatalf("no hub event 'listening' for %s", what)
			}
		}
	}
	listening("the first device")
	repair(dev2.ID, tok2.Token)
	if _, err := control.Dial(f.opts.ControlSocket).Reconnect(t.Context()); err != nil {
		t.Fatal(err)
	}
	listening("the device after the reconnect")
}

// The bridge's event stream carries a hub disconnect with its reason: the
// mock drops every connection, the stream shows the hub not listening,
// with a cause and a reason, and then listening again.
func TestEventStreamCarriesAHubDisconnectWithItsReason(t *testing.T) {
	f := newFixture(t)
	d := f.start(t)
	events := d.Info().Bridge.Subscribe(t.Context(), bridge.SubscribeOptions{History: 100, Buffer: 1000})
	next := func(what string, match func(*control.HubStatus) bool) *control.HubStatus {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case e := <-events:
				if e.Kind == control.EventHub && e.Hub != nil && match(e.Hub) {
					return e.Hub
				}
			case <-deadline:
				t.Fatalf("no hub event: %s", what)
			}
		}
	}
	isListening := func(s *control.HubStatus) bool { return s.Status == "listening" }
	next("listening", isListening)

	if n := f.mock.DropConnections(); n != 1 {
		t.Fatalf("the mock dropped %d connections, want 1", n)
	}
	down := next("not listening after the drop", func(s *control.HubStatus) bool { return !isListening(s) })
	t.Logf("after the drop: %+v", *down)
	if down.Status == "stopped" || down.Cause != "network" || down.Reason == "" {
		t.Errorf("the drop shows as status %q, cause %q, reason %q; want a reconnect with cause network and a reason",
			down.Status, down.Cause, down.Reason)
	}
	next("listening again", isListening)
}
