// Package retryafter owns the reading of an HTTP Retry-After header
// (RFC 9110, section 10.2.3), for every client of hubgate that honours
// one: the device REST client and the hub's negotiate and upgrade.
package retryafter

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Parse answers how long a Retry-After value asks to wait, seen at now:
// delta-seconds ("120") or an HTTP-date (any of the three forms
// http.ParseTime reads), surrounding spaces ignored. Zero where there is
// nothing to honour: an empty, malformed or negative value, or a date not
// after now. The wait is at most max where max > 0; a number of seconds
// too large for a time.Duration is the longest one (or max).
func Parse(v string, now time.Time, max time.Duration) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	// ParseInt answers the largest (or smallest) int64 for a number out of
	// its range.
	if n, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		switch {
		case n < 0:
			return 0
		case n > int64(math.MaxInt64/time.Second):
			d = math.MaxInt64
		default:
			d = time.Duration(n) * time.Second
		}
	} else if t, err := http.ParseTime(v); err == nil && t.After(now) {
		d = t.Sub(now)
	}
	if max > 0 && d > max {
		return max
	}
	return d
}

// FromHeader is Parse of h's Retry-After.
func FromHeader(h http.Header, now time.Time, max time.Duration) time.Duration {
	return Parse(h.Get("Retry-After"), now, max)
}
