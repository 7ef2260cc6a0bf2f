// Package mockhubtest starts the mock remote service (hub/mockhub) for
// one test: on a loopback port of the OS's choosing, stopped when the test
// ends. It is the one way tests start the mock in their own process
// (the hub's tests that stop and restart the mock's listener serve it
// themselves). Test code only: it imports testing.
package mockhubtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testutil"
)

// Options configures Start. The zero value serves a mock with
// mockhub's defaults.
type Options struct {
	// Config is the mock's configuration (mockhub.New).
	Config mockhub.Config
	// Wrap, when set, is put in front of the mock's routes, to inject
	// failures at the HTTP level (a 500, a dropped connection, a slow
	// answer) or to watch the requests.
	Wrap func(http.Handler) http.Handler
}

// Mock is a running mock.
type Mock struct {
	*mockhub.Server
	// URL is the mock's {api_url}: http://127.0.0.1:<port>.
	URL string
	// HTTP is the loopback server it is served on.
	HTTP *httptest.Server
}

// Start serves a new mock for o on 127.0.0.1 until the test ends (tb
// fails at once if the mock cannot be made). At the end the mock closes
// first (its hub connections and event streams end), then the server,
// cutting what a client still holds open: nothing the test leaves behind
// can keep its cleanup waiting.
func Start(tb testing.TB, o Options) *Mock {
	tb.Helper()
	m, err := mockhub.New(o.Config)
	if err != nil {
		tb.Fatalf("mockhubtest: %v", err)
	}
	var h http.Handler = m
	if o.Wrap != nil {
		h = o.Wrap(h)
	}
	ts := httptest.NewServer(h)
	tb.Cleanup(func() {
		m.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	return &Mock{Server: m, URL: ts.URL, HTTP: ts}
}

// WaitEvent waits (at most testutil.DefaultTimeout) for the first entry
// of m's journal above since that match accepts, and returns it; tb fails
// naming what it waited for. The mock records a connection, its end and
// each hub call once it changed its state, so that state is there to read.
func WaitEvent(tb testing.TB, m *mockhub.Server, since int64, what string, match func(mockhub.Event) bool) mockhub.Event {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	e, err := m.WaitEvent(ctx, since, match)
	if err != nil {
		tb.Fatalf("no %s in the mock's journal within %s: %v", what, testutil.DefaultTimeout, err)
	}
	return e
}
