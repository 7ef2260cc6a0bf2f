package service

import (
	"bytes"
	_ "embed"
	"fmt"
	"html"
	"strings"
	"text/template"
	"unicode/utf8"
)

// The service definitions `hubgate service install` writes: a systemd
// --user unit and a launchd agent.
var (
	//go:embed hubgate.service
	systemdUnitTemplate string
	//go:embed hubgate.plist
	launchdPlistTemplate string
)

// SystemdUnitName is the unit `hubgate service install` writes.
const SystemdUnitName = "hubgate.service"

// LaunchdLabel is the launchd agent's label (and file name, with .plist).
const LaunchdLabel = "dev.hubgate.hubgate"

// SystemdUnit renders the systemd --user unit running argv (an absolute
// program path and its arguments, e.g. [/usr/local/bin/hubgate run]).
func SystemdUnit(argv []string) ([]byte, error) {
	if len(argv) == 0 || !strings.HasPrefix(argv[0], "/") {
		return nil, fmt.Errorf("the service's program must be an absolute path, got %q", argv)
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		if strings.ContainsAny(a, "\n\r\x00") {
			return nil, fmt.Errorf("argument %q cannot be written into a unit file", a)
		}
		quoted[i] = systemdQuote(a)
	}
	return render(systemdUnitTemplate, struct{ ExecStart string }{strings.Join(quoted, " ")})
}

// LaunchdPlist renders the launchd agent running argv, its stderr to
// logPath.
func LaunchdPlist(argv []string, logPath string) ([]byte, error) {
	if len(argv) == 0 || !strings.HasPrefix(argv[0], "/") {
		return nil, fmt.Errorf("the service's program must be an absolute path, got %q", argv)
	}
	args := make([]string, len(argv))
	for i, a := range argv {
		if !plistText(a) {
			return nil, fmt.Errorf("argument %q cannot be written into a plist", a)
		}
		args[i] = html.EscapeString(a)
	}
	if !plistText(logPath) {
		return nil, fmt.Errorf("log path %q cannot be written into a plist", logPath)
	}
	return render(launchdPlistTemplate, struct {
		Label, LogPath string
		Args           []string
	}{html.EscapeString(LaunchdLabel), html.EscapeString(logPath), args})
}

// plistText reports whether s can be a plist <string>'s text once its
// markup characters are escaped (html.EscapeString's five entities are
// XML's): valid UTF-8 without the control characters XML 1.0 cannot carry.
// (encoding/xml is not used for this: it is linked into every hubgate
// process for one escape, and its package initialisation costs the idle
// daemon's memory, docs/performance.md.)
func plistText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			return false
		}
	}
	return true
}

func render(text string, data any) ([]byte, error) {
	t, err := template.New("service").Parse(text)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// systemdQuote quotes one ExecStart word: specifiers (%) and variable
// expansion ($) are escaped, and a word with blanks, quotes or
// backslashes is double-quoted with C escapes (systemd.syntax(7)).
func systemdQuote(s string) string {
	s = strings.ReplaceAll(s, "%", "%%")
	s = strings.ReplaceAll(s, "$", "$$")
	if s != "" && !strings.ContainsAny(s, " \t\"'\\;") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
