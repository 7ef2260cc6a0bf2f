package daemon

import (
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/internal/testutil"
)

// nextHubEvent reads events until a hub state that match accepts, and
// fails the test when the stream ends or none comes within
// testutil.DefaultTimeout.
func nextHubEvent(t *testing.T, events <-chan bridge.Event, what string, match func(*bridge.HubStatus) bool) *bridge.HubStatus {
	t.Helper()
	deadline := time.After(testutil.DefaultTimeout)
	for {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("the event stream ended before a hub event: %s", what)
			}
			if e.Kind == bridge.EventHub && e.Hub != nil && match(e.Hub) {
				return e.Hub
			}
		case <-deadline:
			t.Fatalf("no hub event: %s", what)
		}
	}
}

func isListening(s *bridge.HubStatus) bool { return s.Status == "listening" }

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
	nextHubEvent(t, events, "listening: the first device", isListening)
	repair(dev2.ID, tok2.Token)
	if _, err := control.Dial(f.opts.ControlSocket).Reconnect(t.Context()); err != nil {
		t.Fatal(err)
	}
	nextHubEvent(t, events, "listening: the device after the reconnect", isListening)
}

// The bridge's event stream carries a hub disconnect with its reason: the
// mock drops every connection, the stream shows the hub not listening,
// with a cause and a reason, and then listening again.
func TestEventStreamCarriesAHubDisconnectWithItsReason(t *testing.T) {
	f := newFixture(t)
	d := f.start(t)
	events := d.Info().Bridge.Subscribe(t.Context(), bridge.SubscribeOptions{History: 100, Buffer: 1000})
	next := func(what string, match func(*bridge.HubStatus) bool) *bridge.HubStatus {
		t.Helper()
		return nextHubEvent(t, events, what, match)
	}
	next("listening", isListening)

	if n := f.mock.DropConnections(); n != 1 {
		t.Fatalf("the mock dropped %d connections, want 1", n)
	}
	down := next("not listening after the drop", func(s *bridge.HubStatus) bool { return !isListening(s) })
	t.Logf("after the drop: %+v", *down)
	if down.Status == "stopped" || down.Cause != "network" || down.Reason == "" {
		t.Errorf("the drop shows as status %q, cause %q, reason %q; want a reconnect with cause network and a reason",
			down.Status, down.Cause, down.Reason)
	}
	next("listening again", isListening)
}
