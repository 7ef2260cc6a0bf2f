//go:build unix

package control

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge"
)

// watchBackend is a Backend with an event stream fed by the test.
type watchBackend struct {
	fakeBackend
	events  chan bridge.Event
	history []int
	armed   int // logins armed and not revoked
}

func (w *watchBackend) Watch(ctx context.Context, history int) (<-chan bridge.Event, error) {
	w.mu.Lock()
	w.history = append(w.history, history)
	w.mu.Unlock()
	return w.events, nil
}

func (w *watchBackend) StatusPage(_ context.Context, login bool) (StatusPage, bool) {
	p := StatusPage{URL: "http://127.0.0.1:1/?token=t"}
	if login {
		w.mu.Lock()
		w.armed++
		w.mu.Unlock()
		p.LoginURL = "http://127.0.0.1:1/login?code=c"
	}
	return p, true
}

func (w *watchBackend) RevokeLogin(_ context.Context, u string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if u != "http://127.0.0.1:1/login?code=c" || w.armed == 0 {
		return false
	}
	w.armed--
	return true
}

func TestWatchStreamsEventsInOrderUntilTheDaemonStops(t *testing.T) {
	b := &watchBackend{events: make(chan bridge.Event, 10)}
	path := filepath.Join(socketDir(t), "c.sock")
	_, stop := startServer(t, path, b, nil)
	c := Dial(path)
	defer c.Close()

	got := make(chan bridge.Event, 10)
	done := make(chan error, 1)
	go func() {
		done <- c.Watch(context.Background(), 7, func(e bridge.Event) error { got <- e; return nil })
	}()
	answer := "it is done"
	for i := 1; i <= 3; i++ {
		b.events <- bridge.Event{Seq: uint64(i), Kind: bridge.EventFinished, CommandID: int64(i), Answer: fmt.Sprint(answer, i)}
		select {
		case e := <-got:
			if e.Seq != uint64(i) || e.Answer != fmt.Sprint(answer, i) || e.Kind != bridge.EventFinished {
				t.Fatalf("event %d: %+v", i, e)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d was not flushed to the watcher", i)
		}
	}
	b.mu.Lock()
	if len(b.history) != 1 || b.history[0] != 7 {
		t.Errorf("history asked: %v", b.history)
	}
	b.mu.Unlock()
	// A shutdown ends the stream at once; the watcher learns the daemon
	// stopped.
	stop()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRunning) {
			t.Fatalf("Watch after shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return after the daemon stopped")
	}
	// Nothing listens now.
	if err := c.Watch(context.Background(), 0, func(bridge.Event) error { return nil }); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Watch without a daemon: %v", err)
	}
}

func TestWatchRefusesBadHistoryAndBackendsWithoutAStream(t *testing.T) {
	path := filepath.Join(socketDir(t), "c.sock")
	startServer(t, path, &fakeBackend{}, nil)
	c := Dial(path)
	defer c.Close()
	var se *ServerError
	if err := c.Watch(context.Background(), 0, func(bridge.Event) error { return nil }); !errors.As(err, &se) || se.StatusCode != 404 {
		t.Fatalf("Watch of a backend without a stream: %v", err)
	}
	if _, err := c.StatusPage(context.Background()); !errors.As(err, &se) || se.StatusCode != 404 {
		t.Fatalf("StatusPage of a backend without one: %v", err)
	}

	path2 := filepath.Join(socketDir(t), "c.sock")
	startServer(t, path2, &watchBackend{events: make(chan bridge.Event)}, nil)
	c2 := Dial(path2)
	defer c2.Close()
	if err := c2.Watch(context.Background(), MaxWatchHistory+1, func(bridge.Event) error { return nil }); !errors.As(err, &se) || se.StatusCode != 400 {
		t.Fatalf("Watch with too much history: %v", err)
	}
	// The plain address arms nothing; a login is armed on request and
	// can be withdrawn once.
	p, err := c2.StatusPage(context.Background())
	if err != nil || p.URL == "" || p.LoginURL != "" {
		t.Fatalf("StatusPage: %+v %v, want the address and no login", p, err)
	}
	p, err = c2.StatusPageLogin(context.Background())
	if err != nil || p.URL == "" || p.LoginURL != "http://127.0.0.1:1/login?code=c" {
		t.Fatalf("StatusPageLogin: %+v %v", p, err)
	}
	for i, want := range []bool{true, false} {
		if ok, err := c2.RevokeLogin(context.Background(), p.LoginURL); err != nil || ok != want {
			t.Fatalf("RevokeLogin #%d: %v %v, want %v", i+1, ok, err, want)
		}
	}
	if _, err := c2.RevokeLogin(context.Background(), ""); !errors.As(err, &se) || se.StatusCode != 400 {
		t.Fatalf("RevokeLogin without an address: %v", err)
	}
	// The client's context ends a watch quietly.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c2.Watch(ctx, 0, func(bridge.Event) error { return nil }) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Watch after cancel: %v", err)
	}
}
