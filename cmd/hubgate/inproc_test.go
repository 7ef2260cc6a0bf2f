package main

// The command tree run in this test process: Run with the test's streams,
// an environment of its own and signals the test sends. Most command tests
// run here; the real binary is kept for what only a process shows (its
// exit on a signal, a crash, GOMAXPROCS, README's commands) and for an
// environment the process must really have (ownProcessEnv).

import (
	"context"
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

// ownProcessEnv are the variables that some libraries read from the
// process's own environment, not through the injected getenv: godbus (under
// go-keyring and the desktop notifications) finds the session bus by
// DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR. A command whose environment
// gives them other values than this process has runs as the real binary.
var ownProcessEnv = []string{"DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"}

// needsOwnProcess says whether environ differs from this process's in a
// variable of ownProcessEnv.
func needsOwnProcess(environ []string) bool {
	for _, k := range ownProcessEnv {
		v, set := os.LookupEnv(k)
		w, wset := lookupEnv(environ, k)
		if v != w || set != wset {
			return true
		}
	}
	return false
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
	// written is signalled, without blocking, after each write to stdout
	// or stderr: a wait for output waits on it (bgProc.waitOutput).
	written chan struct{}
	done    chan struct{} // closed when Run returned
	code    int           // Run's exit code, once done is closed
	cancel  context.CancelFunc
	args    []string

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
	p := &inProc{written: make(chan struct{}, 1), done: make(chan struct{}), cancel: cancel, args: args}
	go func() {
		defer close(p.done)
		p.code = Run(ctx, Process{Args: args, Stdio: Stdio{In: stdin, Out: signalWriter{&p.stdout, p.written}, Err: signalWriter{&p.stderr, p.written}},
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
