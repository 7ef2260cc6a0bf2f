package rules

import (
	_ "embed"
	"slices"
)

//go:embed demo.yaml
var demoYAML []byte

// DemoYAML returns the embedded demo rule set (the rules of `hubgate
// demo`): the rules, command_tools and unmatched keys of the
// configuration's bridge section.
func DemoYAML() []byte { return slices.Clone(demoYAML) }
