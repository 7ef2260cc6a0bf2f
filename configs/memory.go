package configs

import (
	"context"
	"sync"
)

// MemoryStore is a SecretStore in process memory, safe for concurrent use.
// It exists for unit tests and for the one-process demo; nothing is
// persisted. Its zero value is ready to use. It follows the Keyring's
// contract: not-found errors match ErrSecretNotFound, empty account names
// and empty values are refused, and a ctx that is already done fails the
// call.
type MemoryStore struct {
	mu      sync.Mutex
	secrets map[string]string
}

var _ SecretStore = (*MemoryStore)(nil)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// Get returns the secret stored under account.
func (m *MemoryStore) Get(ctx context.Context, account string) (string, error) {
	if err := memCheck(ctx, "get", account); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.secrets[account]
	if !ok {
		return "", &StoreError{Op: "get", Account: account, Kind: KindNotFound, Err: ErrSecretNotFound}
	}
	return v, nil
}

// Set stores value under account, replacing any previous value.
func (m *MemoryStore) Set(ctx context.Context, account, value string) error {
	if err := memCheck(ctx, "set", account); err != nil {
		return err
	}
	if value == "" {
		return &StoreError{Op: "set", Account: account, Kind: KindOther, reason: "refusing to store an empty secret"}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.secrets == nil {
		m.secrets = make(map[string]string)
	}
	m.secrets[account] = value
	return nil
}

// Delete removes the secret stored under account.
func (m *MemoryStore) Delete(ctx context.Context, account string) error {
	if err := memCheck(ctx, "delete", account); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.secrets[account]; !ok {
		return &StoreError{Op: "delete", Account: account, Kind: KindNotFound, Err: ErrSecretNotFound}
	}
	delete(m.secrets, account)
	return nil
}

// Check runs the canary check (CheckStore) against the memory store.
func (m *MemoryStore) Check(ctx context.Context) error { return CheckStore(ctx, m) }

func memCheck(ctx context.Context, op, account string) error {
	if account == "" {
		return &StoreError{Op: op, Kind: KindOther, reason: "empty account name"}
	}
	if err := ctx.Err(); err != nil {
		se := newStoreError(op, account, err, "")
		return se
	}
	return nil
}
