package pairing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hubgate/hubgate/internal/atomicfile"
)

// State is what `hubgate pair` remembers about the paired User
// Device, in <user config dir>/hubgate/state.json. It never holds a
// secret: the refresh token, the device token and the client secret live
// in the SecretStore only.
type State struct {
	// Version of the file format; SaveState writes StateVersion.
	Version      int       `json:"version"`
	DeviceID     string    `json:"device_id"`
	DeviceName   string    `json:"device_name"`
	APIURL       string    `json:"api_url"`
	DeviceTypeID string    `json:"device_type_id"`
	TokenID      string    `json:"token_id"` // id of the DeviceToken whose token is in the store
	PairedAt     time.Time `json:"paired_at"`
	// ClientID and RedirectURI are the sign-in's settings, so that
	// `pair --reuse` can sign in again without asking; "" in files written
	// before they were recorded.
	ClientID    string `json:"client_id,omitempty"`
	RedirectURI string `json:"redirect_uri,omitempty"`
	// SecretSlot names the slot of the secret store that holds this
	// pairing's refresh token and device token (deviceapi/pairing's commit
	// protocol): "" the accounts' base names, "b" the base names + ".b".
	SecretSlot string `json:"secret_slot,omitempty"`
}

// StateVersion is the state file format SaveState writes.
const StateVersion = 1

// ErrNoState: no device is paired (the state file does not exist). It
// wraps fs.ErrNotExist.
var ErrNoState = fmt.Errorf("no paired device: %w", fs.ErrNotExist)

// DefaultStatePath returns $XDG_CONFIG_HOME/hubgate/state.json
// (os.UserConfigDir).
func DefaultStatePath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("locate the state file: %w", err)
	}
	return StatePathIn(dir), nil
}

// StatePathIn is the default state file in the user config directory dir.
func StatePathIn(dir string) string { return filepath.Join(dir, "hubgate", "state.json") }

// LoadState reads the state file at path ("" : DefaultStatePath). A
// missing file is ErrNoState; a file that is not valid JSON or lacks the
// device id or the api url is an error naming the file (members it does
// not know are ignored, so an older hubgate reads a newer file).
func LoadState(path string) (*State, error) {
	path, err := statePath(path)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoState
	}
	if err != nil {
		return nil, fmt.Errorf("read the pairing state: %w", err)
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("the pairing state file %s is corrupt (%v); remove it with `hubgate unpair`", path, err)
	}
	var missing []string
	if s.DeviceID == "" {
		missing = append(missing, "device_id")
	}
	if s.APIURL == "" {
		missing = append(missing, "api_url")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the pairing state file %s lacks %s; remove it with `hubgate unpair`", path, strings.Join(missing, " and "))
	}
	return &s, nil
}

// SaveState writes s to path ("" : DefaultStatePath) atomically
// (atomicfile.WriteFile): a temp file in the same directory (0600),
// synced, then renamed over the old file, so a reader sees the old state or the new one, never half of one.
// The directory is created 0700 when missing. Version is set to
// StateVersion.
func SaveState(path string, s State) error {
	path, err := statePath(path)
	if err != nil {
		return err
	}
	if s.DeviceID == "" || s.APIURL == "" {
		return errors.New("save the pairing state: the device id and the api url are required")
	}
	s.Version = StateVersion
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("save the pairing state: %w", err)
	}
	data = append(data, '\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save the pairing state: %w", err)
	}
	if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("save the pairing state: %w", err)
	}
	return nil
}

// RemoveState removes the state file at path ("" : DefaultStatePath). A
// file that does not exist is ErrNoState.
func RemoveState(path string) error {
	path, err := statePath(path)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ErrNoState
		}
		return fmt.Errorf("remove the pairing state: %w", err)
	}
	return nil
}

func statePath(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	return DefaultStatePath()
}
