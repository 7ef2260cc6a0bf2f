package hub

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkFrozenHubDetection measures how long the client takes to notice
// a hub that stops answering (the peer freezes its connection; the
// library's ServerTimeout is a minute, so only the liveness probe can
// notice). docs/hub.md promises at most twice ProbeInterval; this
// reports the median and the worst of b.N freezes, in ms and in probe
// intervals. Each iteration takes about one probe interval (1 s):
//
//	go test -run '^$' -bench FrozenHubDetection -benchtime 5x ./hub/
func BenchmarkFrozenHubDetection(b *testing.B) {
	const interval = time.Second
	var took []time.Duration
	for b.Loop() {
		p := newLoopbackPeer(b, testDevice, testToken)
		p.pingEvery.Store(int64(50 * time.Millisecond))
		cfg := wireConfig(b, p, nil)
		cfg.ProbeInterval = interval
		cfg.ServerTimeout = time.Minute
		c := start(b, must(New(cfg)))
		pc := p.nextConn(b, wait)
		waitState(b, c.Client, "connected", wait, isStatus(StatusConnected))
		frozenAt := time.Now()
		pc.frozen.Store(true)
		st := waitState(b, c.Client, "reconnecting", wait, isStatus(StatusReconnecting))
		took = append(took, time.Since(frozenAt))
		if st.Cause != CauseUnresponsive {
			b.Fatalf("state = %v", st)
		}
		c.stop(b)
	}
	slices.Sort(took)
	median, worst := took[len(took)/2], took[len(took)-1]
	b.ReportMetric(float64(median)/float64(time.Millisecond), "median-ms")
	b.ReportMetric(float64(worst)/float64(time.Millisecond), "max-ms")
	b.ReportMetric(float64(worst)/float64(interval), "max-intervals")
}
