package controlcli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/oauth"
)

// `hubgate open`: opens the running daemon's status page in the browser.
// The page's long-lived address carries its access token, which must not
// appear on a command line (other local users can read those): the browser
// is given a one-time login address instead, armed by the daemon at this
// request (valid for 60 s and one use), which sets the page's cookie and
// sends the browser on to the page. On Linux it is the code-free /login:
// the page knows which user each connection comes from and serves only
// its owner, so the browser's command line holds no secret at all.
// Elsewhere it is /login?code=...: the code is on the command line until
// the browser spends it. A plain http address also opens in snap- and
// Flatpak-packaged browsers, which cannot read files in our private
// runtime directory. A browser command that fails (within browserGrace)
// makes open withdraw the login and fail, suggesting --print. --print
// prints the token address instead (for this user's eyes, e.g. a browser
// behind an SSH port forward) and arms no login.

const openLong = `Open the running daemon's status page: hub connection, listening, the current run
with a cancel button, the queue and the recent answers, updated live.

The page listens on 127.0.0.1 only, needs an access cookie and, on Linux, answers
only connections of the user who runs the daemon. This command asks the daemon
over its control socket for a one-time login address (valid for 60 seconds, for
one use) and starts the browser with it; the page sets the cookie. On Linux the
address holds no secret (http://127.0.0.1:<port>/login); elsewhere it holds a
one-time code, which the page drops from the address, and which is redacted in
what this command prints.

When no browser can be started (the BROWSER command or xdg-open fails or is
missing), open says so, withdraws the login address and exits 1: use --print.

--print prints the page's long-lived address, with its access token, instead of
starting a browser, and arms no login: keep it to yourself (e.g. open it in a
browser on your own machine through an SSH port forward, ssh -L). Exit code 9
when the daemon is not running.`

// browserGrace is how long `open` waits for the browser command to exit:
// a launcher (xdg-open, open, a BROWSER script) that fails does so at once
// (xdg-open exits 3 or 4 when it finds no browser); one still running
// then is taken for a browser that stays in the foreground.
const browserGrace = 3 * time.Second

// openOptions are `open`'s options.
type openOptions struct {
	Out    io.Writer
	Daemon Daemon
	Getenv func(string) string // BROWSER
	// StartBrowser starts the browser command argv, detached, and calls
	// exited (if not nil) when it exits.
	StartBrowser func(argv []string, exited func(error)) error
	// BrowserGrace is how long a browser command may take to fail; zero:
	// browserGrace.
	BrowserGrace time.Duration
	Print        bool // --print: print the token address, arm no login
}

// newCmdOpen builds open; runF (nil: runOpen) gets the parsed options.
func newCmdOpen(c *CLI, runF func(context.Context, *openOptions) error) *cobra.Command {
	o := &openOptions{Out: c.opts.Out, Daemon: c.daemon(), Getenv: c.opts.Getenv, StartBrowser: c.opts.StartBrowser}
	cmd := &cobra.Command{
		Use:   "open",
		Short: "Open the running daemon's live status page in the browser",
		Long:  openLong,
		Example: `  hubgate open            # the page in this desktop's browser
  hubgate open --print    # the address, e.g. for a browser behind ssh -L`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runOpen, o) },
	}
	cmd.Flags().BoolVar(&o.Print, "print", false, "print the page's long-lived address (with its access token: for your eyes only, e.g. over an SSH port forward) instead of opening a browser")
	return cmd
}

// runOpen opens the status page through a one-time login address, or
// prints its token address (Print).
func runOpen(ctx context.Context, o *openOptions) error {
	if o.Print {
		// Only the token address: no login is armed.
		page, err := statusPage(o.Daemon, func(cl *control.Client) (control.StatusPage, error) { return cl.StatusPage(ctx) })
		if err != nil {
			return err
		}
		fmt.Fprintln(o.Out, page.URL)
		return nil
	}
	page, err := statusPage(o.Daemon, func(cl *control.Client) (control.StatusPage, error) { return cl.StatusPageLogin(ctx) })
	var se *control.ServerError
	if errors.As(err, &se) && se.StatusCode == 404 {
		return errors.New("the running daemon gives no one-time login address (it is older than this hubgate): restart it, or open the address 'hubgate open --print' prints")
	}
	if err != nil {
		return err
	}
	if err := o.startBrowser(ctx, page.LoginURL); err != nil {
		// Nothing may stay armed for a browser that never came.
		rerr := revokeLogin(context.WithoutCancel(ctx), o.Daemon, page.LoginURL)
		var be *BrowserError
		if errors.As(err, &be) {
			be.RevokeErr = rerr
		}
		return err
	}
	fmt.Fprintf(o.Out, "opened the status page (%s)\n", redactCode(page.LoginURL))
	return nil
}

// statusPage runs a status page request: a daemon without a page says so
// (a 404 of another kind is returned as it is).
func statusPage(d Daemon, f func(*control.Client) (control.StatusPage, error)) (control.StatusPage, error) {
	page, err := call(d, f)
	var se *control.ServerError
	if errors.As(err, &se) && se.StatusCode == 404 && strings.Contains(se.Message, "status page") {
		return page, fmt.Errorf("the daemon serves no status page: %s", se.Message)
	}
	return page, err
}

// BrowserError is a browser that could not be started for `hubgate open`:
// the command failed to start or exited with a failure status.
type BrowserError struct {
	Command string // the program, e.g. xdg-open
	Err     error
	// RevokeErr is why the one-time login could not be withdrawn; nil:
	// it was.
	RevokeErr error
}

func (e *BrowserError) Error() string {
	s := fmt.Sprintf("could not open a browser (%s: %v)", e.Command, e.Err)
	if e.RevokeErr != nil {
		s += fmt.Sprintf("; its one-time login could not be withdrawn (%v) and expires in 60 s", e.RevokeErr)
	} else {
		s += "; its one-time login was withdrawn"
	}
	return s + ": 'hubgate open --print' prints the page's address to open yourself (or set BROWSER)"
}

func (e *BrowserError) Unwrap() error { return e.Err }

// startBrowser starts the browser on loginURL and waits up to
// browserGrace for the launcher to exit: a failure is a *BrowserError.
func (o *openOptions) startBrowser(ctx context.Context, loginURL string) error {
	argv, err := oauth.BrowserCommand(o.Getenv, loginURL)
	if err != nil {
		return &BrowserError{Command: "$BROWSER", Err: err}
	}
	// Started as every child of hubgate (internal/proc): none of its
	// secrets in the browser's environment, free to outlive us. Its
	// command line shows the login address: no secret on Linux;
	// elsewhere a code spent once the browser opens it and dead after
	// 60 s anyway.
	exited := make(chan error, 1)
	if err := o.StartBrowser(argv, func(err error) { exited <- err }); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return &BrowserError{Command: argv[0], Err: err}
	}
	t := time.NewTimer(cmp.Or(o.BrowserGrace, browserGrace))
	defer t.Stop()
	select {
	case err := <-exited:
		if err != nil {
			return &BrowserError{Command: argv[0], Err: err}
		}
	case <-t.C: // still running: a browser in the foreground
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// revokeLogin withdraws the one-time login address loginURL.
func revokeLogin(ctx context.Context, d Daemon, loginURL string) error {
	_, err := call(d, func(cl *control.Client) (bool, error) { return cl.RevokeLogin(ctx, loginURL) })
	return err
}

// redactCode is the login address u without its code's value.
func redactCode(u string) string {
	if before, _, ok := strings.Cut(u, "code="); ok {
		return before + "code=…"
	}
	return u
}
