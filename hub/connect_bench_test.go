package hub

import (
	"context"
	"testing"
	"time"

	"github.com/hubgate/hubgate/hub/mockhub"
)

// BenchmarkHubConnect measures one connection from Run to the connected
// state (negotiate, WebSocket, handshake, VerifySelf, GetLatestDevice) on
// the mock over loopback: through the negotiate redirect to the mock's
// SignalR service (the real service's way, the mock's default), and
// against the mock's direct hub. The difference is the cost of the
// redirect: one more negotiate round trip and a second TCP connection.
//
// Run: go test -run '^$' -bench HubConnect -benchtime 200x ./hub/
func BenchmarkHubConnect(b *testing.B) {
	for _, tc := range []struct {
		name   string
		direct bool
	}{{"redirect", false}, {"direct", true}} {
		b.Run("hub="+tc.name, func(b *testing.B) {
			env := newLoopbackMockEnv(b, mockhub.Config{DirectHub: tc.direct})
			cfg := env.config(b)
			cfg.Logger = nil
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c := must(New(cfg))
				ctx, cancel := context.WithCancel(context.Background())
				states := c.Subscribe(ctx)
				done := make(chan error, 1)
				go func() { done <- c.Run(ctx) }()
				connected := false
				for s := range states {
					if s.Status == StatusConnected {
						connected = true
						break
					}
				}
				b.StopTimer()
				if !connected {
					b.Fatal("not connected")
				}
				cancel()
				go func() {
					for range c.Events() {
					}
				}()
				select {
				case <-done:
				case <-time.After(wait):
					b.Fatal("Run did not return")
				}
				b.StartTimer()
			}
		})
	}
}
