package backoff

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestExponential(t *testing.T) {
	for _, c := range []struct {
		first, max time.Duration
		n          int
		want       time.Duration
	}{
		{time.Second, 10 * time.Second, 1, time.Second},
		{time.Second, 10 * time.Second, 2, 2 * time.Second},
		{time.Second, 10 * time.Second, 4, 8 * time.Second},
		{time.Second, 10 * time.Second, 5, 10 * time.Second},
		{time.Second, 10 * time.Second, 1000, 10 * time.Second},
		{time.Second, 0, 4, 8 * time.Second},
		{time.Second, 0, 1000, time.Second << 33}, // the longest doubling that fits
		{20 * time.Second, 10 * time.Second, 1, 10 * time.Second},
		{time.Second, 10 * time.Second, 0, time.Second},
	} {
		if got := Exponential(c.first, c.max, c.n); got != c.want {
			t.Errorf("Exponential(%s, %s, %d) = %s, want %s", c.first, c.max, c.n, got, c.want)
		}
	}
}

func TestJitterStaysWithinItsFraction(t *testing.T) {
	d := 10 * time.Second
	seen := map[time.Duration]bool{}
	for range 200 {
		got := Jitter(d, 0.5)
		if got < d/2 || got > d {
			t.Fatalf("Jitter(%s, 0.5) = %s, outside [%s, %s]", d, got, d/2, d)
		}
		seen[got] = true
	}
	if len(seen) < 2 {
		t.Error("Jitter gave the same delay 200 times")
	}
	for _, f := range []float64{0, -1} {
		if got := Jitter(d, f); got != d {
			t.Errorf("Jitter(%s, %v) = %s", d, f, got)
		}
	}
	for range 50 {
		if got := Jitter(d, 7); got < 0 || got > d {
			t.Fatalf("Jitter(%s, 7) = %s: the fraction is not bounded to 1", d, got)
		}
	}
	if got := Jitter(0, 0.5); got != 0 {
		t.Errorf("Jitter(0) = %s", got)
	}
}

func TestSleepWaitsOrEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := Sleep(context.Background(), 3*time.Second); err != nil || time.Since(start) != 3*time.Second {
			t.Fatalf("Sleep: %v after %s", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		if err := Sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Fatalf("Sleep past the deadline: %v after %s", err, time.Since(start))
		}
		if err := Sleep(ctx, 0); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Sleep(0) on an ended context: %v", err)
		}
		if err := Sleep(context.Background(), 0); err != nil {
			t.Errorf("Sleep(0): %v", err)
		}
	})
}
