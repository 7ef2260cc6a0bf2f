package main

// Bounded tests of the Automate servers of the real binary under the
// attacks of issue 14 (memory, not time, is what they bound):
//
//   - 200 connections without a key, each sending a 1 MiB header line at
//     once and stalling before the header's end.
//     The peak RSS (VmHWM) of `automate serve` and of the daemon's
//     co-hosted server must stay under 60 MB. Before the header limit
//     (Go's default 1 MiB) the daemon went from 24 MB to 499 MB.

import (
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	headerAttackConns = 200
	headerAttackSize  = 1 << 20
	headerAttackMaxMB = 60
)

func TestAutomateServeMemoryUnderHugeHeaders(t *testing.T) {
	// The binary: the peak is its own memory.
	s := startServeBinary(t, env(t), "--port", "0", "--ephemeral-key", "--workspace", t.TempDir())
	addr := strings.TrimPrefix(s.url, "http://")
	headerAttack(t, "automate serve", addr, s.pid())
	s.stop(syscall.SIGTERM)
}

func TestDaemonCohostedServerMemoryUnderHugeHeaders(t *testing.T) {
	h := startHub(t)
	ds := newDaemonSetup(t, h, daemonConfig{})
	cfg, err := os.ReadFile(ds.configPath)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^  port: (\d+)$`).FindSubmatch(cfg)
	if m == nil {
		t.Fatalf("no automate port in the daemon's config:\n%s", cfg)
	}
	ds.ownProcess = true // the peak is its own memory
	d := startListening(t, ds)
	headerAttack(t, "the daemon", "127.0.0.1:"+string(m[1]), d.pid())
	d.stop(syscall.SIGTERM)
}

// headerAttack opens headerAttackConns connections to addr at once, each
// sending a headerAttackSize header line without a key and then stalling
// before the header's end, and fails when the peak
// RSS of pid exceeds headerAttackMaxMB. It measures once every connection
// was refused or closed by the server.
func headerAttack(t *testing.T, what, addr string, pid int) {
	t.Helper()
	before := procStatus(t, pid)
	pad := strings.Repeat("a", headerAttackSize)
	var (
		wg    sync.WaitGroup
		conns []net.Conn
		start = make(chan struct{})
	)
	for range headerAttackConns {
		c, err := net.Dial("tcp4", addr)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		conns = append(conns, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c.SetDeadline(time.Now().Add(60 * time.Second))
			// The header never ends: a server holds what it read of it
			// until it refuses the header (431) or its header timeout
			// closes the connection. A server that refuses closes the
			// connection mid-write: the write error is expected then.
			_, _ = io.WriteString(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: "+pad+"\r\n")
			// Wait for the refusal or the close.
			_, _ = c.Read(make([]byte, 512))
		}()
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	close(start)
	wg.Wait()
	after := procStatus(t, pid)
	t.Logf("%s: %d x %d-byte headers: VmRSS %.1f MB before, %.1f MB after, peak (VmHWM) %.1f MB",
		what, headerAttackConns, headerAttackSize, before["VmRSS"], after["VmRSS"], after["VmHWM"])
	if after["VmHWM"] > headerAttackMaxMB {
		t.Errorf("%s: peak RSS %.1f MB under %d x %d-byte headers, want under %d MB",
			what, after["VmHWM"], headerAttackConns, headerAttackSize, headerAttackMaxMB)
	}
}
