//go:build !linux

package main

import (
	"bufio"
	"os"
)

// readSecretLine reads one line from in. Echo control is implemented for
// Linux terminals only; elsewhere the typed secret is visible.
func readSecretLine(in *bufio.Reader, _ *os.File, _ bool) (string, error) {
	return readLine(in)
}
