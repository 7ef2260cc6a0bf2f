package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// buildVersion is what the build info says of this binary: the module
// version of a `go install ...@version` build, else the VCS revision that
// `go build` stamps into a build from a checkout.
type buildVersion struct {
	module   string // "" for a source build ("(devel)")
	revision string // vcs.revision; "" when not stamped (-buildvcs=false, no git)
	time     string // vcs.time (RFC 3339)
	modified bool   // vcs.modified: the tree had uncommitted changes
	goVer    string
}

func readBuildVersion() buildVersion {
	bi, ok := debug.ReadBuildInfo()
	return buildVersionOf(bi, ok)
}

func buildVersionOf(bi *debug.BuildInfo, ok bool) buildVersion {
	v := buildVersion{goVer: runtime.Version()}
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

// short is one token (User-Agent, /health): the module version, else
// "dev+<12 hex of the revision>" with ".dirty" for a modified tree, else
// "dev".
func (v buildVersion) short() string {
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

// long is the line `hubgate --version` and `hubgate version` print.
func (v buildVersion) long() string {
	s := "hubgate " + v.short()
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

// version is the short version of this binary.
func version() string { return readBuildVersion().short() }
