package testutil

import (
	"bytes"
	"runtime"
	"strings"
)

// Goroutines is a set of goroutines from one dump of every goroutine's
// stack: how many, and their stacks for a failure message. Leak tests
// count the goroutines that are theirs, never runtime.NumGoroutine: the
// whole process holds the test runner's goroutines and what other tests
// (and the race detector's runtime) start and end meanwhile.
type Goroutines struct {
	N      int
	Stacks string
}

// allStacks returns runtime.Stack of every goroutine, each block
// starting with its "goroutine N [state...]:" header; the first is the
// caller's.
func allStacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for b := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if s := strings.TrimSpace(string(b)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// bubbleOf returns the "synctest bubble N" of a stack's header, or "".
func bubbleOf(stack string) string {
	header, _, _ := strings.Cut(stack, "\n")
	i := strings.Index(header, "synctest bubble ")
	if i < 0 {
		return ""
	}
	id := header[i:]
	if j := strings.IndexAny(id, ",]"); j >= 0 {
		id = id[:j]
	}
	return id
}

// BubbleGoroutines returns the goroutines of the caller's
// testing/synctest bubble, the caller included (the runtime names each
// goroutine's bubble in its stack header). Outside a bubble it returns
// none. After synctest.Wait the count is final: every other goroutine of
// the bubble is durably blocked or gone.
func BubbleGoroutines() Goroutines {
	stacks := allStacks()
	if len(stacks) == 0 {
		return Goroutines{}
	}
	mine := bubbleOf(stacks[0])
	if mine == "" {
		return Goroutines{}
	}
	var g Goroutines
	for _, s := range stacks {
		if bubbleOf(s) == mine {
			g.N++
			g.Stacks += s + "\n\n"
		}
	}
	return g
}

// GoroutinesIn returns the goroutines whose stack names a function of
// one of the packages (import paths, e.g.
// "github.com/hubgate/hubgate/oauth"), in a frame or in its "created by"
// line: the goroutines a package's code runs or started, for a leak test
// outside a synctest bubble. The caller's own goroutine counts when it
// is in one of them (a test of that package), the same before and after.
func GoroutinesIn(pkgs ...string) Goroutines {
	var g Goroutines
	for _, s := range allStacks() {
		for _, p := range pkgs {
			if strings.Contains(s, p+".") {
				g.N++
				g.Stacks += s + "\n\n"
				break
			}
		}
	}
	return g
}
