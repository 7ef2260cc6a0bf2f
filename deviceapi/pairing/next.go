package pairing

import (
	"fmt"
	"time"
)

// Summary is what a pairing made, as `hubgate pair --json` prints it. It
// never holds a secret.
type Summary struct {
	DeviceID     string    `json:"deviceId"`
	DeviceName   string    `json:"deviceName"`
	APIURL       string    `json:"apiUrl"`
	DeviceTypeID string    `json:"deviceTypeId"`
	TokenID      string    `json:"tokenId"`
	PairedAt     time.Time `json:"pairedAt"`
	Reused       bool      `json:"reused"` // the device existed before this run
	StateFile    string    `json:"stateFile"`
	Next         string    `json:"next"` // the next step: NextRun, NextConfigInit, NextStatus or NextRestart
}

// Summary is r as `hubgate pair --json` prints it, its next step NextRun
// until NextStep says otherwise.
func (r *RunResult) Summary() *Summary {
	st := r.State
	return &Summary{DeviceID: st.DeviceID, DeviceName: st.DeviceName, APIURL: st.APIURL, DeviceTypeID: st.DeviceTypeID,
		TokenID: st.TokenID, PairedAt: st.PairedAt, Reused: r.Reused, StateFile: r.StatePath, Next: NextRun}
}

// What a person runs after pairing (Summary.Next).
const (
	NextRun        = "hubgate run"         // no daemon runs: start it
	NextConfigInit = "hubgate config init" // and no config file yet: write one first, then run
	NextStatus     = "hubgate status"      // the running daemon took the new pairing
	NextRestart    = "restart the daemon"  // the running daemon did not take it
)

// DaemonTold is what a running daemon did when told that the pairing
// changed (the control socket's answer, as plain values).
type DaemonTold struct {
	Running bool   // a daemon answered
	PID     int    // its process id, when it took the change
	Message string // its answer
	Err     error  // Running: it did not take the change; else: it could not be asked
}

// NextStep is how a pairing ends: the next step (NextRun, ...) and the
// lines that tell the person, given what a running daemon did with the
// new pairing and whether a configuration file exists. A daemon that
// reconnected needs nothing more (starting another would fail: one runs
// per user); without a daemon, 'hubgate run' starts one, after 'hubgate
// config init' when there is no config file yet.
func NextStep(d DaemonTold, configFile bool) (next string, lines []string) {
	switch {
	case d.Running && d.Err == nil:
		return NextStatus, []string{fmt.Sprintf("the running daemon (pid %d): %s", d.PID, d.Message),
			fmt.Sprintf("next: nothing to start: the running daemon (pid %d) now uses this pairing; 'hubgate status' shows its connection", d.PID)}
	case d.Running:
		return NextRestart, []string{fmt.Sprintf("the running daemon did not take the new pairing (%v)", d.Err),
			"next: restart the running daemon (stop it, then 'hubgate run', or restart the service with its manager) so that it uses this pairing"}
	case d.Err != nil:
		return NextRun, []string{fmt.Sprintf("could not tell a running daemon: %v", d.Err),
			"next: run 'hubgate run' to connect the device and take its commands (or restart a daemon that runs)"}
	case !configFile:
		return NextConfigInit, []string{"next: run 'hubgate config init' (there is no config file yet), then 'hubgate run' to connect the device and take its commands"}
	}
	return NextRun, []string{"next: run 'hubgate run' to connect the device and take its commands"}
}
