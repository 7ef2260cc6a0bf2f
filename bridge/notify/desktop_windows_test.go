//go:build windows

package notify

import (
	"strings"
	"testing"
)

// TestToastUsesAKnownAppID: the toast is shown under PowerShell's
// AppUserModelID (an unknown one such as "hubgate" shows nothing).
func TestToastUsesAKnownAppID(t *testing.T) {
	want := `CreateToastNotifier('{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\WindowsPowerShell\v1.0\powershell.exe')`
	if !strings.Contains(toastScript, want) {
		t.Errorf("the toast script does not use PowerShell's AppUserModelID:\n%s", toastScript)
	}
}
