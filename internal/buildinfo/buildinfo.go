// Package buildinfo owns what hubgate says of its own build: the module
// version of a `go install ...@version` build, else the VCS revision
// `go build` stamps, in the short form (User-Agent, /health) and the
// long line of `hubgate --version`.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Version is what the build info says of this binary: the module
// version of a `go install ...@version` build, else the VCS revision that
// `go build` stamps into a build from a checkout.
type Version struct {
	module   string // "" for a source build ("(devel)")
	revision string // vcs.revision; "" when not stamped (-buildvcs=false, no git)
	time     string // vcs.time (RFC 3339)
	modified bool   // vcs.modified: the tree had uncommitted changes
	goVer    string
}

// Read is the Version of the running binary, read once: parsing the
// build information allocates, and a start asks more than once.
func Read() Version {
	read.once.Do(func() {
		bi, ok := debug.ReadBuildInfo()
		read.v = Of(bi, ok)
	})
	return read.v
}

var read struct {
	once sync.Once
	v    Version
}

// Of is the Version bi says (ok: debug.ReadBuildInfo found it).
func Of(bi *debug.BuildInfo, ok bool) Version {
	v := Version{goVer: runtime.Version()}
	if !ok || bi == nil {
		return v
	}
	if bi.GoVersion != "" {
		v.goVer = bi.GoVersion
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.module = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.revision = s.Value
		case "vcs.time":
			v.time = s.Value
		case "vcs.modified":
			v.modified = s.Value == "true"
		}
	}
	return v
}

// Short is one token (User-Agent, /health): the module version, else
// "dev+<12 hex of the revision>" with ".dirty" for a modified tree, else
// "dev".
func (v Version) Short() string {
	if v.module != "" {
		return v.module
	}
	if v.revision == "" {
		return "dev"
	}
	s := "dev+" + v.revision[:min(12, len(v.revision))]
	if v.modified {
		s += ".dirty"
	}
	return s
}

// Long is the line `hubgate --version` and `hubgate version` print.
func (v Version) Long() string {
	s := "hubgate " + v.Short()
	if v.revision != "" {
		s += " (commit " + v.revision
		if v.time != "" {
			s += ", " + v.time
		}
		if v.modified {
			s += ", with uncommitted changes"
		}
		s += ")"
	} else if v.module == "" {
		s += " (built without VCS information)"
	}
	return fmt.Sprintf("%s %s %s/%s", s, v.goVer, runtime.GOOS, runtime.GOARCH)
}
