package main

// The command tree run in this test process: Run with the test's streams,
// an environment of its own and signals the test sends. Most command tests
// run here; the real binary is kept for what only a process shows (its
// exit on a signal, a crash, GOMAXPROCS, README's commands) and for an
// environment the process must really have (ownProcessEnv).

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
)

// needsOwnProcess says whether environ gives the command another D-Bus
// session than this process has. godbus (under go-keyring) and the
// desktop notifications find the session bus in the process's own
// environment, not through the injected getenv: by
// DBUS_SESSION_BUS_ADDRESS, and, only while that is unset, by
// XDG_RUNTIME_DIR (the notifications' and the keyring's messages). Such a
// command runs as the real binary.
func needsOwnProcess(environ []string) bool {
	differs := func(k string) bool {
		v, set := os.LookupEnv(k)
		w, wset := lookupEnv(environ, k)
		return v != w || set != wset
	}
	if differs("DBUS_SESSION_BUS_ADDRESS") {
		return true
	}
	_, set := os.LookupEnv("DBUS_SESSION_BUS_ADDRESS")
	return !set && differs("XDG_RUNTIME_DIR")
}

// lookupEnv is os.LookupEnv over environ (the last assignment wins).
func lookupEnv(environ []string, key string) (string, bool) {
	v, ok := "", false
	for _, kv := range environ {
		if k, val, found := strings.Cut(kv, "="); found && k == key {
			v, ok = val, true
		}
	}
	return v, ok
}

// getenvOf is the getenv of environ.
func getenvOf(environ []string) func(string) string {
	env := slices.Clone(environ)
	return func(key string) string { v, _ := lookupEnv(env, key); return v }
}

// inProc is one command line running in this process.
type inProc struct {
	stdout, stderr testutil.SyncBuffer
	written        testutil.Signal // notified at each write to stdout or stderr
	done           chan struct{}   // closed when Run returned
	code           int             // Run's exit code, once done is closed
	cancel         context.CancelFunc
	args           []string

	mu   sync.Mutex
	subs []subscription // the command's signal.Notify calls
}

type subscription struct {
	c    chan<- os.Signal
	sigs []os.Signal
}

// startInProc runs args in a goroutine with environ and stdin (nil: empty);
// at the test's end it is stopped as startBackground stops a process
// (SIGTERM, then its context) and its stderr is logged when the test
// failed.
func startInProc(tb testing.TB, environ []string, stdin io.Reader, args ...string) *inProc {
	tb.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &inProc{done: make(chan struct{}), cancel: cancel, args: args}
	go func() {
		defer func() {
			close(p.done)
			p.written.Notify() // the end wakes a waitOutput too
		}()
		p.code = Run(ctx, Process{Args: args, Stdio: Stdio{In: stdin, Out: signalWriter{&p.stdout, &p.written}, Err: signalWriter{&p.stderr, &p.written}},
			Getenv: getenvOf(environ), Signals: p.subscribe})
	}()
	tb.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(30 * time.Second):
				cancel()
				<-p.done
			}
		}
		cancel()
		if tb.Failed() {
			tb.Logf("hubgate %s stderr:\n%s", strings.Join(args, " "), p.stderr.String())
		}
	})
	return p
}

// writerTo is an io.Writer of a function.
type writerTo func([]byte) (int, error)

func (f writerTo) Write(b []byte) (int, error) { return f(b) }

// waitOutput waits, at most e2eWait, until cond holds, re-checking it at
// each write of the command to stdout or stderr: cond reads p.stdout, the
// command's output by contract (a URL line, JSON lines, a transcript). A
// command that ends before, or a hang, fails the test with both streams.
// One waiter at a time.
func (p *inProc) waitOutput(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	switch err := waitWritten(&p.written, p.done, what, cond); {
	case err != nil:
		tb.Fatalf("hubgate %s: %v\nstdout: %s\nstderr: %s", strings.Join(p.args, " "), err, p.stdout.String(), p.stderr.String())
	case !cond():
		tb.Fatalf("hubgate %s exited (%d) before %s\nstdout: %s\nstderr: %s", strings.Join(p.args, " "), p.code, what, p.stdout.String(), p.stderr.String())
	}
}

// waitWritten is the wait on a command's output, in this process or not:
// testutil.Wait (at most e2eWait) for cond, or the command's end (done),
// re-checked at each notice of written (its writes, and its end).
func waitWritten(written *testutil.Signal, done <-chan struct{}, what string, cond func() bool) error {
	ended := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	return testutil.Wait(ctx, what, written.C(), func() bool { return cond() || ended() })
}

// waitStdout is waitOutput of a text on stdout; it returns the stdout
// that holds it.
func (p *inProc) waitStdout(tb testing.TB, want string) string {
	tb.Helper()
	p.waitOutput(tb, fmt.Sprintf("%q on stdout", want), func() bool { return strings.Contains(p.stdout.String(), want) })
	return p.stdout.String()
}

// subscribe is Process.Signals: what the command subscribes, the test's
// signal delivers.
func (p *inProc) subscribe(c chan<- os.Signal, sigs ...os.Signal) func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.subs = append(p.subs, subscription{c, sigs})
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.subs = slices.DeleteFunc(p.subs, func(s subscription) bool { return s.c == c })
	}
}

// signal delivers sig as the runtime would: to every channel subscribed to
// it, without blocking; with no subscriber, SIGINT and SIGTERM end the
// command's context (main's signal.NotifyContext), and any other signal is
// ignored (main ignores SIGHUP for the daemon; another command would die,
// which no test asks for).
func (p *inProc) signal(sig os.Signal) {
	p.mu.Lock()
	delivered := false
	for _, s := range p.subs {
		if slices.Contains(s.sigs, sig) {
			delivered = true
			select {
			case s.c <- sig:
			default:
			}
		}
	}
	p.mu.Unlock()
	if !delivered && (sig == os.Interrupt || sig == syscall.SIGTERM) {
		p.cancel()
	}
}

// wait waits at most within for the command's end and returns its exit
// code; a command still running then fails the test (a hang).
func (p *inProc) wait(tb testing.TB, within time.Duration) int {
	tb.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(within):
		tb.Fatalf("hubgate %s did not exit within %s\nstdout: %s\nstderr: %s", strings.Join(p.args, " "), within, p.stdout.String(), p.stderr.String())
		return -1
	}
}

// runInProc runs args in this process to its end (at most within).
func runInProc(tb testing.TB, within time.Duration, environ []string, stdin string, args ...string) result {
	tb.Helper()
	p := startInProc(tb, environ, strings.NewReader(stdin), args...)
	code := p.wait(tb, within)
	return result{code, p.stdout.String(), p.stderr.String()}
}
