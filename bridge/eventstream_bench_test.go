package bridge

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkPublish is the cost the event stream adds to each step of the
// bridge: one event handed to n subscribers that keep up.
func BenchmarkPublish(b *testing.B) {
	for _, n := range []int{0, 1, 4} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			bus := newEventBus(DefaultEventBuffer, DefaultEventHistory)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for range n {
				ch := bus.subscribe(ctx, SubscribeOptions{})
				go func() {
					for range ch {
					}
				}()
			}
			e := Event{Kind: EventFinished, CommandID: 1, Command: "hello", Answer: "Hello from hubgate"}
			b.ReportAllocs()
			for b.Loop() {
				bus.publish(e)
			}
		})
	}
}

// The history ring keeps the latest events across wrap-arounds.
func TestEventHistoryRing(t *testing.T) {
	bus := newEventBus(4, 500)
	for range 1200 {
		bus.publish(Event{Kind: EventHub})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []struct {
		history  int
		first, n uint64
	}{{10, 1191, 10}, {1000, 701, 500}, {0, 0, 0}} {
		ch := bus.subscribe(ctx, SubscribeOptions{History: c.history})
		for i := range c.n {
			if e := <-ch; e.Seq != c.first+i {
				t.Fatalf("history %d: event %d has seq %d, want %d", c.history, i, e.Seq, c.first+i)
			}
		}
		select {
		case e := <-ch:
			t.Fatalf("history %d: an extra event %+v", c.history, e)
		default:
		}
	}
}
