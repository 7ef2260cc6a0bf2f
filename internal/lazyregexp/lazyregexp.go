// Package lazyregexp owns regular expressions compiled on first use, as
// Go's own cmd/go/internal/lazyregexp: a package-level regexp.MustCompile
// runs in every hubgate process, the idle daemon included, and compiling
// reads the compiler's and unicode's tables into memory.
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a regexp.Regexp compiled on its first use.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// New is expr compiled on first use; a bad expr panics then, as
// regexp.MustCompile would at start. A package-level
// `var x = lazyregexp.New(...)` is static data: it gives its package no
// init work at all.
func New(expr string) *Regexp { return &Regexp{expr: expr} }

func (r *Regexp) get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// MatchString is regexp.Regexp's MatchString.
func (r *Regexp) MatchString(s string) bool { return r.get().MatchString(s) }

// FindStringSubmatch is regexp.Regexp's FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.get().FindStringSubmatch(s) }

// ReplaceAllString is regexp.Regexp's ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.get().ReplaceAllString(src, repl)
}
