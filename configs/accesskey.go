package configs

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Access key rules of the Automate contract: generated keys are 32 random
// bytes, base64url without padding (43 characters); any key must have at
// least MinAccessKeyLength characters.
const (
	AccessKeyBytes     = 32
	MinAccessKeyLength = 24
)

// ErrInvalidAccessKey is wrapped by every ValidateAccessKey error.
var ErrInvalidAccessKey = errors.New("invalid access key")

// GenerateAccessKey returns a new Automate access key: 32 bytes from
// crypto/rand encoded base64url without padding (43 characters).
func GenerateAccessKey() (string, error) {
	b := make([]byte, AccessKeyBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate access key: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ValidateAccessKey checks a key supplied by a person or read from the
// store: at least MinAccessKeyLength characters, no surrounding whitespace
// (the contract says whitespace around the key changes it, so it is almost
// certainly a copy-paste accident) and no control characters (they cannot
// travel in an HTTP header). Errors wrap ErrInvalidAccessKey and never
// contain the key.
func ValidateAccessKey(k string) error {
	switch {
	case k == "":
		return fmt.Errorf("%w: it is empty", ErrInvalidAccessKey)
	case strings.TrimSpace(k) != k:
		return fmt.Errorf("%w: it has leading or trailing whitespace", ErrInvalidAccessKey)
	case strings.IndexFunc(k, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: it contains control characters", ErrInvalidAccessKey)
	}
	if n := len([]rune(k)); n < MinAccessKeyLength {
		return fmt.Errorf("%w: it has %d characters, at least %d are required", ErrInvalidAccessKey, n, MinAccessKeyLength)
	}
	return nil
}
