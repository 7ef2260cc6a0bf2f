// Package backoff owns the waits between attempts, for every client of
// hubgate that tries again: the capped exponential delay, its jitter and
// the wait itself, cut short by a context. What is tried again, when and
// how often stays with each client (the device REST client's GETs, the
// hub's reconnect loop, the model upstream's dials).
package backoff

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
)

// Exponential is the delay before retry n (n >= 1): first, doubled n-1
// times, at most max (max <= 0: no cap; a doubling past the longest
// time.Duration stops at the last one that fits).
func Exponential(first, max time.Duration, n int) time.Duration {
	d := first
	for i := 1; i < n && (max <= 0 || d < max) && d <= math.MaxInt64/2; i++ {
		d *= 2
	}
	if max > 0 && d > max {
		return max
	}
	return d
}

// Jitter shortens d by a random part of at most fraction of it (fraction
// is bounded to 0..1), so that clients that failed together do not all
// come back together.
func Jitter(d time.Duration, fraction float64) time.Duration {
	if fraction <= 0 || d <= 0 {
		return d
	}
	return d - time.Duration(rand.Float64()*min(fraction, 1)*float64(d))
}

// Sleep waits d, or less when ctx ends first: then it returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
