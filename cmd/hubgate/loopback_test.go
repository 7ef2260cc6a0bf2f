package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/internal/testutil"
)

// headerLimitStatus is testutil.HeaderLimitStatus of a device route.
func headerLimitStatus(t *testing.T, base string) int {
	return testutil.HeaderLimitStatus(t, base, "/api/Device/userDevices")
}

// `hubgate mock` serves with internal/localhttp's hardened server: a
// request with oversized headers is refused (431), not read.
func TestMockServesWithTheHardenedServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb testutil.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Process{Args: []string{"mock", "--listen", "127.0.0.1:0", "--direct-hub"}, Stdio: Stdio{In: strings.NewReader(""), Out: &out, Err: &errb},
			Getenv: func(string) string { return "" }})
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("mock: exit %d\n%s", code, errb.String())
		}
	})
	testutil.Until(t, "the mock's url on stdout", out.Written(), func() bool { return strings.Contains(out.String(), "\n") })
	base := strings.TrimSpace(out.String())
	if got := headerLimitStatus(t, base); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("status %d for 256 KiB of headers, want 431", got)
	}
}
