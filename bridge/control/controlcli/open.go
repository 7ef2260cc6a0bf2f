package controlcli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/internal/proc"
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
// runtime directory. --print prints the token address instead (for this
// user's eyes, e.g. a browser behind an SSH port forward).

const openLong = `Open the running daemon's status page: hub connection, listening, the current run
with a cancel button, the queue and the recent answers, updated live.

The page listens on 127.0.0.1 only, needs an access cookie and, on Linux, answers
only connections of the user who runs the daemon. This command asks the daemon
over its control socket for a one-time login address (valid for 60 seconds, for
one use) and starts the browser with it; the page sets the cookie. On Linux the
address holds no secret (http://127.0.0.1:<port>/login); elsewhere it holds a
one-time code, which the page drops from the address, and which is redacted in
what this command prints.

--print prints the page's long-lived address, with its access token, instead of
starting a browser: keep it to yourself (e.g. open it in a browser on your own
machine through an SSH port forward, ssh -L). Exit code 9 when the daemon is not
running.`

func (c *CLI) newOpenCommand() *cobra.Command {
	var print bool
	cmd := &cobra.Command{
		Use:   "open",
		Short: "Open the running daemon's live status page in the browser",
		Long:  openLong,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			page, err := call(c, func(cl *control.Client) (control.StatusPage, error) { return cl.StatusPage(cmd.Context()) })
			var se *control.ServerError
			if errors.As(err, &se) && se.StatusCode == 404 {
				return fmt.Errorf("the daemon serves no status page: %s", se.Message)
			}
			if err != nil {
				return err
			}
			if print {
				fmt.Fprintln(c.opts.Out, page.URL)
				return nil
			}
			if page.LoginURL == "" {
				return errors.New("the running daemon gives no one-time login address (it is older than this hubgate): restart it, or open the address 'hubgate open --print' prints")
			}
			argv, err := oauth.BrowserCommand(os.Getenv, page.LoginURL)
			if err != nil {
				return err
			}
			// Started as every child of hubgate (internal/proc): none of
			// its secrets in the browser's environment, free to outlive us.
			// Its command line shows the login address: no secret on
			// Linux; elsewhere a code spent once the browser opens it and
			// dead after 60 s anyway.
			if _, err := proc.StartDetached(argv[0], argv[1:], nil); err != nil {
				return fmt.Errorf("start the browser (%s): %w; 'hubgate open --print' prints the address", argv[0], err)
			}
			fmt.Fprintf(c.opts.Out, "opened the status page (%s)\n", redactCode(page.LoginURL))
			return nil
		},
	}
	cmd.Flags().BoolVar(&print, "print", false, "print the page's long-lived address (with its access token: for your eyes only, e.g. over an SSH port forward) instead of opening a browser")
	return cmd
}

// redactCode is the login address u without its code's value.
func redactCode(u string) string {
	if before, _, ok := strings.Cut(u, "code="); ok {
		return before + "code=…"
	}
	return u
}
