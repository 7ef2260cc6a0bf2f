package main

// `hubgate pair` and `hubgate unpair`: flags, the prompt on the terminal
// and the output. The decision, the sign-in, the device and the commit are
// deviceapi/pairing's (Run, Unpair; its choices are written there). Here:
//   - The last line names the next step (pairing.NextStep).
//   - A run whose stdin is not a terminal (a pipe, /dev/null: checked with
//     TCGETS, not by the file's mode) cannot be asked: pairing then wants
//     --reuse or --replace. The client secret is read from stdin only with
//     --client-secret-stdin (echo off on a terminal).
//   - pair is non-dumpable, as the daemon (proc.DenyInspection): the
//     browser it starts, or any process of the user, cannot read
//     HUBGATE_CLIENT_SECRET out of /proc/<pid>/environ.
//   - EnvPairStops is a test hook of the crash tests (a pause before each
//     step); it is never set in normal use.
//   - Exit codes: see exitcodes.go (sign-in failures 6, refusals of the
//     device service 7, secret store 4, configuration 3, usage 2).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/cmd/hubgate/internal/controlcli"
	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/oauth"
)

// EnvClientSecret supplies the OAuth client secret for headless use.
const EnvClientSecret = pairing.EnvClientSecret

// pairFlags are pair's options: its flags, and the configuration
// overrides of the ones that were set.
type pairFlags struct {
	overrides   []configs.Override
	name        string
	noBrowser   bool
	jsonOut     bool
	apiURL      string
	clientID    string
	deviceType  string
	replace     bool
	reuse       bool
	timeout     time.Duration
	redirectURI string
	secretStdin bool
}

// pairLong is pair's help.
const pairLong = `Pair this machine with the remote device service: sign in with your browser,
create a User Device of the configured device type, create its device token,
confirm the device, then store the refresh token and the device token in the OS
secret store (where none can be reached: the private file
$XDG_CONFIG_HOME/hubgate/secrets.json, with a warning; see 'hubgate secrets')
and the device id and name in $XDG_CONFIG_HOME/hubgate/state.json.

The api url, client id and device type id come from the flags, else from
HUBGATE_API_URL, HUBGATE_CLIENT_ID and HUBGATE_DEVICE_TYPE, else from the config
file. The redirect address registered for the client in the developer portal
(e.g. http://127.0.0.1:51772/) is --redirect-uri or remote.redirect_uri; without
one a random loopback port is used. The client secret is optional and never a
flag: it comes from the OS secret store, else from HUBGATE_CLIENT_SECRET, else
from stdin with --client-secret-stdin (one line; it is then stored in the OS
secret store), else none is sent.

The api url must answer before the browser opens: a wrong address fails in
seconds (exit 6). The sign-in address is always printed. A browser is opened
with $BROWSER (the URL as its last argument) or xdg-open, without hubgate's
secrets in its environment; if it cannot be opened, or with --no-browser, paste
the address the browser was redirected to.

The secret store is checked before anything is created: without a usable one,
pair stops and nothing is created. If a later step fails, nothing is kept
locally and the message says what was created on the service.

While you sign in, the sign-in page is checked: a page that refuses the request
(an unknown client id or redirect address) fails at once (exit 6).

When a device is already paired, --reuse keeps it (new sign-in, new device
token) and --replace creates a new device; both keep the api url, client id,
device type and redirect address saved in state.json unless a flag changes one.
One of them is required when stdin is not a terminal. A pairing is committed
in one step: interrupted at any instant, the machine keeps the old pairing or
the new one. 'hubgate unpair' removes the local secrets and state.`

// pairOptions are pair's options: its flags and what it takes from the
// process.
type pairOptions struct {
	IO Stdio
	// LoadConfig loads and validates the configuration with overrides
	// (the flags') applied.
	LoadConfig func(overrides []configs.Override) (*configs.Config, error)
	Logger     func(cfg *configs.Config) *slog.Logger
	// Env is the outside world of the pairing for cfg (secret store,
	// prompts, clock, browser).
	Env func(cfg *configs.Config) pairEnv
	// DenyInspection makes the process non-dumpable; nil: nothing.
	DenyInspection func(log *slog.Logger)
	// TellDaemon tells a running daemon that the pairing changed.
	TellDaemon func(ctx context.Context) controlcli.DaemonAnswer

	Flags pairFlags
}

func newPairCommand(a *app) *cobra.Command { return newCmdPair(a, nil) }

// newCmdPair builds pair; runF (nil: runPairCommand) gets the parsed
// options.
func newCmdPair(a *app, runF func(context.Context, *pairOptions) error) *cobra.Command {
	o := &pairOptions{IO: a.stdio, LoadConfig: a.loadConfig, Logger: a.logger, Env: a.pairEnv, DenyInspection: denyInspection,
		TellDaemon: func(ctx context.Context) controlcli.DaemonAnswer { return a.control().TellDaemon(ctx) }}
	f := &o.Flags
	cmd := &cobra.Command{
		Use: "pair",
		Example: `  hubgate pair                    # sign in with the browser, create the device
  hubgate pair --api-url https://services.example.com --client-id <id> \
      --device-type <type> --redirect-uri http://127.0.0.1:51772/
  hubgate pair --reuse            # keep the paired device, new sign-in and token
  hubgate pair --no-browser       # on a machine without a browser: paste the address`,
		Short: "Sign in, create the virtual controller (User Device) and its device token, keep the secrets",
		Long:  pairLong,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.overrides = flagOverrides(cmd, map[string]string{"api-url": "remote.api_url", "client-id": "remote.client_id",
				"device-type": "remote.device_type_id", "redirect-uri": "remote.redirect_uri"})
			return cliout.Run(cmd, runF, runPairCommand, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.name, "name", "", `name of the new device (default "hubgate on <hostname>"; with --reuse, the paired name)`)
	fl.BoolVar(&f.noBrowser, "no-browser", false, "do not open a browser; paste the redirected address instead")
	fl.BoolVar(&f.jsonOut, "json", false, "print the result as one JSON object on stdout (no secrets)")
	fl.StringVar(&f.apiURL, "api-url", "", "api url of the remote service (overrides HUBGATE_API_URL and the config)")
	fl.StringVar(&f.clientID, "client-id", "", "OAuth client id (overrides HUBGATE_CLIENT_ID and the config)")
	fl.StringVar(&f.deviceType, "device-type", "", "device type id of the device to create (overrides HUBGATE_DEVICE_TYPE and the config)")
	fl.BoolVar(&f.replace, "replace", false, "when a device is paired: create a new device and replace the local pairing")
	fl.BoolVar(&f.reuse, "reuse", false, "when a device is paired: keep it and renew its sign-in and device token")
	fl.DurationVar(&f.timeout, "timeout", oauth.DefaultLoginTimeout, "how long to wait for the sign-in in the browser")
	fl.StringVar(&f.redirectURI, "redirect-uri", "", "redirect address registered for the client, e.g. http://127.0.0.1:51772/ (overrides HUBGATE_REDIRECT_URI and remote.redirect_uri; default: a random loopback port)")
	fl.BoolVar(&f.secretStdin, "client-secret-stdin", false, "read the OAuth client secret from stdin (only when neither the OS secret store nor HUBGATE_CLIENT_SECRET has one; most clients need none)")
	return cmd
}

// unpairOptions are unpair's options.
type unpairOptions struct {
	IO Stdio
	// LoadConfig loads the configuration; on an error the secrets setting
	// is auto, which finds an existing secrets file too.
	LoadConfig func() (*configs.Config, error)
	Env        func(cfg *configs.Config) pairEnv // the secret store, the state file
	// TellDaemon tells a running daemon that the pairing is gone.
	TellDaemon       func(ctx context.Context) controlcli.DaemonAnswer
	KeepClientSecret bool // --keep-client-secret
}

func newUnpairCommand(a *app) *cobra.Command { return newCmdUnpair(a, nil) }

// newCmdUnpair builds unpair; runF (nil: runUnpairCommand) gets the parsed
// options.
func newCmdUnpair(a *app, runF func(context.Context, *unpairOptions) error) *cobra.Command {
	o := &unpairOptions{IO: a.stdio, LoadConfig: func() (*configs.Config, error) { return a.loadConfig(nil) }, Env: a.pairEnv,
		TellDaemon: func(ctx context.Context) controlcli.DaemonAnswer { return a.control().TellDaemon(ctx) }}
	cmd := &cobra.Command{
		Use: "unpair",
		Example: `  hubgate unpair
  hubgate unpair --keep-client-secret`,
		Short: "Remove the local pairing: stored secrets and the state file",
		Long: `Remove what 'hubgate pair' stored on this machine: the refresh token, the device
token and the client secret in the OS secret store (or the secrets file), and
the pairing state file.
The device itself stays on the remote service (no delete route is known); remove
it in the app if you no longer want it.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runUnpairCommand, o) },
	}
	cmd.Flags().BoolVar(&o.KeepClientSecret, "keep-client-secret", false, "keep the OAuth client secret in the OS secret store")
	return cmd
}

// runUnpairCommand removes the local pairing (runUnpair) and tells a
// running daemon.
func runUnpairCommand(ctx context.Context, o *unpairOptions) error {
	// The secrets setting of a configuration that loads; else auto,
	// which finds an existing secrets file too.
	cfg, err := o.LoadConfig()
	if err != nil {
		cfg = nil
	}
	if err := runUnpair(ctx, o.Env(cfg), o.KeepClientSecret); err != nil {
		return err
	}
	controlcli.SayDaemonAnswer(o.IO.Err, o.TellDaemon(ctx), true)
	return nil
}

// pairEnv is what pair and unpair need from the outside world; tests
// build one directly.
type pairEnv struct {
	stdio       Stdio
	in          *bufio.Reader // stdin, shared by every prompt
	getenv      func(string) string
	store       configs.SecretStore
	statePath   string // the state file; "": pairing.DefaultStatePath
	stateErr    error  // why the state file cannot be located (pair and unpair fail with it)
	interactive bool   // stdin is a terminal
	stdinFile   *os.File
	now         func() time.Time
	httpClient  *http.Client // nil: package defaults
	log         *slog.Logger
	hostname    func() (string, error)
	openBrowser func(string) error // nil: oauth's default ($BROWSER, xdg-open)
	pauseAt     func(step string)  // nil: none; see EnvPairStops
}

// EnvPairStops names the file of the crash tests' step stops
// (pairing.EnvStepStops); never set in normal use.
const EnvPairStops = pairing.EnvStepStops

// stop is the test hook before each step (EnvPairStops).
func (e pairEnv) stop(step string) {
	if e.pauseAt != nil {
		e.pauseAt(step)
	}
}

// pairEnv builds the real environment; cfg (may be nil) sets the log.
func (a *app) pairEnv(cfg *configs.Config) pairEnv {
	log := slog.New(slog.DiscardHandler)
	if cfg != nil {
		log = a.logger(cfg)
	}
	e := pairEnv{
		stdio:    a.stdio,
		in:       bufio.NewReader(a.stdio.In),
		getenv:   a.getenv,
		store:    a.secretStore(cfg, log, a.tellErr),
		now:      time.Now,
		log:      log,
		hostname: os.Hostname,
	}
	// The command's user config directory, never the process's: with
	// none, pair and unpair say so.
	e.statePath, e.stateErr = a.statePath()
	if f, ok := a.stdio.In.(*os.File); ok {
		e.stdinFile = f
		e.interactive = isTerminal(f) // not /dev/null, a character device too
	}
	if path := a.getenv(EnvPairStops); path != "" {
		e.pauseAt = pairing.PauseAtStepFile(path)
	}
	return e
}

// runPairCommand pairs (runPair), tells a running daemon and names the
// next step.
func runPairCommand(ctx context.Context, o *pairOptions) error {
	f := o.Flags
	if f.reuse && f.replace {
		return &usageError{errors.New("--reuse and --replace exclude each other")}
	}
	if f.timeout <= 0 {
		return &usageError{fmt.Errorf("--timeout must be positive, got %s", f.timeout)}
	}
	cfg, err := o.LoadConfig(f.overrides)
	if err != nil {
		return err
	}
	// As the daemon: the browser it starts (and anything else of the same
	// user) cannot read HUBGATE_CLIENT_SECRET or the tokens out of
	// /proc/<pid>/environ or its memory; the browser's own environment is
	// scrubbed too (oauth, internal/proc).
	if o.DenyInspection != nil {
		o.DenyInspection(o.Logger(cfg))
	}
	res, err := runPair(ctx, o.Env(cfg), cfg, f)
	if errors.Is(err, oauth.ErrInputClosed) {
		return &usageError{errors.New("--no-browser reads the address the browser was redirected to from stdin, and stdin is closed: " +
			"run pair in a terminal, paste the address into its stdin, or leave out --no-browser to open a browser on this machine")}
	}
	if err != nil {
		return err
	}
	closePair(o.IO.Err, o.TellDaemon(ctx), cfg, res)
	if f.jsonOut {
		return cliout.WriteJSON(o.IO.Out, res)
	}
	return nil
}

// flagOverrides are the configuration overrides of the flags of cmd that
// were set (flag name -> config path).
func flagOverrides(cmd *cobra.Command, paths map[string]string) []configs.Override {
	var out []configs.Override
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if path, ok := paths[fl.Name]; ok {
			out = append(out, configs.Override{Path: path, Value: fl.Value.String(), Origin: "flag --" + fl.Name})
		}
	})
	return out
}

// closePair ends pair's output on errOut with the next step
// (pairing.NextStep), given what a running daemon did when told.
func closePair(errOut io.Writer, told controlcli.DaemonAnswer, cfg *configs.Config, res *pairing.Summary) {
	var lines []string
	res.Next, lines = pairing.NextStep(pairing.DaemonTold(told), cfg.File() != "")
	for _, l := range lines {
		tellOn(errOut, l)
	}
}

// progress prints one step line on stderr.
func (e pairEnv) progress(format string, args ...any) {
	tellOn(e.stdio.Err, fmt.Sprintf(format, args...))
}

// runPair runs the pairing (pairing.Run) with cfg's settings.
func runPair(ctx context.Context, e pairEnv, cfg *configs.Config, f pairFlags) (*pairing.Summary, error) {
	if e.stateErr != nil {
		return nil, e.stateErr
	}
	r := cfg.Remote
	o := pairing.RunOptions{
		StatePath:  e.statePath,
		Store:      e.store,
		CheckStore: func(ctx context.Context) error { return configs.CheckStore(ctx, e.store) },
		Settings: pairing.Settings{APIURL: r.APIURL, AuthURL: r.AuthURL, ClientID: r.ClientID, DeviceTypeID: r.DeviceTypeID,
			RedirectURI: r.RedirectURI, TokenGrant: r.TokenGrant, AllowMissingState: r.AllowMissingState},
		Source:     cfg.Source,
		DeviceName: f.name,
		Hostname:   e.hostname,
		Getenv:     e.getenv,
		Progress:   func(p pairing.Progress) { e.progress("%s", p.Message) },
		BeforeStep: e.stop,
		Login: oauth.LoginOptions{
			Out:         e.stdio.Err,
			NoBrowser:   f.noBrowser,
			In:          e.in, // pasted addresses: --no-browser, or when no browser opens
			Timeout:     f.timeout,
			Getenv:      e.getenv,
			OpenBrowser: e.openBrowser,
		},
		HTTPClient: e.httpClient,
		Logger:     e.log,
		UserAgent:  "hubgate/" + version(),
		Now:        e.now,
	}
	switch {
	case f.reuse:
		o.Choice = pairing.ChoiceReuse
	case f.replace:
		o.Choice = pairing.ChoiceReplace
	}
	if e.interactive {
		o.Ask = e.ask
	}
	if f.secretStdin {
		o.AskClientSecret = e.ask
	}
	res, err := pairing.Run(ctx, o)
	if err != nil {
		return nil, err
	}
	return res.Summary(), nil
}

// ask prints a question on stderr and reads one line of stdin; a secret
// with the terminal's echo off.
func (e pairEnv) ask(q pairing.Question) (string, error) {
	fmt.Fprint(e.stdio.Err, q.Prompt)
	if q.Secret {
		line, err := readSecretLine(e.in, e.stdinFile, e.interactive)
		fmt.Fprintln(e.stdio.Err)
		return line, err
	}
	line, err := e.in.ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("no answer on stdin: %w", err)
	}
	return line, nil
}

// readLine reads one line (without its newline) from in.
func readLine(in *bufio.Reader) (string, error) {
	line, err := in.ReadString('\n')
	if err == io.EOF && line != "" {
		err = nil
	}
	return strings.TrimRight(line, "\r\n"), err
}

// runUnpair removes the local secrets, then the state file (pairing.Unpair).
func runUnpair(ctx context.Context, e pairEnv, keepSecret bool) error {
	if e.stateErr != nil {
		return e.stateErr
	}
	return pairing.Unpair(ctx, pairing.UnpairOptions{StatePath: e.statePath, Store: e.store, KeepClientSecret: keepSecret,
		Progress: func(p pairing.Progress) { e.progress("%s", p.Message) }})
}
