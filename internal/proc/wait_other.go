//go:build !linux

package proc

import "os/exec"

// canWaitNoReap: no waitid(WNOWAIT) here; Run reaps first and kills the
// process group after.
const canWaitNoReap = false

func waitExitNoReap(*exec.Cmd) {}
