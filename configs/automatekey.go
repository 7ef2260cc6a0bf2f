package configs

import (
	"context"
	"errors"
	"fmt"
)

// EnvAutomateKey names the environment variable that supplies the Automate
// access key for headless use; when set it wins over the secret store.
const EnvAutomateKey = "HUBGATE_AUTOMATE_KEY"

// MessageSecureStorageUnavailable is the contract's text for a server that
// cannot keep its access key in secure OS storage.
const MessageSecureStorageUnavailable = "This server cannot be enabled because secure operating-system storage is unavailable"

// KeySource says where an access key came from.
type KeySource string

const (
	KeyFromEnv       KeySource = "environment"
	KeyFromStore     KeySource = "keyring"
	KeyCreated       KeySource = "keyring (generated now)"
	KeyFromEphemeral KeySource = "memory (this process only)"
)

// AutomateKey returns the Automate access key: from HUBGATE_AUTOMATE_KEY
// when set (validated), else from the store, generating and storing a new
// key on first use. Errors name the source and never contain the key;
// a store failure wraps the store's error (ErrStoreUnavailable and so on).
func AutomateKey(ctx context.Context, store SecretStore, getenv func(string) string) (string, KeySource, error) {
	if v := getenv(EnvAutomateKey); v != "" {
		if err := ValidateAccessKey(v); err != nil {
			return "", "", fmt.Errorf("%s: %w", EnvAutomateKey, err)
		}
		return v, KeyFromEnv, nil
	}
	if store == nil {
		return "", "", fmt.Errorf("no access key: %s is unset and no secret store is configured", EnvAutomateKey)
	}
	key, err := store.Get(ctx, AccountAutomateAccessKey)
	switch {
	case err == nil:
		if err := ValidateAccessKey(key); err != nil {
			return "", "", fmt.Errorf("the stored Automate access key is unusable (rotate it with `hubgate automate key --rotate`): %w", err)
		}
		return key, KeyFromStore, nil
	case errors.Is(err, ErrSecretNotFound):
		key, err := RotateAutomateKey(ctx, store)
		if err != nil {
			return "", "", err
		}
		return key, KeyCreated, nil
	case errors.Is(err, ErrStoreUnavailable):
		return "", "", fmt.Errorf("%s (set %s to run without the OS secret store): %w", MessageSecureStorageUnavailable, EnvAutomateKey, err)
	default:
		return "", "", fmt.Errorf("read the Automate access key (set %s to run without the secret store): %w", EnvAutomateKey, err)
	}
}

// RotateAutomateKey generates a new access key and stores it, replacing
// the old one. A server that reads the store again (SIGHUP) stops accepting
// the old key at once.
func RotateAutomateKey(ctx context.Context, store SecretStore) (string, error) {
	key, err := GenerateAccessKey()
	if err != nil {
		return "", err
	}
	if err := store.Set(ctx, AccountAutomateAccessKey, key); err != nil {
		if errors.Is(err, ErrStoreUnavailable) {
			return "", fmt.Errorf("%s: %w", MessageSecureStorageUnavailable, err)
		}
		return "", fmt.Errorf("store the Automate access key: %w", err)
	}
	return key, nil
}
