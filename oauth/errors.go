package oauth

import (
	"errors"
	"fmt"
	"net/http"

	"golang.org/x/oauth2"
)

var (
	// ErrSignInAgain: the service no longer accepts the sign-in (an
	// "invalid_grant" answer: the refresh token expired or was revoked, or
	// an authorization code was invalid or already used). A *TokenError
	// matches it.
	ErrSignInAgain = errors.New("sign in again: run hubgate pair")
	// ErrAccessDenied: the user (or the service) refused the sign-in
	// (error=access_denied on the redirect). An *AuthorizationError
	// matches it.
	ErrAccessDenied = errors.New("access denied")
	// ErrTimeout: no sign-in completed within the flow's timeout.
	ErrTimeout = errors.New("sign-in timed out")
	// ErrInputClosed: LoginOptions.NoBrowser, and the input of pasted
	// addresses (In) ended before an address came:
	// nobody is there to paste one, so Login fails at once instead of
	// waiting out its timeout.
	ErrInputClosed = errors.New("no browser is opened and the input for the redirected address is closed")
)

// AuthorizationError is an error the authorization server sent back on the
// redirect (RFC 6749 section 4.1.2.1).
type AuthorizationError struct {
	Code        string // "error", e.g. access_denied
	Description string // "error_description", may be ""
	URI         string // "error_uri", may be ""
}

func (e *AuthorizationError) Error() string {
	s := "the sign-in was refused: " + e.Code
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// Is matches ErrAccessDenied for the access_denied code.
func (e *AuthorizationError) Is(target error) bool {
	return target == ErrAccessDenied && e.Code == "access_denied"
}

// TokenError is a refusal of the token endpoint (RFC 6749 section 5.2),
// during the code exchange or a refresh. Its message shows the error code,
// description and status, never the response body or a token.
type TokenError struct {
	Op          string // "exchange" or "refresh"
	Status      int    // HTTP status, 0 when unknown
	Code        string // "error", e.g. invalid_grant; "" when the body had none
	Description string // "error_description"
	Err         error  // the *oauth2.RetrieveError
}

func (e *TokenError) Error() string {
	what := "the token exchange"
	if e.Op == "refresh" {
		what = "the token refresh"
	}
	var s string
	switch {
	case e.Code != "":
		s = fmt.Sprintf("%s was refused: %s", what, e.Code)
		if e.Description != "" {
			s += ": " + e.Description
		}
	default:
		s = fmt.Sprintf("%s failed", what)
	}
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d %s)", e.Status, http.StatusText(e.Status))
	}
	if e.Code == "invalid_grant" {
		switch {
		case e.Op == "refresh":
			s += "; the sign-in expired or was revoked"
		case e.Description == "":
			s += "; the authorization code is invalid, expired or was already used"
		}
		s += "; " + ErrSignInAgain.Error()
	}
	return s
}

// Unwrap returns the underlying *oauth2.RetrieveError.
func (e *TokenError) Unwrap() error { return e.Err }

// Is matches ErrSignInAgain for invalid_grant.
func (e *TokenError) Is(target error) bool {
	return target == ErrSignInAgain && e.Code == "invalid_grant"
}

// tokenError turns an *oauth2.RetrieveError into a *TokenError; other
// errors are returned unchanged.
func tokenError(op string, err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return err
	}
	te := &TokenError{Op: op, Code: clean(re.ErrorCode), Description: clean(re.ErrorDescription), Err: re}
	if re.Response != nil {
		te.Status = re.Response.StatusCode
	}
	return te
}

// IsSignInError reports whether err means the sign-in itself failed or
// must be repeated (refused, denied, timed out, invalid_grant), as opposed
// to a network or local failure. Commands map it to their own exit code.
func IsSignInError(err error) bool {
	var ae *AuthorizationError
	var te *TokenError
	return errors.Is(err, ErrTimeout) || errors.Is(err, ErrSignInAgain) ||
		errors.Is(err, ErrUnreachable) || errors.Is(err, ErrMissingState) || errors.Is(err, ErrSignInPage) ||
		errors.As(err, &ae) || errors.As(err, &te)
}

// ErrUnreachable: the service did not answer at its api url (wrong
// address, service down, no network). An *UnreachableError matches it.
var ErrUnreachable = errors.New("the remote service does not answer")

// UnreachableError is a failed Probe.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("the remote service does not answer at %s (%v): check remote.api_url (or --api-url) and the network", e.URL, e.Err)
}
func (e *UnreachableError) Unwrap() error        { return e.Err }
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// ErrMissingState: the redirect carried no state and
// Config.AllowMissingState is off. A *StateError matches it.
var ErrMissingState = errors.New("the sign-in response carried no state")

// StateError refuses a redirect without state; it names the setting that
// accepts one.
type StateError struct{ Hint string }

func (e *StateError) Error() string {
	return "the sign-in response carried no state, so hubgate cannot tell it from a response another web page provoked (a fixed redirect address is reachable by any page); if this service never returns the state, set " + e.Hint + " and pair again"
}
func (e *StateError) Is(target error) bool { return target == ErrMissingState }
