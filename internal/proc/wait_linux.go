package proc

import (
	"errors"
	"os/exec"

	"golang.org/x/sys/unix"
)

// canWaitNoReap: waitExitNoReap works on this platform.
const canWaitNoReap = true

// waitExitNoReap blocks until the started command's process has exited,
// leaving it a zombie (WNOWAIT) so its pid and process group id stay
// reserved until cmd.Wait reaps it.
func waitExitNoReap(cmd *exec.Cmd) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
