package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hubgate/hubgate/internal/atomicfile"
)

// storeVersion is the version of the conversation store's format.
const storeVersion = 1

// turn is one run of the stored conversation: what the person asked and
// the closing message they got.
type turn struct {
	RequestID string    `json:"requestId"`
	Model     string    `json:"model,omitempty"`
	Prompt    string    `json:"prompt"`
	Answer    string    `json:"answer"`
	Status    string    `json:"status"`
	At        time.Time `json:"at"`
}

type storeFile struct {
	Version int    `json:"version"`
	Turns   []turn `json:"turns"`
}

// loadStore reads the conversation store; a missing file is an empty
// conversation.
func loadStore(path string) ([]turn, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("conversation store: %w", err)
	}
	var f storeFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("conversation store %s: %w", path, err)
	}
	if f.Version != storeVersion {
		return nil, fmt.Errorf("conversation store %s: unknown version %d", path, f.Version)
	}
	return f.Turns, nil
}

// saveStore writes the conversation atomically (atomicfile.WriteFile: a
// temporary file in the same folder, synced, then renamed over the old
// one), mode 0600: it holds prompts and answers.
func saveStore(path string, turns []turn) error {
	if path == "" {
		return nil
	}
	if turns == nil {
		turns = []turn{}
	}
	b, err := json.MarshalIndent(storeFile{Version: storeVersion, Turns: turns}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("conversation store: %w", err)
	}
	if err := atomicfile.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("conversation store: %w", err)
	}
	return nil
}
