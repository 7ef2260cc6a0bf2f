// Package rulestest decodes stand-alone rule files for tests. hubgate
// itself reads rules from the configuration's bridge section (configs
// decodes them, with field paths and lines in every message) and, for the
// demo, from the embedded demo set (rules.Demo); tests that build a rule
// set without a configuration file use this package.
package rulestest

import "github.com/hubgate/hubgate/bridge/rules"

// File is a stand-alone rule file: the rule keys of the configuration's
// bridge section.
type File = rules.File

// Parse decodes a rule file strictly (an unknown key is an error); it does
// not validate: call Compile.
func Parse(data []byte) (File, error) { return rules.ParseFile(data) }

// Demo parses the embedded demo rule set (rules.DemoYAML).
func Demo() (File, error) { return Parse(rules.DemoYAML()) }
