package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Stdio speaks to a child process over its stdin and stdout. The caller
// starts the child (through internal/proc) and reaps it; the transport
// only reads, writes and, on close, ends it.
type Stdio struct {
	// Stdin is the child's standard input. Required.
	Stdin io.WriteCloser
	// Stdout is the read end of the child's standard output; close
	// closes it (so that an orphan holding the write end cannot keep the
	// reader alive). Required.
	Stdout io.ReadCloser
	// Exited is closed once the child has exited and been reaped. Nil:
	// close does not wait for the child.
	Exited <-chan struct{}
	// Kill ends the child (its process group) when it has not exited
	// TerminateDuration after its stdin closed. Nil: close does not kill.
	Kill func()
	// TerminateDuration is how long close waits for the child to exit
	// after closing its stdin. Zero: 500 ms.
	TerminateDuration time.Duration

	s          *Session
	wmu        sync.Mutex
	readerDone chan struct{}
}

func (t *Stdio) open(_ context.Context, s *Session) error {
	if t.Stdin == nil || t.Stdout == nil {
		return errors.New("stdio: Stdin and Stdout are required")
	}
	t.s = s
	t.readerDone = make(chan struct{})
	go t.read()
	return nil
}

func (t *Stdio) read() {
	defer close(t.readerDone)
	br := bufio.NewReaderSize(t.Stdout, 64<<10)
	for {
		line, err := readLine(br, t.s.maxMsg)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the server closed its stdout")
			}
			t.s.fail(err)
			return
		}
		t.s.handle(line, 0)
	}
}

// readLine reads one line of at most max bytes (without its end).
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max+2 { // the line end does not count
			return nil, fmt.Errorf("%w (%d bytes)", ErrMessageTooLarge, max)
		}
		switch {
		case err == nil:
			return bytes.TrimRight(append(line, frag...), "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			line = append(line, frag...)
		default:
			if len(line)+len(frag) > 0 && errors.Is(err, io.EOF) {
				return append(line, frag...), nil
			}
			return nil, err
		}
	}
}

func (t *Stdio) send(_ context.Context, msg []byte, _ int64) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	b := make([]byte, 0, len(msg)+1)
	if _, err := t.Stdin.Write(append(append(b, msg...), '\n')); err != nil {
		return fmt.Errorf("write to the server's stdin: %w", err)
	}
	return nil
}

func (t *Stdio) initialized(string) {}

func (t *Stdio) close() error {
	err := t.Stdin.Close()
	if t.Exited != nil {
		d := t.TerminateDuration
		if d <= 0 {
			d = 500 * time.Millisecond
		}
		timer := time.NewTimer(d)
		select {
		case <-t.Exited:
		case <-timer.C:
			if t.Kill != nil {
				t.Kill()
				<-t.Exited
			}
		}
		timer.Stop()
	}
	t.Stdout.Close()
	if t.readerDone != nil {
		<-t.readerDone
	}
	return err
}
