package testutil

import (
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
// and not the others.
func TestGoroutinesInCountsThePackagesGoroutines(t *testing.T) {
	const pkg = "github.com/hubgate/hubgate/internal/testutil"
	before := GoroutinesIn(pkg)
	other := make(chan struct{})
	defer close(other)
	go func() { <-other }() // a closure of this package: counted too
	ch := make(chan struct{})
	go parked(ch)
	WaitFor(t, "two more goroutines of the package", func() bool { return GoroutinesIn(pkg).N == before.N+2 })
	if g := GoroutinesIn("net/http"); strings.Contains(g.Stacks, "testutil.parked") {
		t.Errorf("a goroutine of another package counted:\n%s", g.Stacks)
	}
	close(ch)
	WaitFor(t, "the parked goroutine to end", func() bool { return GoroutinesIn(pkg).N == before.N+1 })
}
