package deviceapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Sentinels matched by errors.Is against an *APIError.
var (
	// ErrUnauthorized: the service answered 401 (the user's access token
	// is missing, expired or revoked).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrForbidden: the service answered 403 (for example a device type
	// the client may not use).
	ErrForbidden = errors.New("forbidden")
	// ErrNotFound: the service answered 404 (an unknown device or device
	// type).
	ErrNotFound = errors.New("not found")
)

// ErrResponseTooLarge: a response body is over MaxResponseBody bytes (it
// is not read further and the request is not retried).
var ErrResponseTooLarge = errors.New("response body too large")

// MaxErrorBody is how many bytes of a response body an *APIError keeps.
const MaxErrorBody = 512

// APIError is a response of the remote service with a status outside
// 2xx. Its Body is truncated to MaxErrorBody bytes and scrubbed: JSON
// members whose names look like secrets (token, secret, password,
// authorization, ...) are replaced by "[REDACTED]", and so is any copy of
// the bearer the request carried. The spec shows no error bodies, so no
// shape is assumed.
type APIError struct {
	Status int    // HTTP status code
	Body   string // truncated, scrubbed response body; "" when empty
	Route  string // method and route template, e.g. "POST /api/Device/userDevices/{userDeviceId}/tokens"
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("deviceapi: %s: %d %s", e.Route, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// Is matches ErrUnauthorized (401), ErrForbidden (403) and ErrNotFound
// (404).
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	}
	return false
}

// secretKey reports whether a JSON member name looks like it holds a
// secret.
func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"token", "secret", "password", "passwd", "authorization", "bearer", "credential", "apikey", "api_key", "cookie"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

const redacted = "[REDACTED]"

// scrubBody returns body fit for an error message: secret-looking JSON
// members redacted, every copy of each secret in secrets replaced, control
// characters flattened, truncated to MaxErrorBody bytes on a rune boundary.
func scrubBody(body []byte, secrets ...string) string {
	s := string(body)
	var v any
	if json.Unmarshal(body, &v) == nil {
		if b, err := json.Marshal(scrubJSON(v)); err == nil {
			s = string(b)
		}
	}
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, redacted)
		}
	}
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) > MaxErrorBody {
		cut := MaxErrorBody
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…(truncated)"
	}
	return s
}

func scrubJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if _, isStr := val.(string); isStr && secretKey(k) {
				x[k] = redacted
				continue
			}
			x[k] = scrubJSON(val)
		}
	case []any:
		for i := range x {
			x[i] = scrubJSON(x[i])
		}
	}
	return v
}
