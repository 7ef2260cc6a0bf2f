package deviceapi

import (
	"net/http"
	"testing"
	"time"
)

// TestRetryAfterIsBoundedByTheMaxWait: a GET's wait honours the service's
// Retry-After, in seconds or as a date, up to RetryMaxWait.
func TestRetryAfterIsBoundedByTheMaxWait(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"2":                             2 * time.Second,
		"3600":                          5 * time.Second,
		"Fri, 02 Jan 2026 03:04:08 GMT": 3 * time.Second,
		"Fri, 02 Jan 2026 04:00:00 GMT": 5 * time.Second,
	} {
		resp := &http.Response{Header: http.Header{}}
		if v != "" {
			resp.Header.Set("Retry-After", v)
		}
		if got := retryAfter(resp, now, 5*time.Second); got != want {
			t.Errorf("Retry-After %q: wait %s, want %s", v, got, want)
		}
	}
	if got := retryAfter(nil, now, 5*time.Second); got != 0 {
		t.Errorf("no response: wait %s, want 0", got)
	}
}
