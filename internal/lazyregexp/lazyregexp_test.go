package lazyregexp_test

import (
	"testing"

	"github.com/hubgate/hubgate/internal/lazyregexp"
)

func TestRegexpCompilesOnFirstUse(t *testing.T) {
	bad := lazyregexp.New(`(`) // no panic before its first use
	re := lazyregexp.New(`(?i)(id=)(\d+)`)
	if !re.MatchString("ID=7") || re.MatchString("id=x") {
		t.Error("MatchString")
	}
	if m := re.FindStringSubmatch("a id=42"); len(m) != 3 || m[2] != "42" {
		t.Errorf("FindStringSubmatch: %q", m)
	}
	if s := re.ReplaceAllString("id=1&ID=2", "${1}x"); s != "id=x&ID=x" {
		t.Errorf("ReplaceAllString: %q", s)
	}
	defer func() {
		if recover() == nil {
			t.Error("a bad expression did not panic on first use")
		}
	}()
	bad.MatchString("")
}
