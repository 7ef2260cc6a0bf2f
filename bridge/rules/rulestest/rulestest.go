// Package rulestest decodes stand-alone rule files for tests. hubgate
// itself reads rules only from the configuration's bridge section (configs
// decodes them, with field paths and lines in every message); tests that
// build a rule set without a configuration file use this package.
package rulestest

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/hubgate/hubgate/bridge/rules"
	"go.yaml.in/yaml/v3"
)

// File is a stand-alone rule file: the rule keys of the configuration's
// bridge section.
type File struct {
	Rules        []rules.Spec            `yaml:"rules"`
	CommandTools []rules.CommandToolSpec `yaml:"command_tools"`
	Unmatched    rules.UnmatchedSpec     `yaml:"unmatched"`
}

// Compile is rules.Compile(f.Rules, f.CommandTools, f.Unmatched).
func (f File) Compile() (*rules.Set, error) {
	return rules.Compile(f.Rules, f.CommandTools, f.Unmatched)
}

// Parse decodes a rule file strictly (an unknown key is an error); it does
// not validate: call Compile.
func Parse(data []byte) (File, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return File{}, fmt.Errorf("rule file: %w", err)
	}
	return f, nil
}

// Demo parses the embedded demo rule set (rules.DemoYAML).
func Demo() (File, error) { return Parse(rules.DemoYAML()) }
