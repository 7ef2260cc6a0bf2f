package daemon

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub"
)

// fakeHubClient is a hub client whose stream the test feeds and whose
// stop (its DeviceStoppedListening) lasts until release is closed.
type fakeHubClient struct {
	events  chan hub.Event
	release chan struct{}
}

func newFakeHubClient() *fakeHubClient {
	return &fakeHubClient{events: make(chan hub.Event, 8), release: make(chan struct{})}
}

func (f *fakeHubClient) Run(ctx context.Context) error {
	<-ctx.Done()
	<-f.release
	close(f.events)
	return nil
}

func (f *fakeHubClient) Events() <-chan hub.Event                   { return f.events }
func (f *fakeHubClient) Listening() bool                            { return true }
func (f *fakeHubClient) State() hub.State                           { return hub.State{Status: hub.StatusListening} }
func (f *fakeHubClient) Device() *deviceapi.UserDevice              { return nil }
func (f *fakeHubClient) Subscribe(context.Context) <-chan hub.State { return nil }

// A client replaced while an older one is still stopping is forwarded in
// its turn: its events (a StartListening, a command) are not skipped for
// the newest client's. Before the switch kept its line of clients, the
// forwarder went from the oldest straight to the current one.
func TestHubSwitchForwardsEveryReplacedClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b, c := newFakeHubClient(), newFakeHubClient(), newFakeHubClient()
		close(b.release) // b stops at once; a's stop lasts until released
		h := newHubSwitch(slog.New(slog.DiscardHandler), a)
		h.run(a)
		a.events <- hub.Event{Kind: hub.KindDeviceCommand, Command: "a1"}
		h.run(b) // a retires, slowly
		b.events <- hub.Event{Kind: hub.KindStartListening}
		b.events <- hub.Event{Kind: hub.KindDeviceCommand, Command: "b1"}
		h.run(c) // b retires, its stream ends now
		c.events <- hub.Event{Kind: hub.KindDeviceCommand, Command: "c1"}
		synctest.Wait()
		close(a.release)

		var got []string
		for range 4 {
			ev := <-h.Events() // a missing event blocks the bubble: the test fails
			got = append(got, string(ev.Kind)+" "+ev.Command)
		}
		want := []string{"DeviceCommand a1", "StartListening ", "DeviceCommand b1", "DeviceCommand c1"}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("forwarded %q, want %q", got, want)
			}
		}
		close(c.release)
		h.stop()
		if _, ok := <-h.Events(); ok {
			t.Fatal("the stream is still open after stop")
		}
	})
}
