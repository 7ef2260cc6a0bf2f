package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"

	"github.com/hubgate/hubgate/automate/toolkit"
)

// TextArg is the argv element replaced by the text (a notification's or a
// speech's); a command without it gets the text on stdin.
const TextArg = "{text}"

// child is a started helper process (speech, osascript, PowerShell).
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	out  *tail
	once sync.Once
}

// startChild starts argv with text as the TextArg element or on stdin, in
// its own process group, with hubgate's secrets removed from its
// environment (the toolkit's helpers, as every child of hubgate).
func startChild(argv []string, text string, env ...string) (*child, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("empty command")
	}
	args := make([]string, 0, len(argv)-1)
	stdin := true
	for _, a := range argv[1:] {
		if a == TextArg {
			a, stdin = text, false
		}
		args = append(args, a)
	}
	cmd := exec.Command(argv[0], args...)
	cmd.Env = append(toolkit.ChildEnviron(), env...)
	if stdin {
		cmd.Stdin = strings.NewReader(text)
	}
	out := &tail{limit: 2048}
	cmd.Stdout, cmd.Stderr = out, out
	toolkit.SetProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	c := &child{cmd: cmd, done: make(chan struct{}), out: out}
	go func() {
		c.err = cmd.Wait()
		toolkit.KillProcessGroup(cmd) // what it left behind
		close(c.done)
	}()
	return c, nil
}

// kill ends the child's whole process group and waits for it.
func (c *child) kill() {
	c.once.Do(func() { toolkit.KillProcessGroup(c.cmd) })
	<-c.done
}

// wait waits for the child's end, or kills it when ctx ends first.
func (c *child) wait(ctx context.Context) error {
	select {
	case <-c.done:
	case <-ctx.Done():
		c.kill()
		return fmt.Errorf("%s: %w", c.cmd.Args[0], ctx.Err())
	}
	if c.err != nil {
		if o := strings.TrimSpace(c.out.String()); o != "" {
			return fmt.Errorf("%s: %w: %s", c.cmd.Args[0], c.err, o)
		}
		return fmt.Errorf("%s: %w", c.cmd.Args[0], c.err)
	}
	return nil
}

// runChild runs argv to its end within ctx.
func runChild(ctx context.Context, argv []string, text string, env ...string) error {
	c, err := startChild(argv, text, env...)
	if err != nil {
		return err
	}
	return c.wait(ctx)
}

// tail keeps the first bytes of a child's output for an error message.
type tail struct {
	mu    sync.Mutex
	b     strings.Builder
	limit int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.limit - t.b.Len(); room > 0 {
		t.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}

var _ io.Writer = (*tail)(nil)
