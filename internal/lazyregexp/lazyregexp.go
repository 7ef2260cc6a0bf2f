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
	re func() *regexp.Regexp
}

// New is expr compiled on first use; a bad expr panics then, as
// regexp.MustCompile would at start.
func New(expr string) *Regexp {
	return &Regexp{re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

// MatchString is regexp.Regexp's MatchString.
func (r *Regexp) MatchString(s string) bool { return r.re().MatchString(s) }

// FindStringSubmatch is regexp.Regexp's FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.re().FindStringSubmatch(s) }

// ReplaceAllString is regexp.Regexp's ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string { return r.re().ReplaceAllString(src, repl) }
