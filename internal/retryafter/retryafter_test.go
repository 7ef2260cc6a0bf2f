package retryafter

import (
	"math"
	"net/http"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		v    string
		max  time.Duration
		want time.Duration
	}{
		{"", 0, 0},
		{"   ", 0, 0},
		{"7", 0, 7 * time.Second},
		{" 7 ", 0, 7 * time.Second},
		{"0", 0, 0},
		{"-1", 0, 0},
		{"1.5", 0, 0},
		{"soon", 0, 0},
		{"7", 5 * time.Second, 5 * time.Second},
		{"3", 5 * time.Second, 3 * time.Second},
		{"99999999999999999999", 0, math.MaxInt64},
		{"99999999999999999999", time.Minute, time.Minute},
		{"9223372036", 0, 9223372036 * time.Second}, // the longest whole-second Duration
		{"9223372037", 0, math.MaxInt64},
		{"-99999999999999999999", 0, 0},
		// IMF-fixdate, RFC 850 and asctime, as RFC 9110 asks a reader to
		// accept.
		{"Fri, 02 Jan 2026 03:04:35 GMT", 0, 30 * time.Second},
		{"Friday, 02-Jan-26 03:04:35 GMT", 0, 30 * time.Second},
		{"Fri Jan  2 03:04:35 2026", 0, 30 * time.Second},
		{"Fri, 02 Jan 2026 03:14:05 GMT", time.Minute, time.Minute},
		{"Fri, 02 Jan 2026 03:04:05 GMT", 0, 0}, // now
		{"Fri, 02 Jan 2026 03:00:00 GMT", 0, 0}, // past
		{"Fri, 02 Jan 2026 03:04:35 CET", 0, 0}, // not an HTTP-date
	} {
		if got := Parse(c.v, now, c.max); got != c.want {
			t.Errorf("Parse(%q, max %s) = %s, want %s", c.v, c.max, got, c.want)
		}
	}
}

func TestFromHeader(t *testing.T) {
	now := time.Now()
	h := http.Header{}
	if got := FromHeader(h, now, 0); got != 0 {
		t.Errorf("no header: %s", got)
	}
	h.Set("Retry-After", "2")
	if got := FromHeader(h, now, 0); got != 2*time.Second {
		t.Errorf("Retry-After 2: %s", got)
	}
}
