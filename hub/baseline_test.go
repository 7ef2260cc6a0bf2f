package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/philippseith/signalr"
)

// libReceiver is the plain library design: one method per hub target,
// with the arity the spec shows.
type libReceiver struct {
	signalr.Receiver
	mu    sync.Mutex
	order []int
	got   chan struct{}
}

func (r *libReceiver) DeviceCommand(command string, macro json.RawMessage) {
	i, _ := strconv.Atoi(strings.TrimPrefix(command, "c"))
	r.mu.Lock()
	r.order = append(r.order, i)
	r.mu.Unlock()
	r.got <- struct{}{}
}

func (r *libReceiver) StartListening() {}

// BenchmarkLibraryReceiverBaseline measures what this package avoids: the
// library's own receiver dispatch, against the same scripted hub. It
// reports the fraction of b.N pushed commands that reached the receiver
// after a later one, and how many completions without invocationId (which make
// ASP.NET Core close the connection) the library sent for one
// StartListening carrying an argument. Compare TestWireOrderUnderBurst and
// TestWireInvocationsWithoutIDAndUnexpectedArity, where both are zero.
func BenchmarkLibraryReceiverBaseline(b *testing.B) {
	p := newLoopbackPeer(b, testDevice, testToken)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	recv := &libReceiver{got: make(chan struct{}, b.N+1)}
	headers := func() http.Header {
		h := http.Header{}
		h.Set("Authorization", "Bearer "+testToken)
		h.Set("X-Device-Token", testToken)
		return h
	}
	c, err := signalr.NewClient(ctx,
		signalr.WithConnector(func() (signalr.Connection, error) {
			return signalr.NewHTTPConnection(ctx, p.url(), signalr.WithHTTPHeaders(headers), signalr.WithTransports(signalr.TransportWebSockets), signalr.WithNegotiateVersion(1))
		}),
		signalr.WithReceiver(recv),
		signalr.Logger(kitLogger{newLogger(b)}, false),
	)
	if err != nil {
		b.Fatal(err)
	}
	c.Start()
	defer c.Stop()
	pc := p.nextConn(b, wait)

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pc.send(invocation("DeviceCommand", fmt.Sprintf(`"c%d"`, i), `{}`))
	}
	for i := 0; i < b.N; i++ {
		select {
		case <-recv.got:
		case <-time.After(wait):
			b.Fatalf("only %d of %d commands arrived", i, b.N)
		}
	}
	b.StopTimer()
	recv.mu.Lock()
	outOfOrder, highest := 0, -1 // commands that arrived after a later one
	for _, v := range recv.order {
		if v < highest {
			outOfOrder++
		}
		highest = max(highest, v)
	}
	recv.mu.Unlock()

	// The library answers at once if it does: the first completion
	// without invocationId, or none within 5 s.
	pc.send(invocation("StartListening", `"unexpected"`))
	bad := 0
	timeout := time.After(5 * time.Second)
awaitBad:
	for bad == 0 {
		select {
		case r := <-pc.in:
			if r.Type == 3 && r.id() == "" {
				bad++
			}
		case <-timeout:
			break awaitBad
		}
	}
	b.ReportMetric(float64(outOfOrder)/float64(b.N), "out-of-order/op")
	b.ReportMetric(float64(bad), "bad-completions")
}
