package configs

import _ "embed"

//go:embed starter.yaml
var starterYAML []byte

// StarterYAML returns the commented starter configuration `hubgate config
// init` writes: the scripted engine, two example rules and unmatched
// commands run as their prompt, so that a first command is answered
// without editing anything.
func StarterYAML() []byte { return append([]byte(nil), starterYAML...) }
