package journal

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
)

const (
	crashChildEnv = "HUBGATE_JOURNAL_CRASH_CHILD" // the journal path
	crashSyncEnv  = "HUBGATE_JOURNAL_CRASH_SYNC"
)

// crashAnswer is deterministic and large enough that a row spans pages.
func crashAnswer(i int) string {
	return fmt.Sprintf("answer %d ", i) + strings.Repeat("x", 1500+i%700)
}

func crashUsage(i int) *automate.Usage {
	return &automate.Usage{InputTokens: i, OutputTokens: 2 * i, GenerationMs: int64(3 * i), TPS: float64(i) / 4}
}

// TestCrashChild is the child side of TestCrashSIGKILL: it writes commands
// and runs forever, printing a line after each write returned (an
// acknowledgement), until it is killed.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("helper process for TestCrashSIGKILL")
	}
	j, err := Open(path, Options{Synchronous: Sync(os.Getenv(crashSyncEnv))})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	ctx := context.Background()
	ack := func(step string, id int64, i int, err error) {
		if err != nil {
			fmt.Println("ERR", step, err)
			os.Exit(2)
		}
		// A direct write(2) on stdout: printed only after the commit returned.
		fmt.Printf("%s %d %d\n", step, id, i)
	}
	for i := 1; ; i++ {
		id, _, err := j.RecordCommand(ctx, Command{Seq: uint64(i), Session: 1, Text: "cmd " + strconv.Itoa(i),
			MacroJSON: []byte(`{"n":` + strconv.Itoa(i) + `}`), Rule: "r"})
		ack("R", id, i, err)
		if i%3 == 0 {
			ack("D", id, i, j.SetDecision(ctx, id, DecisionDropped, "busy"))
			continue
		}
		ack("S", id, i, j.RunStarted(ctx, id, "task-"+strconv.Itoa(i), time.Time{}))
		if i%3 == 1 {
			ack("P", id, i, j.RunParked(ctx, id, "req-"+strconv.Itoa(i), "tok-"+strconv.Itoa(i)))
		}
		ack("F", id, i, j.RunFinished(ctx, id, Outcome{RequestID: "req-" + strconv.Itoa(i), Status: automate.StatusCompleted,
			Answer: crashAnswer(i), Usage: crashUsage(i), DurationMs: int64(i)}))
	}
}

func TestCrashSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, sync := range []Sync{SyncNormal, SyncFull} {
		t.Run(string(sync), func(t *testing.T) {
			for round := range 3 {
				crashRound(t, sync, 150+round*170)
			}
		})
	}
}

type ack struct {
	id   int64
	i    int
	step string
}

func crashRound(t *testing.T, sync Sync, killAfter int) {
	path := filepath.Join(t.TempDir(), "j.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path, crashSyncEnv+"="+string(sync))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	last := map[int64]ack{} // the latest acknowledged step of each command
	acked := 0
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "ERR") {
			t.Fatalf("child: %s", line)
		}
		var a ack
		if _, err := fmt.Sscanf(line, "%s %d %d", &a.step, &a.id, &a.i); err != nil {
			continue // test framework chatter
		}
		last[a.id] = a
		acked++
		if acked == killAfter && !killed {
			// SIGKILL while the child keeps writing; lines already in the
			// pipe are still read below: they were acknowledged.
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("the child exited before being killed: %v", err)
	}

	ctx := context.Background()
	// A reader first, on the journal as the crash left it (hot WAL).
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly after the crash: %v", err)
	}
	ro, err := r.History(ctx, HistoryQuery{Limit: MaxHistoryLimit})
	r.Close()
	if err != nil {
		t.Fatalf("read-only History after the crash: %v", err)
	}

	j, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("reopening after the crash: %v", err)
	}
	defer j.Close()
	if err := j.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := j.History(ctx, HistoryQuery{Limit: MaxHistoryLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(ro) != len(all) {
		t.Errorf("read-only reader saw %d rows, writer %d", len(ro), len(all))
	}
	byID := map[int64]Entry{}
	for _, e := range all {
		byID[e.ID] = e
	}
	for id, a := range last {
		e, ok := byID[id]
		if !ok {
			t.Fatalf("acknowledged command %d (step %s) is missing", id, a.step)
		}
		if e.Command != "cmd "+strconv.Itoa(a.i) || e.Seq != uint64(a.i) || string(e.Macro) != `{"n":`+strconv.Itoa(a.i)+`}` {
			t.Fatalf("command %d damaged: %+v", id, e)
		}
		switch a.step {
		case "D":
			if e.Decision != DecisionDropped {
				t.Fatalf("command %d: acknowledged drop lost: %+v", id, e)
			}
		case "S":
			if e.Run == RunNone || e.TaskID != "task-"+strconv.Itoa(a.i) {
				t.Fatalf("command %d: acknowledged RunStarted lost: %+v", id, e)
			}
		case "P":
			if (e.Run != RunParked && e.Run != RunFinished) || e.RequestID != "req-"+strconv.Itoa(a.i) {
				t.Fatalf("command %d: acknowledged RunParked lost: %+v", id, e)
			}
		case "F":
			if e.Run != RunFinished || e.Answer != crashAnswer(a.i) || *e.Usage != *crashUsage(a.i) {
				t.Fatalf("command %d: acknowledged RunFinished lost or damaged: run %s answer %.20q", id, e.Run, e.Answer)
			}
		}
	}
	// At most the one command in progress was written without an
	// acknowledgement; every row is whole.
	if len(all) > len(last)+1 {
		t.Fatalf("%d rows for %d acknowledged commands", len(all), len(last))
	}
	inFlight := 0
	for _, e := range all {
		if e.Command != "cmd "+strconv.FormatUint(e.Seq, 10) {
			t.Fatalf("row %d damaged: %+v", e.ID, e)
		}
		if e.Run == RunRunning || e.Run == RunParked {
			inFlight++
		}
	}
	rec, err := j.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.InFlight) != inFlight {
		t.Fatalf("Recover found %d in-flight runs, the rows say %d", len(rec.InFlight), inFlight)
	}
	t.Logf("%s: killed after %d acknowledgements: %d rows, %d in flight, %d undecided", sync, acked, len(all), inFlight, len(rec.Undecided))
}

func TestConcurrentReaders(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const n = 150
	var done atomic.Bool
	writerErr := make(chan error, 1)
	go func() {
		defer done.Store(true)
		for i := 1; i <= n; i++ {
			id, _, err := w.RecordCommand(ctx, Command{Seq: uint64(i), Session: 1, Text: "cmd " + strconv.Itoa(i)})
			if err == nil {
				err = w.RunStarted(ctx, id, "t", time.Time{})
			}
			if err == nil {
				err = w.RunFinished(ctx, id, Outcome{Status: automate.StatusCompleted, Answer: crashAnswer(i)})
			}
			if err != nil {
				writerErr <- err
				return
			}
		}
		writerErr <- nil
	}()

	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := OpenReadOnly(path)
			if err != nil {
				t.Error(err)
				return
			}
			defer r.Close()
			reads := 0
			for {
				finished := done.Load()
				h, err := r.History(ctx, HistoryQuery{Limit: MaxHistoryLimit})
				if err != nil {
					t.Errorf("reader: %v", err)
					return
				}
				reads++
				for k, e := range h {
					if k > 0 && e.ID >= h[k-1].ID {
						t.Errorf("history not newest first")
						return
					}
					i, _ := strconv.Atoi(strings.TrimPrefix(e.Command, "cmd "))
					if e.Run == RunFinished && e.Answer != crashAnswer(i) {
						t.Errorf("reader saw a half-written row %d", e.ID)
						return
					}
				}
				if finished {
					if len(h) != n {
						t.Errorf("final read: %d rows, want %d", len(h), n)
					}
					if reads < 2 {
						t.Logf("reader read only %d times", reads)
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := <-writerErr; err != nil {
		t.Fatalf("writer (while readers read): %v", err)
	}
}

// BenchmarkCommandLifecycle measures one command's journal writes:
// RecordCommand + RunStarted + RunFinished (three commits).
func BenchmarkCommandLifecycle(b *testing.B) {
	for _, sync := range []Sync{SyncNormal, SyncFull} {
		b.Run(string(sync), func(b *testing.B) {
			j, err := Open(filepath.Join(b.TempDir(), "j.db"), Options{Synchronous: sync})
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			ctx := context.Background()
			final := "final"
			usage := &automate.Usage{InputTokens: 100, OutputTokens: 50, GenerationMs: 900, TTFTMs: 80, TPS: 55}
			macro := []byte(`{"id":"m1","name":"Summarize","commands":["sum"],"events":[{"type":"Type","text":"hello"}]}`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id, _, err := j.RecordCommand(ctx, Command{Seq: uint64(i + 1), Session: 1, Text: "summarize this",
					MacroID: "m1", MacroName: "Summarize", MacroJSON: macro, Rule: "summarize", Decision: DecisionStarted})
				if err != nil {
					b.Fatal(err)
				}
				if err := j.RunStarted(ctx, id, "task", time.Time{}); err != nil {
					b.Fatal(err)
				}
				if err := j.RunFinished(ctx, id, Outcome{RequestID: "req", Status: automate.StatusCompleted,
					Answer: "Here is the summary of the text you sent.", FinalAnswer: &final, DurationMs: 1234, Usage: usage}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBeforePost measures the journal writes on the path from a hub
// event to the run's POST: for a command that starts at once, RecordStarted
// (one commit); recorded first and started later, RecordCommand +
// RunStarted (two commits; a queued command also pays SetDecision and
// Dequeued, off this path).
func BenchmarkBeforePost(b *testing.B) {
	for _, sync := range []Sync{SyncNormal, SyncFull} {
		for _, path := range []string{"at-once", "recorded-first"} {
			b.Run(string(sync)+"/"+path, func(b *testing.B) {
				j, err := Open(filepath.Join(b.TempDir(), "j.db"), Options{Synchronous: sync})
				if err != nil {
					b.Fatal(err)
				}
				defer j.Close()
				ctx := context.Background()
				macro := []byte(`{"id":"m1","name":"Summarize","commands":["sum"],"events":[{"type":"Type","text":"hello"}]}`)
				lat := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					c := Command{Seq: uint64(i + 1), Session: 1, Text: "summarize this",
						MacroID: "m1", MacroName: "Summarize", MacroJSON: macro, Rule: "summarize"}
					t0 := time.Now()
					if path == "at-once" {
						if _, _, _, err := j.RecordStarted(ctx, c, RunStart{}); err != nil {
							b.Fatal(err)
						}
					} else {
						id, _, err := j.RecordCommand(ctx, c)
						if err != nil {
							b.Fatal(err)
						}
						if err := j.RunStarted(ctx, id, "task", time.Time{}); err != nil {
							b.Fatal(err)
						}
					}
					lat = append(lat, time.Since(t0))
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}
