package notify

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/hubgate/hubgate/internal/proc"
)

// TextArg is the argv element replaced by the text (a notification's or a
// speech's); a command without it gets the text on stdin.
const TextArg = "{text}"

// child is a started helper process (speech, osascript, PowerShell).
type child struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	res    proc.Result
	err    error
}

// startChild starts argv with text as the TextArg element or on stdin, as
// every child of hubgate starts and ends (internal/proc: its own process
// group, hubgate's secrets removed from its environment, recorded for the
// reaper, the whole group killed when it ends or is cut off).
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
	if _, err := exec.LookPath(argv[0]); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	cmd := proc.Command(argv[0], args...)
	cmd.Env = append(cmd.Env, env...)
	if stdin {
		cmd.Stdin = strings.NewReader(text)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &child{name: argv[0], cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.res, c.err = proc.Run(ctx, cmd, 2048)
	}()
	return c, nil
}

// kill ends the child's whole process group and waits for it.
func (c *child) kill() {
	c.cancel()
	<-c.done
}

// wait waits for the child's end, or kills it when ctx ends first.
func (c *child) wait(ctx context.Context) error {
	select {
	case <-c.done:
	case <-ctx.Done():
		c.kill()
		return fmt.Errorf("%s: %w", c.name, ctx.Err())
	}
	c.cancel()
	if c.err != nil {
		if o := strings.TrimSpace(c.res.Output); o != "" {
			return fmt.Errorf("%s: %w: %s", c.name, c.err, o)
		}
		return fmt.Errorf("%s: %w", c.name, c.err)
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
