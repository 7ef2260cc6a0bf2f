package testenv

import (
	"os"
	"testing"
)

// RequireRoot skips the test unless it runs as root (a test that starts
// a process as another user needs it); it fails under CI=true.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		missing(t, "the test must run as root (it starts a process as another user)")
	}
}
