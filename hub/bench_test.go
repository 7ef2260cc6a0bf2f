//go:build linux

package hub

// The benchmark measures, on the same mock hub in the same run, this
// client and the official @microsoft/signalr client (node, pinned in
// testdata/npm):
//
//   - latency: one DeviceCommand pushed at a time through the mock's Go API
//     (mockhub.Server.PushCommand), the next only after the consumer got
//     the previous one; the latency is CLOCK_MONOTONIC at the consumer
//     (this client's Events channel; the official client's handler) minus
//     CLOCK_MONOTONIC taken just before the push, carried in the command
//     string. Both processes read the same clock.
//   - throughput: b.N commands pushed as fast as the mock takes them while
//     the consumer reads; events per second from the first push to the
//     last event at the consumer, with order checked on every event.
//
// Run: go test -run '^$' -bench HubEvents -benchtime 3000x ./hub/
// The two clients use two devices of one mock, so that a push reaches one
// client only.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testenv"
)

// mono is CLOCK_MONOTONIC in nanoseconds (node's process.hrtime.bigint).
func mono() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

var benchMacro = &deviceapi.Macro{ID: "7d1f4c2e-0000-4000-8000-000000000001", Name: "bench", Commands: []string{"bench"},
	Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventKeyPress, Keys: []string{"A"}}}}

// parseStamp splits "<index>:<mono ns>".
func parseStamp(cmd string) (int, int64, error) {
	i, ts, ok := strings.Cut(cmd, ":")
	if !ok {
		return 0, 0, fmt.Errorf("bad command %q", cmd)
	}
	idx, err := strconv.Atoi(i)
	if err != nil {
		return 0, 0, err
	}
	n, err := strconv.ParseInt(ts, 10, 64)
	return idx, n, err
}

// nodeClient is the official client in a node process.
type nodeClient struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func startNodeClient(t testing.TB, url, token string) *nodeClient {
	t.Helper()
	node := testenv.RequireNode(t)
	mod := testenv.NpmBin(t, "@microsoft/signalr/dist/cjs/index.js")
	script, err := filepath.Abs(filepath.Join("testdata", "signalr_client.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "SIGNALR_MODULE="+mod, "HUB_URL="+url, "HUB_TOKEN="+token)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &nodeClient{cmd: cmd, in: in, lines: make(chan string, 1<<16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			n.lines <- sc.Text()
		}
		close(n.lines)
	}()
	t.Cleanup(func() {
		fmt.Fprintln(in, "quit")
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	if l := n.line(t); !strings.HasPrefix(l, "ready ") {
		t.Fatalf("node client: %q", l)
	}
	return n
}

func (n *nodeClient) line(t testing.TB) string {
	t.Helper()
	select {
	case l, ok := <-n.lines:
		if !ok {
			t.Fatalf("node client exited")
		}
		return l
	case <-time.After(wait):
		t.Fatalf("node client: no output within %s", wait)
	}
	return ""
}

func (n *nodeClient) arm(t testing.TB, mode string, count int) {
	t.Helper()
	fmt.Fprintf(n.in, "%s %d\n", mode, count)
	if l := n.line(t); l != "armed "+mode {
		t.Fatalf("node client: %q", l)
	}
}

// benchSide is one client under measurement.
type benchSide struct {
	name     string
	deviceID string
	// latency pushes and waits for one event; returns its latency.
	latency func(t testing.TB, i int) time.Duration
	// burst pushes n events and returns the time from the first push to
	// the last event, failing on any event out of order.
	burst func(t testing.TB, n int) time.Duration
}

func goSide(t testing.TB, env *mockEnv) *benchSide {
	dev, tok, err := env.mock.CreateDevice("", "go bench")
	if err != nil {
		t.Fatal(err)
	}
	cfg := env.config(t)
	cfg.DeviceID, cfg.TokenSource = dev.ID, staticToken(tok.Token)
	cfg.Logger = nil
	cfg.QueueLimit = 1 << 22
	cfg.ProbeInterval = 0 // default
	c := start(t, must(New(cfg)))
	waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
	// The benchmark counts commands: the device's record (KindDeviceRecord,
	// VerifySelf's answer) comes first.
	nextCommand := func() Event {
		for {
			if e := <-c.Events(); e.Kind == KindDeviceCommand {
				return e
			}
		}
	}
	return &benchSide{
		name: "go", deviceID: dev.ID,
		latency: func(t testing.TB, i int) time.Duration {
			if err := env.mock.PushCommand(dev.ID, fmt.Sprintf("%d:%d", i, mono()), benchMacro); err != nil {
				t.Fatal(err)
			}
			e := nextCommand()
			now := mono()
			idx, ts, err := parseStamp(e.Command)
			if err != nil || idx != i {
				t.Fatalf("event %q, want index %d (%v)", e.Command, i, err)
			}
			return time.Duration(now - ts)
		},
		burst: func(t testing.TB, n int) time.Duration {
			begin := mono()
			go func() {
				for i := 0; i < n; i++ {
					_ = env.mock.PushCommand(dev.ID, fmt.Sprintf("%d:0", i), benchMacro)
				}
			}()
			for i := 0; i < n; i++ {
				e := nextCommand()
				if idx, _, _ := parseStamp(e.Command); idx != i {
					t.Fatalf("event %d is %q: order lost", i, e.Command)
				}
			}
			return time.Duration(mono() - begin)
		},
	}
}

func npmSide(t testing.TB, env *mockEnv) *benchSide {
	dev, tok, err := env.mock.CreateDevice("", "npm bench")
	if err != nil {
		t.Fatal(err)
	}
	n := startNodeClient(t, env.url(), tok.Token)
	armed := 0 // latency events left before re-arming
	return &benchSide{
		name: "npm", deviceID: dev.ID,
		latency: func(t testing.TB, i int) time.Duration {
			if armed == 0 {
				armed = 1 << 20
				n.arm(t, "latency", armed)
			}
			armed--
			if err := env.mock.PushCommand(dev.ID, fmt.Sprintf("%d:%d", i, mono()), benchMacro); err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(n.line(t))
			if len(f) != 3 || f[0] != "ack" || f[1] != strconv.Itoa(i) {
				t.Fatalf("node client: %v, want ack %d", f, i)
			}
			ns, _ := strconv.ParseInt(f[2], 10, 64)
			return time.Duration(ns)
		},
		burst: func(t testing.TB, count int) time.Duration {
			armed = 0
			n.arm(t, "burst", count)
			begin := mono()
			go func() {
				for i := 0; i < count; i++ {
					_ = env.mock.PushCommand(dev.ID, fmt.Sprintf("%d:0", i), benchMacro)
				}
			}()
			f := strings.Fields(n.line(t))
			if len(f) != 4 || f[0] != "done" || f[1] != strconv.Itoa(count) {
				t.Fatalf("node client: %v", f)
			}
			if f[2] != "0" {
				t.Fatalf("official client: %s of %d events out of order", f[2], count)
			}
			last, _ := strconv.ParseInt(f[3], 10, 64)
			return time.Duration(last - begin)
		},
	}
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p * float64(len(sorted)-1))
	return sorted[i]
}

// BenchmarkHubEvents compares this client with the official one; see the
// top of the file.
func BenchmarkHubEvents(b *testing.B) {
	env := newLoopbackMockEnv(b, mockhub.Config{})
	sides := []*benchSide{goSide(b, env), npmSide(b, env)}
	type figures struct{ p50, p99, rate float64 }
	results := map[string]*figures{}
	for _, s := range sides {
		results[s.name] = &figures{}
		b.Run("latency/client="+s.name, func(b *testing.B) {
			for i := 0; i < 50; i++ { // warm up
				s.latency(b, i)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lat = append(lat, s.latency(b, 50+i))
			}
			b.StopTimer()
			slices.Sort(lat)
			p50, p99 := percentile(lat, 0.50), percentile(lat, 0.99)
			b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(p99.Nanoseconds())/1e3, "p99-µs")
			results[s.name].p50 = float64(p50.Nanoseconds()) / 1e3
			results[s.name].p99 = float64(p99.Nanoseconds()) / 1e3
		})
		b.Run("throughput/client="+s.name, func(b *testing.B) {
			n := max(b.N, 1000)
			d := s.burst(b, n)
			rate := float64(n) / d.Seconds()
			b.ReportMetric(rate, "events/s")
			b.ReportMetric(0, "ns/op")
			results[s.name].rate = rate
		})
	}
	g, o := results["go"], results["npm"]
	b.Logf("push-to-consumer p50 %.0f µs (official %.0f µs), p99 %.0f µs (official %.0f µs); %.0f events/s (official %.0f), order kept by both",
		g.p50, o.p50, g.p99, o.p99, g.rate, o.rate)
}

// TestOfficialClientHarness keeps the benchmark's node side honest in CI:
// the official client connects to the mock hub with a device token,
// receives pushed commands with their latency, and a burst in order.
func TestOfficialClientHarness(t *testing.T) {
	env := newLoopbackMockEnv(t, mockhub.Config{})
	s := npmSide(t, env)
	for i := 0; i < 20; i++ {
		if d := s.latency(t, i); d <= 0 || d > time.Minute {
			t.Fatalf("latency %s", d)
		}
	}
	if d := s.burst(t, 500); d <= 0 {
		t.Fatalf("burst took %s", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := env.mock.WaitEvent(ctx, 0, func(e mockhub.Event) bool {
		return e.Action == "VerifySelf" && e.DeviceID == s.deviceID
	}); err != nil {
		t.Fatalf("the official client's VerifySelf is not in the mock log: %v", err)
	}
}
