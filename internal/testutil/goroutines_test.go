package testutil

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
)

// BubbleGoroutines counts the bubble's goroutines and none outside it,
// however many the process starts meanwhile.
func TestBubbleGoroutinesCountsOnlyItsBubble(t *testing.T) {
	outside := make(chan struct{})
	defer close(outside)
	for range 3 {
		go func() { <-outside }()
	}
	if g := BubbleGoroutines(); g.N != 0 {
		t.Errorf("outside a bubble: %d goroutines, want 0", g.N)
	}
	synctest.Test(t, func(t *testing.T) {
		alone := BubbleGoroutines()
		if alone.N < 1 || !strings.Contains(alone.Stacks, "TestBubbleGoroutinesCountsOnlyItsBubble") {
			t.Fatalf("the bubble without its own goroutines: %d\n%s", alone.N, alone.Stacks)
		}
		inside := make(chan struct{})
		for range 2 {
			go func() { <-inside }()
		}
		synctest.Wait()
		if g := BubbleGoroutines(); g.N != alone.N+2 {
			t.Errorf("with two more in the bubble: %d, want %d\n%s", g.N, alone.N+2, g.Stacks)
		}
		close(inside)
		synctest.Wait()
		if g := BubbleGoroutines(); g.N != alone.N {
			t.Errorf("after they ended: %d, want %d\n%s", g.N, alone.N, g.Stacks)
		}
	})
}

// parked is a function of this package that a goroutine can block in.
func parked(ch chan struct{}) { <-ch }

// GoroutinesIn counts the goroutines running a function of the package
// and not the others. The test looks for its own goroutines by their
// stacks: a count taken before them can include goroutines of an earlier
// test that are still ending.
func TestGoroutinesInCountsThePackagesGoroutines(t *testing.T) {
	const pkg = "github.com/hubgate/hubgate/internal/testutil"
	other := make(chan struct{})
	defer close(other)
	go func() { <-other }() // a closure of this package: counted too
	ch := make(chan struct{})
	go parked(ch)
	const closure = "testutil.TestGoroutinesInCountsThePackagesGoroutines.func"
	var last Goroutines
	// Goroutines starting: no event.
	Until(t, "the package's goroutines to include the parked one and the closure", NoEvent, func() bool {
		last = GoroutinesIn(pkg)
		// This test's goroutine, the closure and parked at least.
		return last.N >= 3 && strings.Contains(last.Stacks, "testutil.parked(") && strings.Contains(last.Stacks, closure)
	}, func() string { return fmt.Sprintf("%d goroutines:\n%s", last.N, last.Stacks) })
	if n := strings.Count(last.Stacks, "\n\n"); n != last.N {
		t.Errorf("N is %d for %d stacks", last.N, n)
	}
	if g := GoroutinesIn("net/http"); strings.Contains(g.Stacks, "testutil.parked") {
		t.Errorf("a goroutine of another package counted:\n%s", g.Stacks)
	}
	close(ch)
	Until(t, "the parked goroutine to end, the closure still counted", NoEvent, func() bool {
		last = GoroutinesIn(pkg)
		return !strings.Contains(last.Stacks, "testutil.parked(") && strings.Contains(last.Stacks, closure)
	}, func() string { return last.Stacks })
}
