//go:build !linux

package toolkit

import "os/exec"

// canWaitNoReap: this platform has no waitid(WNOWAIT) here; runShell reaps
// first and kills the process group after.
const canWaitNoReap = false

func waitExitNoReap(*exec.Cmd) {}
