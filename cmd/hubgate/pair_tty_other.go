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

// isTerminal reports whether f is a character device (a terminal, or
// /dev/null: the exact check is implemented for Linux only).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
