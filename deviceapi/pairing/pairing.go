// Package pairing owns the pairing of one virtual controller with the
// remote device service, shared by `hubgate pair` and `hubgate demo`: the
// whole decision (new, reuse, replace: Run; Unpair), the user's sign-in
// (package oauth), the User Device and its device token (package
// deviceapi), the secrets' account names in the secret store (a small
// SecretStore it declares), and the pairing state file (state.go), kept
// consistent with the store by the commit protocol (commit.go) so that a
// crash at any instant leaves the old pairing or the new one, and what a
// person runs next (NextStep, Summary: next.go). It never
// prints or prompts: it reports each step through a Progress callback,
// asks through RunOptions.Ask, and writes the sign-in address through the
// oauth.LoginOptions it is given.
//
// Run's choices are written in run.go; the others, where the spec is
// silent: docs/pairing.md.
package pairing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/oauth"
)

// Step names one step of a pairing, as reported through Options.Progress.
type Step string

// Steps, in order.
const (
	StepSignIn      Step = "sign-in"      // the sign-in starts (Fields: authUrl)
	StepSignedIn    Step = "signed-in"    // the code was exchanged (Fields: tokenUrl)
	StepDevice      Step = "device"       // creating or reusing the device (Fields: deviceTypeId, name, deviceId once known)
	StepDeviceToken Step = "device-token" // the device token was created (Fields: tokenId)
	StepConfirmed   Step = "confirmed"    // the device was read back (Fields: deviceId)
)

// Progress is one report of Options.Progress.
type Progress struct {
	Step    Step
	Message string         // one human line, without a secret
	Fields  map[string]any // machine-readable details, without a secret
}

// Options configures Pair.
type Options struct {
	// OAuth configures the sign-in client (api url, client id, optional
	// client secret, redirect address, grant style, HTTP client, logger).
	OAuth oauth.Config
	// Login configures the browser part of the sign-in (where the address
	// is written, browser or paste, timeout).
	Login oauth.LoginOptions
	// DeviceTypeID is the type of the device to create. Required unless
	// ReuseDeviceID is set.
	DeviceTypeID string
	// DeviceName is the new device's name. Required unless ReuseDeviceID
	// is set.
	DeviceName string
	// ReuseDeviceID keeps that existing device: only a new device token
	// is created for it. Zero: a new device is created.
	ReuseDeviceID string
	// UserAgent is sent on the REST calls. Zero: deviceapi's default.
	UserAgent string
	// Progress receives each step. Zero: nothing is reported.
	Progress func(Progress)
}

// Result is a completed pairing. Token.Token and RefreshToken are secrets.
type Result struct {
	Device       *deviceapi.UserDevice // as the service answered the confirmation
	Token        *deviceapi.DeviceToken
	RefreshToken string
	Reused       bool     // the device existed before
	Created      []string // what this pairing created on the service ("device <id>", "device token <id>")
}

// StepError is a failure after the sign-in: it names the step and what was
// already created on the service (and left there).
type StepError struct {
	Step    string   // e.g. "creating the device"
	Created []string // may be empty
	Err     error
}

func (e *StepError) Error() string {
	s := fmt.Sprintf("pair failed while %s: %v", e.Step, e.Err)
	if len(e.Created) > 0 {
		s += "; created on the service and left there (hubgate cannot delete it): " + strings.Join(e.Created, ", ")
	}
	return s
}

func (e *StepError) Unwrap() error { return e.Err }

// ErrTokenDisabled: the service answered the new device token with
// isDisabled set; the pairing stops (a *StepError) and stores nothing.
var ErrTokenDisabled = errors.New("the new device token is disabled")

// ErrNoRefreshToken: the service signed the user in but issued no refresh
// token, so hubgate could not stay signed in.
var ErrNoRefreshToken = errors.New("the service issued no refresh token, so hubgate could not stay signed in")

// SignInError wraps a failed sign-in (nothing was created).
type SignInError struct{ Err error }

func (e *SignInError) Error() string { return "sign-in failed, nothing was created: " + e.Err.Error() }
func (e *SignInError) Unwrap() error { return e.Err }

// Pair signs in, creates (or reuses) the device, creates its device token
// and confirms the device. Errors: *SignInError (nothing created; it wraps
// oauth's errors), *StepError (after the sign-in), or a configuration error
// from oauth.New or deviceapi.New.
func Pair(ctx context.Context, o Options) (*Result, error) {
	report := func(step Step, fields map[string]any, format string, args ...any) {
		if o.Progress != nil {
			o.Progress(Progress{Step: step, Message: fmt.Sprintf(format, args...), Fields: fields})
		}
	}
	if o.ReuseDeviceID == "" && (o.DeviceTypeID == "" || o.DeviceName == "") {
		return nil, errors.New("pairing: DeviceTypeID and DeviceName are required to create a device")
	}
	if o.OAuth.Logger == nil {
		o.OAuth.Logger = slog.New(slog.DiscardHandler)
	}
	log := o.OAuth.Logger
	oc, err := oauth.New(o.OAuth)
	if err != nil {
		return nil, err
	}
	// A wrong address must fail in seconds, not after the sign-in timeout.
	if err := oc.Probe(ctx); err != nil {
		return nil, &SignInError{err}
	}
	report(StepSignIn, map[string]any{"authUrl": oc.AuthURL()}, "signing in at %s", oc.AuthURL())
	tok, err := oc.Login(ctx, o.Login)
	if err != nil {
		return nil, &SignInError{err}
	}
	if tok.RefreshToken == "" {
		return nil, &SignInError{ErrNoRefreshToken}
	}
	report(StepSignedIn, map[string]any{"tokenUrl": oc.TokenURL()}, "signed in")
	ts := oc.TokenSource(context.WithoutCancel(ctx), tok, oauth.TokenSourceOptions{})

	var hc *http.Client = o.OAuth.HTTPClient
	api, err := deviceapi.New(deviceapi.Config{BaseURL: o.OAuth.APIURL, TokenSource: ts, HTTPClient: hc, Logger: log, UserAgent: o.UserAgent})
	if err != nil {
		return nil, err
	}
	res := &Result{}
	fail := func(step string, err error) error {
		return &StepError{Step: step, Created: append([]string(nil), res.Created...), Err: err}
	}
	var dev *deviceapi.UserDevice
	if o.ReuseDeviceID != "" {
		res.Reused = true
		report(StepDevice, map[string]any{"deviceId": o.ReuseDeviceID, "reused": true}, "reusing device %s", o.ReuseDeviceID)
		dev = &deviceapi.UserDevice{ID: o.ReuseDeviceID}
	} else {
		report(StepDevice, map[string]any{"deviceTypeId": o.DeviceTypeID, "name": o.DeviceName}, "creating the device %q of type %s", o.DeviceName, o.DeviceTypeID)
		dev, err = api.CreateDevice(ctx, o.DeviceTypeID, o.DeviceName)
		if err != nil {
			var ae *deviceapi.APIError
			if !errors.As(err, &ae) {
				res.Created = append(res.Created, "possibly a device (the request failed in transit; check the app)")
			}
			return nil, fail("creating the device", err)
		}
		res.Created = append(res.Created, "device "+dev.ID)
		report(StepDevice, map[string]any{"deviceId": dev.ID, "deviceTypeId": o.DeviceTypeID, "name": o.DeviceName}, "created device %s", dev.ID)
	}
	dt, err := api.CreateToken(ctx, dev.ID)
	if err != nil {
		var ae *deviceapi.APIError
		if res.Reused && errors.Is(err, deviceapi.ErrNotFound) {
			err = fmt.Errorf("%w (the paired device no longer exists on the service; run 'hubgate pair --replace')", err)
		} else if !errors.As(err, &ae) {
			res.Created = append(res.Created, "possibly a device token (the request failed in transit)")
		}
		return nil, fail("creating the device token", err)
	}
	res.Created = append(res.Created, "device token "+dt.ID)
	if dt.IsDisabled {
		// The hub would refuse it: nothing is stored.
		return nil, fail("creating the device token", fmt.Errorf("%w: device token %s is disabled (isDisabled) as the service created it, so the hub would refuse it; "+
			"enable the device in the app and run 'hubgate pair --reuse' again, or run 'hubgate pair --replace' for a new device", ErrTokenDisabled, dt.ID))
	}
	res.Token = dt
	report(StepDeviceToken, map[string]any{"tokenId": dt.ID}, "created device token %s", dt.ID)
	got, err := api.GetDevice(ctx, dev.ID)
	if err != nil {
		return nil, fail("confirming the device", err)
	}
	if got.ID != dev.ID {
		return nil, fail("confirming the device", fmt.Errorf("the service answered with device %q", got.ID))
	}
	res.Device = got
	report(StepConfirmed, map[string]any{"deviceId": got.ID}, "confirmed device %s", got.ID)
	final, err := ts.Token() // the latest refresh token, should one have rotated
	if err != nil {
		return nil, fail("reading the sign-in", err)
	}
	res.RefreshToken = final.RefreshToken
	return res, nil
}
