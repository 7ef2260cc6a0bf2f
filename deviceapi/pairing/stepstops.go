package pairing

import (
	"bufio"
	"os"
	"sync"
)

// EnvStepStops names a file for the crash tests of the commit protocol:
// when set, `hubgate pair` (PauseAtStepFile) appends the name of each
// step to it (each remote step, each secret write, the state file, each
// delete) and, before doing the step, waits for one line on the named
// pipe "<file>.go", so that a test can kill it at that exact instant or
// let it go on. Never set in normal use.
const EnvStepStops = "HUBGATE_TEST_PAIR_STOPS"

// PauseAtStepFile is RunOptions.BeforeStep for EnvStepStops: it appends
// each step to the file at path, then waits for a line on the pipe
// path+".go".
func PauseAtStepFile(path string) func(step string) {
	var (
		once sync.Once
		pipe *bufio.Reader
	)
	return func(step string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return
		}
		f.WriteString(step + "\n")
		f.Close()
		// The pipe is opened once, for reading and writing, and kept: with
		// the process a writer of its own, a read never ends at EOF, and a
		// line the test writes stays in the pipe whenever the test opens
		// and closes its end. (Opened and closed at each step, a line
		// written between a read's EOF and its close was lost with the
		// pipe's buffer, and the process waited for ever.)
		once.Do(func() {
			if g, err := os.OpenFile(path+".go", os.O_RDWR, 0); err == nil {
				pipe = bufio.NewReader(g)
			}
		})
		if pipe != nil {
			pipe.ReadString('\n')
		}
	}
}
