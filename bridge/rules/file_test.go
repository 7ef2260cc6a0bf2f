package rules

import (
	"bytes"
	"errors"
	"io"

	"go.yaml.in/yaml/v3"
)

// testFile is a stand-alone rule file, as the tests of other packages
// read one with rulestest (which this package's own tests cannot import).
type testFile struct {
	Rules        []Spec            `yaml:"rules"`
	CommandTools []CommandToolSpec `yaml:"command_tools"`
	Unmatched    UnmatchedSpec     `yaml:"unmatched"`
}

func (f testFile) Compile() (*Set, error) { return Compile(f.Rules, f.CommandTools, f.Unmatched) }

// parseFile decodes a rule file strictly, as configs does.
func parseFile(data []byte) (testFile, error) {
	var f testFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return testFile{}, err
	}
	return f, nil
}
