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
