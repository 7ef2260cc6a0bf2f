package rules

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"

	"go.yaml.in/yaml/v3"
)

//go:embed demo.yaml
var demoYAML []byte

// DemoYAML returns the embedded demo rule set (the rules of `hubgate
// demo`): the rules, command_tools and unmatched keys of the
// configuration's bridge section.
func DemoYAML() []byte { return slices.Clone(demoYAML) }

// Demo compiles the embedded demo rule set. It is the one rule file
// hubgate reads outside the configuration (configs decodes the bridge
// section, with field paths and lines in every message).
func Demo() (*Set, error) {
	f, err := ParseFile(demoYAML)
	if err != nil {
		return nil, fmt.Errorf("the demo rules: %w", err)
	}
	return f.Compile()
}

// File is a stand-alone rule file: the rule keys of the configuration's
// bridge section.
type File struct {
	Rules        []Spec            `yaml:"rules"`
	CommandTools []CommandToolSpec `yaml:"command_tools"`
	Unmatched    UnmatchedSpec     `yaml:"unmatched"`
}

// Compile is Compile(f.Rules, f.CommandTools, f.Unmatched).
func (f File) Compile() (*Set, error) {
	return Compile(f.Rules, f.CommandTools, f.Unmatched)
}

// ParseFile decodes a rule file strictly (an unknown key is an error); it
// does not validate: call Compile.
func ParseFile(data []byte) (File, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return File{}, fmt.Errorf("rule file: %w", err)
	}
	return f, nil
}
