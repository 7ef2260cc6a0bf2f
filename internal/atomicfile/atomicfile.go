// Package atomicfile owns hubgate's one way of replacing a file so that a
// reader (or a crash) sees the old contents or the new, never a part of
// either: the pairing state (configs), the secrets file (configs.FileStore)
// and the OpenAI engine's conversation store (automate/llm) are written
// through it.
//
// Choices: the temporary file is created in the destination's folder (a
// rename is atomic only within one file system) with a name starting with
// "." and ending in ".tmp"; it gets perm before any data is written, so a
// private file is never readable by others, not even for a moment; the
// folder is synced after the rename on a best-effort basis (some systems
// cannot open or sync a folder, and the data itself is already on disk).
// The folder must exist: callers choose its mode.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes data to path atomically: a temporary file in the same
// folder, chmod perm, written, synced, closed, then renamed over path, and
// the folder synced. On error path is unchanged and the temporary file is
// removed; the error is the failing os call's (it names the file).
func WriteFile(path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close() // a second Close only reports os.ErrClosed
			_ = os.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil { // make the rename durable; best effort
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
