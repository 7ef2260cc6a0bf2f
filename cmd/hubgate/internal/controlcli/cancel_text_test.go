package controlcli

import (
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
)

func TestCancelTextSaysTheGraceAndHowToForceOnce(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		res  bridge.CancelResult
		want string
	}{
		{bridge.CancelResult{Mode: automate.CancelModeNone}, "nothing runs"},
		{bridge.CancelResult{Stopped: true, Mode: automate.CancelModeCancel, CommandID: 5, GraceMs: 10000, ForceAt: now.Add(10 * time.Second),
			Message: "cancel requested for command 5 (hubgate cancel)"},
			"cancel requested for command #5: the run stops at its next step; it may go on for up to 10s, then hubgate forces it (hubgate cancel --force stops it now)"},
		{bridge.CancelResult{Stopped: true, Mode: automate.CancelModeCancel, CommandID: 5, GraceMs: 10000, ForceAt: now.Add(4 * time.Second), Already: true},
			"a cancel of command #5 was already requested: the run stops at its next step; it may go on for up to 4s, then hubgate forces it (hubgate cancel --force stops it now)"},
		{bridge.CancelResult{Stopped: true, Mode: automate.CancelModeCancel, CommandID: 5, GraceMs: 10000, Already: true},
			"a cancel of command #5 was already requested and forced: the run is terminated now"},
		{bridge.CancelResult{Stopped: true, Mode: automate.CancelModeTerminate, CommandID: 5, GraceMs: 10000},
			"force cancel sent for command #5: the run is terminated now"},
	} {
		if got := cancelText(tc.res, now); got != tc.want {
			t.Errorf("cancelText(%+v)\n got %q\nwant %q", tc.res, got, tc.want)
		}
	}
}
