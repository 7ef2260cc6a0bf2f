package pairing

import (
	"bufio"
	"os"
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
	return func(step string) { pauseAtStepFile(path, step) }
}

func pauseAtStepFile(path, step string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	f.WriteString(step + "\n")
	f.Close()
	// A pipe opened while the test's writer of the previous step is still
	// open gives EOF without a line once that writer closes: open again.
	for {
		g, err := os.Open(path + ".go")
		if err != nil {
			return
		}
		line, _ := bufio.NewReader(g).ReadString('\n')
		g.Close()
		if line != "" {
			return
		}
	}
}
