//go:build linux

package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// rssLimitMB is what issue 25 item 3 asks of a 10,000-step scripted run.
const rssLimitMB = 100

// BenchmarkLongRunRSS runs 10,000 scripted steps (#!sleep 0) through the
// real server on loopback, once answered as one record (with steps, trace
// and events) and once streamed, and reports the peak RSS of the server.
//
// What is measured: the server runs in a child process (this test binary
// re-run as TestLongRunRSSChild, serving the real server with the scripted
// engine, as `hubgate automate serve` does), so that the client reading
// the answer is not counted. peak-RSS-MB is the child's VmHWM from
// /proc/<pid>/status, the kernel's high-water mark of its resident set,
// reset before each run by writing 5 to /proc/<pid>/clear_refs: RSS
// itself at its peak during the run, not a heap estimate or a sample
// after it. base-RSS-MB is the child's resident set just before the run.
//
// The benchmark fails when the peak passes 100 MB. Run it with
//
//	go test ./automate/server -run '^$' -bench LongRunRSS -benchtime 3x
func BenchmarkLongRunRSS(b *testing.B) {
	const steps = 10000
	body, _ := json.Marshal(map[string]any{"prompt": sleeps(steps)})
	streamed, _ := json.Marshal(map[string]any{"prompt": sleeps(steps), "stream": true})
	for _, c := range []struct {
		name string
		body []byte
		read func(*testing.B, io.Reader)
	}{
		{"record", body, readRecord(steps)},
		{"streamed", streamed, readStream(steps)},
	} {
		b.Run(c.name, func(b *testing.B) {
			pid, url := startChildServer(b)
			client := &http.Client{}
			var peak, base float64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
					b.Skipf("cannot reset the peak RSS: %v", err)
				}
				base = max(base, procStatusMB(b, pid, "VmRSS"))
				b.StartTimer()
				req, _ := http.NewRequest("POST", url+"/v1/runs", bytes.NewReader(c.body))
				req.Header.Set("Authorization", "Bearer "+testKey)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				if resp.StatusCode != 200 {
					msg, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
					b.Fatalf("status %d: %s", resp.StatusCode, msg)
				}
				c.read(b, resp.Body)
				resp.Body.Close()
				b.StopTimer()
				peak = max(peak, procStatusMB(b, pid, "VmHWM"))
				b.StartTimer()
			}
			b.ReportMetric(peak, "peak-RSS-MB")
			b.ReportMetric(base, "base-RSS-MB")
			if peak > rssLimitMB {
				b.Errorf("peak RSS %.1f MB over %d MB for a %d-step run", peak, rssLimitMB, steps)
			}
		})
	}
}

// childServerEnv makes TestLongRunRSSChild serve instead of skipping.
const childServerEnv = "HUBGATE_TEST_RSS_CHILD"

// TestLongRunRSSChild is BenchmarkLongRunRSS's server process: with
// childServerEnv set it serves the real server with the scripted engine on
// loopback, prints its URL and serves until its stdin closes.
func TestLongRunRSSChild(t *testing.T) {
	if os.Getenv(childServerEnv) == "" {
		t.Skip("the server process of BenchmarkLongRunRSS")
	}
	srv, err := server.New(server.Config{Key: testKey, Assistant: scripted.New(scripted.Config{Logger: slog.New(slog.DiscardHandler)}),
		Workspace: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	fmt.Println("URL", ts.URL)
	io.Copy(io.Discard, os.Stdin)
}

// startChildServer starts TestLongRunRSSChild in a child process and
// returns its pid and URL; the child ends with the benchmark.
func startChildServer(b *testing.B) (int, string) {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLongRunRSSChild$", "-test.count", "1")
	cmd.Env = append(os.Environ(), childServerEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if url, ok := strings.CutPrefix(sc.Text(), "URL "); ok {
			go io.Copy(io.Discard, out)
			return cmd.Process.Pid, url
		}
	}
	b.Fatalf("the server process printed no URL: %v", sc.Err())
	return 0, ""
}

// readRecord decodes a plain answer as it streams in and checks that the
// run completed with all its steps.
func readRecord(steps int) func(*testing.B, io.Reader) {
	return func(b *testing.B, r io.Reader) {
		var rec automate.RunRecord
		if err := json.NewDecoder(r).Decode(&rec); err != nil {
			b.Fatal(err)
		}
		if rec.Status != automate.StatusCompleted || len(rec.Steps) != steps+1 {
			b.Fatalf("record: %s with %d steps", rec.Status, len(rec.Steps))
		}
	}
}

// readStream reads a streamed answer event by event, as the bridge does,
// and checks that every step came and the run completed.
func readStream(steps int) func(*testing.B, io.Reader) {
	return func(b *testing.B, r io.Reader) {
		er := localhttp.NewEventReader(r, 0)
		n := 0
		for {
			ev, err := er.Next()
			if errors.Is(err, io.EOF) {
				b.Fatalf("stream ended after %d step events without %s", n, automate.EventRunCompleted)
			}
			if err != nil {
				b.Fatal(err)
			}
			switch ev.Name {
			case automate.EventRunStep:
				n++
			case automate.EventRunCompleted:
				var rec automate.RunRecord
				if err := json.Unmarshal(ev.Data, &rec); err != nil {
					b.Fatal(err)
				}
				if rec.Status != automate.StatusCompleted || n < 3*steps {
					b.Fatalf("streamed: %s after %d step events", rec.Status, n)
				}
				io.Copy(io.Discard, r)
				return
			}
		}
	}
}

// procStatusMB reads a kB field of /proc/<pid>/status, in MB.
func procStatusMB(b *testing.B, pid int, field string) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if ok && name == field {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
