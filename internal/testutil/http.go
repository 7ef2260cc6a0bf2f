package testutil

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// HeaderLimitStatus sends base one GET of path whose headers are 256 KiB
// (far below net/http's 1 MiB default, far above internal/localhttp's 64
// KiB) and returns the status: 431 from a hardened server.
func HeaderLimitStatus(tb testing.TB, base, path string) int {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("X-Padding", strings.Repeat("a", 256<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
