package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/bridge/control"
	"github.com/hubgate/hubgate/bridge/daemon/demo"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/controlcli"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/mockcli"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/rulescli"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub"
	"github.com/hubgate/hubgate/oauth"
)

// Exit codes of hubgate. Scripts branch on these.
const (
	ExitOK          = 0
	ExitError       = 1  // anything not classified below
	ExitUsage       = 2  // bad command line (also: config init over an existing file without --force)
	ExitConfig      = 3  // invalid or unreadable configuration (the file, --macro), a rule whose template fails (rules test), or a bad key supplied by the user
	ExitSecretStore = 4  // the OS secret store is unavailable or locked
	ExitUnavailable = 5  // a needed resource is taken (port window full; another daemon runs: run; another pair or unpair runs; mock: its --listen address)
	ExitSignIn      = 6  // the sign-in failed or must be repeated (denied, timed out, refused, invalid_grant)
	ExitRemote      = 7  // the remote device service refused a request (an HTTP error status)
	ExitNotPaired   = 8  // no paired device: run 'hubgate pair' first
	ExitNotRunning  = 9  // the daemon is not running (status, cancel)
	ExitRunFailed   = 10 // demo --once: the run did not complete (failed, canceled, not run)
	// status: the daemon runs but its device does not take commands.
	ExitNeedsRepair  = 11 // status: the hub refused the device token; run: the token is another device's (VerifySelf); run 'hubgate pair' again
	ExitNotConnected = 12 // status: the hub is not connected (connecting, reconnecting)
	ExitNotListening = 13 // status: connected, but commands are refused (not listening, bridge.listening: obey)
)

// quietError carries an exit code whose story the command already told
// on its output (status); Run prints nothing more.
type quietError struct{ err error }

func (e *quietError) Error() string { return e.err.Error() }
func (e *quietError) Unwrap() error { return e.err }

// usageError marks a command-line mistake.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// configError is a configuration that could not be loaded: unreadable
// (a missing --config file, no permission) or invalid.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// exitTable is the one place that maps errors to exit codes; the first
// matching row wins.
var exitTable = []struct {
	match func(error) bool
	code  int
}{
	{func(err error) bool { var u *usageError; return errors.As(err, &u) }, ExitUsage},
	{func(err error) bool { var u *pairing.UsageError; return errors.As(err, &u) }, ExitUsage},
	{func(err error) bool { var u *mockcli.UsageError; return errors.As(err, &u) }, ExitUsage},
	{func(err error) bool { var u *controlcli.UsageError; return errors.As(err, &u) }, ExitUsage},
	{func(err error) bool { return errors.Is(err, configs.ErrConfigExists) }, ExitUsage},
	{func(err error) bool { return errors.Is(err, errNotPaired) }, ExitNotPaired},
	{func(err error) bool { return errors.Is(err, controlcli.ErrNotRunning) }, ExitNotRunning},
	{func(err error) bool { var c *configError; return errors.As(err, &c) }, ExitConfig},
	{func(err error) bool { var i *mockcli.InputError; return errors.As(err, &i) }, ExitConfig},
	{func(err error) bool { var v *configs.ValidationError; return errors.As(err, &v) }, ExitConfig},
	{func(err error) bool { var r *rulescli.RenderFailedError; return errors.As(err, &r) }, ExitConfig},
	{func(err error) bool { var s *pairing.SettingsError; return errors.As(err, &s) }, ExitConfig},
	{func(err error) bool { return errors.Is(err, configs.ErrInvalidAccessKey) }, ExitConfig},
	{func(err error) bool { return errors.Is(err, configs.ErrStoreUnavailable) }, ExitSecretStore},
	{func(err error) bool { var p *server.PortWindowError; return errors.As(err, &p) }, ExitUnavailable},
	{func(err error) bool { return errors.Is(err, control.ErrAlreadyRunning) }, ExitUnavailable},
	{func(err error) bool { return errors.Is(err, pairing.ErrBusy) }, ExitUnavailable},
	{func(err error) bool { var u *mockcli.UnavailableError; return errors.As(err, &u) }, ExitUnavailable},
	{func(err error) bool { return errors.Is(err, hub.ErrWrongDevice) }, ExitNeedsRepair},
	{func(err error) bool { return errors.Is(err, controlcli.ErrNeedsRepair) }, ExitNeedsRepair},
	{func(err error) bool { return errors.Is(err, controlcli.ErrNotConnected) }, ExitNotConnected},
	{func(err error) bool { return errors.Is(err, controlcli.ErrNotListening) }, ExitNotListening},
	{oauth.IsSignInError, ExitSignIn},
	{func(err error) bool { var a *deviceapi.APIError; return errors.As(err, &a) }, ExitRemote},
	{func(err error) bool { var d *demo.RunError; return errors.As(err, &d) }, ExitRunFailed},
}

func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	for _, row := range exitTable {
		if row.match(err) {
			return row.code
		}
	}
	return ExitError
}

func reportError(w io.Writer, err error) {
	var q *quietError
	var r *mockcli.ReportedError
	var s *controlcli.ReportedError
	var t *rulescli.RenderFailedError
	if errors.As(err, &q) || errors.As(err, &r) || errors.As(err, &s) || errors.As(err, &t) {
		return
	}
	fmt.Fprintf(w, "hubgate: %v\n", err)
}
