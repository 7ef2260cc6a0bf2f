package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/controlcli"
)

// watchLine is one line of `hubgate watch --json` and when it arrived.
type watchLine struct {
	event bridge.Event
	at    time.Time
}

// startWatch runs `hubgate watch --json` against s's daemon, in this
// process; its lines arrive on the channel as it writes them.
func startWatch(t testing.TB, s *daemonSetup, args ...string) (<-chan watchLine, *inProc) {
	t.Helper()
	p := startInProc(t, s.environ(), nil, append([]string{"--config", s.configPath, "watch", "--json"}, args...)...)
	lines := make(chan watchLine, 1000)
	go func() {
		defer close(lines)
		read := 0
		for ended := false; !ended; {
			select {
			case <-p.written.C():
			case <-p.done: // every write came before
				ended = true
			}
			at := time.Now()
			out := p.stdout.String()
			for {
				i := strings.IndexByte(out[read:], '\n')
				if i < 0 {
					break
				}
				line := out[read : read+i]
				read += i + 1
				var e bridge.Event
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Errorf("watch printed a line that is not an event: %q: %v", line, err)
					return
				}
				lines <- watchLine{e, at}
			}
		}
	}()
	return lines, p
}

func nextLine(t testing.TB, lines <-chan watchLine, what string, match func(bridge.Event) bool) watchLine {
	t.Helper()
	deadline := time.After(e2eWait)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("watch ended before %s", what)
			}
			if match(l.event) {
				return l
			}
		case <-deadline:
			t.Fatalf("no %s from watch within %s", what, e2eWait)
		}
	}
}

// watchHelloRule is the rule of the watch test and benchmark: an answer at
// once.
const watchHelloRule = `rules:
  - name: hello
    match: {command: hello}
    run:
      prompt: "Say hello\n#!answer Hello from the watched daemon"
`

// `hubgate watch --json` shows a finished run's answer, the one the
// journal records, with the command's whole life before it; it exits 9
// when the daemon stops or is not there. How soon after the journal row the
// answer arrives is measured by BenchmarkWatchAnswerLag.
func TestWatchShowsTheAnswerAsTheJournalRecordsIt(t *testing.T) {
	h := startHub(t)
	s := newDaemonSetup(t, h, daemonConfig{Bridge: watchHelloRule})
	if r := runCmd(t, s.environ(), "", "--config", s.configPath, "watch"); r.code != ExitNotRunning {
		t.Fatalf("watch without a daemon: exit %d, stderr %q", r.code, r.stderr)
	}
	d := startListening(t, s)
	lines, watch := startWatch(t, s, "--history", "50")
	// The history shows the hub reaching "listening": the stream is live.
	nextLine(t, lines, "the hub state", func(e bridge.Event) bool { return e.Kind == bridge.EventHub && e.Hub.Status == "listening" })

	for i := range 5 {
		h.push("hello", nil)
		var kinds []string
		steps := 0
		fin := nextLine(t, lines, "the finished run", func(e bridge.Event) bool {
			switch e.Kind {
			case bridge.EventStep:
				if len(kinds) > 0 && kinds[len(kinds)-1] == "started" {
					steps++
				}
			case bridge.EventRunStatus: // as many as the server reported
			default:
				kinds = append(kinds, string(e.Kind))
			}
			return e.Kind == bridge.EventFinished
		})
		// The run's steps come between its start and its end.
		if got, want := strings.Join(kinds, " "), "received decided started finished"; got != want || steps == 0 {
			t.Errorf("run %d: events %s with %d steps, want %s with its steps", i, got, steps, want)
		}
		if fin.event.Answer != "Hello from the watched daemon" || fin.event.Status != "completed" || fin.event.Command != "hello" {
			t.Fatalf("finished event %+v", fin.event)
		}
		e := journalEntry(t, s.journal, fin.event.CommandID)
		if e.Answer != fin.event.Answer || e.FinishedAt.IsZero() {
			t.Fatalf("journal row %+v", e)
		}
	}

	d.stop(syscall.SIGTERM)
	for range lines {
	}
	if code := watch.wait(t, e2eWait); code != ExitNotRunning {
		t.Fatalf("watch after the daemon stopped: exit %d, want %d\n%s", code, ExitNotRunning, watch.stderr.String())
	}
}

// BenchmarkWatchAnswerLag: `hubgate mock`, `hubgate run` and `hubgate
// watch --json`; one command at a time, each answered at
// once. The lag is from the journal row of the finished run (its
// FinishedAt, stamped by the daemon) to the moment this test read the
// finished event from watch's stdout (one wall clock).
// Reports p50-ms, p99-ms and max-ms. Target: under 100 ms. Run it with
// e.g. `go test -run '^$' -bench WatchAnswerLag -benchtime 50x ./cmd/hubgate`.
func BenchmarkWatchAnswerLag(b *testing.B) {
	h := startHub(b)
	s := newDaemonSetup(b, h, daemonConfig{Bridge: watchHelloRule})
	startListening(b, s)
	lines, _ := startWatch(b, s, "--history", "50")
	// The history shows the hub reaching "listening": the stream is live.
	nextLine(b, lines, "the hub state", func(e bridge.Event) bool { return e.Kind == bridge.EventHub && e.Hub.Status == "listening" })
	one := func() time.Duration {
		h.push("hello", nil)
		fin := nextLine(b, lines, "the finished run", func(e bridge.Event) bool { return e.Kind == bridge.EventFinished })
		e := journalEntry(b, s.journal, fin.event.CommandID)
		if e.FinishedAt.IsZero() || e.Answer != fin.event.Answer {
			b.Fatalf("journal row %+v, watch event %+v", e, fin.event)
		}
		return fin.at.Sub(e.FinishedAt)
	}
	for range 3 { // warm up: the connections, the journal's statements
		one()
	}
	lags := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		lags = append(lags, one())
	}
	b.StopTimer()
	reportLatencies(b, lags)
}

// journalEntry reads one entry of the journal file.
func journalEntry(t testing.TB, path string, id int64) journal.Entry {
	t.Helper()
	for _, e := range journalEntries(t, path) {
		if e.ID == id {
			return e
		}
	}
	t.Fatalf("no journal entry %d", id)
	return journal.Entry{}
}

// formatEvent prints the event stream's one text form (bridge.Event.Lines),
// each line after the local time.
func TestFormatEventIsTheTextFormAfterTheTime(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	e := bridge.Event{At: at, Kind: bridge.EventFinished, CommandID: 4, Status: "completed", Answer: "one\ntwo", DurationMs: 12}
	want := "03:04:05 [#4] run finished: completed in 12 ms\n03:04:05 [#4] answer: one\n      two"
	if got := controlcli.FormatEvent(e); got != want {
		t.Errorf("formatEvent:\n got %q\nwant %q", got, want)
	}
}
