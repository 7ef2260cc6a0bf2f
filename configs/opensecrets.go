package configs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// The values of the secrets setting.
const (
	SecretsAuto    = "auto"
	SecretsKeyring = "keyring"
	SecretsFile    = "file"
)

// SecretsModes are the accepted values of the secrets setting.
var SecretsModes = []string{SecretsAuto, SecretsKeyring, SecretsFile}

// probeAccount is the account OpenSecrets reads (and never writes) to see
// whether the OS secret store answers.
const probeAccount = CanaryAccountPrefix + "probe"

// SecretsOptions configures OpenSecrets.
type SecretsOptions struct {
	// Mode is the secrets setting (SecretsModes). Zero: auto.
	Mode string
	// File is the file store's path. Zero: SecretsPathIn(UserConfigDir()).
	File string
	// UserConfigDir is the per-user config directory, for the default
	// File. Zero: os.UserConfigDir.
	UserConfigDir func() (string, error)
	// Keyring configures the OS secret store.
	Keyring KeyringOptions

	keyring *Keyring // tests: a Keyring over a fake backend
}

// Secrets is the secret store OpenSecrets chose, and why.
type Secrets struct {
	SecretStore
	// Backend is SecretsKeyring or SecretsFile.
	Backend string
	// File is the secrets file's path (set whatever the backend).
	File string
	// Fallback: the file was chosen automatically because no Secret
	// Service could be reached.
	Fallback bool
	// Warning is what the person must be told about this choice (lines,
	// no trailing newline); "" when nothing. It never holds a secret.
	Warning string
}

// OpenSecrets chooses hubgate's secret store:
//   - file: the FileStore at o.File;
//   - keyring: the OS secret store; when a read of it fails, that error
//     (which names the D-Bus address tried and how to fix it);
//   - auto: the OS secret store when a read of it answers (found or not
//     found); when the secrets file exists too (an earlier fallback), a
//     secret the keyring lacks is read from the file, as gh reads its
//     hosts.yml after the keyring, and the warning says how to move them.
//     Else, when there is no Secret Service at all (KindUnavailable: no
//     D-Bus session bus, no provider on it, no store on this platform),
//     the FileStore with a loud warning. A locked store or one that does
//     not answer is an error, never a reason to write secrets to a plain
//     file.
//
// The OS secret store is probed with one Get of an account nobody writes;
// nothing is stored.
func OpenSecrets(ctx context.Context, o SecretsOptions) (*Secrets, error) {
	if o.File == "" {
		dirOf := o.UserConfigDir
		if dirOf == nil {
			dirOf = os.UserConfigDir
		}
		dir, err := dirOf()
		if err != nil {
			return nil, fmt.Errorf("locate the secrets file: %w", err)
		}
		o.File = SecretsPathIn(dir)
	}
	file := NewFileStore(o.File)
	k := o.keyring
	if k == nil {
		k = NewKeyring(o.Keyring)
	}
	switch o.Mode {
	case SecretsFile:
		return &Secrets{SecretStore: file, Backend: SecretsFile, File: o.File,
			Warning: "the secrets are kept in plain text in " + o.File + " (mode 0600; secrets: file)"}, nil
	case SecretsKeyring:
		if err := probeKeyring(ctx, k); err != nil {
			return nil, err
		}
		return &Secrets{SecretStore: k, Backend: SecretsKeyring, File: o.File}, nil
	case "", SecretsAuto:
	default:
		return nil, fmt.Errorf("secrets: must be one of %s; got %q", strings.Join(SecretsModes, ", "), o.Mode)
	}
	err := probeKeyring(ctx, k)
	var se *StoreError
	switch {
	case err == nil && file.Exists():
		return &Secrets{SecretStore: &keyringOverFile{k: k, file: file}, Backend: SecretsKeyring, File: o.File,
			Warning: "some secrets are still in the plain-text file " + o.File + " (written where no Secret Service could be reached); they are read from there until you run 'hubgate secrets migrate'"}, nil
	case err == nil:
		return &Secrets{SecretStore: k, Backend: SecretsKeyring, File: o.File}, nil
	case errors.As(err, &se) && se.Kind == KindUnavailable:
		reason := se.reason
		if reason == "" {
			reason = se.Error()
		}
		return &Secrets{SecretStore: file, Backend: SecretsFile, File: o.File, Fallback: true,
			Warning: fileWarning(o.File, "no Secret Service could be reached: "+reason)}, nil
	}
	return nil, err
}

// keyringOverFile is auto's store when the keyring answers and a secrets
// file remains: the keyring's value wins, the file's is read when the
// keyring has none; writes go to the keyring and drop the file's copy (a
// secret never stays in plain text once it is in the keyring); a delete
// removes both.
type keyringOverFile struct {
	k    SecretStore
	file *FileStore
}

func (s *keyringOverFile) Get(ctx context.Context, account string) (string, error) {
	v, err := s.k.Get(ctx, account)
	if !errors.Is(err, ErrSecretNotFound) {
		return v, err
	}
	v, ferr := s.file.Get(ctx, account)
	if errors.Is(ferr, ErrSecretNotFound) {
		return "", err
	}
	return v, ferr
}

func (s *keyringOverFile) Set(ctx context.Context, account, value string) error {
	if err := s.k.Set(ctx, account, value); err != nil {
		return err
	}
	if err := s.file.Delete(ctx, account); err != nil && !errors.Is(err, ErrSecretNotFound) {
		return fmt.Errorf("stored in the OS secret store, but its older copy stays in the plain-text file: %w", err)
	}
	return nil
}

func (s *keyringOverFile) Delete(ctx context.Context, account string) error {
	kerr := s.k.Delete(ctx, account)
	ferr := s.file.Delete(ctx, account)
	kGone, fGone := errors.Is(kerr, ErrSecretNotFound), errors.Is(ferr, ErrSecretNotFound)
	switch {
	case kerr != nil && !kGone:
		return kerr
	case ferr != nil && !fGone:
		return ferr
	case kGone && fGone:
		return kerr
	}
	return nil
}

// probeKeyring reads probeAccount: not found is an answer. Its error is
// the Get's, as an "open" of no account.
func probeKeyring(ctx context.Context, k *Keyring) error {
	_, err := k.Get(ctx, probeAccount)
	if err == nil || errors.Is(err, ErrSecretNotFound) {
		return nil
	}
	var se *StoreError
	if errors.As(err, &se) {
		c := *se
		c.Op, c.Account = "open", ""
		return &c
	}
	return err
}

// fileWarning is the loud warning of an automatic file store.
func fileWarning(path, why string) string {
	return strings.Join([]string{
		"WARNING: " + why + ".",
		"WARNING: hubgate's secrets (device token, OAuth refresh token, Automate access key) are ON DISK IN PLAIN TEXT in " + path + " (mode 0600: readable by you and by root).",
		"WARNING: to move them into a keyring, start a Secret Service (gnome-keyring, KeePassXC) on your D-Bus session and run 'hubgate secrets migrate'; to keep the file and say so, set 'secrets: file' in the configuration.",
	}, "\n")
}

// LazySecrets is a SecretStore that chooses its store (OpenSecrets) at its
// first call, with that call's context, so that a command opens the store
// only when it needs a secret. A failed choice is that call's error and is
// tried again by the next call. Safe for concurrent use.
type LazySecrets struct {
	o      SecretsOptions
	onOpen func(*Secrets)

	mu     sync.Mutex
	chosen *Secrets
}

var _ SecretStore = (*LazySecrets)(nil)

// NewLazySecrets returns a LazySecrets over o; onOpen (nil: none) is told
// the choice once, to show its Warning.
func NewLazySecrets(o SecretsOptions, onOpen func(*Secrets)) *LazySecrets {
	return &LazySecrets{o: o, onOpen: onOpen}
}

// Open makes the choice now (once) and returns it.
func (l *LazySecrets) Open(ctx context.Context) (*Secrets, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.chosen != nil {
		return l.chosen, nil
	}
	s, err := OpenSecrets(ctx, l.o)
	if err != nil {
		return nil, err
	}
	l.chosen = s
	if l.onOpen != nil {
		l.onOpen(s)
	}
	return s, nil
}

// Get returns the secret stored under account in the chosen store.
func (l *LazySecrets) Get(ctx context.Context, account string) (string, error) {
	s, err := l.Open(ctx)
	if err != nil {
		return "", err
	}
	return s.Get(ctx, account)
}

// Set stores value under account in the chosen store.
func (l *LazySecrets) Set(ctx context.Context, account, value string) error {
	s, err := l.Open(ctx)
	if err != nil {
		return err
	}
	return s.Set(ctx, account, value)
}

// Delete removes account's secret from the chosen store.
func (l *LazySecrets) Delete(ctx context.Context, account string) error {
	s, err := l.Open(ctx)
	if err != nil {
		return err
	}
	return s.Delete(ctx, account)
}

// MigrateSecrets moves every secret of from into to: each is written to
// to and read back, and only when all arrived is from's file removed. A
// secret to already holds stays as it is (auto reads it before the file's
// copy, which is older): the file's copy is dropped, and the account is
// listed in shadowed. On an error nothing is removed from from (running it
// again is safe). It returns the accounts (names only).
func MigrateSecrets(ctx context.Context, from *FileStore, to SecretStore) (moved, shadowed []string, err error) {
	accounts, err := from.Accounts(ctx)
	if err != nil {
		return nil, nil, err
	}
	seen := make(map[string]string, len(accounts))
	for _, a := range accounts {
		v, err := from.Get(ctx, a)
		if err != nil {
			return nil, nil, err
		}
		seen[a] = v
		switch _, err := to.Get(ctx, a); {
		case err == nil:
			shadowed = append(shadowed, a)
			continue
		case !errors.Is(err, ErrSecretNotFound):
			return nil, nil, fmt.Errorf("read %q in the new store (the file still holds every secret): %w", a, err)
		}
		moved = append(moved, a)
		if err := to.Set(ctx, a, v); err != nil {
			return nil, nil, fmt.Errorf("move %q (the file still holds every secret): %w", a, err)
		}
		got, err := to.Get(ctx, a)
		if err != nil {
			return nil, nil, fmt.Errorf("read back %q (the file still holds every secret): %w", a, err)
		}
		if got != v {
			return nil, nil, fmt.Errorf("read back %q: the value differs from the one written (the file still holds every secret)", a)
		}
	}
	if err := from.removeIfUnchanged(seen); err != nil {
		return moved, shadowed, fmt.Errorf("every secret is in the new store, but the file stays: %w", err)
	}
	return moved, shadowed, nil
}
