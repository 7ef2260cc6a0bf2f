package main

import "github.com/hubgate/hubgate/internal/buildinfo"

// version is the short version of this binary.
func version() string { return buildinfo.Read().Short() }
