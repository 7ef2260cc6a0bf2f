package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
)

// hardened serves a Server with the scripted engine in NewHTTPServer, the
// way `automate serve` and the daemon do, on a loopback port.
func hardened(t *testing.T, o server.HTTPOptions) (addr string) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	srv, err := server.New(server.Config{Key: testKey, Assistant: scripted.New(scripted.Config{Logger: quiet}),
		Workspace: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ln, _, err := server.Listen(-1)
	if err != nil {
		t.Fatal(err)
	}
	hs := server.NewHTTPServer(srv.Handler(), o)
	go hs.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
		hs.Close()
	})
	return ln.Addr().String()
}

// rawConn dials addr; its reads give up after 20 s, the bound of these
// tests (never reached when the server behaves).
func rawConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	return c
}

func TestHTTPServerRefusesAHugeHeader(t *testing.T) {
	c := rawConn(t, hardened(t, server.HTTPOptions{}))
	go func() {
		io.WriteString(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
		io.WriteString(c, strings.Repeat("a", 1<<20))
		io.WriteString(c, "\r\n\r\n")
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a 1 MiB header: %v", err)
	}
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d, want 431", resp.StatusCode)
	}
}

func TestHTTPServerClosesAStalledBodyWithinTheReadDeadline(t *testing.T) {
	c := rawConn(t, hardened(t, server.HTTPOptions{BodyReadTimeout: 200 * time.Millisecond}))
	io.WriteString(c, "POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+testKey+
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"prompt\":")
	// The client stalls mid-body. The server gives up on the body (the
	// 20 s read bound of rawConn is 100 times the deadline) and closes.
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("the connection was not closed: %v (got %q)", err, b)
	}
}

func TestHTTPServerReadDeadlineDoesNotBoundARun(t *testing.T) {
	addr := hardened(t, server.HTTPOptions{BodyReadTimeout: 100 * time.Millisecond})
	// A run of 500 ms: five times the body deadline.
	body := `{"prompt":"` + strings.ReplaceAll(sleepSteps(5, 100), "\n", `\n`) + `","include":{"events":false,"trace":false}}`
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/runs", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	defer resp.Body.Close()
	var rec automate.RunRecord
	if err := json.NewDecoder(resp.Body).Decode(&rec); err != nil || resp.StatusCode != 200 {
		t.Fatalf("run: %d %v", resp.StatusCode, err)
	}
	if rec.Status != automate.StatusCompleted || rec.DurationMs < 500 {
		t.Fatalf("run: status %s after %d ms, want completed after at least 500", rec.Status, rec.DurationMs)
	}
}

// sleepSteps is a scripted prompt of n steps that each wait ms.
func sleepSteps(n, ms int) string {
	return strings.Repeat("#!sleep "+strconv.Itoa(ms)+"\n", n)
}
