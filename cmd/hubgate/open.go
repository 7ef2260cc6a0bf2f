package main

import (
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/internal/proc"
	"github.com/hubgate/hubgate/oauth"
)

// `hubgate open`: opens the running daemon's status page in the browser.
// The page's address carries its access token, which must not appear on a
// command line (other users see those): the browser is given a 0600 file
// in the control socket's private directory that forwards to the address.
// --print prints the address instead (it holds the token: for this user's
// eyes, e.g. over SSH with a port forward).

func newOpenCommand(a *app) *cobra.Command {
	var print bool
	cmd := &cobra.Command{
		Use:   "open",
		Short: "Open the running daemon's live status page in the browser",
		Long: `Open the running daemon's status page: hub connection, listening, the current run
with a cancel button, the queue and the recent answers, updated live.

The page listens on 127.0.0.1 only and needs the access token that this command
takes from the daemon over its control socket. --print prints the page's address
(with the token) instead of starting a browser. Exit code 9 when the daemon is
not running.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, c, err := a.dialControl()
			if err != nil {
				return err
			}
			defer c.Close()
			page, err := c.StatusPage(cmd.Context())
			var se *control.ServerError
			if errors.As(err, &se) && se.StatusCode == 404 {
				return fmt.Errorf("the daemon serves no status page: %s", se.Message)
			}
			if err != nil {
				return daemonError(err)
			}
			if print {
				fmt.Fprintln(a.stdio.Out, page.URL)
				return nil
			}
			file := filepath.Join(filepath.Dir(cfg.Bridge.ControlSocket), "status-page.html")
			if err := writeForwarder(file, page.URL); err != nil {
				return err
			}
			argv, err := oauth.BrowserCommand(os.Getenv, "file://"+file)
			if err != nil {
				return err
			}
			// Started as every child of hubgate (internal/proc): none of
			// its secrets in the browser's environment, free to outlive us.
			if _, err := proc.StartDetached(argv[0], argv[1:], nil); err != nil {
				return fmt.Errorf("start the browser (%s): %w; 'hubgate open --print' prints the address", argv[0], err)
			}
			fmt.Fprintf(a.stdio.Out, "opened the status page (%s)\n", redactToken(page.URL))
			return nil
		},
	}
	cmd.Flags().BoolVar(&print, "print", false, "print the page's address (with its access token) instead of opening a browser")
	return cmd
}

// writeForwarder writes a private HTML file that sends the browser to u.
func writeForwarder(path, u string) error {
	body := fmt.Sprintf(`<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">`+
		`<meta http-equiv="refresh" content="0;url=%s"><title>hubgate</title><a href="%s">Open the hubgate status page</a>`,
		html.EscapeString(u), html.EscapeString(u))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// redactToken is u without its token's value.
func redactToken(u string) string {
	if before, _, ok := strings.Cut(u, "token="); ok {
		return before + "token=…"
	}
	return u
}
