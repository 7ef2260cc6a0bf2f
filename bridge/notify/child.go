package notify

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/internal/proc"
)

// TextArg is the argv element replaced by the text (a notification's or a
// speech's); a command without it gets the text on stdin.
const TextArg = "{text}"

// child is a started helper process (speech, osascript, PowerShell).
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	out  *proc.Output
	once sync.Once
}

// startChild starts argv with text as the TextArg element or on stdin, as
// every child of hubgate starts (internal/proc: its own process group,
// hubgate's secrets removed from its environment, killed with the daemon).
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
	cmd := proc.Command(argv[0], args...)
	cmd.Env = append(cmd.Env, env...)
	if stdin {
		cmd.Stdin = strings.NewReader(text)
	}
	out, err := proc.NewOutput(2048, proc.KeepHead)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	cmd.Stdout, cmd.Stderr = out.Writer(), out.Writer()
	err = cmd.Start()
	out.CloseWriter()
	if err != nil {
		out.Drain(0)
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	c := &child{cmd: cmd, done: make(chan struct{}), out: out}
	go func() {
		c.err = cmd.Wait()
		proc.Kill(cmd) // what it left behind
		out.Drain(time.Second)
		close(c.done)
	}()
	return c, nil
}

// kill ends the child's whole process group and waits for it.
func (c *child) kill() {
	c.once.Do(func() { proc.Kill(c.cmd) })
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
