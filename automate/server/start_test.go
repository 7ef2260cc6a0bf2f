package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/internal/testutil"
)

// startOptions are a Start's options for a scripted engine logging into
// logs (nil: discarded).
func startOptions(t *testing.T, logs io.Writer) server.StartOptions {
	if logs == nil {
		logs = io.Discard
	}
	log := slog.New(slog.NewTextHandler(logs, nil))
	return server.StartOptions{Config: server.Config{Key: testKey, Workspace: t.TempDir(),
		Assistant: scripted.New(scripted.Config{Logger: log}), Logger: log}}
}

// holdPorts binds n loopback ports the OS chooses and holds them until the
// test ends (or the returned close is called for one of them).
func holdPorts(t *testing.T, n int) (ports []int, release func(i int)) {
	t.Helper()
	var held []net.Listener
	for range n {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, func(i int) { held[i].Close() }
}

// startInWindow starts a server on a window of n ports the OS chose,
// every one held by the test but the free-th; its logs are returned.
func startInWindow(t *testing.T, n, free int) (*server.Running, []int, *testutil.SyncBuffer) {
	t.Helper()
	window, release := holdPorts(t, n)
	release(free)
	var logs testutil.SyncBuffer
	o := startOptions(t, &logs)
	o.Window = window
	r, err := server.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	return r, window, &logs
}

func closeRunning(t *testing.T, r *server.Running) {
	t.Helper()
	if err := r.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// getHealth asks url's /health with the test key.
func getHealth(t *testing.T, url string) automate.Health {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/health", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /health: %v", err)
	}
	defer resp.Body.Close()
	r := response{status: resp.StatusCode}
	r.body, _ = io.ReadAll(resp.Body)
	if r.status != 200 {
		t.Fatalf("GET /health: %d %s", r.status, r.body)
	}
	var hl automate.Health
	r.json(t, &hl)
	return hl
}

// Start binds the window's first port when it is free, serves there, and
// Close stops serving.
func TestStartServesOnTheWindowsFirstFreePort(t *testing.T) {
	r, window, logs := startInWindow(t, 2, 0)
	if r.Addr().Port != window[0] || r.Moved() || r.URL() != fmt.Sprintf("http://127.0.0.1:%d", window[0]) {
		t.Errorf("bound %s (URL %s) moved=%v, want port %d not moved", r.Addr(), r.URL(), r.Moved(), window[0])
	}
	if hl := getHealth(t, r.URL()); hl.Service != "service-agent" {
		t.Errorf("health: %+v", hl)
	}
	if strings.Contains(logs.String(), "in use") {
		t.Errorf("a bind on the preferred port says it moved:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "automate server listening") || !strings.Contains(logs.String(), r.URL()) {
		t.Errorf("no listening line naming %s:\n%s", r.URL(), logs.String())
	}
	closeRunning(t, r)
	select {
	case <-r.Done():
	default:
		t.Error("Done is open after Close")
	}
	if err := r.Err(); err != nil {
		t.Errorf("Err after Close = %v", err)
	}
	if _, err := http.Get(r.URL() + "/health"); err == nil {
		t.Error("the closed server still answers")
	}
}

// The preferred port in use: Start binds the next free one of the window
// and says which port was taken and where it listens instead.
func TestStartMovesToTheNextFreePort(t *testing.T) {
	r, window, logs := startInWindow(t, 3, 2)
	defer closeRunning(t, r)
	if r.Addr().Port != window[2] || !r.Moved() {
		t.Errorf("bound %s moved=%v, want port %d, moved", r.Addr(), r.Moved(), window[2])
	}
	want := fmt.Sprintf("port %d is in use; the Automate server listens on %s instead", window[0], r.Addr())
	if !strings.Contains(logs.String(), want) || !strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("no warning %q:\n%s", want, logs.String())
	}
	getHealth(t, r.URL())
}

// Every port of the window taken: the error names the range, and nothing
// is left running (the workspace's server is closed).
func TestStartWithEveryPortTakenNamesTheRange(t *testing.T) {
	window, _ := holdPorts(t, 3)
	o := startOptions(t, nil)
	o.Window = window
	r, err := server.Start(o)
	var pw *server.PortWindowError
	if !errors.As(err, &pw) || !slices.Equal(pw.Ports, window) {
		t.Fatalf("Start with a full window = %v, %v; want a *PortWindowError of %v", r, err, window)
	}
	if !strings.Contains(err.Error(), automate.DescribePorts(server.Loopback, window)) {
		t.Errorf("the error does not name the range %s: %v", automate.DescribePorts(server.Loopback, window), err)
	}
	// A forced port that is taken fails too, naming it.
	o.Port = window[1]
	if _, err := server.Start(o); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d", window[1])) {
		t.Errorf("Start on a taken forced port = %v", err)
	}
}

// Port < 0 takes any free port, outside the window.
func TestStartOnAnyPort(t *testing.T) {
	o := startOptions(t, nil)
	o.Port, o.Window = -1, []int{1} // the window is not used
	r, err := server.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	defer closeRunning(t, r)
	if r.Addr().Port == 1 || r.Addr().Port == 0 || r.Moved() || r.Addr().IP.String() != server.Loopback {
		t.Errorf("bound %s moved=%v", r.Addr(), r.Moved())
	}
	getHealth(t, r.URL())
}

// Bad options fail before anything is bound.
func TestStartRefusesABadConfigBeforeBinding(t *testing.T) {
	window, release := holdPorts(t, 1)
	release(0)
	o := startOptions(t, nil)
	o.Window, o.Config.Key = window, "short"
	if _, err := server.Start(o); !errors.Is(err, server.ErrInvalidKey) {
		t.Fatalf("Start with a short key = %v", err)
	}
	l, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", window[0]))
	if err != nil {
		t.Fatalf("the refused Start left its port bound: %v", err)
	}
	l.Close()
}

// stuckEngine holds its run past any cancel and any Terminate until
// release is closed: a run that does not stop.
type stuckEngine struct {
	assistant.Assistant
	started, release chan struct{}
}

func (e stuckEngine) Run(context.Context, *assistant.Task, assistant.Env) (*assistant.Result, error) {
	close(e.started)
	<-e.release
	return nil, errors.New("released")
}

func (stuckEngine) Terminate() {}

// pipeStart starts the server on an in-memory listener (so the test runs
// on the bubble's clock) and posts one run in the background.
func pipeStart(t *testing.T, o server.StartOptions, prompt string) (*server.Running, <-chan error) {
	l := testutil.NewPipeListener()
	o.Listener = l
	r, err := server.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	answer := make(chan error, 1)
	go func() {
		c := &http.Client{Transport: &http.Transport{DialContext: l.Dial}}
		req, _ := http.NewRequest("POST", "http://127.0.0.1:4317/v1/runs", strings.NewReader(`{"prompt":`+fmt.Sprintf("%q", prompt)+`}`))
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := c.Do(req)
		if err == nil {
			var b []byte
			b, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != 500 {
				err = fmt.Errorf("run answered %d %s", resp.StatusCode, b)
			}
		}
		answer <- err
	}()
	return r, answer
}

// A run that does not stop holds Close for CloseTimeout and no longer:
// Close says which run did not stop, the HTTP server is shut down
// anyway (the run's request is cut) and serving has ended.
func TestCloseIsBoundedWhileARunDoesNotStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng := stuckEngine{started: make(chan struct{}), release: make(chan struct{})}
		o := startOptions(t, nil)
		eng.Assistant = o.Config.Assistant
		o.Config.Assistant = eng
		o.CloseTimeout = 7 * time.Second
		r, answer := pipeStart(t, o, "forever")
		<-eng.started

		begin := time.Now()
		err := r.Close(context.Background())
		if took := time.Since(begin); took != 7*time.Second {
			t.Errorf("Close returned after %v, want the bound 7s", took)
		}
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not stop") {
			t.Errorf("Close = %v, want the run that did not stop", err)
		}
		if err := <-answer; err == nil {
			t.Error("the run's request was answered although its run never ended")
		}
		<-r.Done()
		if again := r.Close(context.Background()); again != err {
			t.Errorf("a second Close = %v, want the first one's %v", again, err)
		}
		close(eng.release)
	})
}

// A run that stops when told ends before Close returns, well within the
// bound, and its caller gets its record (500, terminated by the shutdown).
func TestCloseStopsTheRunInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := startOptions(t, nil)
		r, answer := pipeStart(t, o, "long\n#!sleep 600000\n#!answer never")
		synctest.Wait() // the run sleeps
		if hl := r.Server().Health(); !hl.Busy {
			t.Fatalf("the run is not in flight: %+v", hl)
		}
		begin := time.Now()
		if err := r.Close(context.Background()); err != nil {
			t.Errorf("Close = %v", err)
		}
		if took := time.Since(begin); took >= server.DefaultCloseTimeout {
			t.Errorf("Close took %v: it waited for the bound, not for the run", took)
		}
		if err := <-answer; err != nil {
			t.Errorf("the run's caller: %v", err)
		}
	})
}

// brokenListener fails every Accept with a permanent error.
type brokenListener struct{}

var errAcceptBroke = errors.New("accept broke")

func (brokenListener) Accept() (net.Conn, error) { return nil, errAcceptBroke }
func (brokenListener) Close() error              { return nil }
func (brokenListener) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4317} }

// Serving that fails ends Done and Err says why.
func TestServingFailureIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := startOptions(t, nil)
		o.Listener = brokenListener{}
		r, err := server.Start(o)
		if err != nil {
			t.Fatal(err)
		}
		<-r.Done()
		if err := r.Err(); !errors.Is(err, errAcceptBroke) {
			t.Errorf("Err = %v, want the listener's failure", err)
		}
		closeRunning(t, r)
	})
}

// ServeUntil calls reload on each value of hup, returns nil (Close's
// result) when ctx ends, and the serving error when serving fails.
func TestServeUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := startOptions(t, nil)
		o.Listener = brokenListener{}
		r, err := server.Start(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.ServeUntil(context.Background(), nil, func() {}); !errors.Is(err, errAcceptBroke) {
			t.Errorf("a failed serve: %v, want the listener's failure", err)
		}
	})
	o := startOptions(t, nil)
	o.Port = -1
	r, err := server.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	hup <- syscall.SIGHUP
	reloads := 0
	if err := r.ServeUntil(ctx, hup, func() { reloads++; cancel() }); err != nil || reloads != 1 {
		t.Errorf("ServeUntil: %v after %d reloads", err, reloads)
	}
}
