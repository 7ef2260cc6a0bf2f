package proc

import "strconv"

// StartTime is the start time of process pid in clock ticks since boot
// (/proc/<pid>/stat), 0 when it cannot be read. With Alive it names one
// process across pid reuse.
func StartTime(pid int) uint64 {
	s, err := readStat(strconv.Itoa(pid))
	if err != nil {
		return 0
	}
	return s.start
}

// Alive reports whether process pid runs (a zombie does not) and is the
// one that started at start (StartTime), not a later one given its pid.
func Alive(pid int, start uint64) bool {
	s, err := readStat(strconv.Itoa(pid))
	return err == nil && s.state != 'Z' && s.state != 'X' && s.start == start
}
