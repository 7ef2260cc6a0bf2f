package configs

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hubgate/hubgate/internal/atomicfile"
)

//go:embed starter.yaml
var starterYAML []byte

// StarterYAML returns the commented starter configuration `hubgate config
// init` writes: the scripted engine, two example rules and unmatched
// commands run as their prompt, so that a first command is answered
// without editing anything.
func StarterYAML() []byte { return append([]byte(nil), starterYAML...) }

// ErrConfigExists: WriteStarter found a file and was not told to replace
// it.
var ErrConfigExists = errors.New("the config file exists")

// WriteStarter writes the starter file (StarterYAML) at path, creating
// its folder: with O_EXCL unless force, so that a file created meanwhile
// is never replaced either (ErrConfigExists); with force an existing
// file is kept as path + ".bak".
func WriteStarter(path string, force bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create the config folder: %w", err)
	}
	data := StarterYAML()
	if !force {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s; nothing was written. 'hubgate config init --force' replaces it (keeping it as %s.bak); 'hubgate config check' checks it", ErrConfigExists, path, filepath.Base(path))
		}
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			os.Remove(path)
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			os.Remove(path)
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	if old, err := os.ReadFile(path); err == nil {
		if err := atomicfile.WriteFile(path+".bak", old, 0o600); err != nil {
			return fmt.Errorf("keep the old file as %s.bak: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return atomicfile.WriteFile(path, data, 0o600)
}
