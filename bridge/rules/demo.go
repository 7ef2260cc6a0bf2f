package rules

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"

	"gopkg.in/yaml.v3"
)

//go:embed demo.yaml
var demoYAML []byte

// DemoYAML returns the embedded demo rule set (the rules of `hubgate
// demo`), in the shape of File.
func DemoYAML() []byte { return slices.Clone(demoYAML) }

// Demo parses the embedded demo rule set.
func Demo() (File, error) { return ParseYAML(demoYAML) }

// File is a stand-alone rule file: the rule keys of the configuration's
// bridge section.
type File struct {
	Rules        []Spec            `yaml:"rules" json:"rules"`
	CommandTools []CommandToolSpec `yaml:"command_tools" json:"command_tools"`
	Unmatched    UnmatchedSpec     `yaml:"unmatched" json:"unmatched"`
}

// Compile is Compile(f.Rules, f.CommandTools, f.Unmatched).
func (f File) Compile() (*Set, error) { return Compile(f.Rules, f.CommandTools, f.Unmatched) }

// ParseYAML decodes a rule file strictly (an unknown key is an error); it
// does not validate: call Compile. (The configuration file has its own
// decoder in configs, with field paths and lines in every message.)
func ParseYAML(data []byte) (File, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return File{}, fmt.Errorf("rule file: %w", err)
	}
	return f, nil
}
