package hub

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/hub/mockhub"
)

// TestSoakFaults runs the client against the mock hub through a series of
// faults, one after the other: the hub killed and restarted on the same
// port, frozen until the probe notices, and every connection dropped.
// After each fault it waits for the connection and listening to come
// back, pushes a batch that must all arrive, and pushes a few more right
// before the next fault (in flight: the hub's pushes are fire-and-forget,
// so what a fault eats of those is reported, not asserted).
//
// It reports reconnections, listening restorations and events lost as
// figures and asserts that nothing the client read was lost or reordered.
// It runs in a synctest bubble over an in-memory network: the times it
// reports are the bubble's clock (the backoffs, probe intervals and
// timeouts as configured, not the machine's speed), and an in-memory
// connection has no socket buffer, so the events a fault catches in flight
// are lost whole more often than on TCP. 51 faults by default (a second or
// two), 9 with -short, HUBGATE_SOAK_FAULTS=n for a longer run.
func TestSoakFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		faults := 51
		if testing.Short() {
			faults = 9
		}
		if v := os.Getenv("HUBGATE_SOAK_FAULTS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				t.Fatalf("HUBGATE_SOAK_FAULTS=%q", v)
			}
			faults = n
		}
		const settled, inFlight = 20, 5

		env := newMockEnv(t, mockhub.Config{})
		cfg := env.config(t)
		cfg.AutoListen = true
		cfg.ProbeInterval = 600 * time.Millisecond
		cfg.HandshakeTimeout = 2 * time.Second
		cfg.InvokeTimeout = 2 * time.Second
		cfg.Backoff = Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond}
		c := start(t, must(New(cfg)))

		// The consumer: a journal of every command received.
		var jmu sync.Mutex
		var journal []Event
		arrived := make(chan struct{}, 1)
		go func() {
			for e := range c.Events() {
				jmu.Lock()
				journal = append(journal, e)
				jmu.Unlock()
				select {
				case arrived <- struct{}{}:
				default:
				}
			}
		}()
		received := func() map[string]bool {
			jmu.Lock()
			defer jmu.Unlock()
			m := make(map[string]bool, len(journal))
			for _, e := range journal {
				m[e.Command] = true
			}
			return m
		}
		waitArrived := func(cmds []string) {
			timeout := time.After(wait)
			for {
				got := received()
				missing := 0
				for _, c := range cmds {
					if !got[c] {
						missing++
					}
				}
				if missing == 0 {
					return
				}
				select {
				case <-arrived:
				case <-timeout:
					t.Fatalf("%d of %d settled events never arrived", missing, len(cmds))
				}
			}
		}

		began := time.Now()
		var pushedInFlight, acceptedInFlight int
		var inFlightCmds []string
		var freezeDetect []time.Duration
		next := 0
		push := func(n int) (accepted []string) {
			for i := 0; i < n; i++ {
				cmd := fmt.Sprintf("soak-%06d", next)
				next++
				if env.mock.PushCommand(env.dev.ID, cmd, nil) == nil {
					accepted = append(accepted, cmd)
				}
			}
			return accepted
		}

		session := uint64(0)
		lastStarted := int64(0)
		for f := 0; f <= faults; f++ {
			// Connected and listening on a new connection, announced to the hub.
			st := waitState(t, c.Client, fmt.Sprintf("listening after fault %d", f), wait, func(s State) bool {
				return s.Status == StatusListening && s.Session > session
			})
			session = st.Session
			ev := env.waitLogged(t, lastStarted, "DeviceStartedListening")
			lastStarted = ev.Seq
			batch := push(settled)
			if len(batch) != settled {
				t.Fatalf("fault %d: the mock took %d of %d pushes on a listening connection", f, len(batch), settled)
			}
			waitArrived(batch)
			if f == faults {
				break
			}
			pushedInFlight += inFlight
			acc := push(inFlight)
			acceptedInFlight += len(acc)
			inFlightCmds = append(inFlightCmds, acc...)

			switch f % 3 {
			case 0: // killed and restarted on the same port
				env.kill()
				waitState(t, c.Client, "reconnecting after the kill", wait, isStatus(StatusReconnecting))
				env.restart()
			case 1: // frozen until noticed
				at := time.Now()
				env.mock.Freeze(time.Hour)
				s := waitState(t, c.Client, "reconnecting after the freeze", wait, isStatus(StatusReconnecting))
				freezeDetect = append(freezeDetect, time.Since(at))
				if s.Cause != CauseUnresponsive {
					t.Errorf("fault %d: a freeze ended with %v", f, s)
				}
				env.mock.Freeze(0)
			case 2: // every connection dropped
				env.mock.DropConnections()
				waitState(t, c.Client, "reconnecting after the drop", wait, isStatus(StatusReconnecting))
			}
		}
		elapsed := time.Since(began)

		// Nothing the client read was lost or reordered. The dispatcher counts
		// an event as delivered right after the consumer took it, so the count
		// may trail the journal by the event just handed over: let it catch
		// up before comparing.
		synctest.Wait()
		s := c.Stats()
		jmu.Lock()
		defer jmu.Unlock()
		if s.Dropped != 0 || s.Received != s.Delivered || uint64(len(journal)) != s.Delivered {
			t.Errorf("client lost events: stats %+v, journal %d", s, len(journal))
		}
		prevCmd := ""
		var prevSeq uint64
		for _, e := range journal {
			if e.Kind == KindDeviceRecord { // one or two per connection, not numbered
				continue
			}
			if prevSeq != 0 && e.Seq != prevSeq+1 {
				t.Errorf("seq %d after %d", e.Seq, prevSeq)
			}
			prevSeq = e.Seq
			if e.Command <= prevCmd {
				t.Errorf("command %s after %s: reordered or duplicated", e.Command, prevCmd)
			}
			prevCmd = e.Command
		}
		got := map[string]bool{}
		for _, e := range journal {
			got[e.Command] = true
		}
		lostInFlight := 0
		for _, cmd := range inFlightCmds {
			if !got[cmd] {
				lostInFlight++
			}
		}
		var worstFreeze time.Duration
		for _, d := range freezeDetect {
			worstFreeze = max(worstFreeze, d)
		}
		if s.Reconnects != uint64(faults) || s.ListeningRestored != uint64(faults) {
			t.Errorf("after %d faults: %d reconnections, %d listening restorations", faults, s.Reconnects, s.ListeningRestored)
		}
		t.Logf("soak: %d faults (kill+restart, freeze, drop) in %s: %d reconnections, %d listening restorations, %d connection attempts, %d probe failures",
			faults, elapsed.Round(time.Millisecond), s.Reconnects, s.ListeningRestored, s.Attempts, s.ProbeFailures)
		t.Logf("soak: events delivered %d, settled events lost 0 of %d, in-flight events lost at a fault %d of %d accepted (%d pushed), lost inside the client %d; worst freeze detection %s",
			s.Delivered, faults*settled+settled, lostInFlight, acceptedInFlight, pushedInFlight, s.Dropped+(s.Received-s.Delivered), worstFreeze.Round(time.Millisecond))
	})
}
