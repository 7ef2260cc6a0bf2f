//go:build !linux

package proc

import "errors"

// canTrack: no start times here; groups are not recorded.
const canTrack = false

var errNoTracking = errors.New("child process tracking needs Linux")

func bootID() (string, error)       { return "", errNoTracking }
func startTime(int) (uint64, error) { return 0, errNoTracking }
func ours(record) bool              { return false }

// LiveMembers is nil off Linux.
func LiveMembers(int) []int { return nil }
