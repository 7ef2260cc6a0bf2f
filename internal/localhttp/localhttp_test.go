package localhttp

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/internal/testenv"
	"github.com/hubgate/hubgate/internal/testutil"
)

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:4317":         true,
		"127.0.0.1":              true,
		"127.0.0.1:":             true,
		"127.9.8.7:80":           true,
		"localhost:4317":         true,
		"LocalHost":              true,
		"[::1]:4317":             true,
		"[::1]":                  true,
		"[::ffff:127.0.0.1]:80":  true,
		"":                       false,
		"::1":                    false, // unbracketed IPv6 is not a Host
		"evil.example:4317":      false,
		"evil.example":           false,
		"localhost.evil.example": false,
		"127.0.0.1.nip.io:4317":  false,
		"192.168.1.5:4317":       false,
		"0.0.0.0:4317":           false,
		"[::]:4317":              false,
		"[fe80::1%25eth0]:4317":  false,
		"127.0.0.1:99999":        false,
		"127.0.0.1:http":         false,
		"127.1:4317":             false,
		"foo.localhost:4317":     false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// serve runs NewServer(h, o) on a loopback port.
func serve(t *testing.T, h http.Handler, o Options) (addr string, ln *testenv.CountingListener) {
	t.Helper()
	raw, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = &testenv.CountingListener{Listener: raw}
	hs := NewServer(h, o)
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return raw.Addr().String(), ln
}

func TestServerRefusesHugeHeaders(t *testing.T) {
	addr, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), Options{})
	c := testutil.RawConn(t, addr)
	go func() {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
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

func TestStalledBodyIsClosedWithinTheDeadline(t *testing.T) {
	handlerErr := make(chan error, 1)
	addr, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		handlerErr <- err
	}), Options{BodyReadTimeout: 200 * time.Millisecond})
	c := testutil.RawConn(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{\"half\":")
	// The client stalls; the server must give up on the body and close.
	select {
	case err := <-handlerErr:
		if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
			t.Fatalf("reading the stalled body: %v, want a timeout", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the handler still waits for the stalled body after 20 s (deadline 200 ms)")
	}
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("the connection was not closed: %v", err)
	}
}

// In a bubble, over in-memory connections whose deadlines run on the
// fake clock: the handler blocks five times the body deadline (the clock
// passes the deadline for certain) and the request stays alive.
func TestBodyDeadlineDoesNotBoundTheHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const deadline = 100 * time.Millisecond
		l := testutil.NewPipeListener()
		hs := NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); err != nil {
				t.Errorf("read body: %v", err)
			}
			// Block well past the body deadline, as a run waiting for its
			// engine does; the request must stay alive.
			select {
			case <-time.After(5 * deadline):
			case <-r.Context().Done():
				http.Error(w, "context ended: "+contextErr(r), http.StatusInternalServerError)
				return
			}
			io.WriteString(w, "still here")
		}), Options{BodyReadTimeout: deadline})
		go hs.Serve(l)
		tr := &http.Transport{DialContext: l.Dial}
		defer func() {
			tr.CloseIdleConnections()
			hs.Close()
		}()
		for _, body := range []string{`{"prompt":"x"}`, ""} {
			start := time.Now()
			req, _ := http.NewRequest("POST", "http://127.0.0.1/", strings.NewReader(body))
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != "still here" || time.Since(start) != 5*deadline {
				t.Fatalf("body %q: %d %s after %s", body, resp.StatusCode, b, time.Since(start))
			}
		}
	})
}

func contextErr(r *http.Request) string { return r.Context().Err().Error() }

func TestRefuseAnswersWithoutReadingTheBody(t *testing.T) {
	addr, ln := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Refuse(w, r)
		http.Error(w, "no", http.StatusUnauthorized)
	}), Options{})
	c := testutil.RawConn(t, addr)
	head := "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 200000\r\n\r\n"
	io.WriteString(c, head)
	// Half of the body arrives, then the client stalls: the answer must
	// not wait for the rest, and the server must not read what was sent.
	go io.WriteString(c, strings.Repeat("x", 100000))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer before the body ended: %v", err)
	}
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("status %d close %v, want 401 and Connection: close", resp.StatusCode, resp.Close)
	}
	// net/http reads in 4 KiB buffers: what it read beyond the headers is
	// that one buffer at most, not the 100 KB sent (nor 256 KiB).
	if n := ln.Read(); n > int64(len(head))+8<<10 {
		t.Fatalf("the server read %d bytes of a refused request", n)
	}
}

func TestRequireLoopbackHost(t *testing.T) {
	h := RequireLoopbackHost(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad host", http.StatusForbidden)
	}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	addr, _ := serve(t, h, Options{})
	for host, want := range map[string]int{"127.0.0.1:1": 200, "localhost": 200, "evil.example:" + strings.Split(addr, ":")[1]: 403} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}
