package pairing

// Run: the whole pairing decision of `hubgate pair` (new, reuse, replace),
// and Unpair. Choices where the issue is silent:
//   - Order: the choice and the state file first (a wrong request costs
//     nothing), then the secret store (Options.CheckStore), then the
//     client secret, and only then does anything reach the service.
//   - The client secret is optional (the vendor's clients send none): the
//     secret store, else EnvClientSecret, else one answer to
//     AskClientSecret, else none. Only an asked one is stored.
//   - --reuse and --replace keep the api url, client id, device type and
//     redirect address recorded in the state file; a value whose source
//     (Options.Source) starts with "flag " overrides one, the environment
//     and the config file do not, and each value kept over another is
//     said. Reuse with another api url is refused (a *UsageError).
//   - A device already paired with Choice zero: Ask decides; without Ask
//     (stdin is no terminal) it is a *UsageError naming --reuse/--replace.
//   - Nothing local is written until every remote step succeeded; then
//     Result.Commit (commit.go). One pairing at a time (Lock).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hubgate/hubgate/oauth"
)

// EnvClientSecret supplies the OAuth client secret for headless use.
const EnvClientSecret = "HUBGATE_CLIENT_SECRET"

// Account names of the secrets a pairing keeps (the secret store's
// accounts). They name what earlier versions stored: never rename one.
const (
	AccountRefreshToken = "oauth-refresh-token" // slotted (commit.go)
	AccountDeviceToken  = "device-token"        // slotted (commit.go)
	AccountClientSecret = "oauth-client-secret" // outside the slots
)

// pairedAccounts are the base names of the slotted accounts.
var pairedAccounts = []string{AccountRefreshToken, AccountDeviceToken}

// Choice is what to do when a device is paired already.
type Choice int

const (
	ChoiceAsk     Choice = iota // ask through RunOptions.Ask; without Ask: a *UsageError
	ChoiceReuse                 // keep the device: new sign-in and device token
	ChoiceReplace               // create a new device
)

// Settings are the sign-in's settings (configs' remote section, as plain
// values). Keys, for RunOptions.Source and in messages, are the config
// paths: remote.api_url, remote.client_id, remote.device_type_id,
// remote.redirect_uri.
type Settings struct {
	APIURL, AuthURL, ClientID, DeviceTypeID, RedirectURI string
	TokenGrant                                           string // oauth.Grant
	AllowMissingState                                    bool
}

// Question is what Run asks through RunOptions.Ask.
type Question struct {
	Prompt string // the line to show, ending with ": "
	Secret bool   // the answer is a secret: do not echo it
}

// RunOptions configures Run.
type RunOptions struct {
	// StatePath is the state file. Zero: DefaultStatePath.
	StatePath string
	// Store keeps the secrets. Required. Its not-found errors match
	// fs.ErrNotExist (configs' stores do).
	Store SecretStore
	// CheckStore proves that Store works before anything is created on
	// the service (configs.CheckStore). Zero: no check.
	CheckStore func(context.Context) error
	// Choice when a device is paired. Zero: ask.
	Choice Choice
	// Settings, and Source naming where each came from (a config path ->
	// "flag --api-url", "HUBGATE_API_URL", "config.yaml:3"...). Zero
	// Source: no value came from a flag.
	Settings Settings
	Source   func(key string) string
	// DeviceName of a new device. Zero: the paired one on reuse, else
	// "hubgate on <Hostname>".
	DeviceName string
	// Hostname names the machine. Zero: os.Hostname.
	Hostname func() (string, error)
	// Getenv reads EnvClientSecret (and is oauth's, when Login has none).
	// Zero: os.Getenv.
	Getenv func(string) string
	// Ask asks the person what to do about a paired device (ChoiceAsk)
	// and returns the answer. Zero: nobody can answer (a paired device
	// with ChoiceAsk is a *UsageError).
	Ask func(Question) (string, error)
	// AskClientSecret asks for the client secret (Question.Secret) when
	// neither Store nor EnvClientSecret has one; an asked secret is
	// stored. Zero: none is sent (a public client).
	AskClientSecret func(Question) (string, error)
	// Progress receives one human line per step (Step StepNote for Run's
	// own lines). Zero: nothing is reported.
	Progress func(Progress)
	// BeforeStep, when set, is called before each remote step and each
	// write of the commit protocol, with its name: a test hook.
	BeforeStep func(name string)
	// Login is the browser part of the sign-in. Zero Getenv: Getenv.
	Login oauth.LoginOptions
	// HTTPClient, Logger and UserAgent go to oauth and deviceapi. Zero:
	// their defaults; a discarding logger.
	HTTPClient *http.Client
	Logger     *slog.Logger
	UserAgent  string
	// Now stamps the pairing. Zero: time.Now.
	Now func() time.Time
}

// StepNote is a line of Run's own (not a remote step).
const StepNote Step = "note"

// RunResult is a completed pairing. It never holds a secret.
type RunResult struct {
	State     State  // as written to StatePath
	StatePath string // the state file
	Reused    bool   // the device existed before this run
}

// UsageError is a request that cannot be carried out as asked: another
// choice (reuse, replace) or setting is needed. Nothing was changed.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// SettingsError lists settings that are missing or unusable.
type SettingsError struct{ Problems []SettingProblem }

// SettingProblem is one problem of a SettingsError; Key is a config path
// ("" for none).
type SettingProblem struct{ Key, Message string }

func (e *SettingsError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Message
		if p.Key != "" {
			parts[i] = p.Key + ": " + p.Message
		}
	}
	if len(parts) == 1 {
		return "invalid configuration: " + parts[0]
	}
	return fmt.Sprintf("invalid configuration (%d problems): %s", len(parts), strings.Join(parts, "; "))
}

// ErrCanceled: the person declined at the prompt.
var ErrCanceled = errors.New("pair canceled; nothing was changed")

// run is one Run in progress.
type run struct {
	o         RunOptions
	statePath string
	prev      *State // the committed pairing, nil when none
	reuse     bool
	replace   bool
}

func (r *run) say(format string, args ...any) {
	if r.o.Progress != nil {
		r.o.Progress(Progress{Step: StepNote, Message: fmt.Sprintf(format, args...)})
	}
}

func (r *run) step(name string) {
	if r.o.BeforeStep != nil {
		r.o.BeforeStep(name)
	}
}

// Run pairs this machine: it decides what to do about a paired device,
// checks the store, signs in, creates (or reuses) the device and its
// token, and commits the pairing. See the comment at the top of run.go.
func Run(ctx context.Context, o RunOptions) (*RunResult, error) {
	if o.Store == nil {
		return nil, errors.New("pairing: RunOptions.Store is required")
	}
	fillRunDefaults(&o)
	statePath, err := statePath(o.StatePath)
	if err != nil {
		return nil, err
	}
	// One pairing at a time: two would write the same secret slot.
	release, err := Lock(statePath)
	if err != nil {
		return nil, err
	}
	defer release()
	r := &run{o: o, statePath: statePath}
	if err := r.decide(); err != nil {
		return nil, err
	}
	s, name, err := r.settings()
	if err != nil {
		return nil, err
	}
	if err := r.prepareStore(ctx); err != nil {
		return nil, err
	}
	secret, source, err := r.clientSecret(ctx)
	if err != nil {
		return nil, err
	}
	paired, err := Pair(ctx, r.pairOptions(s, secret, name))
	if err != nil {
		var se *StepError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w; nothing was stored on this machine", err)
		}
		return nil, err
	}
	return r.commit(ctx, paired, s, name, secret, source)
}

func fillRunDefaults(o *RunOptions) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Login.Getenv == nil {
		o.Login.Getenv = o.Getenv
	}
	if o.Hostname == nil {
		o.Hostname = os.Hostname
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Source == nil {
		o.Source = func(string) string { return "" }
	}
}

// decide reads what is paired and settles reuse or replace.
func (r *run) decide() error {
	prev, err := LoadState(r.statePath)
	switch {
	case errors.Is(err, ErrNoState):
		if r.o.Choice == ChoiceReuse {
			return &UsageError{errors.New("--reuse: no device is paired on this machine; run 'hubgate pair' without --reuse")}
		}
		return nil
	case err != nil:
		if r.o.Choice != ChoiceReplace {
			return fmt.Errorf("%w (or run 'hubgate pair --replace' to pair a new device over it)", err)
		}
		r.replace = true
		return nil
	}
	r.prev = prev
	r.say("a device is already paired: %s (%q) at %s, paired %s", prev.DeviceID, prev.DeviceName, prev.APIURL, prev.PairedAt.Local().Format(time.RFC1123))
	switch {
	case r.o.Choice == ChoiceReuse:
		r.reuse = true
	case r.o.Choice == ChoiceReplace:
		r.replace = true
	case r.o.Ask != nil:
		answer, err := r.o.Ask(Question{Prompt: "Reuse it (sign in again and get a new device token), replace it with a new device, or cancel? [reuse/replace/cancel]: "})
		if err != nil {
			return &UsageError{fmt.Errorf("a device is already paired and %v; run again with --reuse to keep it or --replace to create a new device", err)}
		}
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "reuse", "r":
			r.reuse = true
		case "replace", "new", "n":
			r.replace = true
		default:
			return ErrCanceled
		}
	default:
		return &UsageError{fmt.Errorf("a device is already paired (%s %q at %s); run again with --reuse to keep it and renew its sign-in and device token, with --replace to create a new device (the old one stays on the service), or run 'hubgate unpair' first", prev.DeviceID, prev.DeviceName, prev.APIURL)}
	}
	return nil
}

// settings are the settings of this pairing and the device's name.
func (r *run) settings() (Settings, string, error) {
	s := r.o.Settings
	if r.prev != nil {
		r.keepPairedSettings(&s)
	}
	var problems []SettingProblem
	need := func(key, v, env string) {
		if v == "" {
			problems = append(problems, SettingProblem{Key: key, Message: "must be set to pair (config file, " + env + " or the flag)"})
		}
	}
	need("remote.api_url", s.APIURL, "HUBGATE_API_URL")
	need("remote.client_id", s.ClientID, "HUBGATE_CLIENT_ID")
	if !r.reuse {
		need("remote.device_type_id", s.DeviceTypeID, "HUBGATE_DEVICE_TYPE")
	}
	if len(problems) > 0 {
		return s, "", &SettingsError{Problems: problems}
	}
	s.APIURL = strings.TrimRight(s.APIURL, "/")
	name := r.o.DeviceName
	if r.reuse {
		if strings.TrimRight(r.prev.APIURL, "/") != s.APIURL {
			return s, "", &UsageError{fmt.Errorf("--reuse: the paired device belongs to %s but --api-url names %s; use --replace to pair with %s", r.prev.APIURL, s.APIURL, s.APIURL)}
		}
		s.DeviceTypeID = r.prev.DeviceTypeID
		if name == "" {
			name = r.prev.DeviceName
		}
	}
	if name == "" {
		name = "hubgate"
		if h, err := r.o.Hostname(); err == nil && h != "" {
			name = "hubgate on " + h
		}
	}
	return s, name, nil
}

// keepPairedSettings makes a re-pairing keep the sign-in settings and the
// device type that the state file recorded: a flag overrides one, the
// environment and the config file do not (they were the first pairing's
// defaults; the state file is what it used). Each value kept over another
// one is said.
func (r *run) keepPairedSettings(s *Settings) {
	var kept []string
	keep := func(key, flag string, cur *string, saved string) {
		src := r.o.Source(key)
		if saved == "" || strings.HasPrefix(src, "flag ") || *cur == saved {
			return
		}
		if *cur != "" {
			r.say("%s: keeping %q from the paired state (%s), not %q from %s; pass --%s to change it", key, saved, "state.json", *cur, src, flag)
		} else {
			kept = append(kept, fmt.Sprintf("%s %q", key, saved))
		}
		*cur = saved
	}
	keep("remote.api_url", "api-url", &s.APIURL, r.prev.APIURL)
	keep("remote.client_id", "client-id", &s.ClientID, r.prev.ClientID)
	keep("remote.device_type_id", "device-type", &s.DeviceTypeID, r.prev.DeviceTypeID)
	keep("remote.redirect_uri", "redirect-uri", &s.RedirectURI, r.prev.RedirectURI)
	if len(kept) > 0 {
		r.say("from the paired state (state.json): %s", strings.Join(kept, ", "))
	}
}

// prepareStore checks the store and removes what an interrupted pairing
// left in the slot no pairing uses.
func (r *run) prepareStore(ctx context.Context) error {
	if r.o.CheckStore != nil {
		r.say("checking the OS secret store")
		if err := r.o.CheckStore(ctx); err != nil {
			return fmt.Errorf("the OS secret store is not usable, so nothing was created: %w", err)
		}
	}
	removed, err := Collect(ctx, r.o.Store, pairedAccounts, r.prev != nil, committedSlot(r.prev))
	if err != nil {
		r.say("could not remove the secrets an interrupted pairing left (%v); going on", err)
	} else if len(removed) > 0 {
		r.say("removed the secrets an interrupted pairing left: %s", strings.Join(removed, ", "))
	}
	return nil
}

// Where the client secret came from.
const (
	sourceStore = "the OS secret store"
	sourceEnv   = EnvClientSecret
	sourceAsked = "stdin"
	sourceNone  = ""
)

// clientSecret finds the client secret: the store, the environment, an
// answer (AskClientSecret), else none.
func (r *run) clientSecret(ctx context.Context) (secret, source string, err error) {
	defer func() {
		switch {
		case err != nil:
		case source == sourceNone:
			r.say("no client secret: signing in as a public client, as the service's own clients do")
		default:
			r.say("using the client secret from %s", source)
		}
	}()
	s, err := r.o.Store.Get(ctx, AccountClientSecret)
	switch {
	case err == nil && s != "":
		return s, sourceStore, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("read the client secret: %w", err)
	}
	if s := r.o.Getenv(EnvClientSecret); s != "" {
		return s, sourceEnv, nil
	}
	if r.o.AskClientSecret == nil {
		return "", sourceNone, nil
	}
	line, err := r.o.AskClientSecret(Question{Prompt: "OAuth client secret (from the developer portal; input hidden on a terminal): ", Secret: true})
	line = strings.TrimSpace(line)
	if line == "" {
		cause := "stdin gave an empty line"
		if err != nil {
			cause = "stdin ended (" + err.Error() + ")"
		}
		return "", "", &SettingsError{Problems: []SettingProblem{{
			Message: "--client-secret-stdin: no OAuth client secret: " + cause + "; type it on a terminal, pipe it on stdin, or set " + EnvClientSecret,
		}}}
	}
	return line, sourceAsked, nil
}

func (r *run) pairOptions(s Settings, secret, name string) Options {
	po := Options{
		OAuth: oauth.Config{
			APIURL:            s.APIURL,
			AuthURL:           s.AuthURL,
			ClientID:          s.ClientID,
			ClientSecret:      secret,
			Grant:             oauth.Grant(s.TokenGrant),
			RedirectURI:       s.RedirectURI,
			AllowMissingState: s.AllowMissingState,
			MissingStateHint:  "remote.allow_missing_state: true in the config file",
			HTTPClient:        r.o.HTTPClient,
			Logger:            r.o.Logger,
		},
		Login:        r.o.Login,
		DeviceTypeID: s.DeviceTypeID,
		DeviceName:   name,
		UserAgent:    r.o.UserAgent,
		Progress: func(p Progress) {
			r.step(string(p.Step))
			if r.o.Progress != nil {
				r.o.Progress(p)
			}
		},
	}
	if r.reuse {
		po.ReuseDeviceID = r.prev.DeviceID
	}
	return po
}

// commit writes everything local through the commit protocol and says
// what was paired.
func (r *run) commit(ctx context.Context, paired *Result, s Settings, name, secret, source string) (*RunResult, error) {
	dev, dt := paired.Device, paired.Token
	if dev.NameOverride != "" {
		name = dev.NameOverride
	}
	r.say("storing the refresh token and the device token in the OS secret store")
	st := State{
		DeviceID: dev.ID, DeviceName: name, APIURL: s.APIURL, DeviceTypeID: s.DeviceTypeID, TokenID: dt.ID,
		PairedAt: r.o.Now().UTC().Truncate(time.Second), ClientID: s.ClientID, RedirectURI: s.RedirectURI,
	}
	co := CommitOptions{
		Store:     r.o.Store,
		Committed: committedSlot(r.prev),
		Save: func(slot string) error {
			st.SecretSlot = slot
			return SaveState(r.statePath, st)
		},
		Step: r.step,
	}
	if r.prev == nil {
		co.Committed = SlotB // nothing paired: the new pairing takes the base account names
	}
	if source == sourceAsked {
		co.Extra = []Secret{{Account: AccountClientSecret, Value: secret}}
	}
	_, leftover, err := paired.Commit(ctx, co)
	if err != nil {
		msg := "nothing was stored on this machine; the previous pairing, if any, is unchanged"
		var ue *UndoError
		if errors.As(err, &ue) {
			msg = "the previous pairing, if any, is unchanged; secrets of this run may remain in the OS secret store, unused (the next 'hubgate pair' removes them)"
		}
		return nil, fmt.Errorf("%w; %s", err, msg)
	}
	if leftover != nil {
		r.say("could not remove the previous pairing's secrets (%v); they are unused, and the next 'hubgate pair' removes them", leftover)
	}
	r.say("wrote %s", r.statePath)
	if r.reuse {
		// The service tells nothing of the previous token (no route lists
		// tokens): it may be disabled, which is why many re-pair.
		r.say("paired: device %s (%q) kept, with a new device token %s; the previous token %s is left on the service as it was "+
			"(disabled or not: hubgate can neither check nor revoke it; disable it in the app if you no longer trust it)", dev.ID, name, dt.ID, r.prev.TokenID)
	} else {
		r.say("paired: device %s (%q) at %s", dev.ID, name, s.APIURL)
		if r.prev != nil {
			r.say("the previous device %s stays on the service; remove it in the app if you no longer want it", r.prev.DeviceID)
		}
	}
	return &RunResult{State: st, StatePath: r.statePath, Reused: r.reuse}, nil
}

// committedSlot is the secret slot of the committed pairing st (nil: none).
func committedSlot(st *State) string {
	if st == nil {
		return SlotA
	}
	return st.SecretSlot
}

// UnpairOptions configures Unpair.
type UnpairOptions struct {
	// StatePath is the state file. Zero: DefaultStatePath.
	StatePath string
	// Store keeps the secrets. Required.
	Store SecretStore
	// KeepClientSecret leaves AccountClientSecret in Store.
	KeepClientSecret bool
	// Progress receives one line per thing done (StepNote). Zero: none.
	Progress func(Progress)
}

// Unpair removes the local pairing: both slots' secrets (and the client
// secret unless kept), then the state file. The device stays on the
// service (no delete route is known). A store failure stops it before the
// state file is removed.
func Unpair(ctx context.Context, o UnpairOptions) error {
	if o.Store == nil {
		return errors.New("pairing: UnpairOptions.Store is required")
	}
	path, err := statePath(o.StatePath)
	if err != nil {
		return err
	}
	release, err := Lock(path)
	if err != nil {
		return err
	}
	defer release()
	r := &run{o: RunOptions{Progress: o.Progress}}
	st, stErr := LoadState(path)
	if stErr != nil && !errors.Is(stErr, ErrNoState) {
		r.say("the state file is unreadable and will be removed: %v", stErr)
	}
	accounts := append(slotAccounts(pairedAccounts, SlotA), slotAccounts(pairedAccounts, SlotB)...)
	if !o.KeepClientSecret {
		accounts = append(accounts, AccountClientSecret)
	}
	var removed []string
	for _, acct := range accounts {
		err := o.Store.Delete(ctx, acct)
		switch {
		case err == nil:
			removed = append(removed, acct)
		case errors.Is(err, fs.ErrNotExist):
		default:
			return fmt.Errorf("unpair stopped, the state file is kept: %w", err)
		}
	}
	stateRemoved := false
	if err := RemoveState(path); err == nil {
		stateRemoved = true
	} else if !errors.Is(err, ErrNoState) {
		return err
	}
	if len(removed) == 0 && !stateRemoved {
		r.say("nothing to remove: no device is paired and no pairing secrets are stored")
		return nil
	}
	if len(removed) > 0 {
		r.say("removed from the OS secret store: %s", strings.Join(removed, ", "))
	}
	if stateRemoved {
		r.say("removed %s", path)
	}
	if st != nil {
		r.say("the device %s (%q) still exists on %s: hubgate cannot delete it; remove it in the app if you no longer want it", st.DeviceID, st.DeviceName, st.APIURL)
	}
	return nil
}
