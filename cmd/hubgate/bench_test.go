package main

// Benchmarks of `hubgate run` with the real binaries on loopback:
//
//   - BenchmarkHubPushToRunRequest: from the mock's push of a DeviceCommand
//     (mockhub.PushCommand, the mock in this process) to the moment an
//     Automate server receives the daemon's POST /v1/runs. The daemon is
//     the real binary; the server is an in-test automate/server with the
//     scripted engine, wrapped in a middleware that timestamps the arrival,
//     and the daemon's discovery is pinned to its port. One command at a
//     time, each waited for to its end (its journal row, read every
//     200 us). Reports p50-ms, p99-ms and max-ms, and the p50 and p99 of
//     the legs, from the journal's stamps: push-call (the push call
//     alone), hub-leg (push to the hub client's receipt), bridge-leg
//     (receipt to RunStarted: matching, rendering), post-leg (RunStarted
//     to the server's arrival: the journal's commit and the POST).
//     Target: p99 at or under 1 ms.
//   - BenchmarkRunStartToListening: exec of `hubgate run` to the mock's
//     event log showing the device's DeviceStartedListening (the mock's
//     timestamp). Target < 150 ms with a local hub.
//   - BenchmarkRunIdleRSS: VmRSS of `hubgate run` once listening and idle
//     for a second. Budget 25 MB (issue 26). "static" is the binary as
//     README's install command builds it (CGO_ENABLED=0); "cgo" the same code with
//     cgo on (go build's default where a C compiler is installed), for
//     comparison (libc and ld.so mapped in).
//   - BenchmarkRunIdleWakeups: the idle daemon over a window (env
//     HUBGATE_BENCH_IDLE_WINDOW, a Go duration; default 60s), starting
//     two seconds after it listens: CPU time (the threads'
//     /proc/<pid>/task/*/schedstat, in ns) and context switches (voluntary_ctxt_switches +
//     nonvoluntary_ctxt_switches of every thread's /proc/<pid>/task/*/status),
//     both per minute (a thread that ends within the window is not
//     counted; Go rarely ends threads). Voluntary switches are the wake-ups: a thread that
//     sleeps and is woken. Target: no timer of ours beyond the hub's
//     keep-alive (the 15 s SignalR ping); the Go runtime's own (sysmon,
//     the forced GC every 2 min) remain.
//
// Run them with e.g. `go test -run '^$' -bench . -benchtime 200x
// ./cmd/hubgate` (the RSS, start and idle benchmarks do one daemon per
// iteration; -benchtime 5x suits them, 1x the idle one). Nothing here
// asserts a timing. docs/performance.md has the commands and figures.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// benchServer is an in-test Automate server that timestamps each
// POST /v1/runs as it arrives; a daemon finds it through discovery pinned
// to its port.
type benchServer struct {
	url      string
	port     int
	key      string
	arrivals chan time.Time // one per run request, at arrival
	answered chan struct{}  // one per run request, once answered
}

// startBenchServer listens on a loopback port the OS chooses; the daemon's
// discovery is pinned to it (daemonConfig.Port).
func startBenchServer(b *testing.B) *benchServer {
	b.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	bs := &benchServer{url: "http://" + ln.Addr().String(), port: ln.Addr().(*net.TCPAddr).Port, key: uniqueKey(b),
		arrivals: make(chan time.Time, 16), answered: make(chan struct{}, 16)}
	srv, err := server.New(server.Config{Key: bs.key, Assistant: scripted.New(scripted.Config{Logger: quiet}),
		Workspace: b.TempDir(), Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	next := srv.Handler()
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		run := r.Method == http.MethodPost && r.URL.Path == "/v1/runs"
		if run {
			bs.arrivals <- time.Now()
		}
		next.ServeHTTP(w, r)
		if run {
			bs.answered <- struct{}{}
		}
	})}
	go hs.Serve(ln)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
		hs.Shutdown(ctx)
	})
	return bs
}

func BenchmarkHubPushToRunRequest(b *testing.B) {
	bs := startBenchServer(b)
	// The mock runs in this process so that the clock starts at the hub's
	// push itself (mockhub.PushCommand), not at a test's admin call; the
	// daemon is the real binary.
	mock, err := mockhub.New(mockhub.Config{})
	if err != nil {
		b.Fatal(err)
	}
	mts := httptest.NewServer(mock.Handler())
	b.Cleanup(func() { mts.Close(); mock.Close() })
	h := &e2eHub{tb: b, url: mts.URL, client: &http.Client{Timeout: 30 * time.Second}}
	if st, body := h.admin("POST", "/mock/devices", map[string]string{"name": "bench pad"}, &h.device); st != http.StatusCreated {
		b.Fatalf("create a device: %d %s", st, body)
	}
	s := newDaemonSetup(b, h, daemonConfig{External: true, Port: bs.port, Key: bs.key, Bridge: `rules:
  - name: bench
    match: {command_glob: "bench *"}
    busy: queue
    queue_limit: 1000
    run: {prompt: "#!answer ok"}
`})
	s.ownProcess = true // the daemon measured is the binary, with its own GOMAXPROCS
	d := startListening(b, s)
	if st := d.status(); st.Automate.Endpoint != bs.url {
		b.Fatalf("the daemon did not find the bench server %s: %+v", bs.url, st.Automate)
	}
	j, err := journal.OpenReadOnly(s.journal)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()

	n := 0
	var calls []time.Duration // the push call alone (queued on the hub connection)
	// The legs, from the journal's own stamps: push to the hub client's
	// receipt (mock, WebSocket, hub client), receipt to RunStarted (journal
	// writes, matching, rendering), RunStarted to the server's arrival
	// (the POST).
	var hubLeg, bridgeLeg, postLeg []time.Duration
	// one pushes a command and returns the push-to-arrival latency, once
	// the daemon has journaled the run's end (so that the next command
	// finds the slot free).
	one := func() time.Duration {
		n++
		t0 := time.Now()
		if err := mock.PushCommand(h.id(), fmt.Sprintf("bench %d", n), nil); err != nil {
			b.Fatalf("push: %v", err)
		}
		calls = append(calls, time.Since(t0))
		var at time.Time
		select {
		case at = <-bs.arrivals:
		case <-time.After(e2eWait):
			b.Fatalf("command %d never reached the server:\n%s", n, d.Stderr())
		}
		<-bs.answered
		want := fmt.Sprintf("bench %d", n)
		for deadline := time.Now().Add(e2eWait); ; time.Sleep(200 * time.Microsecond) {
			es, err := j.History(context.Background(), journal.HistoryQuery{Limit: 1})
			if err == nil && len(es) == 1 && es[0].Command == want && es[0].Run == journal.RunFinished {
				hubLeg = append(hubLeg, es[0].ReceivedAt.Sub(t0))
				bridgeLeg = append(bridgeLeg, es[0].RunStartedAt.Sub(es[0].ReceivedAt))
				postLeg = append(postLeg, at.Sub(es[0].RunStartedAt))
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("command %d was not journaled as finished", n)
			}
		}
		return at.Sub(t0)
	}
	for range 10 { // warm up: connections, prepared statements
		one()
	}
	calls, hubLeg, bridgeLeg, postLeg = calls[:0], hubLeg[:0], bridgeLeg[:0], postLeg[:0]
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		lat = append(lat, one())
	}
	b.StopTimer()
	reportLatencies(b, lat)
	for _, leg := range []struct {
		name string
		d    []time.Duration
	}{{"push-call", calls}, {"hub-leg", hubLeg}, {"bridge-leg", bridgeLeg}, {"post-leg", postLeg}} {
		slices.Sort(leg.d)
		b.ReportMetric(float64(leg.d[len(leg.d)/2])/float64(time.Millisecond), leg.name+"-p50-ms")
		b.ReportMetric(float64(leg.d[min(len(leg.d)-1, len(leg.d)*99/100)])/float64(time.Millisecond), leg.name+"-p99-ms")
	}
	es, err := j.History(context.Background(), journal.HistoryQuery{Limit: journal.MaxHistoryLimit})
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range es {
		if e.Status != automate.StatusCompleted {
			b.Fatalf("a benchmark run did not complete: %s", e2eDump([]journal.Entry{e}))
		}
	}
}

// reportLatencies reports p50, p99 and max in milliseconds.
func reportLatencies(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(q(0.50)), "p50-ms")
	b.ReportMetric(ms(q(0.99)), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
}

// benchTargets runs f for the co-hosted target and the external one.
func benchTargets(b *testing.B, f func(b *testing.B, c daemonConfig)) {
	b.Run("cohosted", func(b *testing.B) { f(b, daemonConfig{Bridge: "rules: []\n"}) })
	b.Run("external", func(b *testing.B) {
		bs := startBenchServer(b)
		f(b, daemonConfig{External: true, Port: bs.port, Key: bs.key, Bridge: "rules: []\n"})
	})
}

func BenchmarkRunStartToListening(b *testing.B) {
	benchTargets(b, func(b *testing.B, c daemonConfig) {
		h := startHub(b)
		s := newDaemonSetup(b, h, c)
		s.ownProcess = true // a process's start is measured
		var took []time.Duration
		for range b.N {
			t0 := time.Now()
			d := startDaemon(b, s)
			ev := waitDeviceEvent(b, h, d.since, "DeviceStartedListening")
			took = append(took, ev.Time.Sub(t0))
			b.StopTimer()
			if code := d.stop(syscall.SIGTERM); code != 0 {
				b.Fatalf("SIGTERM: exit %d\n%s", code, d.Stderr())
			}
			b.StartTimer()
		}
		slices.Sort(took)
		b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "p50-start-ms")
		b.ReportMetric(float64(took[len(took)-1])/float64(time.Millisecond), "max-start-ms")
	})
}

func BenchmarkRunIdleRSS(b *testing.B) {
	benchTargets(b, func(b *testing.B, c daemonConfig) {
		h := startHub(b)
		s := newDaemonSetup(b, h, c)
		b.Run("static", func(b *testing.B) { idleRSS(b, s) })
		// For comparison, the same code built with cgo on (go build's
		// default where a C compiler is installed): the C resolver and user
		// lookup bring libc and the dynamic loader into the process.
		b.Run("cgo", func(b *testing.B) {
			b.StopTimer() // the build is not the measure
			cs := *s
			cs.binary = cgoBinary(b)
			b.StartTimer()
			idleRSS(b, &cs)
		})
	})
}

// idleRSS starts the daemon of s b.N times and reports the largest VmRSS
// once listening and idle for a second.
func idleRSS(b *testing.B, s *daemonSetup) {
	var worst, anon, file float64
	for range b.N {
		s.ownProcess = true // its own memory
		d := startListening(b, s)
		time.Sleep(time.Second) // the measurement protocol: idle for a second
		st := procStatus(b, d.pid())
		if st["VmRSS"] > worst {
			worst, anon, file = st["VmRSS"], st["RssAnon"], st["RssFile"]
		}
		b.StopTimer()
		d.stop(syscall.SIGTERM)
		b.StartTimer()
	}
	b.ReportMetric(worst, "rss-MB")
	b.ReportMetric(anon, "rss-anon-MB") // heap, stacks
	b.ReportMetric(file, "rss-file-MB") // the binary's (and libc's) pages mapped in
}

func BenchmarkRunIdleWakeups(b *testing.B) {
	window := time.Minute
	if v := os.Getenv("HUBGATE_BENCH_IDLE_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("HUBGATE_BENCH_IDLE_WINDOW=%q: want a positive Go duration such as 60s", v)
		}
		window = d
	}
	benchTargets(b, func(b *testing.B, c daemonConfig) {
		h := startHub(b)
		s := newDaemonSetup(b, h, c)
		var cpu, vol, all float64
		for range b.N {
			s.ownProcess = true // its own CPU time and wakeups
			d := startListening(b, s)
			pid := d.pid()
			time.Sleep(2 * time.Second) // past the start's own work
			cpu0 := procCPU(b, pid)
			v0, n0 := procSwitches(b, pid)
			time.Sleep(window) // the measurement: the daemon alone, idle
			cpu1 := procCPU(b, pid)
			v1, n1 := procSwitches(b, pid)
			perMin := float64(time.Minute) / float64(window)
			cpu += (cpu1 - cpu0) * perMin
			vol += (v1 - v0) * perMin
			all += (v1 - v0 + n1 - n0) * perMin
			b.StopTimer()
			d.stop(syscall.SIGTERM)
			b.StartTimer()
		}
		n := float64(b.N)
		b.ReportMetric(cpu/n, "cpu-ms/min")
		b.ReportMetric(vol/n, "wakeups/min")
		b.ReportMetric(all/n, "ctxsw/min")
	})
}

// procCPU returns the CPU time of pid's live threads in milliseconds:
// the first field of each /proc/<pid>/task/*/schedstat, in nanoseconds
// (utime+stime of /proc/<pid>/stat counts 10 ms ticks, too coarse for a
// daemon that idles at a few ms a minute).
func procCPU(b testing.TB, pid int) float64 {
	b.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		b.Skipf("no /proc/%d/task/*/schedstat here: %v", pid, err)
	}
	var ns float64
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(raw))
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			b.Fatalf("%s: %q", t, raw)
		}
		ns += v
	}
	return ns / 1e6
}

// procSwitches sums the voluntary and nonvoluntary context switches of
// every live thread of pid.
func procSwitches(b testing.TB, pid int) (voluntary, nonvoluntary float64) {
	b.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(tasks) == 0 {
		b.Skipf("no /proc/%d/task here: %v", pid, err)
	}
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(raw), "\n") {
			name, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			switch {
			case err != nil:
			case name == "voluntary_ctxt_switches":
				voluntary += n
			case name == "nonvoluntary_ctxt_switches":
				nonvoluntary += n
			}
		}
	}
	return voluntary, nonvoluntary
}

var cgoBuild struct {
	once sync.Once
	path string
	err  error
}

// cgoBinary builds hubgate with cgo once per test binary; it skips b
// where that is impossible (no C compiler).
func cgoBinary(b *testing.B) string {
	b.Helper()
	cgoBuild.once.Do(func() {
		cgoBuild.path = filepath.Join(filepath.Dir(binary), "hubgate-cgo")
		cgoBuild.err = buildHubgate(cgoBuild.path, true)
	})
	if cgoBuild.err != nil {
		b.Skipf("no cgo build here: %v", cgoBuild.err)
	}
	return cgoBuild.path
}

// waitDeviceEvent waits for the device's event with action after since.
func waitDeviceEvent(b *testing.B, h *e2eHub, since int64, action string) mockhub.Event {
	b.Helper()
	return h.waitAction(since, action)
}

// procStatus reads the kB fields of /proc/<pid>/status, in MB.
func procStatus(b testing.TB, pid int) map[string]float64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc here: %v", err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if v, isKB := strings.CutSuffix(strings.TrimSpace(v), " kB"); ok && isKB {
			if kb, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				out[name] = float64(kb) / 1024
			}
		}
	}
	if _, ok := out["VmRSS"]; !ok {
		b.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	return out
}
