// Package cliout owns the small conventions every hubgate command line
// shares: the indented JSON of a --json answer, and reading a file
// argument where "-" means standard input.
package cliout

import (
	"encoding/json"
	"io"
	"os"
)

// WriteJSON prints v as the indented JSON of a --json output.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ReadInput reads a file, or stdin for "-".
func ReadInput(stdin io.Reader, file string) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(file)
}
