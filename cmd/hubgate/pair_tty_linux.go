//go:build linux

package main

import (
	"bufio"
	"os"

	"golang.org/x/sys/unix"
)

// readSecretLine reads one line from in; when stdin is a terminal, its
// echo is switched off for the read (and restored afterwards) so the
// secret is not shown.
func readSecretLine(in *bufio.Reader, f *os.File, interactive bool) (string, error) {
	if interactive && f != nil {
		fd := int(f.Fd())
		if old, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
			quiet := *old
			quiet.Lflag &^= unix.ECHO
			if unix.IoctlSetTermios(fd, unix.TCSETS, &quiet) == nil {
				defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
			}
		}
	}
	return readLine(in)
}

// isTerminal reports whether f is a terminal (the TCGETS ioctl answers).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
