package daemon

import (
	"context"
	"sync"
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
	var mu sync.Mutex
	device, token := f.device, ""
	first := f.opts.DeviceToken
	f.opts.DeviceToken = func(ctx context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if token != "" {
			return token, nil
		}
		return first(ctx)
	}
	f.opts.Pairing = func(context.Context) (string, string, error) {
		mu.Lock()
		defer mu.Unlock()
		return device, f.url, nil
	}
	d, err := New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
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
	mu.Lock()
	device, token = dev2.ID, tok2.Token
	mu.Unlock()
	if _, err := control.Dial(f.opts.ControlSocket).Reconnect(t.Context()); err != nil {
		t.Fatal(err)
	}
	listening("the device after the reconnect")
}
