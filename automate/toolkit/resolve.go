package toolkit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds the symlinks followed while resolving one path (as the
// kernel's ELOOP limit does).
const maxLinks = 255

// ErrTooManyLinks is returned when resolving a path follows more than 255
// symlinks (a loop).
var ErrTooManyLinks = errors.New("too many levels of symbolic links")

// ErrInvalidPath is returned for a path a tool cannot use at all (a NUL
// byte, or a relative path without an absolute workspace).
var ErrInvalidPath = errors.New("invalid path")

// EscapeError reports a path that leaves the confinement root.
type EscapeError struct {
	Path     string // the path as the tool received it
	Resolved string // where it leads once `..` and symlinks are resolved
	Root     string // the resolved confinement root
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("path %q resolves to %s, outside the folder this run is confined to (%s)", e.Path, e.Resolved, e.Root)
}

// Resolve returns the absolute path a tool acts on for path: a relative
// path is taken under workspace, `..` and every symlink are resolved (also
// for trailing components that do not exist yet). When confine is not ""
// the result must lie inside confine (itself resolved), else the error is a
// *EscapeError. When confine is "" any absolute path is allowed.
func Resolve(workspace, confine, path string) (string, error) {
	abs, err := absolute(workspace, path)
	if err != nil {
		return "", err
	}
	real, err := realpath(abs)
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", path, err)
	}
	if confine == "" {
		return real, nil
	}
	root, err := resolveRoot(confine)
	if err != nil {
		return "", err
	}
	if !within(root, real) {
		return "", &EscapeError{Path: path, Resolved: real, Root: root}
	}
	return real, nil
}

// ResolveEntry is Resolve for tools that act on a directory entry itself
// (delete, move): the parent folder is resolved as by Resolve, the last
// component is kept as named, so a symlink is the link and not its target.
// A path naming a filesystem root, or the confinement root itself, is
// rejected with ErrInvalidPath.
func ResolveEntry(workspace, confine, path string) (string, error) {
	abs, err := absolute(workspace, path)
	if err != nil {
		return "", err
	}
	trimmed := strings.TrimRight(abs, string(filepath.Separator))
	i := strings.LastIndexByte(trimmed, filepath.Separator)
	var entry string
	if base := trimmed[i+1:]; i < 0 || base == "" || base == "." || base == ".." {
		// Not a named entry: resolve it as a folder.
		if entry, err = realpath(abs); err != nil {
			return "", fmt.Errorf("resolve %q: %w", path, err)
		}
	} else {
		dir, err := realpath(trimmed[:i+1])
		if err != nil {
			return "", fmt.Errorf("resolve %q: %w", path, err)
		}
		entry = filepath.Join(dir, base)
	}
	if filepath.Dir(entry) == entry {
		return "", fmt.Errorf("%w: %q names a filesystem root", ErrInvalidPath, path)
	}
	if confine == "" {
		return entry, nil
	}
	root, err := resolveRoot(confine)
	if err != nil {
		return "", err
	}
	if !within(root, entry) {
		return "", &EscapeError{Path: path, Resolved: entry, Root: root}
	}
	if entry == root {
		return "", fmt.Errorf("%w: %q is the workspace folder itself", ErrInvalidPath, path)
	}
	return entry, nil
}

// absolute makes path absolute (under workspace when relative). It does not
// clean the path: `..` is applied by realpath after the symlinks before it,
// as the kernel does.
func absolute(workspace, path string) (string, error) {
	if strings.IndexByte(path, 0) >= 0 || strings.IndexByte(workspace, 0) >= 0 {
		return "", fmt.Errorf("%w: %q contains a NUL byte", ErrInvalidPath, path)
	}
	if path == "" {
		path = "."
	}
	if filepath.IsAbs(path) {
		return path, nil
	}
	if !filepath.IsAbs(workspace) {
		return "", fmt.Errorf("%w: relative path %q needs an absolute workspace (got %q)", ErrInvalidPath, path, workspace)
	}
	return workspace + string(filepath.Separator) + path, nil
}

func resolveRoot(confine string) (string, error) {
	if !filepath.IsAbs(confine) {
		return "", fmt.Errorf("%w: confinement root %q is not absolute", ErrInvalidPath, confine)
	}
	root, err := realpath(confine)
	if err != nil {
		return "", fmt.Errorf("resolve workspace %q: %w", confine, err)
	}
	return root, nil
}

// within reports whether p is root or lies below it (both resolved).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// realpath resolves every symlink and `..` of the absolute path p, one
// component at a time, as the kernel would. Components that do not exist
// are kept as named (and a later `..` removes them lexically); a dangling
// link is followed to where it points, so a path through it cannot leave
// the confinement root unnoticed.
func realpath(p string) (string, error) {
	vol := filepath.VolumeName(p)
	resolved := vol + string(filepath.Separator)
	todo := splitPath(p[len(vol):])
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				resolved = next
				continue
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > maxLinks {
			return "", ErrTooManyLinks
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			tvol := filepath.VolumeName(target)
			resolved = tvol + string(filepath.Separator)
			target = target[len(tvol):]
		}
		todo = append(splitPath(target), todo...)
	}
	return filepath.Clean(resolved), nil
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) })
}
