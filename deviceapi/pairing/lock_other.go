//go:build !unix

package pairing

import "errors"

// ErrBusy: another pairing of this machine is in progress.
var ErrBusy = errors.New("another 'hubgate pair' or 'hubgate unpair' is running on this machine")

// Lock takes no lock on this platform.
func Lock(string) (release func(), err error) { return func() {}, nil }
