package proc

import (
	"io"
	"os"
	"slices"
	"sync"
	"time"
)

// Keep says which part of a child's output an Output keeps.
type Keep int

const (
	// KeepHead keeps the first bytes (a command's result).
	KeepHead Keep = iota
	// KeepTail keeps the last bytes (a server's stderr, for its error).
	KeepTail
)

// Output reads a child's output from an os.Pipe, keeping at most max bytes.
// A pipe, not an io.Writer given to exec: exec would make Wait wait for
// every holder of the pipe, and an orphan of a wrapper (npx) or a
// background process holds it until its group is killed.
type Output struct {
	r, w *os.File
	done chan struct{}

	mu        sync.Mutex
	max       int
	keep      Keep
	buf       []byte
	truncated bool
}

// NewOutput opens the pipe and starts reading it.
func NewOutput(max int, keep Keep) (*Output, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	o := &Output{r: r, w: w, done: make(chan struct{}), max: max, keep: keep}
	go func() {
		io.Copy(o, r)
		close(o.done)
	}()
	return o, nil
}

// Writer is the write end, for cmd.Stdout or cmd.Stderr.
func (o *Output) Writer() *os.File { return o.w }

// CloseWriter closes this process's copy of the write end; call it once
// the child started (or failed to), so that EOF comes when the child's
// processes are gone.
func (o *Output) CloseWriter() { o.w.Close() }

// Drain waits up to wait for EOF, then stops reading. Call it after the
// group was killed.
func (o *Output) Drain(wait time.Duration) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-o.done:
	case <-t.C:
		o.r.Close()
		<-o.done
	}
	o.r.Close()
}

// Write keeps what fits and accepts the rest, so the child never blocks.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.keep == KeepTail {
		o.buf = append(o.buf, p...)
		if over := len(o.buf) - o.max; over > 0 {
			o.buf = slices.Clone(o.buf[over:])
			o.truncated = true
		}
		return len(p), nil
	}
	room := o.max - len(o.buf)
	if room < len(p) {
		o.truncated = true
		if room > 0 {
			o.buf = append(o.buf, p[:room]...)
		}
		return len(p), nil
	}
	o.buf = append(o.buf, p...)
	return len(p), nil
}

// String is the output kept so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return string(o.buf)
}

// Truncated reports whether bytes were dropped.
func (o *Output) Truncated() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.truncated
}
