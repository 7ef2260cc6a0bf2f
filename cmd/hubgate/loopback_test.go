package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/internal/testutil"
)

// headerLimitStatus sends one request whose headers are 256 KiB (far
// below net/http's 1 MiB default, far above localhttp's 64 KiB) and
// returns the status.
func headerLimitStatus(t *testing.T, base string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/api/Device/userDevices", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Padding", strings.Repeat("a", 256<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// `hubgate mock` serves with internal/localhttp's hardened server: a
// request with oversized headers is refused (431), not read.
func TestMockServesWithTheHardenedServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb testutil.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"mock", "--listen", "127.0.0.1:0", "--direct-hub"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, func(string) string { return "" })
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("mock: exit %d\n%s", code, errb.String())
		}
	})
	testutil.WaitFor(t, "the mock's url on stdout", func() bool { return strings.Contains(out.String(), "\n") })
	base := strings.TrimSpace(out.String())
	if got := headerLimitStatus(t, base); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("status %d for 256 KiB of headers, want 431", got)
	}
}

// The demo's mock too.
func TestDemoMockServesWithTheHardenedServer(t *testing.T) {
	_, base, stop, err := startDemoMock(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if got := headerLimitStatus(t, base); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("status %d for 256 KiB of headers, want 431", got)
	}
}
