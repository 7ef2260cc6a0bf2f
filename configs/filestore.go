package configs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/hubgate/hubgate/internal/atomicfile"
)

// SecretsFileName is the file store's file name, in the folder of the
// pairing state file ($XDG_CONFIG_HOME/hubgate), where gh keeps its
// hosts.yml.
const SecretsFileName = "secrets.json"

// secretsFileVersion is the format FileStore writes.
const secretsFileVersion = 1

// secretsFileWarning is written into the file itself, for whoever opens it.
const secretsFileWarning = "hubgate's secrets in plain text (no Secret Service was used); move them into a keyring with 'hubgate secrets migrate'"

// maxSecretsFile bounds what FileStore reads (a few tokens take a few KB).
const maxSecretsFile = 1 << 20

// DefaultSecretsPath returns $XDG_CONFIG_HOME/hubgate/secrets.json
// (os.UserConfigDir), beside the pairing state file.
func DefaultSecretsPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("locate the secrets file: %w", err)
	}
	return SecretsPathIn(dir), nil
}

// SecretsPathIn is the default secrets file in the user config directory
// dir.
func SecretsPathIn(dir string) string { return filepath.Join(dir, "hubgate", SecretsFileName) }

// FileStore is the SecretStore of machines without a Secret Service (a
// server, SSH, WSL, a container): one JSON file, mode 0600, replaced
// atomically (internal/atomicfile) on every write, its folder created 0700.
// The secrets in it are plain text: anyone who can read the file as this
// user or as root can read them. OpenSecrets chooses it (the secrets
// setting, or automatically with a warning).
//
// A file that others may read or write (any group or other permission bit)
// or that belongs to another user is refused with an error that says how
// to fix it; nothing is read from or written to it. Every call reads the
// file again, so a daemon sees what `pair` wrote. Writes are serialized
// in the process (a mutex) and between processes (an flock on
// "<file>.lock", where the platform has one). Deleting the last secret
// removes the file. Errors are *StoreError with File set, matching
// ErrStoreUnavailable for an unusable file, and never contain a secret.
type FileStore struct {
	path string
	mu   sync.Mutex
}

var _ SecretStore = (*FileStore)(nil)

// NewFileStore returns the file store at path (an absolute path; see
// DefaultSecretsPath). Nothing is touched until the first call.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

// Path returns the file's path.
func (s *FileStore) Path() string { return s.path }

// secretsFile is the file's JSON form.
type secretsFile struct {
	Version int               `json:"version"`
	Warning string            `json:"warning,omitempty"`
	Secrets map[string]string `json:"secrets"`
}

// Get returns the secret stored under account.
func (s *FileStore) Get(ctx context.Context, account string) (string, error) {
	if err := s.check(ctx, "get", account); err != nil {
		return "", err
	}
	m, err := s.read("get", account)
	if err != nil {
		return "", err
	}
	v, ok := m[account]
	if !ok {
		return "", &StoreError{Op: "get", Account: account, File: s.path, Kind: KindNotFound, Err: ErrSecretNotFound}
	}
	return v, nil
}

// Set stores value under account, replacing any previous value.
func (s *FileStore) Set(ctx context.Context, account, value string) error {
	if err := s.check(ctx, "set", account); err != nil {
		return err
	}
	if value == "" {
		return &StoreError{Op: "set", Account: account, File: s.path, Kind: KindOther, reason: "refusing to store an empty secret"}
	}
	return s.update("set", account, func(m map[string]string) error {
		m[account] = value
		return nil
	})
}

// Delete removes the secret stored under account; the last one removes
// the file.
func (s *FileStore) Delete(ctx context.Context, account string) error {
	if err := s.check(ctx, "delete", account); err != nil {
		return err
	}
	return s.update("delete", account, func(m map[string]string) error {
		if _, ok := m[account]; !ok {
			return &StoreError{Op: "delete", Account: account, File: s.path, Kind: KindNotFound, Err: ErrSecretNotFound}
		}
		delete(m, account)
		return nil
	})
}

// Accounts returns the accounts the file holds, sorted (none when there
// is no file).
func (s *FileStore) Accounts(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, newStoreError("list", "", err, "")
	}
	m, err := s.read("list", "")
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(m))
	for a := range m {
		out = append(out, a)
	}
	slices.Sort(out)
	return out, nil
}

// Exists reports whether the file exists (whatever it holds).
func (s *FileStore) Exists() bool {
	_, err := os.Lstat(s.path)
	return err == nil
}

func (s *FileStore) check(ctx context.Context, op, account string) error {
	if account == "" {
		return &StoreError{Op: op, File: s.path, Kind: KindOther, reason: "empty account name"}
	}
	if err := ctx.Err(); err != nil {
		se := newStoreError(op, account, err, "")
		se.File = s.path
		return se
	}
	return nil
}

// unusable is the error of a file hubgate will not use.
func (s *FileStore) unusable(op, account string, err error, reason string) *StoreError {
	return &StoreError{Op: op, Account: account, File: s.path, Kind: KindUnavailable, Err: err, reason: reason}
}

// read reads the file's secrets; no file is an empty map.
func (s *FileStore) read(op, account string) (map[string]string, error) {
	f, err := os.OpenFile(s.path, os.O_RDONLY|oNoFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, s.unusable(op, account, err, "cannot open it: "+err.Error())
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, s.unusable(op, account, err, "cannot stat it: "+err.Error())
	}
	if err := s.checkFile(fi); err != nil {
		err.Op, err.Account = op, account
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSecretsFile+1))
	if err != nil {
		return nil, s.unusable(op, account, err, "cannot read it: "+err.Error())
	}
	if len(data) > maxSecretsFile {
		return nil, s.unusable(op, account, nil, fmt.Sprintf("it is larger than %d bytes; it is not hubgate's", maxSecretsFile))
	}
	var sf secretsFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&sf); err != nil {
		// The decoder's text may quote a byte of the file: give the offset only.
		return nil, s.unusable(op, account, nil, fmt.Sprintf("it is not a hubgate secrets file (invalid JSON near byte %d); move it away and pair again", dec.InputOffset()))
	}
	if sf.Version != secretsFileVersion {
		return nil, s.unusable(op, account, nil, fmt.Sprintf("it has format version %d; this hubgate reads version %d", sf.Version, secretsFileVersion))
	}
	if sf.Secrets == nil {
		sf.Secrets = map[string]string{}
	}
	return sf.Secrets, nil
}

// checkFile refuses what is not a private regular file of this user.
func (s *FileStore) checkFile(fi fs.FileInfo) *StoreError {
	if !fi.Mode().IsRegular() {
		return s.unusable("", "", nil, "it is not a regular file; remove it")
	}
	if perm := fi.Mode().Perm(); checkPerm && perm&0o077 != 0 {
		return s.unusable("", "", nil, fmt.Sprintf(
			"its mode is %04o: others may read or change it, so hubgate will not use it; consider the secrets in it exposed (pair again to replace them), then 'chmod 600 %s'", perm, s.path))
	}
	if uid, mine := fileOwner(fi); !mine {
		return s.unusable("", "", nil, fmt.Sprintf(
			"it belongs to user id %d, not to you (%d), so hubgate will not use it; remove it, or give it to yourself with chown", uid, os.Geteuid()))
	}
	return nil
}

// update runs fn on the secrets under both locks and writes the result
// atomically (or removes the file when nothing is left).
func (s *FileStore) update(op, account string, fn func(map[string]string) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return s.unusable(op, account, err, "cannot create its folder: "+err.Error())
	}
	unlock, err := lockFile(s.path + ".lock")
	if err != nil {
		return s.unusable(op, account, err, "cannot lock it: "+err.Error())
	}
	defer unlock()
	m, err := s.read(op, account)
	if err != nil {
		return err
	}
	if err := fn(m); err != nil {
		return err
	}
	if len(m) == 0 {
		if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return s.unusable(op, account, err, "cannot remove it: "+err.Error())
		}
		return nil
	}
	data, err := json.MarshalIndent(secretsFile{Version: secretsFileVersion, Warning: secretsFileWarning, Secrets: m}, "", "  ")
	if err != nil {
		return &StoreError{Op: op, Account: account, File: s.path, Kind: KindOther, reason: "cannot encode the secrets"}
	}
	if err := atomicfile.WriteFile(s.path, append(data, '\n'), 0o600); err != nil {
		return s.unusable(op, account, err, "cannot write it: "+err.Error())
	}
	return nil
}

// removeIfUnchanged removes the file when it holds exactly want (under
// both locks), after its secrets moved elsewhere; a file that changed
// meanwhile (a daemon stored a new secret) stays, with an error.
func (s *FileStore) removeIfUnchanged(want map[string]string) error {
	return s.update("remove", "", func(m map[string]string) error {
		if !maps.Equal(m, want) {
			return &StoreError{Op: "remove", File: s.path, Kind: KindOther,
				reason: "it changed while its secrets were being moved (a running hubgate wrote to it); run the migration again"}
		}
		clear(m) // update removes an empty file
		return nil
	})
}
