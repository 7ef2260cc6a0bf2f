package oauth

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"

	"github.com/hubgate/hubgate/internal/proc"
)

// BrowserCommand returns the command line that opens u: BROWSER split
// like a shell command line with u as the last argument (or in place of
// every "%s" argument, the old BROWSER convention), else the platform's
// opener (xdg-open; open on macOS; rundll32 url.dll on Windows).
func BrowserCommand(getenv func(string) string, u string) ([]string, error) {
	if b := strings.TrimSpace(getenv("BROWSER")); b != "" {
		args, err := SplitCommandLine(b)
		if err != nil {
			return nil, fmt.Errorf("BROWSER: %w", err)
		}
		if len(args) == 0 {
			return nil, errors.New("BROWSER is empty")
		}
		substituted := false
		for i, a := range args {
			if a == "%s" {
				args[i] = u
				substituted = true
			}
		}
		if !substituted {
			args = append(args, u)
		}
		return args, nil
	}
	switch runtime.GOOS {
	case "darwin":
		return []string{"open", u}, nil
	case "windows":
		return []string{"rundll32", "url.dll,FileProtocolHandler", u}, nil
	default:
		return []string{"xdg-open", u}, nil
	}
}

// openBrowser runs the browser command and returns its outcome once it
// exits (Login calls it on its own goroutine): an error when it could not
// start or exited with a failure status (xdg-open exits 3 or 4 when it
// finds no browser). It is started like every child of hubgate
// (internal/proc): no stdin, output discarded, its own process group, and
// none of hubgate's secrets in its environment, so that
// HUBGATE_CLIENT_SECRET and the like never reach a browser or a script named
// in BROWSER; but with no parent-death signal, as a browser may outlive
// `pair`.
func (c *Client) openBrowser(getenv func(string) string, u string) error {
	args, err := BrowserCommand(getenv, u)
	if err != nil {
		return err
	}
	exited := make(chan error, 1)
	pid, err := proc.StartDetached(args[0], args[1:], func(err error) { exited <- err })
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return fmt.Errorf("run %s: %w", args[0], ee.Err)
		}
		return fmt.Errorf("run %s: %w", args[0], err)
	}
	c.log.Debug("browser started", "command", args[0], "pid", pid)
	err = <-exited
	c.log.Debug("browser command exited", "command", args[0], "err", err)
	if err != nil {
		return fmt.Errorf("%s failed: %w", args[0], err)
	}
	return nil
}

// SplitCommandLine splits s into words like a POSIX shell does, without
// any expansion: words are separated by blanks; single quotes keep
// everything literally; double quotes keep everything except that a
// backslash escapes ", \, $ and `; outside quotes a backslash escapes the
// next character. An unterminated quote or a trailing backslash is an
// error.
func SplitCommandLine(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		rs      = []rune(s)
		i       int
		errQuot = errors.New("unterminated quote")
	)
	for i < len(rs) {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		case r == '\'':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, errQuot
			}
			cur.WriteString(string(rs[i+1 : j]))
			i = j + 1
		case r == '"':
			inWord = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[j+1]) {
					j++
				}
				cur.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, errQuot
			}
			i = j + 1
		case r == '\\':
			if i+1 == len(rs) {
				return nil, errors.New("trailing backslash")
			}
			inWord = true
			cur.WriteRune(rs[i+1])
			i += 2
		default:
			inWord = true
			cur.WriteRune(r)
			i++
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
