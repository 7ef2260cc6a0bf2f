package main

// `hubgate pair` and `hubgate unpair`: wiring of configs (settings, secret
// store, state file), oauth (sign-in) and deviceapi (device and token).
//
// Choices where the issue is silent:
//   - Order: flags and state are checked first (usage errors cost
//     nothing), then the secret store (a canary write/read/delete), then
//     the client secret is found, and only then does anything reach the
//     service. A machine without a usable keyring fails before the
//     sign-in, with nothing created anywhere.
//   - Client secret: optional (the vendor's clients send none): the
//     keyring, else HUBGATE_CLIENT_SECRET, else, with --client-secret-stdin,
//     one line from stdin (prompted on stderr, echo off on a terminal),
//     else none. Only a secret typed on stdin is stored (the environment
//     stays the source for those who chose it).
//   - Before the browser opens, {api_url} must answer (oauth.Client.Probe,
//     5 s): a wrong address fails in seconds with exit 6. While the
//     person signs in, the sign-in page itself is checked (oauth, see its
//     package doc): a 4xx answer (an unknown client id or redirect
//     address) fails at once with exit 6, naming both likely causes.
//   - --reuse and --replace keep the api url, client id, device type and
//     redirect address recorded in state.json; a flag overrides one, the
//     environment and the config file do not (they were the first
//     pairing's defaults; state.json is what it used), and each value kept
//     over another is said. --reuse with an --api-url of another service
//     is refused (use --replace).
//   - The browser: its exit status is honoured; when it cannot be opened
//     the redirected address is read from stdin (oauth.Login says so).
//   - The last line names the next step (closePair): nothing when a
//     running daemon took the new pairing, else 'hubgate run', after
//     'hubgate config init' when there is no config file yet.
//   - Re-runs: when a device is paired, `--reuse` keeps that device: it
//     signs in again, creates a new device token for the device, confirms
//     the device and replaces the stored refresh token and device token
//     (the previous device token stays valid on the service; no route to
//     disable it is shown). `--replace` creates a new device and token and
//     replaces everything local (the old device stays on the service; no
//     delete route is shown). Without either, an interactive run asks; a
//     run whose stdin is not a terminal (a pipe, /dev/null: checked with
//     TCGETS, not by the file's mode) is a usage error that says what
//     exists and names --reuse and --replace.
//   - Nothing half-stored, even under kill -9: nothing local is written
//     until every remote step succeeded; then pairing's commit protocol
//     (deviceapi/pairing, commit.go): the secrets go to the secret slot the
//     current pairing does not use, the state file's atomic rename names
//     that slot (the one commit point), then the previous slot is
//     deleted. A crash at any instant leaves the old pairing or the new
//     one; what it left in the unused slot is removed by the next pair.
//     One pair or unpair at a time (pairing.Lock; another one: exit 5).
//     An error after the sign-in names what was created on the service.
//   - pair is non-dumpable, as the daemon (proc.DenyInspection): the
//     browser it starts, or any process of the user, cannot read
//     HUBGATE_CLIENT_SECRET out of /proc/<pid>/environ; the browser's own
//     environment is scrubbed too.
//   - EnvPairStops is a test hook of the crash tests (a pause before each
//     step); it is never set in normal use.
//   - Exit codes: see exitcodes.go (sign-in failures 6, refusals of the
//     device service 7, secret store 4, configuration 3, usage 2).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/oauth"
)

// EnvClientSecret supplies the OAuth client secret for headless use.
const EnvClientSecret = "HUBGATE_CLIENT_SECRET"

type pairFlags struct {
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

func newPairCommand(a *app) *cobra.Command {
	var f pairFlags
	cmd := &cobra.Command{
		Use:   "pair",
		Short: "Sign in, create the virtual controller (User Device) and its device token, keep the secrets",
		Long: `Pair this machine with the remote device service: sign in with your browser,
create a User Device of the configured device type, create its device token,
confirm the device, then store the refresh token and the device token in the OS
secret store and the device id and name in $XDG_CONFIG_HOME/hubgate/state.json.

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
the new one. 'hubgate unpair' removes the local secrets and state.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.pair(cmd.Context(), cmd, f)
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

func newUnpairCommand(a *app) *cobra.Command {
	var keepSecret bool
	cmd := &cobra.Command{
		Use:   "unpair",
		Short: "Remove the local pairing: stored secrets and the state file",
		Long: `Remove what 'hubgate pair' stored on this machine: the refresh token, the device
token and the client secret in the OS secret store, and the pairing state file.
The device itself stays on the remote service (no delete route is known); remove
it in the app if you no longer want it.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := runUnpair(cmd.Context(), a.pairEnv(nil), keepSecret); err != nil {
				return err
			}
			a.tellDaemonPairing(cmd.Context(), true)
			return nil
		},
	}
	cmd.Flags().BoolVar(&keepSecret, "keep-client-secret", false, "keep the OAuth client secret in the OS secret store")
	return cmd
}

// pairEnv is what pair and unpair need from the outside world; tests
// build one directly.
type pairEnv struct {
	stdio       Stdio
	in          *bufio.Reader // stdin, shared by every prompt
	getenv      func(string) string
	store       configs.SecretStore
	statePath   string // "" : configs.DefaultStatePath
	interactive bool   // stdin is a terminal
	stdinFile   *os.File
	now         func() time.Time
	httpClient  *http.Client // nil: package defaults
	log         *slog.Logger
	hostname    func() (string, error)
	openBrowser func(string) error // nil: oauth's default ($BROWSER, xdg-open)
	pauseAt     func(step string)  // nil: none; see EnvPairStops
}

// EnvPairStops names a file for the crash tests of the commit protocol:
// when set, `pair` appends the name of each step to it (each remote step,
// each secret write, the state file, each delete) and, before doing the
// step, waits for one line on the named pipe "<file>.go", so that a test
// can kill it at that exact instant or let it go on. Never set in normal
// use.
const EnvPairStops = "HUBGATE_TEST_PAIR_STOPS"

// pauseForTest appends step to the file at path, then waits for a line
// on the pipe path+".go" (EnvPairStops).
func pauseForTest(path, step string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	f.WriteString(step + "\n")
	f.Close()
	if g, err := os.Open(path + ".go"); err == nil {
		_, _ = bufio.NewReader(g).ReadString('\n')
		g.Close()
	}
}

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
		store:    configs.NewKeyring(configs.KeyringOptions{Logger: log}),
		now:      time.Now,
		log:      log,
		hostname: os.Hostname,
	}
	if f, ok := a.stdio.In.(*os.File); ok {
		e.stdinFile = f
		e.interactive = isTerminal(f) // not /dev/null, a character device too
	}
	if path := a.getenv(EnvPairStops); path != "" {
		e.pauseAt = func(step string) { pauseForTest(path, step) }
	}
	return e
}

func (a *app) pair(ctx context.Context, cmd *cobra.Command, f pairFlags) error {
	if f.reuse && f.replace {
		return &usageError{errors.New("--reuse and --replace exclude each other")}
	}
	if f.timeout <= 0 {
		return &usageError{fmt.Errorf("--timeout must be positive, got %s", f.timeout)}
	}
	var overrides []configs.Override
	override := func(flag, path, value string) {
		if cmd.Flags().Changed(flag) {
			overrides = append(overrides, configs.Override{Path: path, Value: value, Origin: "flag --" + flag})
		}
	}
	override("api-url", "remote.api_url", f.apiURL)
	override("client-id", "remote.client_id", f.clientID)
	override("device-type", "remote.device_type_id", f.deviceType)
	override("redirect-uri", "remote.redirect_uri", f.redirectURI)
	cfg, err := a.loadConfig(overrides)
	if err != nil {
		return err
	}
	// As the daemon: the browser it starts (and anything else of the same
	// user) cannot read HUBGATE_CLIENT_SECRET or the tokens out of
	// /proc/<pid>/environ or its memory; the browser's own environment is
	// scrubbed too (oauth, internal/proc).
	denyInspection(a.logger(cfg))
	res, err := runPair(ctx, a.pairEnv(cfg), cfg, f)
	if err != nil {
		return err
	}
	a.closePair(ctx, cfg, res)
	if f.jsonOut {
		enc := json.NewEncoder(a.stdio.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return nil
}

// pairResult is the --json output. It never holds a secret.
type pairResult struct {
	DeviceID     string    `json:"deviceId"`
	DeviceName   string    `json:"deviceName"`
	APIURL       string    `json:"apiUrl"`
	DeviceTypeID string    `json:"deviceTypeId"`
	TokenID      string    `json:"tokenId"`
	PairedAt     time.Time `json:"pairedAt"`
	Reused       bool      `json:"reused"` // the device existed before this run
	StateFile    string    `json:"stateFile"`
	Next         string    `json:"next"` // the next step: hubgate run, hubgate config init (then run), hubgate status (a running daemon took the pairing), restart the daemon
}

// What a person runs after pairing (pairResult.Next).
const (
	nextRun        = "hubgate run"         // no daemon runs: start it
	nextConfigInit = "hubgate config init" // and no config file yet: write one first, then run
	nextStatus     = "hubgate status"      // the running daemon took the new pairing
	nextRestart    = "restart the daemon"  // the running daemon did not take it
)

// closePair tells a running daemon about the new pairing and ends pair's
// output with the next step, which depends on what the daemon did: a
// daemon that reconnected needs nothing more (starting another would fail
// with exit 5); without a daemon, 'hubgate run' starts one, after
// 'hubgate config init' when there is no config file yet.
func (a *app) closePair(ctx context.Context, cfg *configs.Config, res *pairResult) {
	d := a.tellDaemon(ctx)
	say := func(format string, args ...any) { fmt.Fprintf(a.stdio.Err, "hubgate: "+format+"\n", args...) }
	switch {
	case d.running && d.err == nil:
		say("the running daemon (pid %d): %s", d.pid, d.message)
		res.Next = nextStatus
		say("next: nothing to start: the running daemon (pid %d) now uses this pairing; 'hubgate status' shows its connection", d.pid)
	case d.running:
		say("the running daemon did not take the new pairing (%v)", d.err)
		res.Next = nextRestart
		say("next: restart the running daemon (stop it, then 'hubgate run', or restart the service with its manager) so that it uses this pairing")
	case d.err != nil:
		say("could not tell a running daemon: %v", d.err)
		res.Next = nextRun
		say("next: run 'hubgate run' to connect the device and take its commands (or restart a daemon that runs)")
	case cfg.File() == "":
		res.Next = nextConfigInit
		say("next: run 'hubgate config init' (there is no config file yet), then 'hubgate run' to connect the device and take its commands")
	default:
		res.Next = nextRun
		say("next: run 'hubgate run' to connect the device and take its commands")
	}
}

// progress prints one step line on stderr.
func (e pairEnv) progress(format string, args ...any) {
	fmt.Fprintf(e.stdio.Err, "hubgate: "+format+"\n", args...)
}

// runPair runs the pairing; see the package comment of this file.
func runPair(ctx context.Context, e pairEnv, cfg *configs.Config, f pairFlags) (*pairResult, error) {
	statePath := e.statePath
	if statePath == "" {
		p, err := configs.DefaultStatePath()
		if err != nil {
			return nil, err
		}
		statePath = p
	}

	// One pairing at a time: two would write the same secret slot.
	release, err := pairing.Lock(statePath)
	if err != nil {
		return nil, err
	}
	defer release()

	// 1. What exists, and what this run will do.
	prev, err := configs.LoadState(statePath)
	switch {
	case errors.Is(err, configs.ErrNoState):
		prev = nil
		if f.reuse {
			return nil, &usageError{errors.New("--reuse: no device is paired on this machine; run 'hubgate pair' without --reuse")}
		}
	case err != nil:
		if !f.replace {
			return nil, fmt.Errorf("%w (or run 'hubgate pair --replace' to pair a new device over it)", err)
		}
		prev = nil
	}
	reuse, replace := false, f.replace
	if prev != nil {
		e.progress("a device is already paired: %s (%q) at %s, paired %s", prev.DeviceID, prev.DeviceName, prev.APIURL, prev.PairedAt.Local().Format(time.RFC1123))
		switch {
		case f.reuse:
			reuse = true
		case f.replace:
		case e.interactive:
			choice, err := e.ask("Reuse it (sign in again and get a new device token), replace it with a new device, or cancel? [reuse/replace/cancel]: ")
			if err != nil {
				return nil, &usageError{fmt.Errorf("a device is already paired and %v; run again with --reuse to keep it or --replace to create a new device", err)}
			}
			switch strings.ToLower(strings.TrimSpace(choice)) {
			case "reuse", "r":
				reuse = true
			case "replace", "new", "n":
				replace = true
			default:
				return nil, errors.New("pair canceled; nothing was changed")
			}
		default:
			return nil, &usageError{fmt.Errorf("a device is already paired (%s %q at %s); run again with --reuse to keep it and renew its sign-in and device token, with --replace to create a new device (the old one stays on the service), or run 'hubgate unpair' first", prev.DeviceID, prev.DeviceName, prev.APIURL)}
		}
	}

	// 2. Settings: a re-pairing keeps what the state file recorded
	// unless a flag says otherwise.
	r := cfg.Remote
	if prev != nil && (reuse || replace) {
		keepPairedSettings(e, cfg, &r, prev)
	}
	var problems []configs.FieldError
	need := func(path, v, env string) {
		if v == "" {
			problems = append(problems, configs.FieldError{Path: path, Message: "must be set to pair (config file, " + env + " or the flag)"})
		}
	}
	need("remote.api_url", r.APIURL, "HUBGATE_API_URL")
	need("remote.client_id", r.ClientID, "HUBGATE_CLIENT_ID")
	if !reuse {
		need("remote.device_type_id", r.DeviceTypeID, "HUBGATE_DEVICE_TYPE")
	}
	if len(problems) > 0 {
		return nil, &configs.ValidationError{Problems: problems}
	}
	apiURL := strings.TrimRight(r.APIURL, "/")
	deviceType := r.DeviceTypeID
	name := f.name
	if reuse {
		if strings.TrimRight(prev.APIURL, "/") != apiURL {
			return nil, &usageError{fmt.Errorf("--reuse: the paired device belongs to %s but --api-url names %s; use --replace to pair with %s", prev.APIURL, apiURL, apiURL)}
		}
		deviceType = prev.DeviceTypeID
		if name == "" {
			name = prev.DeviceName
		}
	}
	if name == "" {
		name = "hubgate"
		if h, err := e.hostname(); err == nil && h != "" {
			name = "hubgate on " + h
		}
	}

	// 3. The secret store must work before anything is created remotely.
	e.progress("checking the OS secret store")
	if err := configs.CheckStore(ctx, e.store); err != nil {
		return nil, fmt.Errorf("the OS secret store is not usable, so nothing was created: %w", err)
	}
	// What an interrupted pairing left in the slot no pairing uses.
	if removed, err := pairing.Collect(ctx, e.store, configs.ErrSecretNotFound, pairedAccounts, prev != nil, committedSlot(prev)); err != nil {
		e.progress("could not remove the secrets an interrupted pairing left (%v); going on", err)
	} else if len(removed) > 0 {
		e.progress("removed the secrets an interrupted pairing left: %s", strings.Join(removed, ", "))
	}

	// 4. The client secret, if any.
	secret, secretSource, err := e.clientSecret(ctx, f.secretStdin)
	if err != nil {
		return nil, err
	}
	if secretSource == sourceNone {
		e.progress("no client secret: signing in as a public client, as the service's own clients do")
	} else {
		e.progress("using the client secret from %s", secretSource)
	}

	// 5. Sign in, the device and its token.
	po := pairing.Options{
		OAuth: oauth.Config{
			APIURL:            apiURL,
			AuthURL:           r.AuthURL,
			ClientID:          r.ClientID,
			ClientSecret:      secret,
			Grant:             oauth.Grant(r.TokenGrant),
			RedirectURI:       r.RedirectURI,
			AllowMissingState: r.AllowMissingState,
			MissingStateHint:  "remote.allow_missing_state: true in the config file",
			HTTPClient:        e.httpClient,
			Logger:            e.log,
		},
		Login: oauth.LoginOptions{
			Out:         e.stdio.Err,
			NoBrowser:   f.noBrowser,
			In:          e.in, // pasted addresses: --no-browser, or when no browser opens
			Timeout:     f.timeout,
			Getenv:      e.getenv,
			OpenBrowser: e.openBrowser,
		},
		DeviceTypeID: deviceType,
		DeviceName:   name,
		UserAgent:    "hubgate/" + version(),
		Progress: func(p pairing.Progress) {
			e.stop(string(p.Step))
			e.progress("%s", p.Message)
		},
	}
	if reuse {
		po.ReuseDeviceID = prev.DeviceID
	}
	paired, err := pairing.Pair(ctx, po)
	if err != nil {
		var se *pairing.StepError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w; nothing was stored on this machine", err)
		}
		return nil, err
	}
	dev, dt := paired.Device, paired.Token
	if dev.NameOverride != "" {
		name = dev.NameOverride
	}
	// localFail says what a failure after the remote steps left here.
	localFail := func(err error) error {
		msg := "nothing was stored on this machine; the previous pairing, if any, is unchanged"
		var ue *pairing.UndoError
		if errors.As(err, &ue) {
			msg = "the previous pairing, if any, is unchanged; secrets of this run may remain in the OS secret store, unused (the next 'hubgate pair' removes them)"
		}
		return fmt.Errorf("%w; %s", err, msg)
	}

	// 7. Everything local, through the commit protocol: the secrets into
	// the slot the current pairing does not use, then the state file (the
	// commit point), then the previous pairing's secrets are removed.
	e.progress("storing the refresh token and the device token in the OS secret store")
	st := configs.PairingState{
		DeviceID:     dev.ID,
		DeviceName:   name,
		APIURL:       apiURL,
		DeviceTypeID: deviceType,
		TokenID:      dt.ID,
		PairedAt:     e.now().UTC().Truncate(time.Second),
		ClientID:     r.ClientID,
		RedirectURI:  r.RedirectURI,
	}
	co := pairing.CommitOptions{
		Store:               e.store,
		NotFound:            configs.ErrSecretNotFound,
		RefreshTokenAccount: configs.AccountOAuthRefreshToken,
		DeviceTokenAccount:  configs.AccountDeviceToken,
		Committed:           committedSlot(prev),
		Save: func(slot string) error {
			st.SecretSlot = slot
			return configs.SaveState(statePath, st)
		},
		Step: e.stop,
	}
	if prev == nil {
		co.Committed = pairing.SlotB // nothing paired: the new pairing takes the base account names
	}
	if secretSource == sourceStdin {
		co.Extra = []pairing.Secret{{Account: configs.AccountOAuthClientSecret, Value: secret}}
	}
	_, leftover, err := paired.Commit(ctx, co)
	if err != nil {
		return nil, localFail(err)
	}
	if leftover != nil {
		e.progress("could not remove the previous pairing's secrets (%v); they are unused, and the next 'hubgate pair' removes them", leftover)
	}
	e.progress("wrote %s", statePath)
	if reuse {
		e.progress("paired: device %s (%q) kept, with a new device token %s (the previous token %s stays valid on the service)", dev.ID, name, dt.ID, prev.TokenID)
	} else {
		e.progress("paired: device %s (%q) at %s", dev.ID, name, apiURL)
		if prev != nil {
			e.progress("the previous device %s stays on the service; remove it in the app if you no longer want it", prev.DeviceID)
		}
	}
	return &pairResult{
		DeviceID: st.DeviceID, DeviceName: st.DeviceName, APIURL: st.APIURL, DeviceTypeID: st.DeviceTypeID,
		TokenID: st.TokenID, PairedAt: st.PairedAt, Reused: reuse, StateFile: statePath, Next: nextRun,
	}, nil
}

// Where the client secret came from.
const (
	sourceKeyring = "the OS secret store"
	sourceEnv     = EnvClientSecret
	sourceStdin   = "stdin"
	sourceNone    = ""
)

// clientSecret finds the client secret: keyring, environment, stdin (only
// when fromStdin), else none.
func (e pairEnv) clientSecret(ctx context.Context, fromStdin bool) (string, string, error) {
	s, err := e.store.Get(ctx, configs.AccountOAuthClientSecret)
	switch {
	case err == nil && s != "":
		return s, sourceKeyring, nil
	case err != nil && !errors.Is(err, configs.ErrSecretNotFound):
		return "", "", fmt.Errorf("read the client secret: %w", err)
	}
	if s := e.getenv(EnvClientSecret); s != "" {
		return s, sourceEnv, nil
	}
	if !fromStdin {
		return "", sourceNone, nil
	}
	fmt.Fprint(e.stdio.Err, "OAuth client secret (from the developer portal; input hidden on a terminal): ")
	line, err := readSecretLine(e.in, e.stdinFile, e.interactive)
	fmt.Fprintln(e.stdio.Err)
	line = strings.TrimSpace(line)
	if line == "" {
		cause := "stdin gave an empty line"
		if err != nil {
			cause = "stdin ended (" + err.Error() + ")"
		}
		return "", "", &configs.ValidationError{Problems: []configs.FieldError{{
			Message: "--client-secret-stdin: no OAuth client secret: " + cause + "; type it on a terminal, pipe it on stdin, or set " + EnvClientSecret,
		}}}
	}
	return line, sourceStdin, nil
}

// ask prints a question on stderr and reads one line of stdin.
func (e pairEnv) ask(question string) (string, error) {
	fmt.Fprint(e.stdio.Err, question)
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

// runUnpair removes the local secrets, then the state file.
func runUnpair(ctx context.Context, e pairEnv, keepSecret bool) error {
	statePath := e.statePath
	if statePath == "" {
		p, err := configs.DefaultStatePath()
		if err != nil {
			return err
		}
		statePath = p
	}
	release, err := pairing.Lock(statePath)
	if err != nil {
		return err
	}
	defer release()
	st, stErr := configs.LoadState(statePath)
	if stErr != nil && !errors.Is(stErr, configs.ErrNoState) {
		e.progress("the state file is unreadable and will be removed: %v", stErr)
	}
	var accounts []string
	for _, slot := range []string{pairing.SlotA, pairing.SlotB} {
		for _, base := range pairedAccounts {
			accounts = append(accounts, pairing.SlotAccount(base, slot))
		}
	}
	if !keepSecret {
		accounts = append(accounts, configs.AccountOAuthClientSecret)
	}
	var removed []string
	for _, acct := range accounts {
		err := e.store.Delete(ctx, acct)
		switch {
		case err == nil:
			removed = append(removed, acct)
		case errors.Is(err, configs.ErrSecretNotFound):
		default:
			return fmt.Errorf("unpair stopped, the state file is kept: %w", err)
		}
	}
	stateRemoved := false
	if err := configs.RemoveState(statePath); err == nil {
		stateRemoved = true
	} else if !errors.Is(err, configs.ErrNoState) {
		return err
	}
	if len(removed) == 0 && !stateRemoved {
		e.progress("nothing to remove: no device is paired and no pairing secrets are stored")
		return nil
	}
	if len(removed) > 0 {
		e.progress("removed from the OS secret store: %s", strings.Join(removed, ", "))
	}
	if stateRemoved {
		e.progress("removed %s", statePath)
	}
	if st != nil {
		e.progress("the device %s (%q) still exists on %s: hubgate cannot delete it; remove it in the app if you no longer want it", st.DeviceID, st.DeviceName, st.APIURL)
	}
	return nil
}

// pairedAccounts are the base names of the accounts of a pairing's
// secrets, kept in the commit protocol's slots (pairing.SlotAccount).
var pairedAccounts = []string{configs.AccountOAuthRefreshToken, configs.AccountDeviceToken}

// committedSlot is the secret slot of the committed pairing st (nil: none).
func committedSlot(st *configs.PairingState) string {
	if st == nil {
		return pairing.SlotA
	}
	return st.SecretSlot
}

// keepPairedSettings makes a re-pairing (--reuse, --replace) keep the
// sign-in settings and the device type that the state file recorded: a
// flag overrides one, the environment and the config file do not (they
// were the first pairing's defaults; state.json is what it used). Each
// value kept over another one is said.
func keepPairedSettings(e pairEnv, cfg *configs.Config, r *configs.RemoteConfig, prev *configs.PairingState) {
	var kept []string
	keep := func(path, flag string, cur *string, saved string) {
		if saved == "" || strings.HasPrefix(cfg.Source(path), "flag ") || *cur == saved {
			return
		}
		if *cur != "" {
			e.progress("%s: keeping %q from the paired state (%s), not %q from %s; pass --%s to change it", path, saved, "state.json", *cur, cfg.Source(path), flag)
		} else {
			kept = append(kept, fmt.Sprintf("%s %q", path, saved))
		}
		*cur = saved
	}
	keep("remote.api_url", "api-url", &r.APIURL, prev.APIURL)
	keep("remote.client_id", "client-id", &r.ClientID, prev.ClientID)
	keep("remote.device_type_id", "device-type", &r.DeviceTypeID, prev.DeviceTypeID)
	keep("remote.redirect_uri", "redirect-uri", &r.RedirectURI, prev.RedirectURI)
	if len(kept) > 0 {
		e.progress("from the paired state (state.json): %s", strings.Join(kept, ", "))
	}
}
